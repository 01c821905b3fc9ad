/*
 * tna/aggregation.p4 — the in-network aggregation of p4/aggregation.p4 for
 * Intel Tofino 1, written to its native architecture (tna.p4).  Compile with
 * `bf-p4c --target tofino --arch tna p4/tna/aggregation.p4`; docs/tofino.md
 * says what was compiled and the resources.  p4/t2na/aggregation.p4 is the
 * Tofino 2 variant (one pass: its stateful ALUs return two values).
 *
 * Same packet format (include/aggregation_headers.p4, 64 lanes), same tables
 * and names as the v1model program where the architecture allows:
 *   Ingress.agg_jobs     (service address, job id) -> set_job(base, size,
 *                        workers, mcast_grp)
 *   Egress.agg_workers   (job id, replication id = worker id) ->
 *                        to_worker(mac, addr, udp_port)
 *   Ingress.ipv4_routes  lpm -> forward(dmac, port) | drop
 * Counters: Ingress.events (by AGG_EV_* of include/aggregation.p4),
 * Egress.copies (by AGG_COPY_*).  Hierarchical jobs (agg_parents) are the
 * v1model program's only.
 *
 * Tofino 1 (SwitchML's way):
 *   - A stateful ALU accesses one register cell per packet and returns one
 *     32-bit value.  The 64 lanes live in 32 registers of lane pairs (lane
 *     2p in the pair's low word, 2p+1 in its high word); a pair's
 *     RegisterAction adds both lanes and returns the high sum.  The packet
 *     that completes a slot (or a retransmission into a complete slot) is
 *     recirculated once, and its second pass reads the low sums.
 *   - 36 stateful ALUs (32 pairs, block, bitmap, count, exponent) are more
 *     than ingress can chain after the bookkeeping in 12 stages (4 per stage,
 *     shared by ingress and egress), so pairs 8..31 (lanes 16..63) are in
 *     ingress and pairs 0..7 (lanes 0..15) in egress, which runs them with the
 *     operation and cell ingress bridges.  Egress can have no more: Tofino 1's
 *     egress parser reads at most 160 bytes, of which its intrinsic metadata
 *     takes 27, the bridged header 10, Ethernet, IPv4, UDP and the aggregation
 *     header's first 16 bytes 58, leaving 65 bytes: lanes 0..15 (64 bytes,
 *     agg_egress_h); the rest of the packet is payload there.  For the same
 *     reason the second pass's details travel in the bridged header, and
 *     egress writes them into agg_pass_h for the recirculated packet.
 *     Every counted contribution goes through egress, by the
 *     recirculation port's queue: one FIFO, so egress adds the contributions
 *     in the order ingress counted them, and the completing packet sees all
 *     of them.  Contributions that do not complete the slot are dropped at the
 *     end of egress; the rest come back for their second pass.  The
 *     aggregation's throughput per pipe is therefore the recirculation
 *     port's (100 Gb/s on Tofino 1).
 *   - Ingress keys the bookkeeping's and the pairs' tables on the stateful
 *     ALUs' own results (the block register returns the packet's age against
 *     the pool's block; the bitmap returns the worker's bit) with ternary
 *     matches, not on an operation derived from them, which would take a
 *     stage of its own before each, leaving more stages to the pairs.
 *   - Second pass: ingress reads the low sums of pairs 8..31 and multicasts
 *     the result (or unicasts it back to a retransmitter); egress reads the
 *     low sums of pairs 0..7 into each copy.  No pool is reused before
 *     every worker has its copy (a worker uses the pool again only after
 *     every worker has contributed to the other pool, which each does after
 *     receiving this result), so the copies read a stable cell.
 *   - Rounds of a pool are told apart by the block number alone, as in the
 *     Tofino 2 variant: the block register keeps the newest block a pool has
 *     seen (serial-number order); a newer block starts a new round, an older
 *     one is stale.  The controller initialises a job's block cells to
 *     0xffffffff (one before block 0); the register's initial value is that.
 *   - Tofino shifts by constants only: the worker's bitmap bit comes from a
 *     constant table (worker_bits).
 *   - Packets with IPv4 options are routed, never aggregated (the options
 *     are parsed for the IPv4 checksum, include/ipv4_options.p4).
 */
#include <core.p4>
#include <tna.p4>

#include "../include/aggregation_headers.p4"
#include "include/ipv4_options.p4"

#if AGG_LANES != 64
#error "tna/aggregation.p4 sums 64 lanes (32 lane pairs): build it without -D AGG_LANES"
#endif

/* Slots per pool: the cell of (slot, pool) is base + slot + pool * AGG_SLOTS. */
#define AGG_SLOT_BITS 10
#define AGG_SLOTS 1024
#define AGG_POOL_CELLS (2 * AGG_SLOTS)

/* Pipe 0's recirculation port on Tofino 1: the second pass's way back. */
const PortId_t RECIRC_PORT = 68;

const bit<16> AGG_UDP_LENGTH = 8 + 16 + 4 * AGG_LANES;
const bit<8>  AGG_RESULT_TTL = 64;
/* Worker ids 0..31: one bit each in a pool's bitmap. */
const bit<8>  AGG_MAX_WORKER_ID = 32;

/* Which RegisterAction a register's control runs for this packet. */
const bit<4> OP_NONE    = 0;
const bit<4> OP_FIRST   = 1;  /* a new round: replace */
const bit<4> OP_ADD     = 2;  /* the round goes on: accumulate */
const bit<4> OP_READ_HI = 3;  /* first pass of a result: read (pairs: the high sums) */
const bit<4> OP_READ_LO = 4;  /* second pass of a result: the pairs' low sums */

/* How the second pass sends the result. */
const bit<8> PASS_MULTICAST = 1;  /* the slot completed: to every worker */
const bit<8> PASS_UNICAST   = 2;  /* a retransmission: back to its sender */

/* Ternary masks on the stateful ALUs' results (md.age, md.seen). */
const bit<32> ALL_BITS  = 0xffffffff;
const bit<32> SIGN_BIT  = 0x80000000;

/* Index of Ingress.events, as AGG_EV_* of include/aggregation.p4. */
const bit<8> EV_CONTRIBUTION = 0;
const bit<8> EV_RESULT       = 1;
const bit<8> EV_RESENT       = 2;
const bit<8> EV_DUPLICATE    = 3;
const bit<8> EV_MALFORMED    = 4;
const bit<8> EV_BAD_SLOT     = 5;
const bit<8> EV_BAD_WORKER   = 6;
const bit<8> EV_STALE        = 7;

/* Index of Egress.copies, as AGG_COPY_*. */
const bit<1> COPY_SENT      = 0;
const bit<1> COPY_NO_WORKER = 1;

/* worker_bits' entries: worker id w -> set_worker_bit(1 << w), w = 0..31. */
#define AGG_WORKER_BIT_ENTRY(w) w: set_worker_bit(32w1 << w);
#define AGG_FOR_EACH_WORKER(M) \
    M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) \
    M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) M(29) \
    M(30) M(31)

/* M(pair, low lane, high lane) for the pairs ingress sums (lanes 16..63) ... */
#define AGG_FOR_EACH_INGRESS_PAIR(M) \
    M(8, 16, 17) M(9, 18, 19) M(10, 20, 21) M(11, 22, 23) \
    M(12, 24, 25) M(13, 26, 27) M(14, 28, 29) M(15, 30, 31) \
    M(16, 32, 33) M(17, 34, 35) M(18, 36, 37) M(19, 38, 39) \
    M(20, 40, 41) M(21, 42, 43) M(22, 44, 45) M(23, 46, 47) \
    M(24, 48, 49) M(25, 50, 51) M(26, 52, 53) M(27, 54, 55) \
    M(28, 56, 57) M(29, 58, 59) M(30, 60, 61) M(31, 62, 63)
/* ... and for those egress sums (lanes 0..15). */
#define AGG_FOR_EACH_EGRESS_PAIR(M) \
    M(0, 0, 1) M(1, 2, 3) M(2, 4, 5) M(3, 6, 7) \
    M(4, 8, 9) M(5, 10, 11) M(6, 12, 13) M(7, 14, 15)
/* The lanes egress parses (agg_egress_h). */
#define AGG_EGRESS_LANES(M) \
    M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) \
    M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)

/* Ingress to egress, before Ethernet: what egress does with the packet, and
 * for a packet going round again what its second pass needs (10 bytes: egress
 * parses at most 160, see above). */
header agg_bridge_h {
    bit<4>   op;           /* OP_*: the egress pairs' operation */
    bit<1>   has_pass;     /* recirculated: egress writes agg_pass_h from the fields below */
    bit<1>   result_copy;  /* a multicast copy of a result: agg_workers rewrites it */
    bit<1>   drop_after;   /* a contribution that did not complete: dropped after egress */
    bit<1>   pad0;
    bit<8>   mode;         /* the second pass's PASS_* */
    bit<32>  cell;         /* the register cell of (slot, pool) */
    bit<7>   pad;
    PortId_t port;         /* the first pass's ingress port (PASS_UNICAST) */
    bit<16>  mcast_grp;    /* the job's multicast group (PASS_MULTICAST) */
}

/* First pass to second, before Ethernet, through the recirculation port
 * (written by egress, parsed by ingress on the recirculation port). */
header agg_pass_h {
    bit<8>   mode;        /* PASS_* */
    bit<7>   pad;
    PortId_t port;        /* the first pass's ingress port (PASS_UNICAST) */
    bit<16>  mcast_grp;   /* the job's multicast group (PASS_MULTICAST) */
    bit<32>  cell;
}

/* agg_t as egress parses it: its first 16 bytes and lanes 0..15 (the same
 * layout as include/aggregation_headers.p4's agg_t); lanes 16..63 stay payload. */
header agg_egress_h {
    bit<8>  version;
    bit<8>  flags;
    bit<16> job_id;
    bit<16> slot;
    bit<1>  pool;
    bit<7>  reserved;
    bit<8>  worker_id;
    bit<32> block;
    bit<16> exponent;
    bit<16> lane_count;
    AGG_EGRESS_LANES(AGG_LANE_FIELD)   /* bit<32> lane0; .. lane15; */
}

struct agg_headers_t {
    agg_bridge_h bridge;
    agg_pass_h   pass;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
    IPV4_OPTION_WORDS
    udp_t        udp;
    agg_t        agg;
}

struct agg_egress_headers_t {
    agg_bridge_h bridge;
    agg_pass_h   pass;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
    IPV4_OPTION_WORDS
    udp_t        udp;
    agg_egress_h agg;
}

struct agg_ingress_md_t {
    bool    job_found;
    bit<32> base;
    bit<16> size;         /* the job's slots per pool (at most AGG_SLOTS) */
    bit<8>  workers;
    bit<16> mcast_grp;
    bit<32> cell;         /* base + pool_slot */
    bit<16> slot_margin;  /* slot - size (16 bits): negative when the slot is in range */
    bit<8>  worker_margin; /* worker_id - workers (8 bits): negative when the worker is */
    bit<32> worker_bit;
    int<32> block;        /* the packet's block, for serial-number comparison */
    bit<32> age;          /* block - the pool's newest block before this packet */
    int<16> exponent;
    bit<32> seen;         /* the worker's bit in the pool's bitmap before this packet */
    bit<8>  count;
    bit<4>  op;           /* what the packet did (OP_*): bridged to egress's pairs */
    bit<1>  second;       /* the second pass (from the recirculation port) */
    bit<1>  go_on;        /* a first pass that passed every check: sum its lanes */
    bit<1>  has_event;    /* count md.event in Ingress.events */
    bit<8>  event;
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
        md.job_found = false;
        md.op = OP_NONE;
        md.second = 0;
        md.go_on = 0;
        md.has_event = 0;
        md.event = 0;
        transition select(ig_intr_md.ingress_port) {
            RECIRC_PORT: parse_pass;
            default: parse_ethernet;
        }
    }

    state parse_pass {
        pkt.extract(hdr.pass);
        md.second = 1;
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

/* Egress parses past Ethernet only the packets whose lanes it sums or reads. */
parser EgressParser(packet_in pkt,
                    out agg_egress_headers_t hdr,
                    out agg_egress_md_t md,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.bridge.op) {
            OP_NONE: accept;
            default: parse_ipv4;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.udp);
        pkt.extract(hdr.agg);
        transition accept;
    }
}

/* ------------------------------------------------------------------ state */

/* The newest block a pool has seen (serial-number order); out: the packet's
 * age, its block minus the pool's before it (0: the round goes on; positive: a
 * new round; negative: stale). */
control PoolBlock(inout agg_ingress_md_t md) {
    Register<int<32>, bit<32>>(AGG_POOL_CELLS, -1) blocks;
    RegisterAction<int<32>, bit<32>, int<32>>(blocks) advance = {
        void apply(inout int<32> value, out int<32> rv) {
            rv = md.block - value;
            if (md.block - value > 0) {
                value = md.block;
            }
        }
    };

    apply {
        md.age = (bit<32>)advance.execute(md.cell);
    }
}

/* The workers seen in a pool's round; out: this worker's bit before this packet. */
control PoolBitmap(inout agg_ingress_md_t md) {
    Register<bit<32>, bit<32>>(AGG_POOL_CELLS, 0) bitmaps;
    RegisterAction<bit<32>, bit<32>, bit<32>>(bitmaps) restart = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = 0;
            value = md.worker_bit;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(bitmaps) join = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value & md.worker_bit;
            value = value | md.worker_bit;
        }
    };

    action do_restart() { md.seen = restart.execute(md.cell); }
    action do_join() { md.seen = join.execute(md.cell); }

    /* by the age: 0, the round goes on; positive (sign bit clear), a new round */
    table bitmap_op {
        key = { md.age: ternary; }
        actions = { do_restart; do_join; NoAction; }
        const entries = {
            0 &&& ALL_BITS: do_join();
            0 &&& SIGN_BIT: do_restart();
        }
        default_action = NoAction();
        size = 4;
    }

    apply { bitmap_op.apply(); }
}

/* Contributions counted in a pool's round; out: the count after this packet. */
control PoolCount(inout agg_ingress_md_t md) {
    Register<bit<8>, bit<32>>(AGG_POOL_CELLS, 0) counts;
    RegisterAction<bit<8>, bit<32>, bit<8>>(counts) restart = {
        void apply(inout bit<8> value, out bit<8> rv) {
            value = 1;
            rv = 1;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(counts) add = {
        void apply(inout bit<8> value, out bit<8> rv) {
            value = value + 1;
            rv = value;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(counts) read = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
        }
    };

    action do_restart() { md.count = restart.execute(md.cell); }
    action do_add() { md.count = add.execute(md.cell); }
    action do_read() { md.count = read.execute(md.cell); }

    /* by (age, seen): the round goes on and the worker is new; the round goes
     * on and the worker was counted before; a new round */
    table count_op {
        key = { md.age: ternary; md.seen: ternary; }
        actions = { do_restart; do_add; do_read; NoAction; }
        const entries = {
            (0 &&& ALL_BITS, 0 &&& ALL_BITS): do_add();
            (0 &&& ALL_BITS, _): do_read();
            (0 &&& SIGN_BIT, _): do_restart();
        }
        default_action = NoAction();
        size = 4;
    }

    apply { count_op.apply(); }
}

/* The largest exponent of a pool's round (signed); out: into the packet. */
control PoolExponent(inout bit<16> exponent, in agg_ingress_md_t md) {
    Register<int<16>, bit<32>>(AGG_POOL_CELLS, 0) exponents;
    RegisterAction<int<16>, bit<32>, int<16>>(exponents) restart = {
        void apply(inout int<16> value, out int<16> rv) {
            value = md.exponent;
            rv = value;
        }
    };
    RegisterAction<int<16>, bit<32>, int<16>>(exponents) raise = {
        void apply(inout int<16> value, out int<16> rv) {
            value = max(value, md.exponent);
            rv = value;
        }
    };
    RegisterAction<int<16>, bit<32>, int<16>>(exponents) read = {
        void apply(inout int<16> value, out int<16> rv) {
            rv = value;
        }
    };

    action do_restart() { exponent = (bit<16>)restart.execute(md.cell); }
    action do_raise() { exponent = (bit<16>)raise.execute(md.cell); }
    action do_read() { exponent = (bit<16>)read.execute(md.cell); }

    /* keyed as count_op */
    table exponent_op {
        key = { md.age: ternary; md.seen: ternary; }
        actions = { do_restart; do_raise; do_read; NoAction; }
        const entries = {
            (0 &&& ALL_BITS, 0 &&& ALL_BITS): do_raise();
            (0 &&& ALL_BITS, _): do_read();
            (0 &&& SIGN_BIT, _): do_restart();
        }
        default_action = NoAction();
        size = 4;
    }

    apply { exponent_op.apply(); }
}

/* Two lanes' sums in one register cell; a RegisterAction returns one of them.
 * The register and its actions, for the ingress and the egress pair controls. */
#define AGG_PAIR_REGISTER                                                       \
    Register<agg_pair_t, bit<32>>(AGG_POOL_CELLS) sums;                         \
    RegisterAction<agg_pair_t, bit<32>, bit<32>>(sums) restart = {              \
        void apply(inout agg_pair_t value) {                                    \
            value.lo = lo;                                                      \
            value.hi = hi;                                                      \
        }                                                                       \
    };                                                                          \
    RegisterAction<agg_pair_t, bit<32>, bit<32>>(sums) add = {                  \
        void apply(inout agg_pair_t value, out bit<32> rv) {                    \
            value.lo = value.lo + lo;                                           \
            value.hi = value.hi + hi;                                           \
            rv = value.hi;                                                      \
        }                                                                       \
    };                                                                          \
    RegisterAction<agg_pair_t, bit<32>, bit<32>>(sums) read_hi = {              \
        void apply(inout agg_pair_t value, out bit<32> rv) {                    \
            rv = value.hi;                                                      \
        }                                                                       \
    };                                                                          \
    RegisterAction<agg_pair_t, bit<32>, bit<32>>(sums) read_lo = {              \
        void apply(inout agg_pair_t value, out bit<32> rv) {                    \
            rv = value.lo;                                                      \
        }                                                                       \
    };                                                                          \
    action do_restart() { restart.execute(cell); }                              \
    action do_add() { hi = add.execute(cell); }                                 \
    action do_read_hi() { hi = read_hi.execute(cell); }                         \
    action do_read_lo() { lo = read_lo.execute(cell); }

/* Ingress: the operation by the pass and the bookkeeping's results, as count_op. */
control IngressLanePair(inout bit<32> lo, inout bit<32> hi, in bit<32> cell,
                        in bit<1> second, in bit<32> age, in bit<32> seen) {
    AGG_PAIR_REGISTER

    table pair_op {
        key = { second: exact; age: ternary; seen: ternary; }
        actions = { do_restart; do_add; do_read_hi; do_read_lo; NoAction; }
        const entries = {
            (0, 0 &&& ALL_BITS, 0 &&& ALL_BITS): do_add();
            (0, 0 &&& ALL_BITS, _): do_read_hi();
            (0, 0 &&& SIGN_BIT, _): do_restart();
            (1, _, _): do_read_lo();
        }
        default_action = NoAction();
        size = 8;
    }

    apply { pair_op.apply(); }
}

/* Egress: the operation ingress bridged. */
control EgressLanePair(inout bit<32> lo, inout bit<32> hi, in bit<4> op, in bit<32> cell) {
    AGG_PAIR_REGISTER

    table pair_op {
        key = { op: exact; }
        actions = { do_restart; do_add; do_read_hi; do_read_lo; NoAction; }
        const entries = {
            OP_FIRST: do_restart();
            OP_ADD: do_add();
            OP_READ_HI: do_read_hi();
            OP_READ_LO: do_read_lo();
        }
        default_action = NoAction();
        size = 8;
    }

    apply { pair_op.apply(); }
}

#define AGG_INGRESS_PAIR_INSTANCE(p, a, b) IngressLanePair() pair##p;
#define AGG_EGRESS_PAIR_INSTANCE(p, a, b) EgressLanePair() pair##p;

/* ------------------------------------------------------------------ ingress */

#define AGG_INGRESS_PAIR_APPLY(p, a, b) \
    pair##p.apply(hdr.agg.lane##a, hdr.agg.lane##b, md.cell, md.second, md.age, md.seen);

control Ingress(inout agg_headers_t hdr,
                inout agg_ingress_md_t md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<8>>(8, CounterType_t.PACKETS) events;
    /* slot + pool * AGG_SLOTS: pool ++ slot, from the hash unit */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) pool_slot;
    PoolBlock() pool_block;
    PoolBitmap() pool_bitmap;
    PoolCount() pool_count;
    PoolExponent() pool_exponent;
    AGG_FOR_EACH_INGRESS_PAIR(AGG_INGRESS_PAIR_INSTANCE)

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

    action set_job(bit<32> base, bit<32> size, bit<8> workers, bit<16> mcast_grp) {
        md.job_found = true;
        md.base = base;
        md.size = (bit<16>)size;
        md.workers = workers;
        md.mcast_grp = mcast_grp;
    }

    action not_aggregated() {
        md.job_found = false;
    }

    /* (service address, job id) -> the job's slot range, workers and multicast group. */
    table agg_jobs {
        key = {
            hdr.ipv4.dstAddr: exact;
            hdr.agg.job_id: exact;
        }
        actions = { set_job; not_aggregated; }
        size = 256;
        default_action = not_aggregated();
    }

    action set_worker_bit(bit<32> worker_bit) {
        md.worker_bit = worker_bit;
    }

    /* worker id -> its bit in a pool's bitmap (Tofino shifts by constants only). */
    /* The register cell of (slot, pool).  A table's action, so that the sum
     * stays a field: bf-p4c addresses a register by a field (through the hash
     * unit), an action argument or a constant, not by an expression. */
    action set_cell() {
        md.cell = md.base + pool_slot.get({ hdr.agg.pool, hdr.agg.slot[AGG_SLOT_BITS - 1:0] });
        md.slot_margin = hdr.agg.slot - md.size;
        md.worker_margin = hdr.agg.worker_id - md.workers;
    }

    table pool_cell {
        actions = { set_cell; }
        default_action = set_cell();
        size = 1;
    }

    table worker_bits {
        key = { hdr.agg.worker_id: exact; }
        actions = { set_worker_bit; NoAction; }
        const entries = {
            AGG_FOR_EACH_WORKER(AGG_WORKER_BIT_ENTRY)
        }
        default_action = NoAction();
        size = 32;
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

    /* First pass: egress runs its pairs (md.op), then the packet comes back for
     * its second pass through the recirculation port. */
    /* The bridged header's first bytes (op, flags, mode): each action that
     * changes them writes them all, from one field and constants (Tofino's
     * action units take at most one field beside constants). */
    action to_second_pass(bit<8> mode) {
        hdr.bridge.op = md.op;
        hdr.bridge.has_pass = 1;
        hdr.bridge.result_copy = 0;
        hdr.bridge.drop_after = 0;
        hdr.bridge.pad0 = 0;
        hdr.bridge.mode = mode;
        hdr.bridge.cell = md.cell;
        hdr.bridge.pad = 0;
        hdr.bridge.port = ig_intr_md.ingress_port;
        hdr.bridge.mcast_grp = md.mcast_grp;
        ig_tm_md.ucast_egress_port = RECIRC_PORT;
    }

    /* A counted contribution that does not complete the slot: egress adds its
     * lanes 0..15 (in the recirculation port's queue, see above), then drops it. */
    action absorb() {
        hdr.bridge.op = md.op;
        hdr.bridge.has_pass = 0;
        hdr.bridge.result_copy = 0;
        hdr.bridge.drop_after = 1;
        hdr.bridge.pad0 = 0;
        hdr.bridge.mode = 0;
        hdr.bridge.cell = md.cell;
        ig_tm_md.ucast_egress_port = RECIRC_PORT;
    }

    /* Second pass of a completed slot: the result, multicast (egress reads the
     * remaining sums into each copy and rewrites it for its worker). */
    action multicast_result() {
        hdr.agg.flags = AGG_FLAG_RESULT;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ipv4.srcAddr = hdr.ipv4.dstAddr;
        hdr.ipv4.ttl = AGG_RESULT_TTL;
        hdr.udp.srcPort = AGG_UDP_PORT;
        hdr.udp.checksum = 0;
        ig_tm_md.mcast_grp_a = hdr.pass.mcast_grp;
        hdr.bridge.op = OP_READ_LO;
        hdr.bridge.has_pass = 0;
        hdr.bridge.result_copy = 1;
        hdr.bridge.drop_after = 0;
        hdr.bridge.pad0 = 0;
        hdr.bridge.mode = 0;
        hdr.bridge.cell = hdr.pass.cell;
        md.event = EV_RESULT;
        md.has_event = 1;
    }

    /* Second pass of a retransmission into a complete slot: the stored result
     * goes back to the worker that sent it. */
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
        ig_tm_md.ucast_egress_port = hdr.pass.port;
        hdr.bridge.op = OP_READ_LO;
        hdr.bridge.has_pass = 0;
        hdr.bridge.result_copy = 0;
        hdr.bridge.drop_after = 0;
        hdr.bridge.pad0 = 0;
        hdr.bridge.mode = 0;
        hdr.bridge.cell = hdr.pass.cell;
        md.event = EV_RESENT;
        md.has_event = 1;
    }

    apply {
        hdr.bridge.setValid();
        hdr.bridge.op = OP_NONE;
        hdr.bridge.has_pass = 0;
        hdr.bridge.result_copy = 0;
        hdr.bridge.drop_after = 0;
        hdr.bridge.pad0 = 0;
        hdr.bridge.mode = 0;
        hdr.bridge.cell = 0;
        hdr.bridge.pad = 0;
        hdr.bridge.port = 0;
        hdr.bridge.mcast_grp = 0;

        if (md.second == 1) {
            /* second pass: read the low sums of the slot's pairs */
            md.op = OP_READ_LO;
            md.cell = hdr.pass.cell;
        } else if (ig_prsr_md.parser_err != 0) {
            if (hdr.udp.isValid() && hdr.udp.dstPort == AGG_UDP_PORT) {
                reject(EV_MALFORMED);   /* the aggregation header is cut short */
            } else {
                drop();
            }
        } else {
            if (hdr.agg.isValid() && hdr.ipv4.isValid()) {
                agg_jobs.apply();
            }
            if (!md.job_found) {
                /* not aggregated here: plain IPv4 forwarding */
                if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
                    ipv4_routes.apply();
                } else {
                    drop();
                }
            } else {
                pool_cell.apply();
                worker_bits.apply();
                md.block = (int<32>)hdr.agg.block;
                md.exponent = (int<16>)hdr.agg.exponent;
                /* slot >= size, worker_id >= workers: differences that are not
                 * negative (Tofino's gateways test a field against constants), in
                 * the fields' own widths (Tofino's action units add fields of one
                 * width); a slot must also be below AGG_SLOTS, the pool's cells */
                if (hdr.agg.version != AGG_VERSION || hdr.agg.lane_count != AGG_LANE_COUNT
                        || hdr.udp.length != AGG_UDP_LENGTH
                        || (hdr.agg.flags & AGG_FLAG_RESULT) != 0) {
                    reject(EV_MALFORMED);
                } else if (hdr.agg.slot[15:AGG_SLOT_BITS] != 0 || md.slot_margin[15:15] == 0) {
                    reject(EV_BAD_SLOT);
                } else if (md.worker_margin[7:7] == 0
                        || hdr.agg.worker_id >= AGG_MAX_WORKER_ID) {
                    reject(EV_BAD_WORKER);
                } else {
                    pool_block.apply(md);
                    if (md.age[31:31] == 1) {
                        reject(EV_STALE);           /* an older round of this pool */
                    } else {
                        pool_bitmap.apply(md);
                        /* what the tables keyed on (age, seen) do, for the decisions
                         * below and egress */
                        if (md.age != 0) {
                            md.op = OP_FIRST;
                        } else if (md.seen == 0) {
                            md.op = OP_ADD;
                        } else {
                            md.op = OP_READ_HI;     /* counted before: read back, change nothing */
                        }
                        pool_count.apply(md);
                        pool_exponent.apply(hdr.agg.exponent, md);
                        md.go_on = 1;
                    }
                }
            }
        }

        if (md.second == 1 || md.go_on == 1) {
            AGG_FOR_EACH_INGRESS_PAIR(AGG_INGRESS_PAIR_APPLY)
        }

        if (md.second == 1) {
            if (hdr.pass.mode == PASS_MULTICAST) {
                multicast_result();
            } else {
                unicast_result();
            }
            hdr.pass.setInvalid();
        } else if (md.go_on == 1) {
            if (md.op == OP_READ_HI) {
                if (md.count != md.workers) {
                    reject(EV_DUPLICATE);   /* counted before, the slot still incomplete */
                } else {
                    to_second_pass(PASS_UNICAST);
                }
            } else {
                md.event = EV_CONTRIBUTION;
                md.has_event = 1;
                if (md.count == md.workers) {
                    to_second_pass(PASS_MULTICAST);
                } else {
                    absorb();
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

#define AGG_EGRESS_PAIR_APPLY(p, a, b) \
    pair##p.apply(hdr.agg.lane##a, hdr.agg.lane##b, hdr.bridge.op, hdr.bridge.cell);

control Egress(inout agg_egress_headers_t hdr,
               inout agg_egress_md_t md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<32>, bit<1>>(2, CounterType_t.PACKETS) copies;
    AGG_FOR_EACH_EGRESS_PAIR(AGG_EGRESS_PAIR_INSTANCE)

    action to_worker(macAddr_t mac, ip4Addr_t addr, bit<16> udp_port) {
        hdr.ethernet.dstAddr = mac;
        hdr.ipv4.dstAddr = addr;
        hdr.udp.dstPort = udp_port;
        hdr.agg.worker_id = (bit<8>)eg_intr_md.egress_rid;
        copies.count(COPY_SENT);
    }

    action no_worker() {
        copies.count(COPY_NO_WORKER);
        eg_dprsr_md.drop_ctl = 1;
    }

    /* (job id, worker id) -> where that worker's copy of a result goes. */
    table agg_workers {
        key = {
            hdr.agg.job_id: exact;
            eg_intr_md.egress_rid: exact;
        }
        actions = { to_worker; no_worker; }
        size = 8192;
        default_action = no_worker();
    }

    /* A packet going round again: its second pass's details, before Ethernet. */
    action to_second_pass() {
        hdr.pass.setValid();
        hdr.pass.mode = hdr.bridge.mode;
        hdr.pass.pad = 0;
        hdr.pass.port = hdr.bridge.port;
        hdr.pass.mcast_grp = hdr.bridge.mcast_grp;
        hdr.pass.cell = hdr.bridge.cell;
    }

    apply {
        if (hdr.agg.isValid()) {
            AGG_FOR_EACH_EGRESS_PAIR(AGG_EGRESS_PAIR_APPLY)
        }
        if (hdr.bridge.drop_after == 1) {
            eg_dprsr_md.drop_ctl = 1;
        } else if (hdr.bridge.has_pass == 1) {
            to_second_pass();
        } else if (hdr.bridge.result_copy == 1 && hdr.agg.isValid()) {
            agg_workers.apply();
        }
        hdr.bridge.setInvalid();
    }
}

control EgressDeparser(packet_out pkt,
                       inout agg_egress_headers_t hdr,
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
