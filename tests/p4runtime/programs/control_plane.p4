/*
 * control_plane.p4: one of every P4Runtime entity kind, for the server's tests.
 *
 * Port 255 is the CPU port: a packet from it carries packet_out_t (egress port)
 * and leaves on that port; a packet whose EtherType is 0x88b5 goes to the CPU
 * with packet_in_t (ingress port).  Everything else is routed by `route`
 * (exact on the destination MAC), classified by `acl` (ternary, priorities,
 * direct counter and meter), balanced by `ecmp` (an action selector), counted,
 * metered and remembered in a register; `learn` digests unknown source MACs;
 * EtherTypes in the parser value set `special` are counted apart.
 */
#include <core.p4>
#include <v1model.p4>

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct metadata_t {
    bit<1>  special;
    bit<32> color;
}

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) {
    value_set<bit<16>>(4) special;
    state start {
        transition select(sm.ingress_port) {
            255: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.type) {
            special: mark_special;
            default: accept;
        }
    }
    state mark_special {
        meta.special = 1;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) port_packets;
    meter(8, MeterType.packets) port_meter;
    register<bit<32>>(8) last_length;
    direct_counter(CounterType.packets_and_bytes) acl_counter;
    direct_meter<bit<32>>(MeterType.packets) acl_meter;
    action_selector(HashAlgorithm.crc16, 16, 4) ecmp_selector;

    action drop() { mark_to_drop(sm); }
    action forward(bit<9> port) { sm.egress_spec = port; }
    action flood(bit<16> group) { sm.mcast_grp = group; }
    action to_cpu() {
        sm.egress_spec = 255;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = sm.ingress_port;
    }
    action mirror(bit<32> session) { clone(CloneType.I2E, session); }
    action acl_forward(bit<9> port) {
        sm.egress_spec = port;
        acl_counter.count();
        acl_meter.read(meta.color);
    }
    action acl_drop() {
        mark_to_drop(sm);
        acl_counter.count();
        acl_meter.read(meta.color);
    }
    action acl_none() {
        acl_counter.count();
        acl_meter.read(meta.color);
    }

    table route {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; flood; to_cpu; drop; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    table acl {
        key = { hdr.ethernet.type: ternary; sm.ingress_port: optional; }
        actions = { acl_forward; acl_drop; acl_none; }
        counters = acl_counter;
        meters = acl_meter;
        default_action = acl_none();
    }
    table ecmp {
        key = { hdr.ethernet.dst: exact; hdr.ethernet.src: selector; }
        actions = { forward; drop; }
        implementation = ecmp_selector;
    }
    table mirror_by_src {
        key = { hdr.ethernet.src: exact; }
        actions = { mirror; NoAction; }
        default_action = NoAction();
    }
    table known_src {
        key = { hdr.ethernet.src: exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    table fixed {
        key = { hdr.ethernet.type: exact; }
        actions = { drop; NoAction; }
        const entries = { 0x9999: drop(); }
        default_action = NoAction();
    }

    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        if (hdr.ethernet.type == 0x88b5) {
            to_cpu();
            exit;
        }
        port_packets.count((bit<32>)sm.ingress_port);
        port_meter.execute_meter((bit<32>)sm.ingress_port, meta.color);
        last_length.write((bit<32>)sm.ingress_port, sm.packet_length);
        if (!known_src.apply().hit) {
            digest<learn_t>(1, {hdr.ethernet.src, sm.ingress_port});
        }
        fixed.apply();
        mirror_by_src.apply();
        if (!route.apply().hit) {
            ecmp.apply();
        }
        acl.apply();
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
