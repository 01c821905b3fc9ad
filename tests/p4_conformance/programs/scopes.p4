/*
 * Block scoping: a variable declared in an inner block shadows an outer one
 * only inside that block; an action's local and a function's local with the
 * same name as a control variable are distinct variables.  Frame type 0x88C6.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header scope_t {
    bit<8> x;
    bit<8> inner;
    bit<8> outer;
    bit<8> from_action;
    bit<8> from_function;
    bit<8> after;
}

struct headers {
    ethernet_t ethernet;
    scope_t    s;
}

struct metadata { }

bit<8> twice(in bit<8> v) {
    bit<8> t = v + v;
    return t;
}

parser ScParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.s);
        transition accept;
    }
}

control ScVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ScIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    bit<8> t = 0;

    action use_own_t() {
        bit<8> t = 40;
        hdr.s.from_action = t + 2;
    }

    apply {
        t = hdr.s.x;
        if (hdr.s.x != 0) {
            bit<8> t = 9;
            hdr.s.inner = t;
        }
        hdr.s.outer = t;
        use_own_t();
        hdr.s.from_function = twice(t);
        hdr.s.after = t;
        standard_metadata.egress_spec = 1;
    }
}

control ScEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control ScComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ScDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.s);
    }
}

V1Switch(ScParser(), ScVerifyChecksum(), ScIngress(), ScEgress(),
         ScComputeChecksum(), ScDeparser()) main;
