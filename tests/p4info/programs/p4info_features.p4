// A v1model program using every kind of object P4Info describes; its expected
// P4Info is written by hand in tests/p4info/test_p4info_features.py.
#include <core.p4>
#include <v1model.p4>

@p4runtime_translation("example.org/Port_t", 32)
type bit<9> Port_t;
type bit<16> Tag_t;
typedef bit<48> mac_t;
enum bit<8> Color { RED = 1, GREEN = 2 }

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; @id(5) bit<7> pad; }
@controller_header("packet_out")
header packet_out_t { Port_t egress_port; bit<7> _pad; }
header eth_t { mac_t dst; mac_t src; bit<16> type; }
struct hs { packet_in_t pin; packet_out_t pout; eth_t eth; }
struct learn_t { mac_t src; Port_t port; }
struct m_t { Tag_t tag; Color color; bit<8> x; }

parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) ethertypes;
    state start {
        p.extract(hdr.eth);
        transition select(hdr.eth.type) { ethertypes: accept; default: accept; }
    }
}

control VC(inout hs hdr, inout m_t m) { apply { } }

control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    counter(128, CounterType.packets_and_bytes) port_counter;
    @brief("per-port rate") meter(64, MeterType.bytes) port_meter;
    register<bit<32>>(256) seen;
    direct_counter(CounterType.packets) fwd_hits;
    @max_group_size(8) action_selector(HashAlgorithm.crc16, 32w1024, 32w14) ecmp_sel;

    action drop() { mark_to_drop(sm); }
    @id(0x01000abc)
    action forward(@brief("egress") Port_t port, @format(MAC_ADDRESS) mac_t dmac) {
        sm.egress_spec = (bit<9>)port;
        hdr.eth.dst = dmac;
    }
    action set_tag(Tag_t tag, Color color) { m.tag = tag; m.color = color; }
    action learn() { digest<learn_t>(1, {hdr.eth.src, (Port_t)sm.ingress_port}); }
    @hidden action count_it() { port_counter.count((bit<32>)sm.ingress_port); }
    action unused_action() { }

    @description("L2 forwarding")
    table fwd {
        key = { hdr.eth.dst : exact @name("dst"); m.tag : ternary; }
        actions = { forward; @defaultonly drop; }
        const default_action = drop();
        counters = fwd_hits;
        size = 2048;
        support_timeout = true;
    }
    table ecmp {
        key = { hdr.eth.dst : exact; hdr.eth.src : selector; }
        actions = { forward; }
        implementation = ecmp_sel;
    }
    table tagger {
        key = { m.color : exact; hdr.eth.type : range; }
        actions = { set_tag; @tableonly learn; }
        default_action = set_tag(7, Color.GREEN);
    }
    table consts {
        key = { hdr.eth.type : exact; }
        actions = { drop; NoAction; }
        const entries = { 0x0800 : drop(); }
    }
    table unused_table { key = { m.x : exact; } actions = { unused_action; } }
    apply {
        fwd.apply();
        ecmp.apply();
        tagger.apply();
        consts.apply();
        count_it();
        bit<32> v;
        seen.read(v, 0);
        port_meter.execute_meter(0, v);
    }
}

control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    table fwd { key = { sm.egress_port : exact; } actions = { NoAction; } }
    apply { fwd.apply(); }
}

control CC(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
