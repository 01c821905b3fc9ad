/*
 * netweft in-network aggregation: reusable parser and controls (P4-16,
 * v1model; needs aggregation_headers.p4).  docs/aggregation.md describes the
 * packet format and the protocol; p4/aggregation.p4 is the program that
 * applies these pieces around plain IPv4 forwarding.
 *
 * A v1model program that aggregates:
 *   parser:   after UDP, `AggregationParser() agg_parser;` and
 *             `agg_parser.apply(packet, hdr.udp, hdr.agg);` (extracts agg_t
 *             when the UDP destination port is AGG_UDP_PORT);
 *   ingress:  `AggregationIngress() aggregation;` applied first; when it sets
 *             am.handled the packet is the aggregation's (absorbed, multicast
 *             as a result, unicast back, or dropped as bad) and the program's
 *             forwarding must leave it alone;
 *   egress:   `AggregationEgress() aggregation;` rewrites each multicast copy
 *             of a result for its worker; when am.result_copy is set the
 *             program's own egress rewrites (MACs, multicast pruning) must
 *             leave the copy alone;
 *   deparser: emit agg_t after UDP; IPv4 checksum recomputed.
 * The controls take single headers, not a headers struct, so any program's
 * struct holding netweft's headers fits.
 *
 * Slot state lives in registers of 2 * AGG_SLOTS cells (pool 0 at index
 * slot, pool 1 at slot + AGG_SLOTS, slot = job base + packet slot): a worker
 * bitmap, a contribution count, the block being summed, the maximum
 * exponent, and one register per lane (lane0 .. lane<AGG_LANES-1>).
 */
#ifndef NETWEFT_AGGREGATION_P4
#define NETWEFT_AGGREGATION_P4

#include "aggregation_headers.p4"

/* Slots per pool in the switch (shared by all jobs through their ranges). */
#ifndef AGG_SLOTS
#define AGG_SLOTS 1024
#endif
const bit<32> AGG_SLOT_COUNT = AGG_SLOTS;
const bit<32> AGG_POOL_CELLS = 2 * AGG_SLOTS;

/* UDP length of a well-formed aggregation packet: 8 + 16 + 4 * K. */
const bit<16> AGG_UDP_LENGTH = 8 + 16 + 4 * AGG_LANES;

/* TTL of the results the switch sends (they are new packets). */
const bit<8> AGG_RESULT_TTL = 64;

/* Index of AggregationIngress.events: what happened to an aggregation packet. */
const bit<32> AGG_EV_CONTRIBUTION   = 0;  /* a contribution counted into its slot */
const bit<32> AGG_EV_RESULT         = 1;  /* a slot completed: result multicast */
const bit<32> AGG_EV_RESENT         = 2;  /* a result unicast again to a retransmitter */
const bit<32> AGG_EV_DUPLICATE      = 3;  /* a contribution already counted, slot incomplete */
const bit<32> AGG_EV_MALFORMED      = 4;  /* short, wrong version/length/lane count, RESULT set */
const bit<32> AGG_EV_BAD_SLOT       = 5;  /* slot outside the job's range */
const bit<32> AGG_EV_BAD_WORKER     = 6;  /* worker id outside the job's workers */
const bit<32> AGG_EV_STALE          = 7;  /* a delayed copy of an older use of the pool */
const bit<32> AGG_EV_PARTIAL        = 8;  /* a partial sum sent (or sent again) to the parent */
const bit<32> AGG_EV_FROM_PARENT    = 9;  /* the parent's result stored and multicast down */
const bit<32> AGG_EVENT_COUNT       = 10;

/* Index of AggregationEgress.copies. */
const bit<32> AGG_COPY_SENT         = 0;  /* a result copy rewritten for its worker */
const bit<32> AGG_COPY_NO_WORKER    = 1;  /* a copy whose replication id names no worker: dropped */

struct agg_metadata_t {
    bool    handled;       /* the aggregation consumed or answered the packet */
    bool    result_copy;   /* multicast result: egress rewrites each copy */
    bit<32> base;          /* the job's first slot */
    bit<32> size;          /* the job's slot count */
    bit<8>  workers;       /* the job's worker count */
    bit<32> index;         /* register cell of (slot, pool) */
    bit<32> other_index;   /* register cell of (slot, other pool) */
    bit<32> keep;          /* 0 for the first contribution, all ones after */
    bool    has_parent;    /* a level below the root: partial sums go up (agg_parents) */
    bit<9>  parent_port;   /* the port towards the parent switch */
    macAddr_t parent_mac;  /* the parent's MAC on that link */
    bit<8>  child_id;      /* this switch's worker id at its parent */
    bit<8>  done;          /* count of a pool holding its result: workers (+1 below the root) */
}

/* Extracts agg_t from a UDP datagram to AGG_UDP_PORT (short ones: PacketTooShort). */
parser AggregationParser(packet_in packet, in udp_t udp, out agg_t agg) {
    state start {
        transition select(udp.isValid(), udp.dstPort) {
            (true, AGG_UDP_PORT): parse_agg;
            default: accept;
        }
    }

    state parse_agg {
        packet.extract(agg);
        transition accept;
    }
}

#define AGG_LANE_REGISTER(i) register<bit<32>>(AGG_POOL_CELLS) lane##i;
/* acc = (first contribution ? 0 : stored) + packet's lane; stored = acc; lane = acc */
#define AGG_LANE_ADD(i) \
    lane##i.read(acc, am.index); \
    acc = (acc & am.keep) + agg.lane##i; \
    lane##i.write(am.index, acc); \
    agg.lane##i = acc;
#define AGG_LANE_LOAD(i) lane##i.read(agg.lane##i, am.index);
#define AGG_LANE_STORE(i) lane##i.write(am.index, agg.lane##i);

/*
 * Ingress: for a contribution to a configured job (agg_jobs: service address
 * and job id), adds the lanes into the slot's pool unless the worker's bit is
 * set, and turns the packet that completes the slot into the result,
 * multicast to the job's group; a retransmission into a complete pool gets
 * the stored result back by unicast.  Packets to AGG_UDP_PORT that fail to
 * parse are counted (AGG_EV_MALFORMED) and dropped; packets for jobs this
 * switch does not aggregate are left to the program's forwarding.
 *
 * Hierarchical jobs: a switch with an agg_parents entry for the job is a
 * level below the root.  Its "workers" are its children (hosts, or switches
 * below it); when a pool is complete its partial sum goes up to the parent as
 * one contribution (worker id = child_id) instead of down, and the parent's
 * result, coming back in on the parent's port, is stored in the pool (its
 * count becomes workers + 1) and multicast to the children.  A child's
 * retransmission into a pool that went up without a result yet sends the
 * partial sum up again (the parent answers a repeat with its stored result);
 * into a pool holding the result it gets the result back, as at the root.
 */
control AggregationIngress(inout ethernet_t ethernet,
                           inout ipv4_t ipv4,
                           inout udp_t udp,
                           inout agg_t agg,
                           inout agg_metadata_t am,
                           inout standard_metadata_t standard_metadata) {
    register<bit<32>>(AGG_POOL_CELLS) bitmap;
    register<bit<8>>(AGG_POOL_CELLS) count;
    register<bit<32>>(AGG_POOL_CELLS) block;
    register<bit<16>>(AGG_POOL_CELLS) exponent;
    AGG_FOR_EACH_LANE(AGG_LANE_REGISTER)
    counter(AGG_EVENT_COUNT, CounterType.packets) events;

    action set_job(bit<32> base, bit<32> size, bit<8> workers, bit<16> mcast_grp) {
        am.base = base;
        am.size = size;
        am.workers = workers;
        standard_metadata.mcast_grp = mcast_grp;
    }

    action not_aggregated() {
    }

    /* (service address, job id) -> the job's slot range, workers and multicast group. */
    table agg_jobs {
        key = {
            ipv4.dstAddr: exact;
            agg.job_id: exact;
        }
        actions = { set_job; not_aggregated; }
        size = 256;
        default_action = not_aggregated();
    }

    action set_parent(bit<9> port, macAddr_t mac, bit<8> child_id) {
        am.has_parent = true;
        am.parent_port = port;
        am.parent_mac = mac;
        am.child_id = child_id;
    }

    action root() {
        am.has_parent = false;
    }

    /* (service address, job id) -> this switch's parent in the job's tree: where its
     * partial sums go (a level of a hierarchical job); no entry: the root. */
    table agg_parents {
        key = {
            ipv4.dstAddr: exact;
            agg.job_id: exact;
        }
        actions = { set_parent; root; }
        size = 256;
        default_action = root();
    }

    /* The pool's partial sum (in the packet) goes up to the parent as this
     * switch's contribution there. */
    action partial_to_parent(bit<8> flags) {
        agg.flags = flags;
        agg.worker_id = am.child_id;
        ethernet.srcAddr = ethernet.dstAddr;
        ethernet.dstAddr = am.parent_mac;
        ipv4.srcAddr = ipv4.dstAddr;
        ipv4.ttl = AGG_RESULT_TTL;
        udp.srcPort = AGG_UDP_PORT;
        udp.checksum = 0;
        standard_metadata.mcast_grp = 0;
        standard_metadata.egress_spec = am.parent_port;
        events.count(AGG_EV_PARTIAL);
    }

    action reject(bit<32> event) {
        events.count(event);
        am.handled = true;
        mark_to_drop(standard_metadata);
    }

    /* The slot is complete: this packet becomes the result, multicast (egress
     * rewrites each copy for its worker). */
    action multicast_result() {
        agg.flags = AGG_FLAG_RESULT;
        ethernet.srcAddr = ethernet.dstAddr;
        ipv4.srcAddr = ipv4.dstAddr;
        ipv4.ttl = AGG_RESULT_TTL;
        udp.srcPort = AGG_UDP_PORT;
        udp.checksum = 0;
        am.result_copy = true;
        events.count(AGG_EV_RESULT);
    }

    /* The stored result goes back to the worker that sent the packet. */
    action unicast_result() {
        agg.flags = AGG_FLAG_RESULT | AGG_FLAG_RESENT;
        macAddr_t mac = ethernet.srcAddr;
        ethernet.srcAddr = ethernet.dstAddr;
        ethernet.dstAddr = mac;
        ip4Addr_t addr = ipv4.srcAddr;
        ipv4.srcAddr = ipv4.dstAddr;
        ipv4.dstAddr = addr;
        ipv4.ttl = AGG_RESULT_TTL;
        udp.dstPort = udp.srcPort;
        udp.srcPort = AGG_UDP_PORT;
        udp.checksum = 0;
        standard_metadata.mcast_grp = 0;
        standard_metadata.egress_spec = standard_metadata.ingress_port;
        events.count(AGG_EV_RESENT);
    }

    apply {
        am.handled = false;
        am.result_copy = false;
        if (!udp.isValid() || udp.dstPort != AGG_UDP_PORT) {
            return;
        }
        if (standard_metadata.parser_error != error.NoError) {
            /* UDP parsed, so the error is agg_t's: the datagram is too short */
            reject(AGG_EV_MALFORMED);
            return;
        }
        if (!agg.isValid() || !ipv4.isValid()) {
            return;
        }
        if (!agg_jobs.apply().hit) {
            return;   /* another switch's job: the program forwards it */
        }
        am.handled = true;
        am.has_parent = false;
        agg_parents.apply();
        am.done = am.workers;
        if (am.has_parent) {
            am.done = am.workers + 1;
        }
        bool from_parent = (agg.flags & AGG_FLAG_RESULT) != 0 && am.has_parent
            && standard_metadata.ingress_port == am.parent_port;
        if (agg.version != AGG_VERSION || agg.lane_count != AGG_LANE_COUNT
                || udp.length != AGG_UDP_LENGTH
                || ((agg.flags & AGG_FLAG_RESULT) != 0 && !from_parent)) {
            reject(AGG_EV_MALFORMED);
            return;
        }
        if ((bit<32>)agg.slot >= am.size) {
            reject(AGG_EV_BAD_SLOT);
            return;
        }
        if (!from_parent
                && (agg.worker_id >= am.workers
                    || (bit<32>)agg.worker_id >= AGG_MAX_WORKERS)) {
            reject(AGG_EV_BAD_WORKER);
            return;
        }

        bit<32> cell = am.base + (bit<32>)agg.slot;
        if (agg.pool == 0) {
            am.index = cell;
            am.other_index = cell + AGG_SLOT_COUNT;
        } else {
            am.index = cell + AGG_SLOT_COUNT;
            am.other_index = cell;
        }
        bit<32> worker_bit = (bit<32>)1 << agg.worker_id;
        bit<32> seen;
        bit<8> contributions;
        bit<32> pool_block;
        bitmap.read(seen, am.index);
        count.read(contributions, am.index);
        block.read(pool_block, am.index);
        bit<32> age = agg.block - pool_block;

        if (from_parent) {
            /* the parent's result for a pool this switch sent up: keep it (a
             * child's retransmission gets it back) and multicast it down */
            if (contributions == am.workers && age == 0) {
                count.write(am.index, am.done);
                exponent.write(am.index, agg.exponent);
                AGG_FOR_EACH_LANE(AGG_LANE_STORE)
                events.count(AGG_EV_FROM_PARENT);
                multicast_result();
            } else if (contributions == am.done && age == 0) {
                reject(AGG_EV_DUPLICATE);   /* a second copy of the result */
            } else {
                reject(AGG_EV_STALE);
            }
            return;
        }

        /* A delayed copy from an older use of this pool: its block is older
         * than the pool's, or it is the pool's block, complete, and this
         * worker has already moved on to the other pool (its bit is clear). */
        if (contributions != 0
                && (age[31:31] == 1
                    || (age == 0 && (seen & worker_bit) == 0
                        && contributions >= am.workers))) {
            reject(AGG_EV_STALE);
            return;
        }

        if ((seen & worker_bit) == 0) {
            /* a new contribution: count it, and free this worker's bit in the
             * other pool (the worker has the result of that pool's last use) */
            bool first = seen == 0;
            bitmap.write(am.index, seen | worker_bit);
            bit<32> other;
            bitmap.read(other, am.other_index);
            bitmap.write(am.other_index, other & ~worker_bit);

            bit<16> max_exponent;
            exponent.read(max_exponent, am.index);
            if (first) {
                am.keep = 0;
                contributions = 1;
                max_exponent = agg.exponent;
                block.write(am.index, agg.block);
            } else {
                am.keep = 32w0xffffffff;
                contributions = contributions + 1;
                if ((int<16>)agg.exponent > (int<16>)max_exponent) {
                    max_exponent = agg.exponent;
                }
            }
            count.write(am.index, contributions);
            exponent.write(am.index, max_exponent);
            agg.exponent = max_exponent;
            bit<32> acc;
            AGG_FOR_EACH_LANE(AGG_LANE_ADD)
            events.count(AGG_EV_CONTRIBUTION);
            if (contributions != am.workers) {
                mark_to_drop(standard_metadata);
            } else if (am.has_parent) {
                partial_to_parent(0);
            } else {
                multicast_result();
            }
        } else if (contributions == am.done) {
            /* counted before and complete: the result was lost on its way back */
            exponent.read(agg.exponent, am.index);
            AGG_FOR_EACH_LANE(AGG_LANE_LOAD)
            unicast_result();
        } else if (am.has_parent && contributions == am.workers) {
            /* complete here, no result from the parent yet: the partial sum or
             * the parent's result was lost; send the partial sum up again */
            exponent.read(agg.exponent, am.index);
            AGG_FOR_EACH_LANE(AGG_LANE_LOAD)
            partial_to_parent(AGG_FLAG_RETRANSMIT);
        } else {
            reject(AGG_EV_DUPLICATE);
        }
    }
}

/*
 * Egress: each multicast copy of a result is rewritten for the worker its
 * replication id names (agg_workers: job id, rid = worker id): destination
 * MAC, IPv4 address and UDP port, and worker_id.  A copy whose rid names no
 * worker is dropped and counted.
 */
control AggregationEgress(inout ethernet_t ethernet,
                          inout ipv4_t ipv4,
                          inout udp_t udp,
                          inout agg_t agg,
                          inout agg_metadata_t am,
                          inout standard_metadata_t standard_metadata) {
    counter(2, CounterType.packets) copies;

    action to_worker(macAddr_t mac, ip4Addr_t addr, bit<16> udp_port) {
        ethernet.dstAddr = mac;
        ipv4.dstAddr = addr;
        udp.dstPort = udp_port;
        agg.worker_id = (bit<8>)standard_metadata.egress_rid;
        copies.count(AGG_COPY_SENT);
    }

    action no_worker() {
        copies.count(AGG_COPY_NO_WORKER);
        mark_to_drop(standard_metadata);
    }

    /* (job id, worker id) -> where that worker's copy of a result goes. */
    table agg_workers {
        key = {
            agg.job_id: exact;
            standard_metadata.egress_rid: exact;
        }
        actions = { to_worker; no_worker; }
        size = 8192;
        default_action = no_worker();
    }

    apply {
        if (am.result_copy && agg.isValid()) {
            agg_workers.apply();
        }
    }
}

/* Emits agg_t (after the program has emitted Ethernet .. UDP). */
control AggregationDeparser(packet_out packet, in agg_t agg) {
    apply {
        packet.emit(agg);
    }
}

#endif  /* NETWEFT_AGGREGATION_P4 */
