/*
 * fabric_aggregation.p4 — one switch that forwards as the fabric program does
 * and aggregates as aggregation.p4 does (v1model, standard P4-16).
 *
 * It applies the fabric's controls (include/fabric_forwarding.p4, reference
 * docs/fabric.md) and the aggregation's (include/aggregation.p4, reference
 * docs/aggregation.md) around one parser:
 *   ingress: AggregationIngress first; a packet it handles (a contribution
 *            absorbed, a completed slot's result, a unicast answer, a bad
 *            aggregation packet) skips the fabric's ACK aggregation, routing
 *            and trimming; everything else (including contributions for
 *            jobs another switch aggregates) is the fabric's;
 *   egress:  a multicast copy of a result is rewritten for its worker by
 *            AggregationEgress only (the fabric's egress would prune the copy
 *            for the worker whose contribution completed the slot, which came
 *            in on that port, and rewrite its MACs per port); every other
 *            packet, unicast answers included, goes through the fabric's.
 * The fabric's objects keep fabric.p4's names (FabricIngress.forwarding.
 * ipv4_routes, FabricEgress.queues.neighbors ...), so the fabric controller
 * configures this program as it configures fabric.p4; the aggregation's sit
 * beside them (FabricIngress.aggregation.agg_jobs,
 * FabricEgress.aggregation.agg_workers ...), found by the aggregation
 * controller under any prefix.  Result copies do not update the fabric's
 * per-port queue estimates.  Like aggregation.p4 it takes -D AGG_LANES=K
 * (lanes per packet, 64 by default) and can be a level of a hierarchical job
 * (FabricIngress.aggregation.agg_parents): a partial sum going up to the
 * parent is a unicast packet and crosses the fabric's egress.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/parsers.p4"
#include "include/fabric_headers.p4"
#include "include/fabric_forwarding.p4"
#include "include/aggregation.p4"

struct fabric_agg_headers_t {
    headers_t       base;
    uet_pds_t       pds;
    uet_trim_keep_t keep;
    nw_mcast_t      mcast;
    agg_t           agg;
}

struct fabric_agg_metadata_t {
    fabric_metadata_t fabric;
    agg_metadata_t    agg;
}

parser FabricAggParser(packet_in packet,
                       out fabric_agg_headers_t hdr,
                       inout fabric_agg_metadata_t meta,
                       inout standard_metadata_t standard_metadata) {
    EthernetIpParser() l3;

    state start {
        l3.apply(packet, hdr.base, meta.fabric.l4);
        transition select(hdr.base.udp.isValid(), hdr.base.udp.dstPort) {
            (true, UET_UDP_PORT): parse_uet;
            (true, NW_MCAST_UDP_PORT): parse_mcast;
            (true, AGG_UDP_PORT): parse_agg;
            default: accept;
        }
    }

    /* As fabric.p4: only a datagram longer than what trimming keeps. */
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

    state parse_agg {
        packet.extract(hdr.agg);
        transition accept;
    }
}

control FabricAggVerifyChecksum(inout fabric_agg_headers_t hdr,
                                inout fabric_agg_metadata_t meta) {
    apply { }
}

control FabricIngress(inout fabric_agg_headers_t hdr,
                      inout fabric_agg_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    counter(DROP_REASONS, CounterType.packets) drops;

    AggregationIngress() aggregation;
    FabricLengthCheck() lengths;
    FabricAckAggregation() acks;
    FabricForwarding() forwarding;
    FabricTrim() trim;

    apply {
        meta.fabric.drop_reason = DROP_NONE;
        meta.fabric.udp_checksum_update = false;
        aggregation.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.udp, hdr.agg,
                          meta.agg, standard_metadata);
        if (meta.agg.handled) {
            return;
        }
        /* from here on as fabric.p4's FabricIngress */
        if (standard_metadata.parser_error != error.NoError) {
            meta.fabric.drop_reason = DROP_PARSER_ERROR;
            mark_to_drop(standard_metadata);
        } else {
            lengths.apply(hdr.base.vlan, hdr.base.ipv4, hdr.base.ipv6, hdr.base.udp,
                          meta.fabric, standard_metadata);
        }
        if (meta.fabric.drop_reason == DROP_NONE) {
            acks.apply(hdr.base.udp, hdr.mcast, meta.fabric, standard_metadata);
            if (meta.fabric.drop_reason == DROP_NONE && !meta.fabric.ack_absorbed) {
                forwarding.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.ipv6,
                                 meta.fabric, standard_metadata);
                if (meta.fabric.drop_reason == DROP_NONE) {
                    trim.apply(hdr.base.ipv4, hdr.base.ipv6, hdr.base.udp, hdr.base.vlan,
                               hdr.pds, hdr.keep, meta.fabric, standard_metadata);
                }
            }
        }
        if (meta.fabric.drop_reason != DROP_NONE) {
            drops.count((bit<32>)meta.fabric.drop_reason);
        }
    }
}

control FabricEgress(inout fabric_agg_headers_t hdr,
                     inout fabric_agg_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    AggregationEgress() aggregation;
    FabricEgressQueues() queues;

    apply {
        if (meta.agg.result_copy) {
            aggregation.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.udp, hdr.agg,
                              meta.agg, standard_metadata);
        } else {
            queues.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.ipv6, hdr.base.udp,
                         meta.fabric, standard_metadata);
        }
    }
}

control FabricAggComputeChecksum(inout fabric_agg_headers_t hdr,
                                 inout fabric_agg_metadata_t meta) {
    FabricChecksums() checksums;

    apply {
        checksums.apply(hdr.base, hdr.pds, hdr.keep, hdr.mcast, meta.fabric);
    }
}

control FabricAggDeparser(packet_out packet, in fabric_agg_headers_t hdr) {
    HeadersDeparser() base;

    apply {
        base.apply(packet, hdr.base);
        packet.emit(hdr.pds);
        packet.emit(hdr.keep);
        packet.emit(hdr.mcast);
        packet.emit(hdr.agg);
    }
}

V1Switch(
    FabricAggParser(),
    FabricAggVerifyChecksum(),
    FabricIngress(),
    FabricEgress(),
    FabricAggComputeChecksum(),
    FabricAggDeparser()
) main;
