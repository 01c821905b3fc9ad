/* An lpm and a ternary table on the IPv4 destination (measure_lookups.py):
 * the lookup structures, measured with many entries (one table filled at a
 * time, both applied). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
struct headers { ethernet_t ethernet; ipv4_t ipv4; }
struct metadata { }

parser BParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { packet.extract(hdr.ipv4); transition accept; }
}
control BVerify(inout headers hdr, inout metadata meta) { apply { } }
control BIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; drop; }
        default_action = drop();
        size = 1048576;
    }
    table acl {
        key = { hdr.ipv4.dstAddr: ternary; }
        actions = { forward; drop; }
        default_action = drop();
        size = 1048576;
    }
    apply { if (hdr.ipv4.isValid()) { routes.apply(); acl.apply(); } }
}
control BEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) { apply { } }
control BCompute(inout headers hdr, inout metadata meta) { apply { } }
control BDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.ipv4); }
}
V1Switch(BParser(), BVerify(), BIngress(), BEgress(), BCompute(), BDeparser()) main;
