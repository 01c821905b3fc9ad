/*
 * t2na/aggregation.p4 — the in-network aggregation of p4/aggregation.p4 for
 * Intel Tofino 2, written to its native architecture (t2na.p4).
 * p4/tna/aggregation.p4 is the Tofino 1 variant; docs/tofino.md says how both
 * are compiled (`bf-p4c --target tofino2 --arch t2na`) and what is checked:
 * for Tofino 2 the back end's checks up to its assembler, no tofino.bin.
 *
 * Same packet format (include/aggregation_headers.p4, docs/aggregation.md),
 * same tables and names as the v1model program where the architecture allows:
 *   Ingress.agg_jobs     (service address, job id) -> set_job(base, size,
 *                        workers, mcast_grp)
 *   Egress.agg_workers   (job id, replication id = worker id) ->
 *                        to_worker(mac, addr, udp_port)
 *   Ingress.ipv4_routes  lpm -> forward(dmac, port) | drop
 * Hierarchical jobs (agg_parents) are the v1model program's only.  Packets
 * with IPv4 options are routed, never aggregated (the options are parsed for
 * the IPv4 checksum, tna/include/ipv4_options.p4).
 *
 * Stateful ALUs: a stateful ALU reads, changes and writes one register cell
 * per packet, so every register gets its own small control with a table that
 * picks one RegisterAction (bf-p4c places each in a stage of its own
 * choosing).  The 64 lanes live in 32 registers of lane pairs; a pair's
 * RegisterAction adds two lanes and returns both sums (its second output,
 * rv2, is what needs Tofino 2: a Tofino 1 stateful ALU returns one value, so
 * p4/tna/aggregation.p4 reads the other half in a second pass).  36 stateful
 * ALUs in all (32 pairs, block, bitmap, count, exponent) fit Tofino 2's
 * 20 stages x 4.
 *
 * Rounds of a pool are recognised by the block number alone (the block
 * register keeps the newest block a pool has seen): a newer block starts a
 * new round (bitmap, count, sums and exponent replaced), an older one is
 * stale and dropped.  This replaces the v1model program's clearing of the
 * worker's bit in the other pool, which needs the bitmap read before the
 * decision, i.e. two accesses to one register.  The controller therefore
 * initialises a new job's block cells to 0xffffffff (one before block 0).
 *
 * Tofino has no shift by a run-time amount: the worker's bitmap bit comes
 * from a constant table (worker_bits, worker id -> 1 << id).
 */
#include <core.p4>
#include <t2na.p4>

#include "../include/aggregation_headers.p4"
#include "../tna/include/ipv4_options.p4"

#if AGG_LANES != 64
#error "t2na/aggregation.p4 sums 64 lanes (32 lane pairs): build it without -D AGG_LANES"
#endif

#ifndef AGG_SLOTS
#define AGG_SLOTS 1024
#endif
#define AGG_POOL_CELLS (2 * AGG_SLOTS)

typedef bit<32> agg_index_t;

/* Applies M(pair, first lane, second lane) to the 32 lane pairs. */
#define AGG_FOR_EACH_PAIR(M) \
    M(0, 0, 1) M(1, 2, 3) M(2, 4, 5) M(3, 6, 7) \
    M(4, 8, 9) M(5, 10, 11) M(6, 12, 13) M(7, 14, 15) \
    M(8, 16, 17) M(9, 18, 19) M(10, 20, 21) M(11, 22, 23) \
    M(12, 24, 25) M(13, 26, 27) M(14, 28, 29) M(15, 30, 31) \
    M(16, 32, 33) M(17, 34, 35) M(18, 36, 37) M(19, 38, 39) \
    M(20, 40, 41) M(21, 42, 43) M(22, 44, 45) M(23, 46, 47) \
    M(24, 48, 49) M(25, 50, 51) M(26, 52, 53) M(27, 54, 55) \
    M(28, 56, 57) M(29, 58, 59) M(30, 60, 61) M(31, 62, 63)

/* worker_bits' entries: worker id w -> set_worker_bit(1 << w), w = 0..31. */
#define AGG_WORKER_BIT_ENTRY(w) w: set_worker_bit(32w1 << w);
#define AGG_FOR_EACH_WORKER(M) \
    M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) \
    M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) M(29) \
    M(30) M(31)

const bit<16> AGG_UDP_LENGTH = 8 + 16 + 4 * AGG_LANES;
const bit<8>  AGG_RESULT_TTL = 64;
/* Worker ids 0..31: one bit each in a pool's bitmap. */
const bit<8>  AGG_MAX_WORKER_ID = 32;

/* Which RegisterAction a register's control runs for this packet. */
const bit<2> OP_NONE  = 0;
const bit<2> OP_FIRST = 1;  /* a new round: replace */
const bit<2> OP_ADD   = 2;  /* the round goes on: accumulate */
const bit<2> OP_READ  = 3;  /* a retransmission into a complete pool: read back */

/* Index of Ingress.events, as AGG_EV_* of include/aggregation.p4. */
const bit<8> EV_CONTRIBUTION = 0;
const bit<8> EV_RESULT       = 1;
const bit<8> EV_RESENT       = 2;
const bit<8> EV_DUPLICATE    = 3;
const bit<8> EV_MALFORMED    = 4;
const bit<8> EV_BAD_SLOT     = 5;
const bit<8> EV_BAD_WORKER   = 6;
const bit<8> EV_STALE        = 7;

/* Ingress to egress: is this a multicast copy of a result. */
header agg_bridge_t {
    bit<7> pad;
    bit<1> result_copy;
}

struct agg_headers_t {
    agg_bridge_t bridge;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
    IPV4_OPTION_WORDS
    udp_t        udp;
    agg_t        agg;
}

struct agg_ingress_md_t {
    bool        job_found;
    bit<32>     base;
    bit<16>     size;      /* the job's slots per pool (at most AGG_SLOTS) */
    bit<16>     slot_margin;   /* slot - size: negative when the slot is in range */
    bit<8>      worker_margin; /* worker_id - workers: negative when the worker is */
    bit<1>      has_event; /* count md.event in Ingress.events */
    bit<8>      event;
    bit<8>      workers;
    agg_index_t cell;      /* (slot, pool) register cell */
    bit<32>     worker_bit;
    bit<32>     pool_block;
    bit<32>     age;
    bit<32>     seen;
    bit<8>      count;
    bit<2>      op;
    int<16>     exponent;  /* the packet's exponent, signed */
    int<32>     block;     /* the packet's block, for serial-number comparison */
}

struct agg_egress_md_t { }

struct agg_pair_t {
    bit<32> lo;
    bit<32> hi;
}

/* ------------------------------------------------------------------ parsers */

parser IngressParser(packet_in pkt,
                     out agg_headers_t hdr,
                     out agg_ingress_md_t md,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md = {false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, OP_NONE, 0, 0};
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    /* Options are parsed for the IPv4 checksum; such packets are only routed. */
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, IPPROTO_UDP): parse_udp;
            (5, _, _): accept;
            (0 .. 4, _, _): accept;
            default: parse_ipv4_opt0;
        }
    }

    IPV4_OPTION_STATES

    state parse_ipv4_payload {
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            AGG_UDP_PORT: parse_agg;
            default: accept;
        }
    }

    state parse_agg {
        pkt.extract(hdr.agg);
        transition accept;
    }
}

parser EgressParser(packet_in pkt,
                    out agg_headers_t hdr,
                    out agg_egress_md_t md,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    /* Options are parsed for the IPv4 checksum; such packets are only routed. */
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, IPPROTO_UDP): parse_udp;
            (5, _, _): accept;
            (0 .. 4, _, _): accept;
            default: parse_ipv4_opt0;
        }
    }

    IPV4_OPTION_STATES

    state parse_ipv4_payload {
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.bridge.result_copy) {
            1: parse_agg;
            default: accept;
        }
    }

    state parse_agg {
        pkt.extract(hdr.agg);
        transition accept;
    }
}

/* ------------------------------------------------------------------ state */

/* The newest block a pool has seen (serial-number order: md.block - value > 0
 * is the stateful ALU's signed comparison of the difference). */
control PoolBlock(in bit<32> block, inout agg_ingress_md_t md) {
    Register<int<32>, agg_index_t>(AGG_POOL_CELLS, -1) blocks;
    RegisterAction<int<32>, agg_index_t, int<32>>(blocks) advance = {
        void apply(inout int<32> value, out int<32> rv) {
            rv = md.block - value;
            if (md.block - value > 0) {
                value = md.block;
            }
        }
    };

    /* out: the packet's age, its block minus the pool's newest before it
     * (0: the round goes on; positive: a new round; negative: stale),
     * returned by the stateful ALU itself */
    apply {
        md.age = (bit<32>)advance.execute(md.cell);
    }
}

/* The workers seen in a pool's round; rv = the bitmap before this packet. */
control PoolBitmap(inout agg_ingress_md_t md) {
    Register<bit<32>, agg_index_t>(AGG_POOL_CELLS, 0) bitmaps;
    RegisterAction<bit<32>, agg_index_t, bit<32>>(bitmaps) restart = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = 0;
            value = md.worker_bit;
        }
    };
    RegisterAction<bit<32>, agg_index_t, bit<32>>(bitmaps) join = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value | md.worker_bit;
        }
    };

    action do_restart() { md.seen = restart.execute(md.cell); }
    action do_join() { md.seen = join.execute(md.cell); }

    table bitmap_op {
        key = { md.op: exact; }
        actions = { do_restart; do_join; NoAction; }
        const entries = {
            OP_FIRST: do_restart();
            OP_ADD: do_join();
        }
        default_action = NoAction();
        size = 4;
    }

    apply {
        bitmap_op.apply();
        md.seen = md.seen & md.worker_bit;
    }
}

/* Contributions counted in a pool's round; rv = the count after this packet. */
control PoolCount(inout agg_ingress_md_t md) {
    Register<bit<8>, agg_index_t>(AGG_POOL_CELLS, 0) counts;
    RegisterAction<bit<8>, agg_index_t, bit<8>>(counts) restart = {
        void apply(inout bit<8> value, out bit<8> rv) {
            value = 1;
            rv = 1;
        }
    };
    RegisterAction<bit<8>, agg_index_t, bit<8>>(counts) add = {
        void apply(inout bit<8> value, out bit<8> rv) {
            value = value + 1;
            rv = value;
        }
    };
    RegisterAction<bit<8>, agg_index_t, bit<8>>(counts) read = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
        }
    };

    action do_restart() { md.count = restart.execute(md.cell); }
    action do_add() { md.count = add.execute(md.cell); }
    action do_read() { md.count = read.execute(md.cell); }

    table count_op {
        key = { md.op: exact; }
        actions = { do_restart; do_add; do_read; NoAction; }
        const entries = {
            OP_FIRST: do_restart();
            OP_ADD: do_add();
            OP_READ: do_read();
        }
        default_action = NoAction();
        size = 4;
    }

    apply { count_op.apply(); }
}

/* The largest exponent of a pool's round (signed). */
control PoolExponent(inout bit<16> exponent, in agg_ingress_md_t md) {
    Register<int<16>, agg_index_t>(AGG_POOL_CELLS, 0) exponents;
    RegisterAction<int<16>, agg_index_t, int<16>>(exponents) restart = {
        void apply(inout int<16> value, out int<16> rv) {
            value = md.exponent;
            rv = value;
        }
    };
    RegisterAction<int<16>, agg_index_t, int<16>>(exponents) raise = {
        void apply(inout int<16> value, out int<16> rv) {
            value = max(value, md.exponent);
            rv = value;
        }
    };
    RegisterAction<int<16>, agg_index_t, int<16>>(exponents) read = {
        void apply(inout int<16> value, out int<16> rv) {
            rv = value;
        }
    };

    action do_restart() { exponent = (bit<16>)restart.execute(md.cell); }
    action do_raise() { exponent = (bit<16>)raise.execute(md.cell); }
    action do_read() { exponent = (bit<16>)read.execute(md.cell); }

    table exponent_op {
        key = { md.op: exact; }
        actions = { do_restart; do_raise; do_read; NoAction; }
        const entries = {
            OP_FIRST: do_restart();
            OP_ADD: do_raise();
            OP_READ: do_read();
        }
        default_action = NoAction();
        size = 4;
    }

    apply { exponent_op.apply(); }
}

/* Two lanes' sums in one register; a RegisterAction returns both (rv, rv2). */
control LanePair(inout bit<32> lo, inout bit<32> hi, in agg_ingress_md_t md) {
    Register<agg_pair_t, agg_index_t>(AGG_POOL_CELLS) sums;
    RegisterAction<agg_pair_t, agg_index_t, bit<32>>(sums) restart = {
        void apply(inout agg_pair_t value) {
            value.lo = lo;
            value.hi = hi;
        }
    };
    RegisterAction<agg_pair_t, agg_index_t, bit<32>>(sums) add = {
        void apply(inout agg_pair_t value, out bit<32> rv, out bit<32> rv2) {
            value.lo = value.lo + lo;
            value.hi = value.hi + hi;
            rv = value.lo;
            rv2 = value.hi;
        }
    };
    RegisterAction<agg_pair_t, agg_index_t, bit<32>>(sums) read = {
        void apply(inout agg_pair_t value, out bit<32> rv, out bit<32> rv2) {
            rv = value.lo;
            rv2 = value.hi;
        }
    };

    action do_restart() { restart.execute(md.cell); }
    action do_add() { lo = add.execute(md.cell, hi); }
    action do_read() { lo = read.execute(md.cell, hi); }

    table pair_op {
        key = { md.op: exact; }
        actions = { do_restart; do_add; do_read; NoAction; }
        const entries = {
            OP_FIRST: do_restart();
            OP_ADD: do_add();
            OP_READ: do_read();
        }
        default_action = NoAction();
        size = 4;
    }

    apply { pair_op.apply(); }
}

/* ------------------------------------------------------------------ ingress */

#define AGG_PAIR_INSTANCE(p, a, b) LanePair() pair##p;
#define AGG_PAIR_APPLY(p, a, b) pair##p.apply(hdr.agg.lane##a, hdr.agg.lane##b, md);

control Ingress(inout agg_headers_t hdr,
                inout agg_ingress_md_t md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<8>>(8, CounterType_t.PACKETS) events;
    /* Results multicast (AGG_EV_RESULT's count): a counter of its own, since the
     * completing contribution is already counted in events (EV_CONTRIBUTION) and
     * a counter can be updated once per packet. */
    Counter<bit<32>, bit<1>>(1, CounterType_t.PACKETS) results;
    PoolBlock() pool_block;
    PoolBitmap() pool_bitmap;
    PoolCount() pool_count;
    PoolExponent() pool_exponent;
    AGG_FOR_EACH_PAIR(AGG_PAIR_INSTANCE)

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    /* Ingress.events is updated in one place, at the end (count_event): a
     * counter is updated once per packet, and bf-p4c must see that. */
    action reject(bit<8> event) {
        md.event = event;
        md.has_event = 1;
        ig_dprsr_md.drop_ctl = 1;
    }

    action count_event() {
        events.count(md.event);
    }

    /* slot + pool * AGG_SLOTS: pool ++ slot, from the hash unit */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) pool_slot;

    /* The register cell of (slot, pool) and the range checks' differences: a
     * table's action, so that they stay fields (bf-p4c addresses a register
     * by a field through the hash unit, an action argument or a constant). */
    action set_cell() {
        md.cell = md.base + pool_slot.get({ hdr.agg.pool, hdr.agg.slot[9:0] });
        md.slot_margin = hdr.agg.slot - md.size;
        md.worker_margin = hdr.agg.worker_id - md.workers;
    }

    table pool_cell {
        actions = { set_cell; }
        default_action = set_cell();
        size = 1;
    }

    action set_job(bit<32> base, bit<32> size, bit<8> workers, bit<16> mcast_grp) {
        md.job_found = true;
        md.base = base;
        md.size = (bit<16>)size;
        md.workers = workers;
        ig_tm_md.mcast_grp_a = mcast_grp;
    }

    action not_aggregated() {
        md.job_found = false;
    }

    table agg_jobs {
        key = {
            hdr.ipv4.dstAddr: exact;
            hdr.agg.job_id: exact;
        }
        actions = { set_job; not_aggregated; }
        size = 256;
        default_action = not_aggregated();
    }

    action forward(macAddr_t dmac, PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; drop; }
        size = 4096;
        default_action = drop();
    }

    action set_worker_bit(bit<32> worker_bit) {
        md.worker_bit = worker_bit;
    }

    /* worker id -> its bit in a pool's bitmap (Tofino shifts by constants only). */
    table worker_bits {
        key = { hdr.agg.worker_id: exact; }
        actions = { set_worker_bit; NoAction; }
        const entries = {
            AGG_FOR_EACH_WORKER(AGG_WORKER_BIT_ENTRY)
        }
        default_action = NoAction();
        size = 32;
    }

    action multicast_result() {
        hdr.agg.flags = AGG_FLAG_RESULT;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ipv4.srcAddr = hdr.ipv4.dstAddr;
        hdr.ipv4.ttl = AGG_RESULT_TTL;
        hdr.udp.srcPort = AGG_UDP_PORT;
        hdr.udp.checksum = 0;
        hdr.bridge.result_copy = 1;
        results.count(0);
    }

    action unicast_result() {
        hdr.agg.flags = AGG_FLAG_RESULT | AGG_FLAG_RESENT;
        macAddr_t mac = hdr.ethernet.srcAddr;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = mac;
        ip4Addr_t addr = hdr.ipv4.srcAddr;
        hdr.ipv4.srcAddr = hdr.ipv4.dstAddr;
        hdr.ipv4.dstAddr = addr;
        hdr.ipv4.ttl = AGG_RESULT_TTL;
        hdr.udp.dstPort = hdr.udp.srcPort;
        hdr.udp.srcPort = AGG_UDP_PORT;
        hdr.udp.checksum = 0;
        ig_tm_md.mcast_grp_a = 0;
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        md.event = EV_RESENT;
        md.has_event = 1;
    }

    apply {
        hdr.bridge.setValid();
        hdr.bridge.pad = 0;
        hdr.bridge.result_copy = 0;
        if (ig_prsr_md.parser_err != 0) {
            if (hdr.udp.isValid() && hdr.udp.dstPort == AGG_UDP_PORT) {
                reject(EV_MALFORMED);   /* the aggregation header is cut short */
            } else {
                drop();
            }
        } else {
            if (hdr.agg.isValid()) {
                agg_jobs.apply();
            }
            if (!md.job_found) {
                if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
                    ipv4_routes.apply();
                } else {
                    drop();
                }
            } else {
                pool_cell.apply();
                worker_bits.apply();
                md.exponent = (int<16>)hdr.agg.exponent;
                md.block = (int<32>)hdr.agg.block;
                /* slot >= size, worker_id >= workers: differences that are not
                 * negative (Tofino's gateways test a field against constants), in
                 * the fields' own widths; a slot must also be below AGG_SLOTS */
                if (hdr.agg.version != AGG_VERSION || hdr.agg.lane_count != AGG_LANE_COUNT
                        || hdr.udp.length != AGG_UDP_LENGTH
                        || (hdr.agg.flags & AGG_FLAG_RESULT) != 0) {
                    reject(EV_MALFORMED);
                } else if (hdr.agg.slot[15:10] != 0 || md.slot_margin[15:15] == 0) {
                    reject(EV_BAD_SLOT);
                } else if (md.worker_margin[7:7] == 0
                        || hdr.agg.worker_id >= AGG_MAX_WORKER_ID) {
                    reject(EV_BAD_WORKER);
                } else {
                    pool_block.apply(hdr.agg.block, md);
                    if (md.age[31:31] == 1) {
                        reject(EV_STALE);           /* an older round of this pool */
                    } else {
                        if (md.age == 0) {
                            md.op = OP_ADD;
                        } else {
                            md.op = OP_FIRST;
                        }
                        pool_bitmap.apply(md);
                        if (md.op == OP_ADD && md.seen != 0) {
                            md.op = OP_READ;        /* counted before: read back, change nothing */
                        }
                        pool_count.apply(md);
                        if (md.op == OP_READ && md.count != md.workers) {
                            reject(EV_DUPLICATE);
                        } else {
                            pool_exponent.apply(hdr.agg.exponent, md);
                            AGG_FOR_EACH_PAIR(AGG_PAIR_APPLY)
                            if (md.op == OP_READ) {
                                unicast_result();
                            } else {
                                md.event = EV_CONTRIBUTION;
                                md.has_event = 1;
                                if (md.count == md.workers) {
                                    multicast_result();
                                } else {
                                    drop();
                                }
                            }
                        }
                    }
                }
            }
        }
        if (md.has_event == 1) {
            count_event();
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout agg_headers_t hdr,
                        in agg_ingress_md_t md,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.hdrChecksum = ipv4_checksum.update(IPV4_CHECKSUM_FIELDS);
        }
        pkt.emit(hdr);
    }
}

/* ------------------------------------------------------------------ egress */

control Egress(inout agg_headers_t hdr,
               inout agg_egress_md_t md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<32>, bit<1>>(2, CounterType_t.PACKETS) copies;

    action to_worker(macAddr_t mac, ip4Addr_t addr, bit<16> udp_port) {
        hdr.ethernet.dstAddr = mac;
        hdr.ipv4.dstAddr = addr;
        hdr.udp.dstPort = udp_port;
        hdr.agg.worker_id = (bit<8>)eg_intr_md.egress_rid;
        copies.count(0);
    }

    action no_worker() {
        copies.count(1);
        eg_dprsr_md.drop_ctl = 1;
    }

    table agg_workers {
        key = {
            hdr.agg.job_id: exact;
            eg_intr_md.egress_rid: exact;
        }
        actions = { to_worker; no_worker; }
        size = 8192;
        default_action = no_worker();
    }

    apply {
        if (hdr.bridge.result_copy == 1 && hdr.agg.isValid()) {
            agg_workers.apply();
        }
        hdr.bridge.setInvalid();
    }
}

control EgressDeparser(packet_out pkt,
                       inout agg_headers_t hdr,
                       in agg_egress_md_t md,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.hdrChecksum = ipv4_checksum.update(IPV4_CHECKSUM_FIELDS);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;

Switch(pipe) main;
