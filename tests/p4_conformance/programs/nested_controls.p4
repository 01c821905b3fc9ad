/*
 * Three levels of control instantiation: control-plane names follow the
 * instance path (NIngress.mid.left.t, NIngress.mid.right.t), and each level's
 * constructor argument reaches the inner instances.  Frame type 0x88C7.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header nest_t {
    bit<8> key;
    bit<8> left;
    bit<8> right;
}

struct headers {
    ethernet_t ethernet;
    nest_t     n;
}

struct metadata { }

control Leaf(in bit<8> k, inout bit<8> out_value)(bit<8> tag) {
    action set(bit<8> v) {
        out_value = v + tag;
    }
    table t {
        // the parameter is not named key: p4c refuses a parameter that a table property
        // (key) shadows; the match field keeps the name key
        key = { k: exact @name("key"); }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
    }
}

control Mid(inout nest_t n)(bit<8> base) {
    Leaf(base) left;
    Leaf(base + 1) right;
    apply {
        left.apply(n.key, n.left);
        right.apply(n.key, n.right);
    }
}

parser NParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.n);
        transition accept;
    }
}

control NVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control NIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    Mid(8w10) mid;
    apply {
        mid.apply(hdr.n);
        standard_metadata.egress_spec = 1;
    }
}

control NEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control NComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control NDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.n);
    }
}

V1Switch(NParser(), NVerifyChecksum(), NIngress(), NEgress(),
         NComputeChecksum(), NDeparser()) main;
