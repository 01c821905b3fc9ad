/*
 * aggregation.p4 — in-network aggregation (SwitchML-style all-reduce) with
 * plain IPv4 forwarding for everything else (v1model).
 *
 * docs/aggregation.md gives the packet format and protocol; the parser and
 * controls are in include/aggregation.p4 so that other programs can apply
 * them around their own forwarding.
 *
 * Aggregation: MyIngress.aggregation.agg_jobs maps (service address, job id)
 * to set_job(base, size, workers, mcast_grp): the job's slot range in the
 * switch's pool of AGG_SLOTS slots, its worker count (at most 32) and the
 * multicast group its results go to (one replica per worker, rid = worker
 * id).  MyEgress.aggregation.agg_workers maps (job id, worker id) to
 * to_worker(mac, addr, udp_port): where that worker's copy of a result goes.
 * MyIngress.aggregation.agg_parents makes this switch a level of a
 * hierarchical job: (service address, job id) -> set_parent(port, mac,
 * child_id), where its partial sums go (docs/collectives.md).  Registers
 * (2 * AGG_SLOTS cells, pool 1 after pool 0): bitmap, count, exponent,
 * lane0 .. lane<K-1>, K = AGG_LANES lanes per packet (64 unless compiled with
 * -D AGG_LANES=K).  Counters: MyIngress.aggregation.events (by AGG_EV_*),
 * MyEgress.aggregation.copies (by AGG_COPY_*).
 *
 * Forwarding: MyIngress.ipv4_routes (lpm on the destination) ->
 * forward(dmac, port) (source MAC = the old destination, TTL - 1) or drop
 * (the default).  Non-IPv4 packets, TTL <= 1 and parser errors are dropped
 * (MyIngress.drops counts them by DROP_*).
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/parsers.p4"
#include "include/aggregation.p4"

/* Index of MyIngress.drops. */
const bit<32> DROP_PARSER_ERROR = 0;
const bit<32> DROP_NOT_IPV4     = 1;
const bit<32> DROP_TTL          = 2;
const bit<32> DROP_NO_ROUTE     = 3;

struct agg_program_headers_t {
    headers_t base;
    agg_t     agg;
}

struct metadata_t {
    l4_ports_t     l4;
    agg_metadata_t agg;
}

parser AggregationProgramParser(packet_in packet,
                                out agg_program_headers_t hdr,
                                inout metadata_t meta,
                                inout standard_metadata_t standard_metadata) {
    EthernetIpParser() l3;
    AggregationParser() agg_parser;

    state start {
        l3.apply(packet, hdr.base, meta.l4);
        agg_parser.apply(packet, hdr.base.udp, hdr.agg);
        transition accept;
    }
}

control AggregationVerifyChecksum(inout agg_program_headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout agg_program_headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    AggregationIngress() aggregation;
    counter(4, CounterType.packets) drops;

    action drop() {
        drops.count(DROP_NO_ROUTE);
        mark_to_drop(standard_metadata);
    }

    action forward(macAddr_t dmac, egressSpec_t port) {
        standard_metadata.egress_spec = port;
        hdr.base.ethernet.srcAddr = hdr.base.ethernet.dstAddr;
        hdr.base.ethernet.dstAddr = dmac;
        hdr.base.ipv4.ttl = hdr.base.ipv4.ttl - 1;
    }

    table ipv4_routes {
        key = { hdr.base.ipv4.dstAddr: lpm; }
        actions = { forward; drop; }
        size = 4096;
        default_action = drop();
    }

    apply {
        aggregation.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.udp, hdr.agg,
                          meta.agg, standard_metadata);
        if (meta.agg.handled) {
            return;
        }
        if (standard_metadata.parser_error != error.NoError) {
            drops.count(DROP_PARSER_ERROR);
            mark_to_drop(standard_metadata);
        } else if (!hdr.base.ipv4.isValid()) {
            drops.count(DROP_NOT_IPV4);
            mark_to_drop(standard_metadata);
        } else if (hdr.base.ipv4.ttl <= 1) {
            drops.count(DROP_TTL);
            mark_to_drop(standard_metadata);
        } else {
            ipv4_routes.apply();
        }
    }
}

control MyEgress(inout agg_program_headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    AggregationEgress() aggregation;

    apply {
        aggregation.apply(hdr.base.ethernet, hdr.base.ipv4, hdr.base.udp, hdr.agg,
                          meta.agg, standard_metadata);
    }
}

control AggregationComputeChecksum(inout agg_program_headers_t hdr, inout metadata_t meta) {
    Ipv4ChecksumUpdate() ipv4_checksum;

    apply {
        ipv4_checksum.apply(hdr.base);
    }
}

control AggregationProgramDeparser(packet_out packet, in agg_program_headers_t hdr) {
    HeadersDeparser() base;
    AggregationDeparser() agg;

    apply {
        base.apply(packet, hdr.base);
        agg.apply(packet, hdr.agg);
    }
}

V1Switch(
    AggregationProgramParser(),
    AggregationVerifyChecksum(),
    MyIngress(),
    MyEgress(),
    AggregationComputeChecksum(),
    AggregationProgramDeparser()
) main;
