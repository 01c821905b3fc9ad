/*
 * Compile-time constant evaluation: division and modulo of constants,
 * arbitrary-precision int arithmetic, slices and concatenation of literals,
 * saturating and bitwise operators, casts through signed types, conditional
 * and boolean constant expressions, serializable enum values.  Each constant
 * is written into one byte (or word) of the result header; frame type 0x88C3.
 */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Level {
    LOW  = 7,
    HIGH = 9
}

const bit<8>  DIV        = 8w17 / 8w5;                        // 3
const bit<8>  MOD        = 8w17 % 8w5;                        // 2
const int     HALF_NEG   = -7 >> 1;                           // -4
const bit<8>  FROM_NEG   = (bit<8>)HALF_NEG;                  // 252
const bit<8>  HIGH_BYTE  = 16w0xABCD[15:8];                   // 0xAB
const bit<8>  JOINED     = 4w0xF ++ 4w0x1;                    // 0xF1
const bit<8>  SHIFTED    = 1 << 7;                            // 128
const bit<8>  INVERTED   = ~8w0x0F;                           // 0xF0
const bit<8>  SAT_HIGH   = 8w255 |+| 8w10;                    // 255
const bit<8>  SAT_LOW    = 8w3 |-| 8w10;                      // 0
const bit<8>  NARROWED   = (bit<8>)(bit<4>)16w0x1234;         // 4
const bool    LOGIC      = true && !false;                    // true
const bit<8>  CHOSEN     = (8w5 > 8w3) ? 8w1 : 8w2;           // 1
const bit<8>  LEVEL      = (bit<8>)Level.HIGH;                // 9
const bit<16> SIGN_EXT   = (bit<16>)(int<16>)(int<8>)8w0x80;  // 0xFF80
const bit<32> BIG_MATH   = (bit<32>)((1 << 40) / 3 % 1000000);

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header consts_t {
    bit<8>  div;
    bit<8>  mod;
    bit<8>  from_neg;
    bit<8>  high_byte;
    bit<8>  joined;
    bit<8>  shifted;
    bit<8>  inverted;
    bit<8>  sat_high;
    bit<8>  sat_low;
    bit<8>  narrowed;
    bit<8>  logic;
    bit<8>  chosen;
    bit<8>  level;
    bit<16> sign_ext;
    bit<32> big_math;
}

struct headers {
    ethernet_t ethernet;
    consts_t   c;
}

struct metadata { }

parser CParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control CVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control CIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.c.setValid();
        hdr.c.div = DIV;
        hdr.c.mod = MOD;
        hdr.c.from_neg = FROM_NEG;
        hdr.c.high_byte = HIGH_BYTE;
        hdr.c.joined = JOINED;
        hdr.c.shifted = SHIFTED;
        hdr.c.inverted = INVERTED;
        hdr.c.sat_high = SAT_HIGH;
        hdr.c.sat_low = SAT_LOW;
        hdr.c.narrowed = NARROWED;
        hdr.c.logic = (bit<8>)(bit<1>)LOGIC;
        hdr.c.chosen = CHOSEN;
        hdr.c.level = LEVEL;
        hdr.c.sign_ext = SIGN_EXT;
        hdr.c.big_math = BIG_MATH;
        standard_metadata.egress_spec = 1;
    }
}

control CEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control CComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control CDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.c);
    }
}

V1Switch(CParser(), CVerifyChecksum(), CIngress(), CEgress(),
         CComputeChecksum(), CDeparser()) main;
