/*
 * v1model hash() with every BMv2 algorithm that is deterministic, plus
 * random().  The input words follow Ethernet (type 0x88B7); ingress writes each
 * hash into the result header that follows them and forwards to port 1.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header input_t {
    bit<32> a;
    bit<16> b;
    bit<8>  c;
    bit<8>  d;
}

header result_t {
    bit<16> crc16;
    bit<32> crc32;
    bit<16> csum16;
    bit<16> xor16;
    bit<32> identity;
    bit<16> crc16_custom;
    bit<32> crc32_custom;
    bit<16> bounded;
    bit<16> crc16_12bit;
    bit<8>  narrow;
    bit<8>  random_value;
    bit<16> csum16_odd;
    bit<16> xor16_odd;
    bit<16> csum16_12bit;
    bit<16> csum16_36bit;
    bit<16> xor16_36bit;
    bit<32> identity_long;
}

struct headers {
    ethernet_t ethernet;
    input_t    input;
    result_t   result;
}

struct metadata { }

parser HashParser(packet_in packet, out headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.input);
        packet.extract(hdr.result);
        transition accept;
    }
}

control HashVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control HashIngress(inout headers hdr, inout metadata meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        hash(hdr.result.crc16, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d }, (bit<32>)65536);
        hash(hdr.result.crc32, HashAlgorithm.crc32, (bit<32>)0,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d }, (bit<64>)4294967296);
        hash(hdr.result.csum16, HashAlgorithm.csum16, (bit<16>)0,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d }, (bit<32>)65536);
        hash(hdr.result.xor16, HashAlgorithm.xor16, (bit<16>)0,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d }, (bit<32>)65536);
        hash(hdr.result.identity, HashAlgorithm.identity, (bit<32>)0,
             { hdr.input.a }, (bit<64>)4294967296);
        hash(hdr.result.crc16_custom, HashAlgorithm.crc16_custom, (bit<16>)0,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d }, (bit<32>)65536);
        hash(hdr.result.crc32_custom, HashAlgorithm.crc32_custom, (bit<32>)0,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d }, (bit<64>)4294967296);
        /* base + (hash % max) */
        hash(hdr.result.bounded, HashAlgorithm.crc16, (bit<16>)100,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d }, (bit<16>)1000);
        /* a 12-bit field list is packed left-aligned into two bytes */
        hash(hdr.result.crc16_12bit, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.input.a[11:0] }, (bit<32>)65536);
        /* the result is truncated to the destination's width */
        hash(hdr.result.narrow, HashAlgorithm.crc32, (bit<32>)0,
             { hdr.input.b }, (bit<64>)4294967296);
        random(hdr.result.random_value, (bit<8>)10, (bit<8>)20);
        /* five bytes: the odd tail is padded with a zero byte */
        hash(hdr.result.csum16_odd, HashAlgorithm.csum16, (bit<16>)0,
             { hdr.input.a, hdr.input.c }, (bit<32>)65536);
        hash(hdr.result.xor16_odd, HashAlgorithm.xor16, (bit<16>)0,
             { hdr.input.a, hdr.input.c }, (bit<32>)65536);
        /* bit lists that do not fill whole bytes are packed left-aligned */
        hash(hdr.result.csum16_12bit, HashAlgorithm.csum16, (bit<16>)0,
             { hdr.input.a[11:0] }, (bit<32>)65536);
        hash(hdr.result.csum16_36bit, HashAlgorithm.csum16, (bit<16>)0,
             { hdr.input.a, hdr.input.c[3:0] }, (bit<32>)65536);
        hash(hdr.result.xor16_36bit, HashAlgorithm.xor16, (bit<16>)0,
             { hdr.input.a, hdr.input.c[3:0] }, (bit<32>)65536);
        /* identity reads the first 8 bytes of a 10-byte list */
        hash(hdr.result.identity_long, HashAlgorithm.identity, (bit<32>)0,
             { hdr.input.a, hdr.input.b, hdr.input.c, hdr.input.d, hdr.input.b },
             (bit<64>)4294967296);
        standard_metadata.egress_spec = 1;
    }
}

control HashEgress(inout headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    apply { }
}

control HashComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control HashDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.input);
        packet.emit(hdr.result);
    }
}

V1Switch(HashParser(), HashVerifyChecksum(), HashIngress(), HashEgress(),
         HashComputeChecksum(), HashDeparser()) main;
