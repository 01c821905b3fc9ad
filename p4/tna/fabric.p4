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
 *     fills by repeating its members (slot i = member i mod size), and the
 *     other modes pick a slot (3 bits of crc32, of the entropy, of Random, of
 *     the round-robin counter).  Groups whose size does not divide 8 are
 *     biased (e.g. 3 members: 3/8, 3/8, 2/8).  Adaptive spraying takes the
 *     minimum of the eight members' costs as a tree of min() (three levels,
 *     not a chain of eight comparisons).  A cost is the member's depth ++ its
 *     port XOR a random 9-bit mask (drawn per packet): ties go to the member
 *     whose port XOR the mask is least, and the winner's port is the
 *     minimum's low 9 bits XOR the mask, with no slot-to-port step after it.
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
    bit<19>     port_depth;
    bool        trim_enabled;
    bit<19>     trim_threshold;
    bit<6>      trim_dscp;
    MirrorId_t  trim_session_ipv4;
    MirrorId_t  trim_session_ipv6;
    MirrorId_t  mirror_session;
    bit<8>      mirror_kind;   /* KIND_TRIM: the trim mirror header's first byte */
    bit<9>      tiebreak;      /* adaptive: the random mask ties are broken by */
    bit<9>      tie0;          /* adaptive: slot i's port ^ tiebreak */
    bit<9>      tie1;
    bit<9>      tie2;
    bit<9>      tie3;
    bit<9>      tie4;
    bit<9>      tie5;
    bit<9>      tie6;
    bit<9>      tie7;
    bit<28>     cost0;         /* adaptive: slot i's depth ++ tie i */
    bit<28>     cost1;
    bit<28>     cost2;
    bit<28>     cost3;
    bit<28>     cost4;
    bit<28>     cost5;
    bit<28>     cost6;
    bit<28>     cost7;
    bool        ack_aggregate;
    bit<32>     ack_expected;
    bool        ack_update_checksum;
}

struct tna_egress_md_t {
    bool       trimmed;
    bool       ecn_enabled;
    bit<19>    ecn_threshold;
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
        md.trim_candidate = false;
        md.route = ROUTE_NONE;
        md.ack_update_checksum = false;
        transition select(ig_intr_md.ingress_port) {
            RECIRC_PORT: parse_report;
            default: parse_ethernet;
        }
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

/* One copy per member slot (and one for trimming) of the reported depth per port. */
#define DEPTH_COPY(n)                                                          \
    Register<bit<32>, PortId_t>(FABRIC_PORTS, 0) depth_##n;                    \
    RegisterAction<bit<32>, PortId_t, bit<32>>(depth_##n) store_depth_##n = {   \
        void apply(inout bit<32> value) {                                      \
            value = (bit<32>)hdr.report.depth;                                 \
        }                                                                      \
    };                                                                         \
    RegisterAction<bit<32>, PortId_t, bit<32>>(depth_##n) load_depth_##n = {    \
        void apply(inout bit<32> value, out bit<32> rv) {                      \
            rv = value;                                                        \
        }                                                                      \
    };

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
    Random<bit<3>>() random_slot;
    Random<bit<9>>() random_tiebreak;

    Register<bit<8>, bit<16>>(FABRIC_MAX_GROUPS, 0) rr_cursor;
    RegisterAction<bit<8>, bit<16>, bit<3>>(rr_cursor) next_rr_slot = {
        void apply(inout bit<8> value, out bit<3> rv) {
            rv = (bit<3>)value;
            value = value + 1;
        }
    };

    DEPTH_COPY(m0)
    DEPTH_COPY(m1)
    DEPTH_COPY(m2)
    DEPTH_COPY(m3)
    DEPTH_COPY(m4)
    DEPTH_COPY(m5)
    DEPTH_COPY(m6)
    DEPTH_COPY(m7)
    DEPTH_COPY(trim)

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

    table ipv6_routes {
        key = { hdr.ipv6.dstAddr: lpm; }
        actions = { route_to_port; route_to_group; route_to_multicast; drop; }
        size = 4096;
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
        md.tie0 = port0 ^ md.tiebreak;
        md.tie1 = port1 ^ md.tiebreak;
        md.tie2 = port2 ^ md.tiebreak;
        md.tie3 = port3 ^ md.tiebreak;
        md.tie4 = port4 ^ md.tiebreak;
        md.tie5 = port5 ^ md.tiebreak;
        md.tie6 = port6 ^ md.tiebreak;
        md.tie7 = port7 ^ md.tiebreak;
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

    action set_trim(bit<19> threshold, bit<6> dscp,
                    MirrorId_t session_ipv4, MirrorId_t session_ipv6) {
        md.trim_enabled = true;
        md.trim_threshold = threshold;
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
        /* A depth report from egress: store it in every copy, then drop it. */
        if (hdr.report.isValid()) {
            store_depth_m0.execute(hdr.report.port);
            store_depth_m1.execute(hdr.report.port);
            store_depth_m2.execute(hdr.report.port);
            store_depth_m3.execute(hdr.report.port);
            store_depth_m4.execute(hdr.report.port);
            store_depth_m5.execute(hdr.report.port);
            store_depth_m6.execute(hdr.report.port);
            store_depth_m7.execute(hdr.report.port);
            store_depth_trim.execute(hdr.report.port);
            ig_dprsr_md.drop_ctl = 1;
            exit;
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
        md.tiebreak = random_tiebreak.get();

        /* Reliable-multicast ACK aggregation (its drops are merged below; an
         * absorbed ACK goes on through the pipeline and is dropped at its end). */
        if (ig_prsr_md.parser_err == PARSER_ERROR_OK && hdr.mcast.isValid()
                && hdr.mcast.kind != NW_MCAST_DATA) {
            if (hdr.mcast.kind != NW_MCAST_ACK || hdr.udp.length != NW_MCAST_ACK_UDP_LEN) {
                md.mcast_drop = DROP_BAD_MCAST;
            } else {
                ack_groups.apply();
                if (md.ack_aggregate && hdr.mcast.group < FABRIC_MCAST_GROUPS) {
                    bit<32> slot = ((bit<32>)hdr.mcast.group << 8) | (bit<32>)hdr.mcast.seq[7:0];
                    bit<32> seen = merge_ack.execute(slot);
                    bit<32> missing = md.ack_expected & ~seen;
                    if (missing == 0) {
                        hdr.mcast.receivers = seen;
                        hdr.mcast.flags = hdr.mcast.flags | NW_MCAST_F_AGGREGATED;
                        md.ack_update_checksum = true;
                        acks_forwarded.count(hdr.mcast.group);
                    } else {
                        acks_absorbed.count(hdr.mcast.group);
                        md.ack_absorbed = true;
                    }
                }
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

        /* Spraying: a member of the group. */
        if (md.route == ROUTE_GROUP) {
            ecmp_groups.apply();
            if (md.mode == SPRAY_ADAPTIVE) {
                md.cost0 = (bit<19>)load_depth_m0.execute(md.port0) ++ md.tie0;
                md.cost1 = (bit<19>)load_depth_m1.execute(md.port1) ++ md.tie1;
                md.cost2 = (bit<19>)load_depth_m2.execute(md.port2) ++ md.tie2;
                md.cost3 = (bit<19>)load_depth_m3.execute(md.port3) ++ md.tie3;
                md.cost4 = (bit<19>)load_depth_m4.execute(md.port4) ++ md.tie4;
                md.cost5 = (bit<19>)load_depth_m5.execute(md.port5) ++ md.tie5;
                md.cost6 = (bit<19>)load_depth_m6.execute(md.port6) ++ md.tie6;
                md.cost7 = (bit<19>)load_depth_m7.execute(md.port7) ++ md.tie7;
                md.cost0 = min(md.cost0, md.cost1);
                md.cost2 = min(md.cost2, md.cost3);
                md.cost4 = min(md.cost4, md.cost5);
                md.cost6 = min(md.cost6, md.cost7);
                md.cost0 = min(md.cost0, md.cost2);
                md.cost4 = min(md.cost4, md.cost6);
                md.cost0 = min(md.cost0, md.cost4);
                ig_tm_md.ucast_egress_port = md.cost0[8:0] ^ md.tiebreak;
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
                if (md.slot == 0) {
                    ig_tm_md.ucast_egress_port = md.port0;
                } else if (md.slot == 1) {
                    ig_tm_md.ucast_egress_port = md.port1;
                } else if (md.slot == 2) {
                    ig_tm_md.ucast_egress_port = md.port2;
                } else if (md.slot == 3) {
                    ig_tm_md.ucast_egress_port = md.port3;
                } else if (md.slot == 4) {
                    ig_tm_md.ucast_egress_port = md.port4;
                } else if (md.slot == 5) {
                    ig_tm_md.ucast_egress_port = md.port5;
                } else if (md.slot == 6) {
                    ig_tm_md.ucast_egress_port = md.port6;
                } else {
                    ig_tm_md.ucast_egress_port = md.port7;
                }
            }
        }

        /* The drop reasons merged, first come first: malformed, multicast, routing. */
        if (md.drop_reason == DROP_NONE) {
            if (md.mcast_drop != DROP_NONE) {
                md.drop_reason = md.mcast_drop;
            } else {
                md.drop_reason = md.route_drop;
            }
        }
        if (md.ack_absorbed) {
            ig_dprsr_md.drop_ctl = 1;       /* counted in acks_absorbed */
        } else if (md.drop_reason != DROP_NONE) {
            drops.count(md.drop_reason);
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
                md.port_depth = (bit<19>)load_depth_trim.execute(ig_tm_md.ucast_egress_port);
                /* depth >= threshold: the 20-bit difference is not negative */
                bit<20> margin = (bit<20>)md.port_depth - (bit<20>)md.trim_threshold;
                if (md.trim_enabled && margin[19:19] == 0) {
                    if (hdr.ipv4.isValid()) {
                        md.mirror_session = md.trim_session_ipv4;
                    } else {
                        md.mirror_session = md.trim_session_ipv6;
                    }
                    md.mirror_kind = KIND_TRIM;
                    ig_dprsr_md.mirror_type = MIRROR_TRIM;
                    ig_dprsr_md.drop_ctl = 1;
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
            5: parse_ipv4_payload;
            default: parse_ipv4_opt0;
        }
    }

    IPV4_OPTION_STATES

    state parse_ipv4_payload {
        transition select(hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (0, IPPROTO_UDP): parse_udp;
            default: accept;
        }
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

    action set_ecn_threshold(bit<19> threshold) {
        md.ecn_enabled = true;
        md.ecn_threshold = threshold;
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
        /* enq_qdepth >= threshold: the 20-bit difference is not negative */
        bit<20> ecn_margin = (bit<20>)eg_intr_md.enq_qdepth - (bit<20>)md.ecn_threshold;
        if (md.ecn_enabled && ecn_margin[19:19] == 0) {
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
            report_mirror.emit<depth_report_h>(md.report_session,
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
