/*
 * Name resolution and argument passing: a dot-prefixed name reaches the
 * top-level declaration past a shadowing local one, named arguments in any
 * order, and parameters with default values.  Frame type 0x88C4.
 */
#include <core.p4>
#include <v1model.p4>

const bit<8> OFFSET = 100;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header args_t {
    bit<8> x;
    bit<8> shadowed;
    bit<8> top_level;
    bit<8> defaulted;
    bit<8> named;
}

struct headers {
    ethernet_t ethernet;
    args_t     a;
}

struct metadata { }

bit<8> add_bias(in bit<8> v, in bit<8> bias = 5) {
    return v + bias;
}

bit<8> difference(in bit<8> minuend, in bit<8> subtrahend) {
    return minuend - subtrahend;
}

parser AParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.a);
        transition accept;
    }
}

control AVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control AIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    const bit<8> OFFSET = 1;

    apply {
        hdr.a.shadowed = hdr.a.x + OFFSET;
        hdr.a.top_level = hdr.a.x + .OFFSET;
        hdr.a.defaulted = add_bias(hdr.a.x);
        hdr.a.named = difference(subtrahend = 3, minuend = hdr.a.x);
        standard_metadata.egress_spec = 1;
    }
}

control AEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control AComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ADeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.a);
    }
}

V1Switch(AParser(), AVerifyChecksum(), AIngress(), AEgress(),
         AComputeChecksum(), ADeparser()) main;
