/*
 * ecmp_spray.p4 — multipath forwarding for AI-fabric traffic (v1model).
 *
 * Routing: MyIngress.ipv4_routes / MyIngress.ipv6_routes (lpm) resolve a
 * destination either to a single next hop (forward) or to an ECMP group
 * (set_group: group id, member count, mode).  Two modes choose the member:
 *   - flow hash (mode 0): crc16 over the 5-tuple, so one flow keeps one path.
 *     Ultra Ethernet transport puts a per-packet entropy value in the UDP
 *     source port, so a sender that varies it spreads its packets while an
 *     unmodified flow stays in order.
 *   - spray (mode 1): per-packet round robin over the members, with a cursor
 *     per group kept in the register MyIngress.spray_cursor.
 * MyIngress.group_members maps (group id, member index) to a next hop.
 * Forwarding rewrites the MACs (old destination becomes the source) and
 * decrements TTL / hop limit; expiring, unroutable, malformed and non-IP
 * packets are dropped.
 *
 * Congestion signal: MyEgress.ecn_config sets a per-port threshold on the
 * queue depth seen at enqueue (standard_metadata.enq_qdepth); ECN-capable
 * IPv4/IPv6 packets at or above it are marked CE and counted in
 * MyEgress.ecn_marked.  Ports without an entry never mark.
 * Counters: MyEgress.tx_port (packets and bytes per egress port).
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/parsers.p4"

const bit<1> MODE_FLOW_HASH = 0;
const bit<1> MODE_SPRAY = 1;
const bit<32> MAX_GROUPS = 256;
const bit<32> MAX_PORTS = 512;

struct metadata_t {
    l4_ports_t l4;
    bool       use_group;
    bit<16>    group_id;
    bit<16>    group_size;
    bit<1>     mode;
    bit<16>    member;
    bool       ecn_enabled;
    bit<19>    ecn_threshold;
}

parser SprayParser(packet_in packet,
                   out headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    EthernetIpParser() l3;

    state start {
        l3.apply(packet, hdr, meta.l4);
        transition accept;
    }
}

control SprayVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<16>>(MAX_GROUPS) spray_cursor;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* Shared by both address families: the next hop's MAC and port. */
    action set_next_hop(macAddr_t dmac, egressSpec_t port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dmac;
    }

    action forward(macAddr_t dmac, egressSpec_t port) {
        meta.use_group = false;
        set_next_hop(dmac, port);
    }

    action set_group(bit<16> group_id, bit<16> group_size, bit<1> mode) {
        meta.use_group = true;
        meta.group_id = group_id;
        meta.group_size = group_size;
        meta.mode = mode;
    }

    table ipv4_routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; set_group; drop; }
        size = 4096;
        default_action = drop();
    }

    table ipv6_routes {
        key = { hdr.ipv6.dstAddr: lpm; }
        actions = { forward; set_group; drop; }
        size = 4096;
        default_action = drop();
    }

    table group_members {
        key = {
            meta.group_id: exact;
            meta.member: exact;
        }
        actions = { set_next_hop; drop; }
        size = 4096;
        default_action = drop();
    }

    action hash_ipv4_flow() {
        hash(meta.member, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol,
               meta.l4.srcPort, meta.l4.dstPort },
             meta.group_size);
    }

    action hash_ipv6_flow() {
        hash(meta.member, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.ipv6.srcAddr, hdr.ipv6.dstAddr, hdr.ipv6.nextHdr,
               meta.l4.srcPort, meta.l4.dstPort },
             meta.group_size);
    }

    /* Round robin: take the group's cursor, advance it, wrap at group_size. */
    action spray_next_member() {
        bit<16> cursor;
        spray_cursor.read(cursor, (bit<32>)meta.group_id);
        if (cursor >= meta.group_size) {
            cursor = 0;
        }
        meta.member = cursor;
        bit<16> next = cursor + 1;
        if (next >= meta.group_size) {
            next = 0;
        }
        spray_cursor.write((bit<32>)meta.group_id, next);
    }

    apply {
        meta.use_group = false;
        if (standard_metadata.parser_error != error.NoError) {
            drop();
            return;
        }
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
                return;
            }
            ipv4_routes.apply();
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        } else if (hdr.ipv6.isValid()) {
            if (hdr.ipv6.hopLimit <= 1) {
                drop();
                return;
            }
            ipv6_routes.apply();
            hdr.ipv6.hopLimit = hdr.ipv6.hopLimit - 1;
        } else {
            drop();
            return;
        }

        if (meta.use_group) {
            if (meta.group_size == 0) {
                drop();
                return;
            }
            if (meta.mode == MODE_SPRAY) {
                spray_next_member();
            } else if (hdr.ipv4.isValid()) {
                hash_ipv4_flow();
            } else {
                hash_ipv6_flow();
            }
            group_members.apply();
        }
    }
}

control MyEgress(inout headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    counter(MAX_PORTS, CounterType.packets_and_bytes) tx_port;
    counter(MAX_PORTS, CounterType.packets_and_bytes) ecn_marked;

    action set_ecn_threshold(bit<19> threshold) {
        meta.ecn_enabled = true;
        meta.ecn_threshold = threshold;
    }

    action no_ecn() {
        meta.ecn_enabled = false;
    }

    table ecn_config {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_ecn_threshold; no_ecn; }
        size = 512;
        default_action = no_ecn();
    }

    apply {
        tx_port.count((bit<32>)standard_metadata.egress_port);
        ecn_config.apply();
        if (meta.ecn_enabled && standard_metadata.enq_qdepth >= meta.ecn_threshold) {
            if (hdr.ipv4.isValid()
                    && (hdr.ipv4.ecn == ECN_ECT0 || hdr.ipv4.ecn == ECN_ECT1)) {
                hdr.ipv4.ecn = ECN_CE;
                ecn_marked.count((bit<32>)standard_metadata.egress_port);
            } else if (hdr.ipv6.isValid()
                    && (hdr.ipv6.ecn == ECN_ECT0 || hdr.ipv6.ecn == ECN_ECT1)) {
                hdr.ipv6.ecn = ECN_CE;
                ecn_marked.count((bit<32>)standard_metadata.egress_port);
            }
        }
    }
}

control SprayComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    Ipv4ChecksumUpdate() ipv4_checksum;

    apply {
        ipv4_checksum.apply(hdr);
    }
}

V1Switch(
    SprayParser(),
    SprayVerifyChecksum(),
    MyIngress(),
    MyEgress(),
    SprayComputeChecksum(),
    HeadersDeparser()
) main;
