/*
 * p4/tna/fabric.p4 — the fabric program for Tofino 1 (TNA, tna.p4).
 *
 * The design of p4/fabric.p4 written to Tofino's architecture, compiled with
 * `bf-p4c --target tofino --arch tna p4/tna/fabric.p4` (docs/tofino.md says
 * what was compiled and the resources); docs/fabric.md ("The Tofino
 * variant") lists where it differs from the v1model program.
 *
 * What Tofino changes:
 *   - Ingress cannot read egress state (each gress has its own registers), so
 *     the queue depths that adaptive spraying and trimming need travel as
 *     depth reports: egress mirrors (E2E) a small report to the recirculation
 *     port whenever a port's depth changes by a step (depth >> 2), and
 *     ingress stores the reported depth per port in nine copies of a register
 *     (one per group member slot and one for the trim decision: a register
 *     can be accessed once per packet).  The estimate lags by the report's
 *     trip (mirror, recirculation), about a microsecond, plus the step.
 *   - There is no modulo: a group has 8 member slots that the controller
 *     fills by repeating its members (slot i = member i mod size), and every
 *     mode picks a slot (3 bits of crc32, of the entropy, of Random, of the
 *     round-robin counter).  Groups whose size does not divide 8 are biased
 *     (e.g. 3 members: 3/8, 3/8, 2/8).  Adaptive spraying takes the minimum
 *     of the eight slots' costs (depth ++ (slot ^ a random start)) as a tree
 *     of min() (three levels, not a chain of eight comparisons): ties go to
 *     the slot whose XOR with the start is least.  The winner's slot is its
 *     cost's low three bits ^ start, and one table keyed on both
 *     (adaptive_port) gives its port.
 *   - Tofino 1 has 12 stages: ingress's longest chain of dependent steps is
 *     meant to be route -> group members ->
 *     eight depths -> three levels of min() -> port -> trim threshold and
 *     depth -> margin -> trim.  Everything else runs beside it, not before
 *     it: the drop reasons (malformed, multicast, routing) are kept apart
 *     and merged once, the ACK aggregation marks an absorbed ACK instead of
 *     ending the pipeline (`exit`), and whether a packet may be trimmed is
 *     worked out from its headers at the start.
 *   - Trimming: ingress decides (queue estimate at or above the port's trim
 *     threshold), mirrors the packet (I2E) to the port's trim session, whose
 *     max_pkt_len truncates the copy to its headers and whose queue is the
 *     port's high-priority queue, and drops the original.  The ingress
 *     mirror copies the packet as it arrived, so egress rewrites the copy:
 *     trimmed mark, DSCP, lengths, IPv4 and UDP checksums.
 *   - ACK aggregation keeps (sequence, receiver bitmap) as one register pair
 *     per slot; an ACK for another sequence restarts the slot (there is no
 *     stale-ACK test, which would need a third comparison in the stateful
 *     ALU).
 *   - The mirror headers' first byte (what egress parses: KIND_*) comes from
 *     metadata, not a constant: Tofino's mirror field lists take no constant
 *     but zero padding.
 *   - Multicast copies are pruned in egress (the bridged ingress port); the
 *     replication engine's level-2 exclusion (level2_exclusion_id = ingress
 *     port, with the controller's L2 XID table) is the hardware alternative.
 */
#include <core.p4>
#include <tna.p4>

#include "../include/headers.p4"
#include "../include/fabric_headers.p4"
#include "include/ipv4_options.p4"

/* Pipe 0's recirculation port on Tofino 1 (the depth reports' way back). */
const PortId_t RECIRC_PORT = 68;

const bit<32> FABRIC_PORTS      = 512;
const bit<32> FABRIC_MAX_GROUPS = 1024;
const bit<32> FABRIC_ACK_SLOTS  = 16384;   /* 64 groups x 256 sequence numbers */
const bit<16> FABRIC_MCAST_GROUPS = 64;

const bit<3> SPRAY_FLOW_HASH   = 0;
const bit<3> SPRAY_ENTROPY     = 1;
const bit<3> SPRAY_RANDOM      = 2;
const bit<3> SPRAY_ROUND_ROBIN = 3;
const bit<3> SPRAY_ADAPTIVE    = 4;

const bit<2> ROUTE_NONE      = 0;
const bit<2> ROUTE_PORT      = 1;
const bit<2> ROUTE_MULTICAST = 2;
const bit<2> ROUTE_GROUP     = 3;

const bit<8> DROP_NONE         = 0;
const bit<8> DROP_PARSER_ERROR = 1;
const bit<8> DROP_NOT_IP       = 2;
const bit<8> DROP_TTL          = 3;
const bit<8> DROP_NO_ROUTE     = 4;
const bit<8> DROP_BAD_GROUP    = 5;
const bit<8> DROP_BAD_MCAST    = 6;
const bit<8> DROP_BAD_LENGTH   = 7;

/* First byte of what egress parses before Ethernet. */
const bit<8> KIND_BRIDGE = 1;   /* ingress -> egress, every normal packet */
const bit<8> KIND_TRIM   = 2;   /* an ingress mirror copy to be trimmed */
const bit<8> KIND_REPORT = 3;   /* an egress mirror copy: a depth report */

const MirrorType_t MIRROR_TRIM   = 1;
const MirrorType_t MIRROR_REPORT = 2;

header fabric_bridge_h {
    bit<8>   kind;
    bit<6>   _pad0;
    bit<1>   is_mcast;
    PortId_t ingress_port;
}

header trim_mirror_h {
    bit<8> kind;
    bit<2> _pad0;
    bit<6> dscp;
}

/* Egress's mirror header for reports, and the header the recirculated report carries. */
header depth_report_h {
    bit<8>   kind;
    bit<7>   _pad0;
    PortId_t port;
    bit<24>  depth;      /* 19 bits of depth under 5 zero bits */
}

/* depth_report_h as egress's mirror writes it (the same 6 bytes). */
header depth_report_mirror_h {
    bit<8>   kind;
    bit<7>   _pad0;
    PortId_t port;
    bit<5>   _pad1;
    bit<19>  depth;
}

struct tna_headers_t {
    fabric_bridge_h bridge;
    trim_mirror_h   trim;
    depth_report_h  report;
    ethernet_t      ethernet;
    vlan_t          vlan;
    ipv4_t          ipv4;
    IPV4_OPTION_WORDS
    ipv6_t          ipv6;
    udp_t           udp;
    tcp_t           tcp;
    uet_pds_t       pds;
    uet_trim_keep_t keep;
    nw_mcast_t      mcast;
}

struct tna_ingress_md_t {
    l4_ports_t  l4;
    bit<8>      drop_reason;   /* malformed (parser error, UDP length), then all merged */
    bit<8>      mcast_drop;    /* DROP_BAD_MCAST */
    bit<8>      route_drop;    /* DROP_TTL, DROP_NOT_IP, DROP_NO_ROUTE, DROP_BAD_GROUP */
    bool        ack_absorbed;  /* an ACK the aggregation keeps: dropped, not forwarded */
    bool        trim_candidate; /* a UET packet without IPv4 options: trimmable */
    bit<2>      route;
    bit<16>     group_id;
    bit<3>      mode;
    bit<3>      slot;
    PortId_t    port0;
    PortId_t    port1;
    PortId_t    port2;
    PortId_t    port3;
    PortId_t    port4;
    PortId_t    port5;
    PortId_t    port6;
    PortId_t    port7;
    PortId_t    trim_port;     /* the egress port (a report's port): the trim copy's index */
    bit<32>     port_depth;
    bit<32>     trim_margin;   /* port_depth - trim_threshold */
    bit<32>     ack_seen;      /* the ACK slot's receivers after this ACK */
    bit<32>     ack_missing;   /* expected receivers not in ack_seen */
    bool        trim_enabled;
    bit<32>     trim_threshold;
    bit<24>     depth_x8;      /* a depth report's depth << 3, as the member copies keep it */
    bit<6>      trim_dscp;
    MirrorId_t  trim_session_ipv4;
    MirrorId_t  trim_session_ipv6;
    MirrorId_t  mirror_session;
    bit<8>      mirror_kind;   /* KIND_TRIM: the trim mirror header's first byte */
    bit<3>      start;         /* adaptive: the random slot ties start from */
    bit<3>      tb0;           /* adaptive: slot i ^ start, a cost's low bits */
    bit<3>      tb1;
    bit<3>      tb2;
    bit<3>      tb3;
    bit<3>      tb4;
    bit<3>      tb5;
    bit<3>      tb6;
    bit<3>      tb7;
    bit<32>     cost0;         /* adaptive: slot i's depth ++ (i ^ start) */
    bit<32>     cost1;
    bit<32>     cost2;
    bit<32>     cost3;
    bit<32>     cost4;
    bit<32>     cost5;
    bit<32>     cost6;
    bit<32>     cost7;
    bool        ack_aggregate;
    bit<32>     ack_expected;
    bool        ack_update_checksum;
}

struct tna_egress_md_t {
    bool       trimmed;
    bool       ecn_enabled;
    bit<32>    ecn_threshold;
    bit<32>    enq_depth;      /* enq_qdepth, 32 bits wide */
    bit<32>    ecn_margin;     /* enq_depth - ecn_threshold */
    bool       report_enabled;
    MirrorId_t report_session;
    bit<19>    report_depth;
    PortId_t   report_port;
    bit<8>     report_kind;    /* KIND_REPORT: the report mirror header's first byte */
}

/* ------------------------------------------------------------------ ingress */

parser FabricIngressParser(packet_in pkt,
                           out tna_headers_t hdr,
                           out tna_ingress_md_t md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.l4.srcPort = 0;
        md.l4.dstPort = 0;
        md.drop_reason = DROP_NONE;
        md.mcast_drop = DROP_NONE;
        md.route_drop = DROP_NONE;
        md.ack_absorbed = false;
        md.ack_aggregate = false;
        md.trim_candidate = false;
        md.route = ROUTE_NONE;
        md.ack_update_checksum = false;
        transition select(ig_intr_md.ingress_port) {
            RECIRC_PORT: parse_report;
            default: parse_ethernet;
        }
    }

    /* A report's port is also each depth register's index field, so that a
     * register's store (reports) and load (packets) share their index and
     * stage. */
    state parse_report {
        pkt.extract(hdr.report);
        md.port0 = hdr.report.port;
        md.port1 = hdr.report.port;
        md.port2 = hdr.report.port;
        md.port3 = hdr.report.port;
        md.port4 = hdr.report.port;
        md.port5 = hdr.report.port;
        md.port6 = hdr.report.port;
        md.port7 = hdr.report.port;
        md.trim_port = hdr.report.port;
        transition accept;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_VLAN: parse_vlan;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    /* ihl below 5 is malformed: routed as IP without its ports */
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl) {
            0 .. 4: accept;
            5: parse_ipv4_payload;
            default: parse_ipv4_opt0;
        }
    }

    IPV4_OPTION_STATES

    state parse_ipv4_payload {
        transition select(hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (0, IPPROTO_UDP): parse_udp;
            (0, IPPROTO_TCP): parse_tcp;
            default: accept;
        }
    }

    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition select(hdr.ipv6.nextHdr) {
            IPPROTO_UDP: parse_udp;
            IPPROTO_TCP: parse_tcp;
            default: accept;
        }
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        md.l4.srcPort = hdr.udp.srcPort;
        md.l4.dstPort = hdr.udp.dstPort;
        transition select(hdr.udp.dstPort, hdr.udp.length) {
            (UET_UDP_PORT, 0 .. 72): accept;
            (UET_UDP_PORT, _): parse_uet_keep;
            (NW_MCAST_UDP_PORT, _): parse_mcast;
            default: accept;
        }
    }

    state parse_tcp {
        pkt.extract(hdr.tcp);
        md.l4.srcPort = hdr.tcp.srcPort;
        md.l4.dstPort = hdr.tcp.dstPort;
        transition accept;
    }

    state parse_uet_keep {
        pkt.extract(hdr.pds);
        pkt.extract(hdr.keep);
        transition accept;
    }

    state parse_mcast {
        pkt.extract(hdr.mcast);
        transition accept;
    }
}

/* One copy per member slot of the reported depth per port, as depth ++ 3w0;
 * a load returns it plus the slot's tie bits: the slot's adaptive cost, made
 * by the stateful ALU (a cost assembled by the action units from the depth
 * and the tie bits could not be placed in PHV containers beside min()). */
#define DEPTH_COPY(n, tb)                                                      \
    Register<bit<32>, PortId_t>(FABRIC_PORTS, 0) depth_##n;                    \
    RegisterAction<bit<32>, PortId_t, bit<32>>(depth_##n) store_depth_##n = {   \
        void apply(inout bit<32> value) {                                      \
            value = (bit<32>)md.depth_x8;                                      \
        }                                                                      \
    };                                                                         \
    RegisterAction<bit<32>, PortId_t, bit<32>>(depth_##n) load_depth_##n = {    \
        void apply(inout bit<32> value, out bit<32> rv) {                      \
            rv = value + (bit<32>)tb;                                          \
        }                                                                      \
    };

/* The copy for trimming: the depth itself. */
#define DEPTH_COPY_TRIM                                                        \
    Register<bit<32>, PortId_t>(FABRIC_PORTS, 0) depth_trim;                   \
    RegisterAction<bit<32>, PortId_t, bit<32>>(depth_trim) store_depth_trim = { \
        void apply(inout bit<32> value) {                                      \
            value = (bit<32>)hdr.report.depth;                                 \
        }                                                                      \
    };                                                                         \
    RegisterAction<bit<32>, PortId_t, bit<32>>(depth_trim) load_depth_trim = {  \
        void apply(inout bit<32> value, out bit<32> rv) {                      \
            rv = value;                                                        \
        }                                                                      \
    };

/* adaptive_port's entries for start s: low bits d -> slot d ^ s. */
#define ADAPTIVE_ENTRY(d, s, slot) (d, s): use_port##slot();
#define ADAPTIVE_ENTRIES_S0 ADAPTIVE_ENTRY(0, 0, 0) ADAPTIVE_ENTRY(1, 0, 1) ADAPTIVE_ENTRY(2, 0, 2) ADAPTIVE_ENTRY(3, 0, 3) ADAPTIVE_ENTRY(4, 0, 4) ADAPTIVE_ENTRY(5, 0, 5) ADAPTIVE_ENTRY(6, 0, 6) ADAPTIVE_ENTRY(7, 0, 7)
#define ADAPTIVE_ENTRIES_S1 ADAPTIVE_ENTRY(0, 1, 1) ADAPTIVE_ENTRY(1, 1, 0) ADAPTIVE_ENTRY(2, 1, 3) ADAPTIVE_ENTRY(3, 1, 2) ADAPTIVE_ENTRY(4, 1, 5) ADAPTIVE_ENTRY(5, 1, 4) ADAPTIVE_ENTRY(6, 1, 7) ADAPTIVE_ENTRY(7, 1, 6)
#define ADAPTIVE_ENTRIES_S2 ADAPTIVE_ENTRY(0, 2, 2) ADAPTIVE_ENTRY(1, 2, 3) ADAPTIVE_ENTRY(2, 2, 0) ADAPTIVE_ENTRY(3, 2, 1) ADAPTIVE_ENTRY(4, 2, 6) ADAPTIVE_ENTRY(5, 2, 7) ADAPTIVE_ENTRY(6, 2, 4) ADAPTIVE_ENTRY(7, 2, 5)
#define ADAPTIVE_ENTRIES_S3 ADAPTIVE_ENTRY(0, 3, 3) ADAPTIVE_ENTRY(1, 3, 2) ADAPTIVE_ENTRY(2, 3, 1) ADAPTIVE_ENTRY(3, 3, 0) ADAPTIVE_ENTRY(4, 3, 7) ADAPTIVE_ENTRY(5, 3, 6) ADAPTIVE_ENTRY(6, 3, 5) ADAPTIVE_ENTRY(7, 3, 4)
#define ADAPTIVE_ENTRIES_S4 ADAPTIVE_ENTRY(0, 4, 4) ADAPTIVE_ENTRY(1, 4, 5) ADAPTIVE_ENTRY(2, 4, 6) ADAPTIVE_ENTRY(3, 4, 7) ADAPTIVE_ENTRY(4, 4, 0) ADAPTIVE_ENTRY(5, 4, 1) ADAPTIVE_ENTRY(6, 4, 2) ADAPTIVE_ENTRY(7, 4, 3)
#define ADAPTIVE_ENTRIES_S5 ADAPTIVE_ENTRY(0, 5, 5) ADAPTIVE_ENTRY(1, 5, 4) ADAPTIVE_ENTRY(2, 5, 7) ADAPTIVE_ENTRY(3, 5, 6) ADAPTIVE_ENTRY(4, 5, 1) ADAPTIVE_ENTRY(5, 5, 0) ADAPTIVE_ENTRY(6, 5, 3) ADAPTIVE_ENTRY(7, 5, 2)
#define ADAPTIVE_ENTRIES_S6 ADAPTIVE_ENTRY(0, 6, 6) ADAPTIVE_ENTRY(1, 6, 7) ADAPTIVE_ENTRY(2, 6, 4) ADAPTIVE_ENTRY(3, 6, 5) ADAPTIVE_ENTRY(4, 6, 2) ADAPTIVE_ENTRY(5, 6, 3) ADAPTIVE_ENTRY(6, 6, 0) ADAPTIVE_ENTRY(7, 6, 1)
#define ADAPTIVE_ENTRIES_S7 ADAPTIVE_ENTRY(0, 7, 7) ADAPTIVE_ENTRY(1, 7, 6) ADAPTIVE_ENTRY(2, 7, 5) ADAPTIVE_ENTRY(3, 7, 4) ADAPTIVE_ENTRY(4, 7, 3) ADAPTIVE_ENTRY(5, 7, 2) ADAPTIVE_ENTRY(6, 7, 1) ADAPTIVE_ENTRY(7, 7, 0)
#define ADAPTIVE_ENTRIES(s) ADAPTIVE_ENTRIES_S##s

struct ack_slot_t {
    bit<32> seq;
    bit<32> receivers;
}

control FabricIngress(inout tna_headers_t hdr,
                      inout tna_ingress_md_t md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<8>>(8, CounterType_t.PACKETS) drops;
    Counter<bit<32>, PortId_t>(FABRIC_PORTS, CounterType_t.PACKETS_AND_BYTES) trimmed;
    Counter<bit<32>, bit<16>>((bit<32>)FABRIC_MCAST_GROUPS, CounterType_t.PACKETS) acks_absorbed;
    Counter<bit<32>, bit<16>>((bit<32>)FABRIC_MCAST_GROUPS, CounterType_t.PACKETS) acks_forwarded;

    Hash<bit<3>>(HashAlgorithm_t.CRC32) flow_hash_v4;
    Hash<bit<3>>(HashAlgorithm_t.CRC32) flow_hash_v6;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) ack_slot;
    Random<bit<3>>() random_slot;
    Random<bit<3>>() random_start;

    Register<bit<8>, bit<16>>(FABRIC_MAX_GROUPS, 0) rr_cursor;
    RegisterAction<bit<8>, bit<16>, bit<3>>(rr_cursor) next_rr_slot = {
        void apply(inout bit<8> value, out bit<3> rv) {
            rv = (bit<3>)value;
            value = value + 1;
        }
    };

    DEPTH_COPY(m0, md.tb0)
    DEPTH_COPY(m1, md.tb1)
    DEPTH_COPY(m2, md.tb2)
    DEPTH_COPY(m3, md.tb3)
    DEPTH_COPY(m4, md.tb4)
    DEPTH_COPY(m5, md.tb5)
    DEPTH_COPY(m6, md.tb6)
    DEPTH_COPY(m7, md.tb7)
    DEPTH_COPY_TRIM

    /* One table per depth register, keyed on whether the packet is a depth
     * report: a report stores, any other packet loads, so that both of a
     * register's RegisterActions run from one table in one stage. */
#define DEPTH_TABLE(n, out, index)                                             \
    action do_store_##n() { store_depth_##n.execute(index); }                  \
    action do_load_##n() { out = load_depth_##n.execute(index); }              \
    table depth_op_##n {                                                       \
        key = { hdr.report.isValid(): exact; }                                 \
        actions = { do_store_##n; do_load_##n; }                               \
        const entries = {                                                      \
            true: do_store_##n();                                              \
            false: do_load_##n();                                              \
        }                                                                      \
        size = 2;                                                              \
    }
    DEPTH_TABLE(m0, md.cost0, md.port0)
    DEPTH_TABLE(m1, md.cost1, md.port1)
    DEPTH_TABLE(m2, md.cost2, md.port2)
    DEPTH_TABLE(m3, md.cost3, md.port3)
    DEPTH_TABLE(m4, md.cost4, md.port4)
    DEPTH_TABLE(m5, md.cost5, md.port5)
    DEPTH_TABLE(m6, md.cost6, md.port6)
    DEPTH_TABLE(m7, md.cost7, md.port7)
    DEPTH_TABLE(trim, md.port_depth, md.trim_port)

    Register<ack_slot_t, bit<32>>(FABRIC_ACK_SLOTS) ack_slots;
    RegisterAction<ack_slot_t, bit<32>, bit<32>>(ack_slots) merge_ack = {
        void apply(inout ack_slot_t value, out bit<32> seen) {
            if (value.seq == hdr.mcast.seq) {
                value.receivers = value.receivers | hdr.mcast.receivers;
            } else {
                value.seq = hdr.mcast.seq;
                value.receivers = hdr.mcast.receivers;
            }
            seen = value.receivers;
        }
    };

    action drop() {
        md.route_drop = DROP_NO_ROUTE;
    }

    action route_to_port(PortId_t port) {
        md.route = ROUTE_PORT;
        ig_tm_md.ucast_egress_port = port;
        md.trim_port = port;
    }

    action route_to_group(bit<16> group_id, bit<3> mode) {
        md.route = ROUTE_GROUP;
        md.group_id = group_id;
        md.mode = mode;
    }

    action route_to_multicast(MulticastGroupId_t mcast_grp) {
        md.route = ROUTE_MULTICAST;
        ig_tm_md.mcast_grp_a = mcast_grp;
    }

    table ipv4_routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { route_to_port; route_to_group; route_to_multicast; drop; }
        size = 4096;
        default_action = drop();
    }

    /* 2048 entries: 4096 128-bit TCAM entries take all 24 TCAM blocks of a
     * Tofino 1 stage, and ipv4_routes would have to wait a stage for them */
    table ipv6_routes {
        key = { hdr.ipv6.dstAddr: lpm; }
        actions = { route_to_port; route_to_group; route_to_multicast; drop; }
        size = 2048;
        default_action = drop();
    }

    /* Eight slots; the controller repeats the members: slot i = member i mod size. */
    action set_members(PortId_t port0, PortId_t port1, PortId_t port2, PortId_t port3,
                       PortId_t port4, PortId_t port5, PortId_t port6, PortId_t port7) {
        md.port0 = port0;
        md.port1 = port1;
        md.port2 = port2;
        md.port3 = port3;
        md.port4 = port4;
        md.port5 = port5;
        md.port6 = port6;
        md.port7 = port7;
    }

    action no_members() {
        md.route_drop = DROP_BAD_GROUP;
    }

    table ecmp_groups {
        key = { md.group_id: exact; }
        actions = { set_members; no_members; }
        size = FABRIC_MAX_GROUPS;
        default_action = no_members();
    }

    /* adaptive: each slot's tie bits, slot ^ start (a table's action, so
     * that they stay fields: the stateful ALUs read them) */
    action set_tie_bits() {
        md.tb0 = 3w0 ^ md.start;
        md.tb1 = 3w1 ^ md.start;
        md.tb2 = 3w2 ^ md.start;
        md.tb3 = 3w3 ^ md.start;
        md.tb4 = 3w4 ^ md.start;
        md.tb5 = 3w5 ^ md.start;
        md.tb6 = 3w6 ^ md.start;
        md.tb7 = 3w7 ^ md.start;
    }

    table tie_bits {
        actions = { set_tie_bits; }
        default_action = set_tie_bits();
        size = 1;
    }

    /* Differences and masks a gateway then tests, computed in tables' actions
     * so that they stay fields (bf-p4c's gateways test fields, not expressions). */
    action set_trim_margin() {
        md.trim_margin = md.port_depth - md.trim_threshold;
    }

    table trim_margin {
        actions = { set_trim_margin; }
        default_action = set_trim_margin();
        size = 1;
    }

    action set_ack_missing() {
        md.ack_missing = md.ack_expected & ~md.ack_seen;
    }

    table ack_missing {
        actions = { set_ack_missing; }
        default_action = set_ack_missing();
        size = 1;
    }

    /* a depth report's depth << 3 (a table's action: the stores read a field) */
    action set_depth_x8() {
        md.depth_x8 = hdr.report.depth << 3;
    }

    table report_x8 {
        actions = { set_depth_x8; }
        default_action = set_depth_x8();
        size = 1;
    }

    /* A member slot's port to the traffic manager. */
    action use_port0() { ig_tm_md.ucast_egress_port = md.port0; md.trim_port = md.port0; }
    action use_port1() { ig_tm_md.ucast_egress_port = md.port1; md.trim_port = md.port1; }
    action use_port2() { ig_tm_md.ucast_egress_port = md.port2; md.trim_port = md.port2; }
    action use_port3() { ig_tm_md.ucast_egress_port = md.port3; md.trim_port = md.port3; }
    action use_port4() { ig_tm_md.ucast_egress_port = md.port4; md.trim_port = md.port4; }
    action use_port5() { ig_tm_md.ucast_egress_port = md.port5; md.trim_port = md.port5; }
    action use_port6() { ig_tm_md.ucast_egress_port = md.port6; md.trim_port = md.port6; }
    action use_port7() { ig_tm_md.ucast_egress_port = md.port7; md.trim_port = md.port7; }

    /* slot -> its port (flow hash, entropy, random, round robin) */
    table member_port {
        key = { md.slot: exact; }
        actions = { use_port0; use_port1; use_port2; use_port3;
                    use_port4; use_port5; use_port6; use_port7; }
        const entries = {
            0: use_port0(); 1: use_port1(); 2: use_port2(); 3: use_port3();
            4: use_port4(); 5: use_port5(); 6: use_port6(); 7: use_port7();
        }
        size = 8;
    }

    /* adaptive: (the minimum cost's low 3 bits, start) -> the port of slot
     * low bits ^ start, in one stage after the min() tree */
    table adaptive_port {
        key = { md.cost0[2:0]: exact @name("cost_low_bits"); md.start: exact; }
        actions = { use_port0; use_port1; use_port2; use_port3;
                    use_port4; use_port5; use_port6; use_port7; }
        const entries = {
            ADAPTIVE_ENTRIES(0) ADAPTIVE_ENTRIES(1) ADAPTIVE_ENTRIES(2) ADAPTIVE_ENTRIES(3)
            ADAPTIVE_ENTRIES(4) ADAPTIVE_ENTRIES(5) ADAPTIVE_ENTRIES(6) ADAPTIVE_ENTRIES(7)
        }
        size = 64;
    }

    action set_trim(bit<19> threshold, bit<6> dscp,
                    MirrorId_t session_ipv4, MirrorId_t session_ipv6) {
        md.trim_enabled = true;
        md.trim_threshold = (bit<32>)threshold;
        md.trim_dscp = dscp;
        md.trim_session_ipv4 = session_ipv4;
        md.trim_session_ipv6 = session_ipv6;
    }

    action no_trim() {
        md.trim_enabled = false;
    }

    table trim_config {
        key = { ig_tm_md.ucast_egress_port: exact; }
        actions = { set_trim; no_trim; }
        size = FABRIC_PORTS;
        default_action = no_trim();
    }

    action aggregate_acks(bit<32> expected) {
        md.ack_aggregate = true;
        md.ack_expected = expected;
    }

    action pass_acks() {
        md.ack_aggregate = false;
    }

    table ack_groups {
        key = { hdr.mcast.group: exact; }
        actions = { aggregate_acks; pass_acks; }
        size = (bit<32>)FABRIC_MCAST_GROUPS;
        default_action = pass_acks();
    }

    apply {
        /* A depth report from egress: stored in every copy (by the depth_op
         * tables below, which load for other packets), then dropped. */
        if (hdr.report.isValid()) {
            report_x8.apply();
            ig_dprsr_md.drop_ctl = 1;
        }

        if (ig_prsr_md.parser_err != PARSER_ERROR_OK) {
            md.drop_reason = DROP_PARSER_ERROR;
        } else if (hdr.udp.isValid() && hdr.udp.length < 8) {
            md.drop_reason = DROP_BAD_LENGTH;
        }
        /* Trimmable: a UET packet (RUD, ROD, UUD, with or without CC) without options. */
        if (hdr.keep.isValid() && !hdr.ipv4_opt0.isValid()
                && (hdr.pds.pdsType == UET_PDS_RUD || hdr.pds.pdsType == UET_PDS_ROD
                    || hdr.pds.pdsType == UET_PDS_UUD || hdr.pds.pdsType == UET_PDS_RUD_CC
                    || hdr.pds.pdsType == UET_PDS_ROD_CC)) {
            md.trim_candidate = true;
        }
        md.start = random_start.get();

        /* The ACK aggregation's four dependent steps are interleaved with
         * routing and spraying, step by step, rather than run before them:
         * Tofino 1's tables follow the program's order from stage to stage,
         * so an ACK block first would delay routing by its four stages.
         * Its drops are merged below; an absorbed ACK goes on through the
         * pipeline and is dropped at its end. */

        /* ACK step 1: a multicast control packet's group settings. */
        if (ig_prsr_md.parser_err == PARSER_ERROR_OK && hdr.mcast.isValid()
                && hdr.mcast.kind != NW_MCAST_DATA) {
            if (hdr.mcast.kind != NW_MCAST_ACK || hdr.udp.length != NW_MCAST_ACK_UDP_LEN) {
                md.mcast_drop = DROP_BAD_MCAST;
            } else {
                ack_groups.apply();
            }
        }

        /* Routing (its drops in md.route_drop). */
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                md.route_drop = DROP_TTL;
            } else {
                ipv4_routes.apply();
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            }
        } else if (hdr.ipv6.isValid()) {
            if (hdr.ipv6.hopLimit <= 1) {
                md.route_drop = DROP_TTL;
            } else {
                ipv6_routes.apply();
                hdr.ipv6.hopLimit = hdr.ipv6.hopLimit - 1;
            }
        } else {
            md.route_drop = DROP_NOT_IP;
        }

        /* ACK step 2: merge the ACK into its slot, (group << 8) | seq[7:0]
         * from the hash unit (group < 64). */
        if (md.ack_aggregate && hdr.mcast.group < FABRIC_MCAST_GROUPS) {
            md.ack_seen = merge_ack.execute(
                ack_slot.get({ hdr.mcast.group[5:0], hdr.mcast.seq[7:0] }));
        }

        /* Spraying, first: the group's members (and adaptive's tie bits). */
        if (md.route == ROUTE_GROUP) {
            ecmp_groups.apply();
            if (md.mode == SPRAY_ADAPTIVE) {
                tie_bits.apply();
            }
        }

        /* ACK step 3: the expected receivers not seen yet. */
        if (md.ack_aggregate && hdr.mcast.group < FABRIC_MCAST_GROUPS) {
            ack_missing.apply();
        }

        /* Spraying, second: adaptive's eight costs. */
        if (hdr.report.isValid() || (md.route == ROUTE_GROUP && md.mode == SPRAY_ADAPTIVE)) {
            depth_op_m0.apply();
            depth_op_m1.apply();
            depth_op_m2.apply();
            depth_op_m3.apply();
            depth_op_m4.apply();
            depth_op_m5.apply();
            depth_op_m6.apply();
            depth_op_m7.apply();
        }

        /* ACK step 4: forward the ACK, aggregated, or absorb it (counters
         * apart from constants: a gateway's action cannot take both an
         * index from the hash unit and action data). */
        if (md.ack_aggregate && hdr.mcast.group < FABRIC_MCAST_GROUPS) {
            if (md.ack_missing == 0) {
                hdr.mcast.receivers = md.ack_seen;
                hdr.mcast.flags = hdr.mcast.flags | NW_MCAST_F_AGGREGATED;
                md.ack_update_checksum = true;
            } else {
                md.ack_absorbed = true;
            }
            if (md.ack_missing == 0) {
                acks_forwarded.count(hdr.mcast.group);
            } else {
                acks_absorbed.count(hdr.mcast.group);
            }
        }

        /* Spraying, last: the member's port. */
        if (md.route == ROUTE_GROUP) {
            if (md.mode == SPRAY_ADAPTIVE) {
                md.cost0 = min(md.cost0, md.cost1);
                md.cost2 = min(md.cost2, md.cost3);
                md.cost4 = min(md.cost4, md.cost5);
                md.cost6 = min(md.cost6, md.cost7);
                md.cost0 = min(md.cost0, md.cost2);
                md.cost4 = min(md.cost4, md.cost6);
                md.cost0 = min(md.cost0, md.cost4);
                adaptive_port.apply();
            } else {
                if (md.mode == SPRAY_ENTROPY) {
                    md.slot = md.l4.srcPort[2:0];
                } else if (md.mode == SPRAY_RANDOM) {
                    md.slot = random_slot.get();
                } else if (md.mode == SPRAY_ROUND_ROBIN) {
                    /* the cursor does not move for packets already to be
                     * dropped (malformed, a bad multicast header, an absorbed
                     * ACK): the v1model program does not route those */
                    if (md.drop_reason == DROP_NONE && md.mcast_drop == DROP_NONE
                            && !md.ack_absorbed) {
                        md.slot = next_rr_slot.execute(md.group_id);
                    }
                } else if (hdr.ipv4.isValid()) {
                    md.slot = flow_hash_v4.get({ hdr.ipv4.srcAddr, hdr.ipv4.dstAddr,
                                                 hdr.ipv4.protocol, md.l4.srcPort, md.l4.dstPort });
                } else {
                    md.slot = flow_hash_v6.get({ hdr.ipv6.srcAddr, hdr.ipv6.dstAddr,
                                                 hdr.ipv6.nextHdr, md.l4.srcPort, md.l4.dstPort });
                }
                member_port.apply();
            }
        }

        /* The trim copy: a report's store, or the egress port's depth. */
        if (hdr.report.isValid()
                || (md.trim_candidate && (md.route == ROUTE_PORT || md.route == ROUTE_GROUP))) {
            depth_op_trim.apply();
        }

        /* The drop reasons merged, first come first: malformed, multicast, routing. */
        if (md.drop_reason == DROP_NONE) {
            if (md.mcast_drop != DROP_NONE) {
                md.drop_reason = md.mcast_drop;
            } else {
                md.drop_reason = md.route_drop;
            }
        }
        if (!md.ack_absorbed && !hdr.report.isValid() && md.drop_reason != DROP_NONE) {
            drops.count(md.drop_reason);
        }
        if (md.ack_absorbed) {
            ig_dprsr_md.drop_ctl = 1;       /* counted in acks_absorbed */
        } else if (md.drop_reason != DROP_NONE) {
            ig_dprsr_md.drop_ctl = 1;
        } else {
            hdr.bridge.setValid();
            hdr.bridge.kind = KIND_BRIDGE;
            hdr.bridge._pad0 = 0;
            hdr.bridge.is_mcast = 0;
            if (md.route == ROUTE_MULTICAST) {
                hdr.bridge.is_mcast = 1;
            }
            hdr.bridge.ingress_port = ig_intr_md.ingress_port;

            /* Trimming: mirror a truncated copy at high priority, drop the
             * original.  The threshold and the port's depth are looked up
             * side by side (both by the egress port, the last thing known). */
            if (md.trim_candidate && (md.route == ROUTE_PORT || md.route == ROUTE_GROUP)) {
                trim_config.apply();
                /* depth >= threshold: the 32-bit difference is not negative */
                trim_margin.apply();
                if (md.trim_enabled && md.trim_margin[31:31] == 0) {
                    if (hdr.ipv4.isValid()) {
                        md.mirror_session = md.trim_session_ipv4;
                    } else {
                        md.mirror_session = md.trim_session_ipv6;
                    }
                    md.mirror_kind = KIND_TRIM;
                    ig_dprsr_md.mirror_type = MIRROR_TRIM;
                    ig_dprsr_md.drop_ctl = 1;
                }
                if (md.trim_enabled && md.trim_margin[31:31] == 0) {
                    trimmed.count(ig_tm_md.ucast_egress_port);
                }
            }
        }
    }
}

control FabricIngressDeparser(packet_out pkt,
                              inout tna_headers_t hdr,
                              in tna_ingress_md_t md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() trim_mirror;
    Checksum() ipv4_checksum;
    Checksum() ack_checksum;

    apply {
        if (ig_dprsr_md.mirror_type == MIRROR_TRIM) {
            trim_mirror.emit<trim_mirror_h>(md.mirror_session, { md.mirror_kind, 2w0, md.trim_dscp });
        }
        hdr.ipv4.hdrChecksum = ipv4_checksum.update(IPV4_CHECKSUM_FIELDS);
        if (md.ack_update_checksum && hdr.ipv4.isValid()) {
            hdr.udp.checksum = ack_checksum.update({
                hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, 8w0, hdr.ipv4.protocol, hdr.udp.length,
                hdr.udp.srcPort, hdr.udp.dstPort, hdr.udp.length,
                hdr.mcast.kind, hdr.mcast.flags, hdr.mcast.group, hdr.mcast.seq,
                hdr.mcast.receivers });
        }
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        EMIT_IPV4_OPTIONS
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.pds);
        pkt.emit(hdr.keep);
        pkt.emit(hdr.mcast);
    }
}

/* ------------------------------------------------------------------- egress */

parser FabricEgressParser(packet_in pkt,
                          out tna_headers_t hdr,
                          out tna_egress_md_t md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        md.trimmed = false;
        transition select(pkt.lookahead<bit<8>>()) {
            KIND_BRIDGE: parse_bridge;
            KIND_TRIM: parse_trim;
            KIND_REPORT: parse_report;
            default: reject;
        }
    }

    state parse_bridge {
        pkt.extract(hdr.bridge);
        transition parse_ethernet;
    }

    state parse_trim {
        pkt.extract(hdr.trim);
        md.trimmed = true;
        transition parse_ethernet;
    }

    state parse_report {
        pkt.extract(hdr.report);
        transition accept;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_VLAN: parse_vlan;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl) {
            0 .. 4: accept;
            5: parse_ipv4_no_options;
            default: parse_ipv4_opt0;
        }
    }

    state parse_ipv4_no_options {
        transition select(hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (0, IPPROTO_UDP): parse_udp;
            default: accept;
        }
    }

    IPV4_OPTION_STATES

    /* After options, UDP only: Tofino 1's egress parser reads at most 160
     * bytes, and the UET headers are needed only by trimmed copies, which
     * never have options (ingress does not trim those). */
    state parse_ipv4_payload {
        transition select(hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (0, IPPROTO_UDP): parse_udp_after_options;
            default: accept;
        }
    }

    state parse_udp_after_options {
        pkt.extract(hdr.udp);
        transition accept;
    }

    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition select(hdr.ipv6.nextHdr) {
            IPPROTO_UDP: parse_udp;
            default: accept;
        }
    }

    /* A trimmed copy needs its UET headers in egress (for the UDP checksum). */
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dstPort, hdr.udp.length) {
            (UET_UDP_PORT, 0 .. 72): accept;
            (UET_UDP_PORT, _): parse_uet_keep;
            default: accept;
        }
    }

    state parse_uet_keep {
        pkt.extract(hdr.pds);
        pkt.extract(hdr.keep);
        transition accept;
    }
}

control FabricEgress(inout tna_headers_t hdr,
                     inout tna_egress_md_t md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<32>, PortId_t>(FABRIC_PORTS, CounterType_t.PACKETS_AND_BYTES) tx_port;
    Counter<bit<32>, PortId_t>(FABRIC_PORTS, CounterType_t.PACKETS_AND_BYTES) ecn_marked;
    Counter<bit<32>, PortId_t>(FABRIC_PORTS, CounterType_t.PACKETS) mcast_pruned;

    /* The depth (in steps of 4 packets) last reported per port. */
    Register<bit<32>, PortId_t>(FABRIC_PORTS, 0) reported_depth;
    RegisterAction<bit<32>, PortId_t, bit<1>>(reported_depth) depth_changed = {
        void apply(inout bit<32> value, out bit<1> changed) {
            if (value != (bit<32>)eg_intr_md.deq_qdepth[18:2]) {
                value = (bit<32>)eg_intr_md.deq_qdepth[18:2];
                changed = 1;
            } else {
                changed = 0;
            }
        }
    };

    action set_neighbor(macAddr_t dmac, macAddr_t smac) {
        hdr.ethernet.dstAddr = dmac;
        hdr.ethernet.srcAddr = smac;
    }

    action keep_macs() {
    }

    table neighbors {
        key = { eg_intr_md.egress_port: exact; }
        actions = { set_neighbor; keep_macs; }
        size = FABRIC_PORTS;
        default_action = keep_macs();
    }

    action deliver_to_host(ip4Addr_t dst) {
        hdr.ipv4.dstAddr = dst;
        hdr.udp.checksum = 0;
    }

    action keep_group_address() {
    }

    table mcast_host_copies {
        key = {
            eg_intr_md.egress_rid: exact;
            eg_intr_md.egress_port: exact;
        }
        actions = { deliver_to_host; keep_group_address; }
        size = 4096;
        default_action = keep_group_address();
    }

    /* enq_qdepth - threshold in a table's action, so that it stays a field
     * (bf-p4c's gateways test fields, not expressions) */
    action set_enq_depth() {
        md.enq_depth = (bit<32>)eg_intr_md.enq_qdepth;
    }

    table enq_depth {
        actions = { set_enq_depth; }
        default_action = set_enq_depth();
        size = 1;
    }

    action set_ecn_margin() {
        md.ecn_margin = md.enq_depth - md.ecn_threshold;
    }

    table ecn_margin {
        actions = { set_ecn_margin; }
        default_action = set_ecn_margin();
        size = 1;
    }

    action set_ecn_threshold(bit<19> threshold) {
        md.ecn_enabled = true;
        md.ecn_threshold = (bit<32>)threshold;
    }

    action no_ecn() {
        md.ecn_enabled = false;
    }

    table ecn_config {
        key = { eg_intr_md.egress_port: exact; }
        actions = { set_ecn_threshold; no_ecn; }
        size = FABRIC_PORTS;
        default_action = no_ecn();
    }

    /* Ports whose depth ingress needs (uplinks, trimming ports): the E2E
     * mirror session whose destination is the recirculation port. */
    action report_depth(MirrorId_t session) {
        md.report_enabled = true;
        md.report_session = session;
    }

    action no_report() {
        md.report_enabled = false;
    }

    table depth_reports {
        key = { eg_intr_md.egress_port: exact; }
        actions = { report_depth; no_report; }
        size = FABRIC_PORTS;
        default_action = no_report();
    }

    apply {
        if (hdr.report.isValid()) {
            return;     /* a report on its way to the recirculation port */
        }
        depth_reports.apply();
        bit<1> changed = 0;
        if (md.report_enabled) {
            changed = depth_changed.execute(eg_intr_md.egress_port);
        }
        if (changed == 1) {
            md.report_kind = KIND_REPORT;
            md.report_depth = eg_intr_md.deq_qdepth;
            md.report_port = eg_intr_md.egress_port;
            eg_dprsr_md.mirror_type = MIRROR_REPORT;
        }

        if (hdr.bridge.isValid() && hdr.bridge.is_mcast == 1
                && eg_intr_md.egress_port == hdr.bridge.ingress_port) {
            mcast_pruned.count(eg_intr_md.egress_port);
            eg_dprsr_md.drop_ctl = 1;
            exit;
        }

        if (hdr.trim.isValid()) {
            /* The truncated copy of the packet as it arrived: mark, DSCP, lengths,
             * TTL (its checksums in the deparser). */
            hdr.pds.flags = hdr.pds.flags | UET_PDS_F_TRIMMED;
            hdr.udp.length = UET_TRIMMED_UDP_LEN;
            if (hdr.ipv4.isValid()) {
                hdr.ipv4.dscp = hdr.trim.dscp;
                hdr.ipv4.totalLen = 20 + UET_TRIMMED_UDP_LEN;
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            } else {
                hdr.ipv6.dscp = hdr.trim.dscp;
                hdr.ipv6.payloadLen = UET_TRIMMED_UDP_LEN;
                hdr.ipv6.hopLimit = hdr.ipv6.hopLimit - 1;
            }
        }

        neighbors.apply();
        if (hdr.bridge.isValid() && hdr.bridge.is_mcast == 1 && hdr.ipv4.isValid()
                && hdr.udp.isValid()) {
            mcast_host_copies.apply();
        }
        tx_port.count(eg_intr_md.egress_port);

        ecn_config.apply();
        /* enq_qdepth >= threshold: the 32-bit difference is not negative */
        enq_depth.apply();
        ecn_margin.apply();
        if (md.ecn_enabled && md.ecn_margin[31:31] == 0) {
            if (hdr.ipv4.isValid() && (hdr.ipv4.ecn == ECN_ECT0 || hdr.ipv4.ecn == ECN_ECT1)) {
                hdr.ipv4.ecn = ECN_CE;
                ecn_marked.count(eg_intr_md.egress_port);
            } else if (hdr.ipv6.isValid()
                    && (hdr.ipv6.ecn == ECN_ECT0 || hdr.ipv6.ecn == ECN_ECT1)) {
                hdr.ipv6.ecn = ECN_CE;
                ecn_marked.count(eg_intr_md.egress_port);
            }
        }
        hdr.bridge.setInvalid();
        hdr.trim.setInvalid();
    }
}

control FabricEgressDeparser(packet_out pkt,
                             inout tna_headers_t hdr,
                             in tna_egress_md_t md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() report_mirror;
    Checksum() ipv4_checksum;
    Checksum() udp_checksum_v4;
    Checksum() udp_checksum_v6;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_REPORT) {
            report_mirror.emit<depth_report_mirror_h>(md.report_session,
                                               { md.report_kind, 7w0, md.report_port, 5w0,
                                                 md.report_depth });
        }
        hdr.ipv4.hdrChecksum = ipv4_checksum.update(IPV4_CHECKSUM_FIELDS);
        if (md.trimmed && hdr.ipv4.isValid()) {
            hdr.udp.checksum = udp_checksum_v4.update({
                hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, 8w0, hdr.ipv4.protocol, hdr.udp.length,
                hdr.udp.srcPort, hdr.udp.dstPort, hdr.udp.length,
                hdr.pds.pdsType, hdr.pds.nextHdr, hdr.pds.flags, hdr.keep.bytes });
        }
        if (md.trimmed && hdr.ipv6.isValid()) {
            hdr.udp.checksum = udp_checksum_v6.update({
                hdr.ipv6.srcAddr, hdr.ipv6.dstAddr, 16w0, hdr.udp.length, 24w0,
                hdr.ipv6.nextHdr, hdr.udp.srcPort, hdr.udp.dstPort, hdr.udp.length,
                hdr.pds.pdsType, hdr.pds.nextHdr, hdr.pds.flags, hdr.keep.bytes });
        }
        pkt.emit(hdr.report);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        EMIT_IPV4_OPTIONS
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.pds);
        pkt.emit(hdr.keep);
        pkt.emit(hdr.mcast);
    }
}

Pipeline(FabricIngressParser(),
         FabricIngress(),
         FabricIngressDeparser(),
         FabricEgressParser(),
         FabricEgress(),
         FabricEgressDeparser()) pipe;

Switch(pipe) main;
