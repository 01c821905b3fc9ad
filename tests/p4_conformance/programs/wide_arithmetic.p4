/*
 * Arithmetic on wide and signed values: bit<64> and bit<128> wrap-around,
 * saturation, shifts by run-time amounts up to 127, 128-bit concatenation,
 * int<32> multiplication and saturation, sign extension to int<64>, slices of
 * signed values, negation of the most negative value, and zero extension
 * through a reinterpreting cast.  Frame type 0x88BE.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header wide_in_t {
    bit<64>  x;
    bit<64>  y;
    bit<128> w;
}

header wide_out_t {
    bit<64>  add;
    bit<64>  sub;
    bit<64>  mul;
    bit<64>  sat_add;
    bit<128> shl;
    bit<128> shr;
    bit<128> cat;
    bit<128> w_plus_x;
    bit<48>  xor48;
    int<32>  smul;
    int<32>  ssat_sub;
    int<64>  sext;
    bit<16>  sslice;
    int<32>  sneg;
    bit<64>  zext;
    bit<8>   top;
    bit<8>   flags;
}

struct headers {
    ethernet_t ethernet;
    wide_in_t  i;
    wide_out_t o;
}

struct metadata { }

parser WParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.i);
        transition accept;
    }
}

control WVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control WIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        bit<64> x = hdr.i.x;
        bit<64> y = hdr.i.y;
        bit<128> w = hdr.i.w;
        bit<7> amount = y[6:0];
        int<32> sx = (int<32>)x[31:0];
        int<32> sy = (int<32>)y[31:0];

        hdr.o.setValid();
        hdr.o.add = x + y;
        hdr.o.sub = x - y;
        hdr.o.mul = x * y;
        hdr.o.sat_add = x |+| y;
        hdr.o.shl = w << amount;
        hdr.o.shr = w >> amount;
        hdr.o.cat = x ++ y;
        hdr.o.w_plus_x = w + (bit<128>)x;
        hdr.o.xor48 = x[47:0] ^ y[47:0];
        hdr.o.smul = sx * sy;
        hdr.o.ssat_sub = sx |-| sy;
        hdr.o.sext = (int<64>)sx;
        hdr.o.sslice = sx[31:16];
        hdr.o.sneg = -sx;
        hdr.o.zext = (bit<64>)(bit<32>)sx;
        hdr.o.top = (bit<8>)(x >> 56);
        bit<8> flags = 0;
        if (sx < sy) {
            flags = flags | 1;
        }
        if (x < y) {
            flags = flags | 2;
        }
        if (w > hdr.o.cat) {
            flags = flags | 4;
        }
        if (sx <= 0) {
            flags = flags | 8;
        }
        hdr.o.flags = flags;
        standard_metadata.egress_spec = 1;
    }
}

control WEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control WComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control WDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.i);
        packet.emit(hdr.o);
    }
}

V1Switch(WParser(), WVerifyChecksum(), WIngress(), WEgress(),
         WComputeChecksum(), WDeparser()) main;
