/* Tables implemented by an action_profile and by action_selectors (crc16 over
 * two selector keys with a 14-bit output, crc32_custom over one), with a
 * direct counter on one selector table: the native back end's members,
 * groups and member choice against the Python back end's
 * (test_differential_externs.py, test_action_selectors.py). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
struct headers { ethernet_t ethernet; }
struct metadata { }

parser AParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control AVerify(inout headers hdr, inout metadata meta) { apply { } }
control AIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) spread_hits;
    action_profile(32w8) members;
    action_selector(HashAlgorithm.crc16, 32w64, 32w14) flows;
    action_selector(HashAlgorithm.crc32_custom, 32w64, 32w32) custom_flows;
    action set_port(bit<9> port) { standard_metadata.egress_spec = port; }
    action tag(bit<16> value, bit<9> port) {
        hdr.ethernet.etherType = value;
        standard_metadata.egress_spec = port;
    }
    table profiled {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_port; tag; NoAction; }
        implementation = members;
    }
    table spread {
        key = {
            hdr.ethernet.dstAddr[7:0]: ternary;
            hdr.ethernet.srcAddr: selector;
            hdr.ethernet.etherType: selector;
        }
        actions = { set_port; tag; NoAction; }
        implementation = flows;
        counters = spread_hits;
    }
    table custom {
        key = { hdr.ethernet.dstAddr[15:8]: lpm; hdr.ethernet.srcAddr[31:0]: selector; }
        actions = { tag; NoAction; }
        implementation = custom_flows;
    }
    apply {
        standard_metadata.egress_spec = 1;
        if (!profiled.apply().hit) {
            switch (spread.apply().action_run) {
                tag: { custom.apply(); }
                default: { }
            }
        }
    }
}
control AEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) { apply { } }
control ACompute(inout headers hdr, inout metadata meta) { apply { } }
control ADeparser(packet_out packet, in headers hdr) { apply { packet.emit(hdr.ethernet); } }
V1Switch(AParser(), AVerify(), AIngress(), AEgress(), ACompute(), ADeparser()) main;
