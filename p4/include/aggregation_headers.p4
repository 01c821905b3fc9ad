/*
 * netweft in-network aggregation header (P4-16, needs headers.p4).
 *
 * The one P4 declaration of the aggregation packet format described in
 * docs/aggregation.md; transport/collectives/aggregation/layer.py is its scapy
 * layer.
 * A contribution or a result is Ethernet / IPv4 / UDP (either port
 * AGG_UDP_PORT) / agg_t.  The switch sums the AGG_LANES 32-bit lanes as
 * two's-complement integers (wrapping modulo 2^32) and keeps the maximum of
 * the signed 16-bit exponents.
 */
#ifndef NETWEFT_AGGREGATION_HEADERS_P4
#define NETWEFT_AGGREGATION_HEADERS_P4

#include "headers.p4"

/* UDP port of aggregation traffic: in IANA's dynamic range (49152-65535,
 * never assigned) and above Linux's default ephemeral range (32768-60999),
 * so no kernel-chosen source port looks like aggregation traffic. */
const bit<16> AGG_UDP_PORT = 61440;

/* Version of the header layout; packets with another one are malformed. */
const bit<8> AGG_VERSION = 1;

/* K: the 32-bit lanes per packet (one quantization block).  Changing it
 * means changing AGG_FOR_EACH_LANE and agg_t together (docs/aggregation.md). */
#define AGG_LANES 64
const bit<16> AGG_LANE_COUNT = AGG_LANES;

/* Applies the macro M to every lane index 0..AGG_LANES-1. */
#define AGG_FOR_EACH_LANE(M) \
    M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) \
    M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) \
    M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) \
    M(24) M(25) M(26) M(27) M(28) M(29) M(30) M(31) \
    M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39) \
    M(40) M(41) M(42) M(43) M(44) M(45) M(46) M(47) \
    M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) \
    M(56) M(57) M(58) M(59) M(60) M(61) M(62) M(63)

/* Flags (agg_t.flags). */
const bit<8> AGG_FLAG_RESULT     = 0x01;  /* set by the switch: the lanes are the sum */
const bit<8> AGG_FLAG_RETRANSMIT = 0x02;  /* set by a worker on a resent contribution */
const bit<8> AGG_FLAG_RESENT     = 0x04;  /* set by the switch: a result unicast again */

/* Largest number of workers per job: one bit each in a slot's bitmap. */
const bit<32> AGG_MAX_WORKERS = 32;

header agg_t {
    bit<8>  version;     /* AGG_VERSION */
    bit<8>  flags;       /* AGG_FLAG_* */
    bit<16> job_id;      /* selects the job's slot range (agg_jobs table) */
    bit<16> slot;        /* slot index inside the job's range, 0..size-1 */
    bit<1>  pool;        /* which of the slot's two shadow copies */
    bit<7>  reserved;    /* 0 */
    bit<8>  worker_id;   /* 0..workers-1 in a contribution; the receiver in a result */
    bit<32> block;       /* opaque to the switch: echoed in the result */
    bit<16> exponent;    /* int16, two's complement: the switch keeps the maximum */
    bit<16> lane_count;  /* AGG_LANES; packets with another count are malformed */
    bit<32> lane0;
    bit<32> lane1;
    bit<32> lane2;
    bit<32> lane3;
    bit<32> lane4;
    bit<32> lane5;
    bit<32> lane6;
    bit<32> lane7;
    bit<32> lane8;
    bit<32> lane9;
    bit<32> lane10;
    bit<32> lane11;
    bit<32> lane12;
    bit<32> lane13;
    bit<32> lane14;
    bit<32> lane15;
    bit<32> lane16;
    bit<32> lane17;
    bit<32> lane18;
    bit<32> lane19;
    bit<32> lane20;
    bit<32> lane21;
    bit<32> lane22;
    bit<32> lane23;
    bit<32> lane24;
    bit<32> lane25;
    bit<32> lane26;
    bit<32> lane27;
    bit<32> lane28;
    bit<32> lane29;
    bit<32> lane30;
    bit<32> lane31;
    bit<32> lane32;
    bit<32> lane33;
    bit<32> lane34;
    bit<32> lane35;
    bit<32> lane36;
    bit<32> lane37;
    bit<32> lane38;
    bit<32> lane39;
    bit<32> lane40;
    bit<32> lane41;
    bit<32> lane42;
    bit<32> lane43;
    bit<32> lane44;
    bit<32> lane45;
    bit<32> lane46;
    bit<32> lane47;
    bit<32> lane48;
    bit<32> lane49;
    bit<32> lane50;
    bit<32> lane51;
    bit<32> lane52;
    bit<32> lane53;
    bit<32> lane54;
    bit<32> lane55;
    bit<32> lane56;
    bit<32> lane57;
    bit<32> lane58;
    bit<32> lane59;
    bit<32> lane60;
    bit<32> lane61;
    bit<32> lane62;
    bit<32> lane63;
}

#endif  /* NETWEFT_AGGREGATION_HEADERS_P4 */
