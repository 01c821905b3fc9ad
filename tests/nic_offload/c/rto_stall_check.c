/* Engine-level check of spurious-RTO handling, in virtual time: engine A writes
 * to engine B over a loss-free 1 Gbit/s link while B's host stalls (its engine
 * neither reads nor runs timers) for 4 ms every 10 ms. Nothing is lost, so every
 * RTO is spurious: each must be proven so by B's duplicate reports (ACK flag
 * NW_PDS_F_DUP), and the learnt RTO floor must keep later stalls from firing.
 * Exits non-zero with a message on the first failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "uet_wire.h"

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

#define MAX_FLIGHT 4096u
#define MSG_BYTES (64u * 1024u)
#define STEP_NS 1000ull          /* the loop's time step */
#define DELAY_NS 5000ull         /* one-way propagation */
#define NS_PER_BYTE 8ull         /* 1 Gbit/s */
#define STALL_EVERY_NS 10000000ull
#define STALL_NS 4000000ull
#define STALLS 8u

typedef struct {
    uint8_t data[2048];
    uint32_t len;
    uint64_t at;     /* arrival time */
    int to;          /* 0 = A, 1 = B */
    uint32_t src_ip;
} pkt_t;

static pkt_t flight[MAX_FLIGHT];
static uint32_t nflight;
static uint64_t busy[2];
static uint64_t dup_acks_seen;

static int stalled(int who, uint64_t now)
{
    if (who != 1 || now < STALL_EVERY_NS)
        return 0;
    uint64_t k = now / STALL_EVERY_NS;
    return k <= STALLS && now % STALL_EVERY_NS < STALL_NS;
}

static void drain(nw_engine_t *e, int who, uint32_t ip, uint64_t now)
{
    for (;;) {
        CHECK(nflight < MAX_FLIGHT);
        pkt_t *p = &flight[nflight];
        nw_dest_t dst;
        int32_t n = nw_output(e, p->data, sizeof(p->data), &dst, now);
        CHECK(n >= 0);
        if (n == 0)
            return;
        nw_wire_pkt_t pk;
        if (nw_wire_parse(p->data, (uint32_t)n, &pk) > 0 && pk.pds.type == NW_PDS_ACK_CC &&
            (pk.pds.flags & NW_PDS_F_DUP))
            dup_acks_seen++;
        uint64_t start = busy[who] > now ? busy[who] : now;
        busy[who] = start + (uint64_t)n * NS_PER_BYTE;
        p->len = (uint32_t)n;
        p->at = busy[who] + DELAY_NS;
        p->to = 1 - who;
        p->src_ip = ip;
        nflight++;
    }
}

int main(void)
{
    const uint32_t ip[2] = {0x0a000001u, 0x0a000002u};
    nw_engine_t *e[2];
    for (int i = 0; i < 2; i++) {
        nw_config_t c;
        nw_config_default(&c);
        c.local_ip = ip[i];
        c.window_pkts = 64;
        c.seed = 7 + (uint64_t)i;
        e[i] = nw_engine_new(&c);
        CHECK(e[i] != NULL);
    }
    static uint8_t src[MSG_BYTES], dst[MSG_BYTES];
    for (uint32_t i = 0; i < MSG_BYTES; i++)
        src[i] = (uint8_t)(i * 131u + 7u);
    uint32_t lkey, rkey, peer, back;
    CHECK(nw_mr_register(e[0], src, MSG_BYTES, NW_ACCESS_LOCAL, &lkey) == NW_OK);
    CHECK(nw_mr_register(e[1], dst, MSG_BYTES, NW_ACCESS_REMOTE_WRITE, &rkey) == NW_OK);
    CHECK(nw_peer_add(e[0], ip[1], 0, NW_MODE_RUD, &peer) == NW_OK);
    CHECK(nw_peer_add(e[1], ip[0], 0, NW_MODE_RUD, &back) == NW_OK);

    uint64_t now = 0, end = (STALLS + 2) * STALL_EVERY_NS;
    uint32_t writes = 0, outstanding = 0;
    while (now < end) {
        if (!outstanding) {
            memset(dst, 0, sizeof(dst));
            CHECK(nw_post_write(e[0], peer, writes, src, MSG_BYTES, rkey, 0) == NW_OK);
            outstanding = 1;
        }
        uint32_t kept = 0;
        for (uint32_t i = 0; i < nflight; i++) {
            pkt_t *p = &flight[i];
            if (p->at <= now && !stalled(p->to, now))
                nw_input(e[p->to], p->data, p->len, p->src_ip, 49152, now);
            else
                flight[kept++] = *p;   /* in flight, or waiting in a stalled host's socket */
        }
        nflight = kept;
        for (int w = 0; w < 2; w++) {
            if (stalled(w, now))
                continue;
            uint64_t d = nw_next_deadline(e[w]);
            if (d <= now)
                nw_on_time(e[w], now);
            drain(e[w], w, ip[w], now);
        }
        nw_completion_t c;
        while (nw_poll_cq(e[0], &c, 1) == 1) {
            CHECK(c.status == NW_OK);
            CHECK(memcmp(src, dst, MSG_BYTES) == 0);
            writes++;
            outstanding = 0;
        }
        now += STEP_NS;
    }
    nw_stats_t a, b;
    nw_stats_get(e[0], &a);
    nw_stats_get(e[1], &b);
    printf("writes %u, A: rto_fired %llu retransmits %llu spurious_rtos %llu; "
           "B: dup_pkts %llu; DUP-flagged ACKs %llu\n", writes,
           (unsigned long long)a.rto_fired, (unsigned long long)a.retransmits,
           (unsigned long long)a.spurious_rtos, (unsigned long long)b.dup_pkts,
           (unsigned long long)dup_acks_seen);
    CHECK(writes > 10 * STALLS);          /* the stalls hit a busy transfer */
    CHECK(a.rto_fired >= 1);              /* the first stall outlasts the initial RTO */
    CHECK(b.dup_pkts == a.retransmits);   /* nothing was lost: every resend was a duplicate */
    CHECK(a.retransmits == a.rto_fired);
    CHECK(dup_acks_seen == b.dup_pkts);   /* each duplicate was reported ... */
    CHECK(a.spurious_rtos == a.rto_fired); /* ... and proved its RTO spurious */
    CHECK(a.rto_fired <= 2);              /* later stalls no longer fire */
    nw_engine_free(e[0]);
    nw_engine_free(e[1]);
    printf("passed\n");
    return 0;
}
