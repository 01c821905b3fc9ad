/*
 * P4 identifiers that are keywords or builtins in other languages (class,
 * from, global, lambda, def, None, True, pass, import, yield, self, print)
 * are ordinary names in P4 and must work everywhere: header fields, local
 * variables, actions, action parameters and tables.  Frame type 0x88C5.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header words_t {
    bit<8> class;
    bit<8> from;
    bit<8> global;
    bit<8> lambda;
    bit<8> def;
    bit<8> None;
    bit<8> True;
}

struct headers {
    ethernet_t ethernet;
    words_t    w;
}

struct metadata {
    bit<8> self;
}

parser KParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.w);
        transition accept;
    }
}

control KVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control KIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action pass(bit<8> print) {
        hdr.w.lambda = print;
    }

    table import {
        key = { hdr.w.class: exact; }
        actions = { pass; NoAction; }
        default_action = NoAction();
    }

    apply {
        bit<8> yield = hdr.w.class + hdr.w.from;
        meta.self = yield;
        hdr.w.global = meta.self;
        hdr.w.def = hdr.w.None ^ hdr.w.True;
        import.apply();
        standard_metadata.egress_spec = 1;
    }
}

control KEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control KComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control KDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.w);
    }
}

V1Switch(KParser(), KVerifyChecksum(), KIngress(), KEgress(),
         KComputeChecksum(), KDeparser()) main;
