/* A benchmark driver for coding through the engine (`netweft bench ec`):
 * two engines in one thread, a write of `bytes` from A to B with code (k, m)
 * (k = 0: selective repeat, no coding), the first `drop` data packets of every
 * block lost on the way so that B decodes each block. It times A's nw_output
 * calls (segmentation, headers, shard copies, encoding) and B's nw_input calls
 * (parsing, shard copies, decoding, placement) with CLOCK_MONOTONIC, like the
 * I/O driver a driver, not part of the sans-IO engine. Virtual time for the
 * engines moves by 1 us per round. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "ec_bench.h"
#include "uet_wire.h"

#define BENCH_IP_A 0x0a000001u
#define BENCH_IP_B 0x0a000002u

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static nw_engine_t *bench_engine(uint32_t ip, uint32_t mtu)
{
    nw_config_t c;
    nw_config_default(&c);
    c.local_ip = ip;
    c.mtu = mtu;
    c.window_pkts = 1024;
    c.max_peers = 2;
    c.seed = ip;
    return nw_engine_new(&c);
}

/* A's packets on their way to B: the data packets of a block wait until its
 * first parity packet names the block, then all but the first `drop` go on. */
typedef struct {
    nw_engine_t *b;
    uint32_t drop, mtu, held;
    uint8_t *pkts;          /* NW_EC_BENCH_HOLD * mtu */
    uint32_t len[NW_EC_BENCH_HOLD];
    uint64_t rx_ns;
    uint64_t now;
} wire_t;

static void deliver(wire_t *w, const uint8_t *pkt, uint32_t n, uint16_t src_port)
{
    uint64_t t0 = mono_ns();
    nw_input(w->b, pkt, n, BENCH_IP_A, src_port, w->now);
    w->rx_ns += mono_ns() - t0;
}

static void flush(wire_t *w, uint32_t skip)
{
    for (uint32_t i = skip; i < w->held; i++)
        deliver(w, w->pkts + (size_t)i * w->mtu, w->len[i], 49152);
    w->held = 0;
}

static void carry(wire_t *w, const uint8_t *pkt, uint32_t n, uint16_t src_port)
{
    uint8_t flags = pkt[1] & 0x7f, nh = (uint8_t)(((pkt[0] & 0x07) << 1) | (pkt[1] >> 7));
    int request = (pkt[0] >> 3) == NW_PDS_RUD;
    if (request && nh != NW_NH_NW_PARITY && (flags & NW_PDS_F_EC) && !(flags & NW_PDS_F_RETX) &&
        w->drop && w->held < NW_EC_BENCH_HOLD) {
        memcpy(w->pkts + (size_t)w->held * w->mtu, pkt, n);
        w->len[w->held++] = n;
        return;
    }
    if (request && nh == NW_NH_NW_PARITY)
        flush(w, w->held ? w->drop : 0);
    else
        flush(w, 0);
    deliver(w, pkt, n, src_port);
}

int32_t nw_ec_bench_engine(uint32_t k, uint32_t m, uint32_t drop, uint32_t mtu, uint64_t bytes,
                           nw_ec_bench_t *out)
{
    memset(out, 0, sizeof(*out));
    if (drop > m || bytes == 0 || bytes > UINT32_MAX)
        return NW_EINVAL;
    int32_t rc = NW_ENOMEM;
    nw_engine_t *a = bench_engine(BENCH_IP_A, mtu), *b = bench_engine(BENCH_IP_B, mtu);
    uint8_t *src = malloc(bytes), *dst = malloc(bytes), *buf = malloc(mtu);
    if (!a || !b || !src || !dst || !buf)
        goto done;
    for (uint64_t i = 0; i < bytes; i++)
        src[i] = (uint8_t)(i * 2654435761u >> 13);
    memset(dst, 0xa5, bytes); /* touched before timing: no page faults in placement */
    uint32_t lkey, rkey, peer;
    if (nw_mr_register(a, src, bytes, NW_ACCESS_LOCAL, &lkey) ||
        nw_mr_register(b, dst, bytes, NW_ACCESS_REMOTE_WRITE, &rkey) ||
        nw_peer_add(a, BENCH_IP_B, 0, NW_MODE_RUD, &peer) ||
        nw_peer_set_coding(a, peer, k, m) || nw_post_write(a, peer, 1, src, bytes, rkey, 0)) {
        rc = NW_EINVAL;
        goto done;
    }
    wire_t w = {.b = b, .drop = drop, .mtu = mtu, .now = 1000};
    w.pkts = malloc((size_t)NW_EC_BENCH_HOLD * mtu);
    if (!w.pkts) {
        rc = NW_ENOMEM;
        goto done;
    }
    uint64_t tx_ns = 0;
    nw_completion_t c;
    nw_dest_t d;
    rc = NW_ETIMEDOUT;
    for (uint32_t round = 0; round < 10000000u; round++) {
        for (;;) {
            uint64_t t0 = mono_ns();
            int32_t n = nw_output(a, buf, mtu, &d, w.now);
            tx_ns += mono_ns() - t0;
            if (n <= 0)
                break;
            carry(&w, buf, (uint32_t)n, d.src_port);
        }
        int32_t n;
        while ((n = nw_output(b, buf, mtu, &d, w.now)) > 0)
            nw_input(a, buf, (uint32_t)n, BENCH_IP_B, 4793, w.now);
        if (nw_poll_cq(a, &c, 1) == 1) {
            rc = c.status == NW_OK && memcmp(src, dst, bytes) == 0 ? NW_OK : NW_EINVAL;
            break;
        }
        w.now += 1000;
        if (nw_next_deadline(a) <= w.now)
            nw_on_time(a, w.now);
        if (nw_next_deadline(b) <= w.now)
            nw_on_time(b, w.now);
    }
    free(w.pkts);
    nw_stats_t sa, sb;
    nw_stats_get(a, &sa);
    nw_stats_get(b, &sb);
    out->tx_ns = tx_ns;
    out->rx_ns = w.rx_ns;
    out->payload_bytes = bytes;
    out->parity_bytes = sa.ec_parity_bytes_out;
    out->recovered_pkts = sb.ec_pkts_recovered;
    out->retransmits = sa.retransmits;
done:
    if (a)
        nw_engine_free(a);
    if (b)
        nw_engine_free(b);
    free(src);
    free(dst);
    free(buf);
    return rc;
}
