/*
 * netweft fabric: reusable controls (P4-16, v1model; needs fabric_headers.p4).
 *
 * A v1model program applies them in this order (p4/fabric.p4 does):
 *   ingress: FabricLengthCheck -> FabricAckAggregation -> FabricForwarding -> FabricTrim
 *   egress:  FabricEgressQueues
 * and recomputes checksums with FabricChecksums.  Another program (e.g. an
 * aggregation program that also forwards) applies FabricForwarding and
 * FabricEgressQueues to its own headers; the controls take single headers,
 * not a headers struct, so any struct holding netweft's headers fits.
 *
 * docs/fabric.md lists the tables, actions, registers, counters and settings.
 */
#ifndef NETWEFT_FABRIC_FORWARDING_P4
#define NETWEFT_FABRIC_FORWARDING_P4

#include "fabric_headers.p4"
#include "parsers.p4"

const bit<32> FABRIC_PORTS          = 512;
const bit<32> FABRIC_MAX_GROUPS     = 1024;   /* ECMP group ids 0..1023 */
const bit<16> FABRIC_MAX_MEMBERS    = 8;      /* ports per ECMP group */
const bit<16> FABRIC_MCAST_GROUPS   = 64;     /* multicast groups with ACK aggregation */
const bit<32> FABRIC_ACK_WINDOW     = 256;    /* sequence numbers in flight per group */
const bit<32> FABRIC_ACK_SLOTS      = 16384;  /* FABRIC_MCAST_GROUPS * FABRIC_ACK_WINDOW */

/* route_to_group's mode: how a packet picks a member of the group. */
const bit<3> SPRAY_FLOW_HASH   = 0;   /* crc32 of the 5-tuple: a flow keeps its path */
const bit<3> SPRAY_ENTROPY     = 1;   /* UDP source port (UET entropy) mod group size */
const bit<3> SPRAY_RANDOM      = 2;   /* a uniform random member per packet */
const bit<3> SPRAY_ROUND_ROBIN = 3;   /* the next member, a cursor per group */
const bit<3> SPRAY_ADAPTIVE    = 4;   /* the member whose port has the shortest queue */

/* fabric_metadata_t.route */
const bit<2> ROUTE_NONE      = 0;   /* dropped */
const bit<2> ROUTE_PORT      = 1;   /* route_to_port */
const bit<2> ROUTE_MULTICAST = 2;   /* route_to_multicast */
const bit<2> ROUTE_GROUP     = 3;   /* route_to_group */

/* Index of FabricIngress.drops: why ingress dropped a packet. */
const bit<8> DROP_NONE         = 0;
const bit<8> DROP_PARSER_ERROR = 1;   /* truncated or malformed headers */
const bit<8> DROP_NOT_IP       = 2;   /* neither IPv4 nor IPv6 */
const bit<8> DROP_TTL          = 3;   /* TTL / hop limit would expire */
const bit<8> DROP_NO_ROUTE     = 4;   /* no route (or a route to drop) */
const bit<8> DROP_BAD_GROUP    = 5;   /* ECMP group unknown, empty or larger than 8 */
const bit<8> DROP_BAD_MCAST    = 6;   /* nw_mcast_t of unknown kind, or an ACK of wrong length */
const bit<8> DROP_BAD_LENGTH   = 7;   /* IP or UDP length disagrees with the frame */
const bit<32> DROP_REASONS     = 8;

struct fabric_metadata_t {
    l4_ports_t   l4;
    bit<8>       drop_reason;
    bit<2>       route;
    /* ECMP group of the route and its members */
    bit<16>      group_id;
    bit<3>       mode;
    bit<16>      group_size;
    egressSpec_t port0;
    egressSpec_t port1;
    egressSpec_t port2;
    egressSpec_t port3;
    egressSpec_t port4;
    egressSpec_t port5;
    egressSpec_t port6;
    egressSpec_t port7;
    bit<16>      member;
    /* estimated packets queued at the chosen port before this packet */
    bit<20>      port_depth;
    /* trimming */
    bool         trim_enabled;
    bit<19>      trim_threshold;
    bit<3>       trim_priority;
    bit<6>       trim_dscp;
    bool         trimmed;
    /* multicast ACK aggregation */
    bool         ack_aggregate;
    bit<32>      ack_expected;
    bool         ack_absorbed;
    /* egress */
    bool         ecn_enabled;
    bit<19>      ecn_threshold;
    /* UDP checksum to recompute over the headers a packet keeps (trimmed, ACK) */
    bool         udp_checksum_update;
    bit<32>      udp_length32;
}

/*
 * Queue state per egress port, shared by egress (writer) and ingress (reader):
 * port_qdepth[p]   = deq_qdepth of the last packet that left p's queue;
 * port_arrivals[p] = unicast packets ingress sent to p since then.
 * Their sum estimates the packets queued at p when a new packet joins it.
 */
register<bit<19>>(FABRIC_PORTS) port_qdepth;
register<bit<19>>(FABRIC_PORTS) port_arrivals;

/*
 * Ingress, first: lengths that disagree with the frame.  The IP total length
 * (IPv4) or payload length (IPv6) must fit in the frame received, and a UDP
 * length must lie between 8 and the IP payload's length; trimming and ACK
 * aggregation rewrite these lengths, so they must be true.
 */
control FabricLengthCheck(in vlan_t vlan,
                          in ipv4_t ipv4,
                          in ipv6_t ipv6,
                          in udp_t udp,
                          inout fabric_metadata_t fm,
                          inout standard_metadata_t standard_metadata) {
    apply {
        bit<32> l2 = 14;
        if (vlan.isValid()) {
            l2 = 18;
        }
        bit<16> ip_payload = 0;
        bool bad = false;
        if (ipv4.isValid()) {
            bit<16> ip_header = (bit<16>)ipv4.ihl << 2;
            bad = ipv4.totalLen < ip_header
                || l2 + (bit<32>)ipv4.totalLen > standard_metadata.packet_length;
            ip_payload = ipv4.totalLen - ip_header;
        } else if (ipv6.isValid()) {
            bad = l2 + 40 + (bit<32>)ipv6.payloadLen > standard_metadata.packet_length;
            ip_payload = ipv6.payloadLen;
        }
        if (!bad && udp.isValid()) {
            bad = udp.length < 8 || udp.length > ip_payload;
        }
        if (bad) {
            fm.drop_reason = DROP_BAD_LENGTH;
            mark_to_drop(standard_metadata);
        }
    }
}

/*
 * Ingress: routes (LPM per address family) to a port, an ECMP group (with its
 * spray mode) or a multicast group; picks the group member; TTL; counts the
 * packet into port_arrivals and leaves the port's queue estimate in
 * fm.port_depth.
 */
control FabricForwarding(inout ethernet_t ethernet,
                         inout ipv4_t ipv4,
                         inout ipv6_t ipv6,
                         inout fabric_metadata_t fm,
                         inout standard_metadata_t standard_metadata) {
    register<bit<16>>(FABRIC_MAX_GROUPS) rr_cursor;

    action drop() {
        fm.drop_reason = DROP_NO_ROUTE;
        mark_to_drop(standard_metadata);
    }

    action route_to_port(egressSpec_t port) {
        fm.route = ROUTE_PORT;
        standard_metadata.egress_spec = port;
    }

    action route_to_group(bit<16> group_id, bit<3> mode) {
        fm.route = ROUTE_GROUP;
        fm.group_id = group_id;
        fm.mode = mode;
    }

    action route_to_multicast(bit<16> mcast_grp) {
        fm.route = ROUTE_MULTICAST;
        standard_metadata.mcast_grp = mcast_grp;
    }

    table ipv4_routes {
        key = { ipv4.dstAddr: lpm; }
        actions = { route_to_port; route_to_group; route_to_multicast; drop; }
        size = 4096;
        default_action = drop();
    }

    table ipv6_routes {
        key = { ipv6.dstAddr: lpm; }
        actions = { route_to_port; route_to_group; route_to_multicast; drop; }
        size = 4096;
        default_action = drop();
    }

    action set_members(bit<16> size,
                       egressSpec_t port0, egressSpec_t port1,
                       egressSpec_t port2, egressSpec_t port3,
                       egressSpec_t port4, egressSpec_t port5,
                       egressSpec_t port6, egressSpec_t port7) {
        fm.group_size = size;
        fm.port0 = port0;
        fm.port1 = port1;
        fm.port2 = port2;
        fm.port3 = port3;
        fm.port4 = port4;
        fm.port5 = port5;
        fm.port6 = port6;
        fm.port7 = port7;
    }

    action no_members() {
        fm.group_size = 0;
    }

    table ecmp_groups {
        key = { fm.group_id: exact; }
        actions = { set_members; no_members; }
        size = FABRIC_MAX_GROUPS;
        default_action = no_members();
    }

    action hash_ipv4_flow() {
        hash(fm.member, HashAlgorithm.crc32, (bit<16>)0,
             { ipv4.srcAddr, ipv4.dstAddr, ipv4.protocol, fm.l4.srcPort, fm.l4.dstPort },
             fm.group_size);
    }

    action hash_ipv6_flow() {
        hash(fm.member, HashAlgorithm.crc32, (bit<16>)0,
             { ipv6.srcAddr, ipv6.dstAddr, ipv6.nextHdr, fm.l4.srcPort, fm.l4.dstPort },
             fm.group_size);
    }

    /* identity over the 16-bit source port: member = entropy mod size. */
    action hash_entropy() {
        hash(fm.member, HashAlgorithm.identity, (bit<16>)0, { fm.l4.srcPort }, fm.group_size);
    }

    action pick_random() {
        random(fm.member, (bit<16>)0, fm.group_size - 1);
    }

    action pick_round_robin() {
        bit<16> cursor;
        rr_cursor.read(cursor, (bit<32>)fm.group_id);
        if (cursor >= fm.group_size) {
            cursor = 0;
        }
        fm.member = cursor;
        bit<16> next = cursor + 1;
        if (next >= fm.group_size) {
            next = 0;
        }
        rr_cursor.write((bit<32>)fm.group_id, next);
    }

    /* Queue estimate of port p: last dequeue's depth + arrivals since. */
    action port_load(out bit<20> load, in egressSpec_t p) {
        bit<19> depth;
        bit<19> arrivals;
        port_qdepth.read(depth, (bit<32>)p);
        port_arrivals.read(arrivals, (bit<32>)p);
        load = (bit<20>)depth + (bit<20>)arrivals;
    }

    /*
     * The member with the smallest queue estimate.  Ties go to the first such
     * member at or after a random start (the low three bits of the cost are
     * the member's distance from the start), so an idle group is sprayed
     * uniformly rather than always to member 0.
     */
    action pick_adaptive_start(out bit<3> start) {
        bit<16> r;
        random(r, (bit<16>)0, fm.group_size - 1);
        start = (bit<3>)r;
    }

    apply {
        fm.route = ROUTE_NONE;
        if (ipv4.isValid()) {
            if (ipv4.ttl <= 1) {
                fm.drop_reason = DROP_TTL;
                mark_to_drop(standard_metadata);
                return;
            }
            ipv4_routes.apply();
            ipv4.ttl = ipv4.ttl - 1;
        } else if (ipv6.isValid()) {
            if (ipv6.hopLimit <= 1) {
                fm.drop_reason = DROP_TTL;
                mark_to_drop(standard_metadata);
                return;
            }
            ipv6_routes.apply();
            ipv6.hopLimit = ipv6.hopLimit - 1;
        } else {
            fm.drop_reason = DROP_NOT_IP;
            mark_to_drop(standard_metadata);
            return;
        }
        if (fm.route == ROUTE_NONE) {
            return;   /* the route's drop() */
        }

        if (fm.route == ROUTE_GROUP) {
            ecmp_groups.apply();
            if (fm.group_size == 0 || fm.group_size > FABRIC_MAX_MEMBERS) {
                fm.route = ROUTE_NONE;
                fm.drop_reason = DROP_BAD_GROUP;
                mark_to_drop(standard_metadata);
                return;
            }
            if (fm.mode == SPRAY_ENTROPY) {
                hash_entropy();
            } else if (fm.mode == SPRAY_RANDOM) {
                pick_random();
            } else if (fm.mode == SPRAY_ROUND_ROBIN) {
                pick_round_robin();
            } else if (fm.mode == SPRAY_ADAPTIVE) {
                bit<3> start;
                pick_adaptive_start(start);
                bit<23> best = 23w0x7fffff;
                bit<20> load;
                bit<23> cost;
                port_load(load, fm.port0);
                cost = load ++ (3w0 - start);
                if (cost < best) { best = cost; fm.member = 0; }
                if (fm.group_size > 1) {
                    port_load(load, fm.port1);
                    cost = load ++ (3w1 - start);
                    if (cost < best) { best = cost; fm.member = 1; }
                }
                if (fm.group_size > 2) {
                    port_load(load, fm.port2);
                    cost = load ++ (3w2 - start);
                    if (cost < best) { best = cost; fm.member = 2; }
                }
                if (fm.group_size > 3) {
                    port_load(load, fm.port3);
                    cost = load ++ (3w3 - start);
                    if (cost < best) { best = cost; fm.member = 3; }
                }
                if (fm.group_size > 4) {
                    port_load(load, fm.port4);
                    cost = load ++ (3w4 - start);
                    if (cost < best) { best = cost; fm.member = 4; }
                }
                if (fm.group_size > 5) {
                    port_load(load, fm.port5);
                    cost = load ++ (3w5 - start);
                    if (cost < best) { best = cost; fm.member = 5; }
                }
                if (fm.group_size > 6) {
                    port_load(load, fm.port6);
                    cost = load ++ (3w6 - start);
                    if (cost < best) { best = cost; fm.member = 6; }
                }
                if (fm.group_size > 7) {
                    port_load(load, fm.port7);
                    cost = load ++ (3w7 - start);
                    if (cost < best) { best = cost; fm.member = 7; }
                }
            } else if (ipv4.isValid()) {
                hash_ipv4_flow();
            } else {
                hash_ipv6_flow();
            }

            if (fm.member == 0) {
                standard_metadata.egress_spec = fm.port0;
            } else if (fm.member == 1) {
                standard_metadata.egress_spec = fm.port1;
            } else if (fm.member == 2) {
                standard_metadata.egress_spec = fm.port2;
            } else if (fm.member == 3) {
                standard_metadata.egress_spec = fm.port3;
            } else if (fm.member == 4) {
                standard_metadata.egress_spec = fm.port4;
            } else if (fm.member == 5) {
                standard_metadata.egress_spec = fm.port5;
            } else if (fm.member == 6) {
                standard_metadata.egress_spec = fm.port6;
            } else {
                standard_metadata.egress_spec = fm.port7;
            }
        }

        if (fm.route == ROUTE_PORT || fm.route == ROUTE_GROUP) {
            bit<19> arrivals;
            port_load(fm.port_depth, standard_metadata.egress_spec);
            port_arrivals.read(arrivals, (bit<32>)standard_metadata.egress_spec);
            if (arrivals != 19w0x7ffff) {
                arrivals = arrivals + 1;
            }
            port_arrivals.write((bit<32>)standard_metadata.egress_spec, arrivals);
        }
    }
}

/*
 * Ingress, after FabricForwarding: trims a UET data packet whose port's queue
 * estimate (fm.port_depth) is at or above the port's trim threshold.  The
 * packet keeps Ethernet, IP, UDP and the first 64 bytes of UDP payload (PDS
 * and SES headers), gets NW_PDS_F_TRIMMED, the port's trim DSCP and the trim
 * priority, and its IP/UDP lengths are fixed (the UDP checksum is recomputed
 * by FabricChecksums).
 */
control FabricTrim(inout ipv4_t ipv4,
                   inout ipv6_t ipv6,
                   inout udp_t udp,
                   in vlan_t vlan,
                   inout uet_pds_t pds,
                   in uet_trim_keep_t keep,
                   inout fabric_metadata_t fm,
                   inout standard_metadata_t standard_metadata) {
    counter(FABRIC_PORTS, CounterType.packets_and_bytes) trimmed;

    action set_trim(bit<19> threshold, bit<3> priority, bit<6> dscp) {
        fm.trim_enabled = true;
        fm.trim_threshold = threshold;
        fm.trim_priority = priority;
        fm.trim_dscp = dscp;
    }

    action no_trim() {
        fm.trim_enabled = false;
    }

    table trim_config {
        key = { standard_metadata.egress_spec: exact; }
        actions = { set_trim; no_trim; }
        size = FABRIC_PORTS;
        default_action = no_trim();
    }

    apply {
        fm.trimmed = false;
        if ((fm.route != ROUTE_PORT && fm.route != ROUTE_GROUP)
                || !keep.isValid() || !pds.isValid()) {
            return;
        }
        if (pds.pdsType != UET_PDS_RUD && pds.pdsType != UET_PDS_ROD
                && pds.pdsType != UET_PDS_UUD && pds.pdsType != UET_PDS_RUD_CC
                && pds.pdsType != UET_PDS_ROD_CC) {
            return;
        }
        trim_config.apply();
        if (!fm.trim_enabled || fm.port_depth < (bit<20>)fm.trim_threshold) {
            return;
        }
        bit<32> keep_len = 14 + 8 + (bit<32>)UET_TRIM_KEEP;
        if (vlan.isValid()) {
            keep_len = keep_len + 4;
        }
        if (ipv4.isValid()) {
            bit<16> ip_header = (bit<16>)ipv4.ihl << 2;
            ipv4.totalLen = ip_header + UET_TRIMMED_UDP_LEN;
            ipv4.dscp = fm.trim_dscp;
            keep_len = keep_len + (bit<32>)ip_header;
        } else {
            ipv6.payloadLen = UET_TRIMMED_UDP_LEN;
            ipv6.dscp = fm.trim_dscp;
            keep_len = keep_len + 40;
        }
        udp.length = UET_TRIMMED_UDP_LEN;
        fm.udp_length32 = (bit<32>)UET_TRIMMED_UDP_LEN;
        fm.udp_checksum_update = true;
        pds.flags = pds.flags | UET_PDS_F_TRIMMED;
        standard_metadata.priority = fm.trim_priority;
        truncate(keep_len);
        fm.trimmed = true;
        trimmed.count((bit<32>)standard_metadata.egress_spec);
    }
}

/*
 * Ingress, before FabricForwarding: reliable-multicast ACK aggregation in the
 * spirit of Gleam.  For a group with an ack_groups entry, each ACK's receiver
 * bitmap is ORed into the slot (group, seq mod 256); the ACK that completes
 * the expected bitmap goes on to the sender carrying the union (flag
 * NW_MCAST_F_AGGREGATED), the others are absorbed.  ACKs of groups without an
 * entry, and DATA packets, pass unchanged.
 */
control FabricAckAggregation(in udp_t udp,
                             inout nw_mcast_t mcast,
                             inout fabric_metadata_t fm,
                             inout standard_metadata_t standard_metadata) {
    register<bit<32>>(FABRIC_ACK_SLOTS) ack_seq;
    register<bit<32>>(FABRIC_ACK_SLOTS) ack_receivers;
    counter((bit<32>)FABRIC_MCAST_GROUPS, CounterType.packets) acks_absorbed;
    counter((bit<32>)FABRIC_MCAST_GROUPS, CounterType.packets) acks_forwarded;
    counter((bit<32>)FABRIC_MCAST_GROUPS, CounterType.packets) acks_stale;

    action aggregate_acks(bit<32> expected) {
        fm.ack_aggregate = true;
        fm.ack_expected = expected;
    }

    action pass_acks() {
        fm.ack_aggregate = false;
    }

    table ack_groups {
        key = { mcast.group: exact; }
        actions = { aggregate_acks; pass_acks; }
        size = (bit<32>)FABRIC_MCAST_GROUPS;
        default_action = pass_acks();
    }

    apply {
        fm.ack_absorbed = false;
        if (!mcast.isValid() || mcast.kind == NW_MCAST_DATA) {
            return;
        }
        if (mcast.kind != NW_MCAST_ACK || udp.length != NW_MCAST_ACK_UDP_LEN) {
            fm.drop_reason = DROP_BAD_MCAST;
            mark_to_drop(standard_metadata);
            return;
        }
        ack_groups.apply();
        if (!fm.ack_aggregate || mcast.group >= FABRIC_MCAST_GROUPS) {
            return;
        }
        bit<32> slot = ((bit<32>)mcast.group << 8) | (bit<32>)mcast.seq[7:0];
        bit<32> slot_seq;
        bit<32> seen;
        ack_seq.read(slot_seq, slot);
        ack_receivers.read(seen, slot);
        if (slot_seq != mcast.seq) {
            /* A slot no ACK has touched (no receiver bit yet) holds no sequence: its 0
             * must not make a sequence past 2^31 look older (serial arithmetic). */
            if (seen != 0 && (int<32>)(mcast.seq - slot_seq) < 0) {
                /* older than the sequence the slot holds: already answered */
                acks_stale.count((bit<32>)mcast.group);
                fm.ack_absorbed = true;
                mark_to_drop(standard_metadata);
                return;
            }
            seen = 0;
        }
        seen = seen | mcast.receivers;
        ack_seq.write(slot, mcast.seq);
        ack_receivers.write(slot, seen);
        if ((seen & fm.ack_expected) == fm.ack_expected) {
            mcast.receivers = seen;
            mcast.flags = mcast.flags | NW_MCAST_F_AGGREGATED;
            fm.udp_length32 = (bit<32>)NW_MCAST_ACK_UDP_LEN;
            fm.udp_checksum_update = true;
            acks_forwarded.count((bit<32>)mcast.group);
        } else {
            acks_absorbed.count((bit<32>)mcast.group);
            fm.ack_absorbed = true;
            mark_to_drop(standard_metadata);
        }
    }
}

/*
 * Egress: records the port's queue depth for ingress (port_qdepth,
 * port_arrivals), prunes a multicast copy that would leave by the port the
 * packet came in on, rewrites MACs for the port's neighbour, turns a
 * multicast copy for a host into unicast (IPv4), and marks ECN CE on
 * ECN-capable packets when enq_qdepth is at or above the port's threshold.
 */
control FabricEgressQueues(inout ethernet_t ethernet,
                           inout ipv4_t ipv4,
                           inout ipv6_t ipv6,
                           inout udp_t udp,
                           inout fabric_metadata_t fm,
                           inout standard_metadata_t standard_metadata) {
    counter(FABRIC_PORTS, CounterType.packets_and_bytes) tx_port;
    counter(FABRIC_PORTS, CounterType.packets_and_bytes) ecn_marked;
    counter(FABRIC_PORTS, CounterType.packets) mcast_pruned;

    action set_neighbor(macAddr_t dmac, macAddr_t smac) {
        ethernet.dstAddr = dmac;
        ethernet.srcAddr = smac;
    }

    action keep_macs() {
    }

    table neighbors {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_neighbor; keep_macs; }
        size = FABRIC_PORTS;
        default_action = keep_macs();
    }

    action deliver_to_host(ip4Addr_t dst) {
        ipv4.dstAddr = dst;
    }

    action keep_group_address() {
    }

    table mcast_host_copies {
        key = {
            standard_metadata.egress_rid: exact;
            standard_metadata.egress_port: exact;
        }
        actions = { deliver_to_host; keep_group_address; }
        size = 4096;
        default_action = keep_group_address();
    }

    action set_ecn_threshold(bit<19> threshold) {
        fm.ecn_enabled = true;
        fm.ecn_threshold = threshold;
    }

    action no_ecn() {
        fm.ecn_enabled = false;
    }

    table ecn_config {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_ecn_threshold; no_ecn; }
        size = FABRIC_PORTS;
        default_action = no_ecn();
    }

    apply {
        port_qdepth.write((bit<32>)standard_metadata.egress_port, standard_metadata.deq_qdepth);
        port_arrivals.write((bit<32>)standard_metadata.egress_port, 0);

        if (standard_metadata.instance_type == 5    /* multicast copy */
                && standard_metadata.egress_port == standard_metadata.ingress_port) {
            mcast_pruned.count((bit<32>)standard_metadata.egress_port);
            mark_to_drop(standard_metadata);
            return;
        }
        neighbors.apply();
        if (standard_metadata.instance_type == 5 && ipv4.isValid()) {
            switch (mcast_host_copies.apply().action_run) {
                deliver_to_host: {
                    if (udp.isValid()) {
                        udp.checksum = 0;   /* IPv4: "no checksum" (RFC 768) */
                    }
                }
            }
        }
        tx_port.count((bit<32>)standard_metadata.egress_port);
        ecn_config.apply();
        if (fm.ecn_enabled && standard_metadata.enq_qdepth >= fm.ecn_threshold) {
            if (ipv4.isValid() && (ipv4.ecn == ECN_ECT0 || ipv4.ecn == ECN_ECT1)) {
                ipv4.ecn = ECN_CE;
                ecn_marked.count((bit<32>)standard_metadata.egress_port);
            } else if (ipv6.isValid() && (ipv6.ecn == ECN_ECT0 || ipv6.ecn == ECN_ECT1)) {
                ipv6.ecn = ECN_CE;
                ecn_marked.count((bit<32>)standard_metadata.egress_port);
            }
        }
    }
}

/*
 * Checksums: the IPv4 header's, and the UDP checksum of a packet whose UDP
 * datagram the switch rewrote and whose every remaining byte is a parsed
 * header: a trimmed UET packet (UDP + the 64 kept bytes) and an aggregated
 * multicast ACK (UDP + nw_mcast_t).  Other UDP checksums are left as they are
 * (a multicast copy turned into unicast gets 0, "no checksum", in egress).
 */
control FabricChecksums(inout headers_t base,
                        inout uet_pds_t pds,
                        inout uet_trim_keep_t keep,
                        inout nw_mcast_t mcast,
                        inout fabric_metadata_t fm) {
    apply {
        /* Ipv4ChecksumUpdate's computation, inline: applying that control would copy
         * the whole headers struct in and out for every packet. */
        update_checksum(
            base.ipv4.isValid(),
            { base.ipv4.version, base.ipv4.ihl, base.ipv4.dscp, base.ipv4.ecn,
              base.ipv4.totalLen, base.ipv4.identification, base.ipv4.flags,
              base.ipv4.fragOffset, base.ipv4.ttl, base.ipv4.protocol,
              base.ipv4.srcAddr, base.ipv4.dstAddr, base.ipv4_options.options },
            base.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
        update_checksum(
            fm.udp_checksum_update && fm.trimmed && base.ipv4.isValid(),
            { base.ipv4.srcAddr, base.ipv4.dstAddr, 8w0, base.ipv4.protocol, base.udp.length,
              base.udp.srcPort, base.udp.dstPort, base.udp.length,
              pds.pdsType, pds.nextHdr, pds.flags, keep.bytes },
            base.udp.checksum,
            HashAlgorithm.csum16);
        update_checksum(
            fm.udp_checksum_update && fm.trimmed && base.ipv6.isValid(),
            { base.ipv6.srcAddr, base.ipv6.dstAddr, fm.udp_length32, 24w0, base.ipv6.nextHdr,
              base.udp.srcPort, base.udp.dstPort, base.udp.length,
              pds.pdsType, pds.nextHdr, pds.flags, keep.bytes },
            base.udp.checksum,
            HashAlgorithm.csum16);
        update_checksum(
            fm.udp_checksum_update && mcast.isValid() && base.ipv4.isValid(),
            { base.ipv4.srcAddr, base.ipv4.dstAddr, 8w0, base.ipv4.protocol, base.udp.length,
              base.udp.srcPort, base.udp.dstPort, base.udp.length,
              mcast.kind, mcast.flags, mcast.group, mcast.seq, mcast.receivers },
            base.udp.checksum,
            HashAlgorithm.csum16);
        update_checksum(
            fm.udp_checksum_update && mcast.isValid() && base.ipv6.isValid(),
            { base.ipv6.srcAddr, base.ipv6.dstAddr, fm.udp_length32, 24w0, base.ipv6.nextHdr,
              base.udp.srcPort, base.udp.dstPort, base.udp.length,
              mcast.kind, mcast.flags, mcast.group, mcast.seq, mcast.receivers },
            base.udp.checksum,
            HashAlgorithm.csum16);
    }
}

#endif  /* NETWEFT_FABRIC_FORWARDING_P4 */
