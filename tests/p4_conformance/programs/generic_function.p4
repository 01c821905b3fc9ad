/*
 * A generic function (its return type is a type variable) used at two
 * different types.  Frame type 0x88BC: byte x, 16-bit y, then two results.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header gen_t {
    bit<8>  x;
    bit<16> y;
    bit<8>  picked8;
    bit<16> picked16;
}

struct headers {
    ethernet_t ethernet;
    gen_t      g;
}

struct metadata { }

T pick<T>(in bool first, in T a, in T b) {
    if (first) {
        return a;
    }
    return b;
}

parser GParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.g);
        transition accept;
    }
}

control GVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control GIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.g.picked8 = pick<bit<8>>(hdr.g.x < 10, 0xAA, 0xBB);
        hdr.g.picked16 = pick(hdr.g.y > 1000, hdr.g.y, 16w1000);
        standard_metadata.egress_spec = 1;
    }
}

control GEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control GComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control GDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.g);
    }
}

V1Switch(GParser(), GVerifyChecksum(), GIngress(), GEgress(),
         GComputeChecksum(), GDeparser()) main;
