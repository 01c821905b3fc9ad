/*
 * fabric.p4 — netweft's fabric switch program (v1model, standard P4-16).
 *
 * Routing: LPM routes per address family to a port, an ECMP group or a
 * multicast group.  ECMP groups spray with a mode chosen per route (per
 * destination prefix): flow hash, entropy (UET's UDP source port), random,
 * round robin, or adaptive (the member whose port has the shortest queue,
 * from queue depths egress records in registers).  Egress marks ECN CE above
 * a per-port threshold; ingress trims UET data packets headed for a queue
 * above a per-port trim threshold to their headers and sends them at high
 * priority.  Multicast copies never go back out of the ingress port;
 * reliable-multicast ACKs are aggregated per (group, sequence).  Malformed
 * packets are dropped and counted (FabricIngress.drops, by reason).
 *
 * The controls live in include/fabric_forwarding.p4 so that other programs
 * can forward the same way; docs/fabric.md is the reference of the tables,
 * registers, counters and settings.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/parsers.p4"
#include "include/fabric_headers.p4"
#include "include/fabric_forwarding.p4"

parser FabricParser(packet_in packet,
                    out fabric_headers_t hdr,
                    inout fabric_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    EthernetIpParser() l3;

    state start {
        l3.apply(packet, hdr.base, meta.l4);
        transition select(hdr.base.udp.isValid(), hdr.base.udp.dstPort) {
            (true, UET_UDP_PORT): parse_uet;
            (true, NW_MCAST_UDP_PORT): parse_mcast;
            default: accept;
        }
    }

    /* Only a datagram longer than what trimming keeps is parsed further. */
    state parse_uet {
        transition select(hdr.base.udp.length) {
            0 .. 72: accept;
            default: parse_uet_keep;
        }
    }

    state parse_uet_keep {
        packet.extract(hdr.pds);
        packet.extract(hdr.keep);
        transition accept;
    }

    state parse_mcast {
        packet.extract(hdr.mcast);
        transition accept;
    }
}

control FabricVerifyChecksum(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {
    apply { }
}

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    counter(DROP_REASONS, CounterType.packets) drops;

    FabricLengthCheck() lengths;
    FabricAckAggregation() acks;
    FabricForwarding() forwarding;
    FabricTrim() trim;

    apply {
        meta.drop_reason = DROP_NONE;
        meta.udp_checksum_update = false;
        if (standard_metadata.parser_error != error.NoError) {
            meta.drop_reason = DROP_PARSER_ERROR;
            mark_to_drop(standard_metadata);
        } else {
            lengths.apply(hdr.base.vlan, hdr.base.ipv4, hdr.base.ipv6, hdr.base.udp,
                          meta, standard_metadata);
        }
        if (meta.drop_reason == DROP_NONE) {
            acks.apply(hdr.base.udp, hdr.mcast, meta, standard_metadata);
            if (meta.drop_reason == DROP_NONE && !meta.ack_absorbed) {
                forwarding.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.ipv6,
                                 meta, standard_metadata);
                if (meta.drop_reason == DROP_NONE) {
                    trim.apply(hdr.base.ipv4, hdr.base.ipv6, hdr.base.udp, hdr.base.vlan,
                               hdr.pds, hdr.keep, meta, standard_metadata);
                }
            }
        }
        if (meta.drop_reason != DROP_NONE) {
            drops.count((bit<32>)meta.drop_reason);
        }
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    FabricEgressQueues() queues;

    apply {
        queues.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.ipv6, hdr.base.udp,
                     meta, standard_metadata);
    }
}

control FabricComputeChecksum(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {
    FabricChecksums() checksums;

    apply {
        checksums.apply(hdr.base, hdr.pds, hdr.keep, hdr.mcast, meta);
    }
}

/* HeadersDeparser's order, inline (applying it would copy hdr.base per packet). */
control FabricDeparser(packet_out packet, in fabric_headers_t hdr) {
    apply {
        packet.emit(hdr.base.ethernet);
        packet.emit(hdr.base.vlan);
        packet.emit(hdr.base.ipv4);
        packet.emit(hdr.base.ipv4_options);
        packet.emit(hdr.base.ipv6);
        packet.emit(hdr.base.udp);
        packet.emit(hdr.base.tcp);
        packet.emit(hdr.pds);
        packet.emit(hdr.keep);
        packet.emit(hdr.mcast);
    }
}

V1Switch(
    FabricParser(),
    FabricVerifyChecksum(),
    FabricIngress(),
    FabricEgress(),
    FabricComputeChecksum(),
    FabricDeparser()
) main;
