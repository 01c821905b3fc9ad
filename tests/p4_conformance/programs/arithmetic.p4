/*
 * P4-16 arithmetic and width rules: wrap-around, saturating ops, bitwise ops,
 * shifts by run-time amounts, slices (read and write), concatenation, casts
 * (truncate, zero/sign extension, bool <-> bit<1>), signed arithmetic and
 * comparison, ?:, and compile-time constant folding.  Operands follow
 * Ethernet (type 0x88B9); results are written into the header after them.
 */
#include <core.p4>
#include <v1model.p4>

const bit<8> WRAPPED = 8w200 + 8w100;        // 44
const int    BIG = 1 << 40;                   // arbitrary-precision int
const bit<8> FROM_BIG = (bit<8>)(BIG >> 36);  // 16
const bit<4> NIBBLE_WRAP = 4w15 + 4w1;        // 0
const bit<8> MINUS_ONE = (bit<8>)-1;          // 255

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header operands_t {
    bit<8> a;
    bit<8> b;
    bit<8> s;
}

header results_t {
    bit<8>  add;
    bit<8>  sub;
    bit<8>  mul;
    bit<8>  sat_add;
    bit<8>  sat_sub;
    bit<8>  band;
    bit<8>  bor;
    bit<8>  bxor;
    bit<8>  bnot;
    bit<8>  shl;
    bit<8>  shr;
    bit<8>  neg;
    bit<16> concat;
    bit<4>  hi;
    bit<4>  lo;
    bit<4>  narrowed;
    bit<4>  nibble_wrap;
    bit<16> widened;
    int<8>  sadd;
    int<8>  ssat_add;
    int<8>  ssat_sub;
    int<8>  sshr;
    int<16> swidened;
    bit<8>  flags;
    bit<8>  slice_assign;
    bit<8>  wrapped;
    bit<8>  from_big;
    bit<8>  minus_one;
    bit<8>  maximum;
}

struct headers {
    ethernet_t ethernet;
    operands_t ops;
    results_t  res;
}

struct metadata { }

parser AParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.ops);
        transition accept;
    }
}

control AVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control AIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        bit<8> a = hdr.ops.a;
        bit<8> b = hdr.ops.b;
        bit<8> s = hdr.ops.s;
        int<8> sa = (int<8>)a;
        int<8> sb = (int<8>)b;

        hdr.res.setValid();
        hdr.res.add = a + b;
        hdr.res.sub = a - b;
        hdr.res.mul = a * b;
        hdr.res.sat_add = a |+| b;
        hdr.res.sat_sub = a |-| b;
        hdr.res.band = a & b;
        hdr.res.bor = a | b;
        hdr.res.bxor = a ^ b;
        hdr.res.bnot = ~a;
        hdr.res.shl = a << s;
        hdr.res.shr = a >> s;
        hdr.res.neg = -a;
        hdr.res.concat = a ++ b;
        hdr.res.hi = a[7:4];
        hdr.res.lo = a[3:0];
        hdr.res.narrowed = (bit<4>)a;
        hdr.res.nibble_wrap = NIBBLE_WRAP;
        hdr.res.widened = (bit<16>)a;
        hdr.res.sadd = sa + sb;
        hdr.res.ssat_add = sa |+| sb;
        hdr.res.ssat_sub = sa |-| sb;
        hdr.res.sshr = sa >> s;
        hdr.res.swidened = (int<16>)sa;

        bit<8> flags = (bit<8>)(bit<1>)(a < b);
        flags = flags | ((bit<8>)(bit<1>)(sa < sb) << 1);
        if (a == b) {
            flags = flags | 0x04;
        }
        if (sa > sb) {
            flags = flags | 0x08;
        }
        if (a >= b) {
            flags = flags | 0x10;
        }
        bool differs_and_nonzero = !(a == b) && (a != 0);
        if (differs_and_nonzero || false) {
            flags = flags | 0x20;
        }
        hdr.res.flags = flags;

        bit<8> t = b;
        t[3:0] = a[7:4];
        hdr.res.slice_assign = t;
        hdr.res.wrapped = WRAPPED;
        hdr.res.from_big = FROM_BIG;
        hdr.res.minus_one = MINUS_ONE;
        hdr.res.maximum = a > b ? a : b;
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
        packet.emit(hdr.ops);
        packet.emit(hdr.res);
    }
}

V1Switch(AParser(), AVerifyChecksum(), AIngress(), AEgress(),
         AComputeChecksum(), ADeparser()) main;
