/* libFuzzer harness for the engine's input path (nw_input and everything it
 * drives: PDC lookup, PSN window, SACK/ACK processing, placement into memory
 * regions, read responses, receive matching, timers).
 *
 * Each input builds two small engines, lets A open a PDC to B with a write, a
 * send and a read in flight, then replays the input as a script of hostile
 * packets into either engine: raw bytes, or a legitimate packet of the
 * exchange with fuzz bytes XORed in. Legitimate traffic keeps flowing between
 * the hostile packets so that the state machines are deep in their states.
 * Two inputs in three run with erasure coding on A's PDC (k = 2 or 3 data,
 * 1 or 2 parity packets), so that forged and mangled parity headers, shards
 * and decodes reach the receiver too. Both engines run one congestion-control
 * mode picked by the input (none, NSCC, RCCC, NSCC+RCCC, DCQCN), so forged
 * credits, credit requests, credit targets and ECN echoes reach the credit
 * accounting, the pull pacer and the window/rate code; each hostile packet
 * arrives with an ECN codepoint from the script (CE included), and trims of
 * kept packets (nw_wire_trim) are replayed.
 * ASan/UBSan catch memory errors; the harness aborts if a region registered
 * for remote writes was touched outside its bounds (guard bytes) or if a
 * completion reports more bytes than the work request had.
 *
 * Build and run (tests/nic_offload/test_engine_fuzz.py does this):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
 *         fuzz/engine_input_fuzz.c $(find src -name '*.c') -lisal -lpthread -o engine_input_fuzz
 *   ./engine_input_fuzz -runs=20000 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "uet_wire.h"

#define MTU 600u
#define REGION 4096u
#define GUARD 64u
#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define MAX_KEEP 32u

typedef struct {
    uint8_t data[MTU];
    uint32_t len;
} pkt_t;

typedef struct {
    nw_engine_t *a, *b;
    uint8_t region_b[GUARD + REGION + GUARD]; /* B's remotely writable region */
    uint8_t src_a[REGION], read_a[REGION], recv_b[2][REGION];
    pkt_t keep[MAX_KEEP];                     /* legitimate packets seen so far */
    uint32_t nkeep;
    uint64_t now;
} world_t;

static nw_engine_t *small_engine(uint32_t ip, uint64_t seed, uint32_t cc_mode)
{
    nw_config_t c;
    nw_config_default(&c);
    c.local_ip = ip;
    c.mtu = MTU;
    c.window_pkts = 64;
    c.max_peers = 4;
    c.max_mrs = 4;
    c.max_wrs = 8;
    c.max_recvs = 8;
    c.rto_init_ns = 1000;
    c.rto_max_ns = 8000;
    c.max_retries = 4;
    c.entropy_count = 4;
    c.seed = seed;
    c.cc_mode = cc_mode;
    c.link_rate_mbps = 1000;
    c.cc_base_rtt_ns = (cc_mode & 1) ? 2000 : 0;
    return nw_engine_new(&c);
}

/* Moves all pending output of one engine to the other (keeping copies). */
static void exchange(world_t *w, nw_engine_t *from, nw_engine_t *to, uint32_t from_ip)
{
    uint8_t buf[MTU];
    nw_dest_t d;
    for (int i = 0; i < 256; i++) {
        int32_t n = nw_output(from, buf, sizeof buf, &d, w->now);
        if (n <= 0)
            return;
        if (w->nkeep < MAX_KEEP) {
            memcpy(w->keep[w->nkeep].data, buf, (uint32_t)n);
            w->keep[w->nkeep++].len = (uint32_t)n;
        }
        nw_input_ecn(to, buf, (uint32_t)n, from_ip, d.src_port, d.ecn, w->now);
    }
}

static void step(world_t *w)
{
    w->now += 700;
    nw_on_time(w->a, w->now);
    nw_on_time(w->b, w->now);
    exchange(w, w->a, w->b, IP_A);
    exchange(w, w->b, w->a, IP_B);
}

static void check_completions(nw_engine_t *e)
{
    nw_completion_t c[16];
    int32_t n;
    while ((n = nw_poll_cq(e, c, 16)) > 0)
        for (int32_t i = 0; i < n; i++)
            if (c[i].bytes > REGION)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static world_t w;
    memset(&w, 0, sizeof w);
    uint32_t cc_mode = size ? (uint32_t)(data[0] % NW_CC_MODE_COUNT) : 0;
    w.a = small_engine(IP_A, 1, cc_mode);
    w.b = small_engine(IP_B, 2, cc_mode);
    if (!w.a || !w.b)
        abort();
    uint32_t rkey, lkey, peer;
    nw_mr_register(w.b, w.region_b + GUARD, REGION, NW_ACCESS_REMOTE_WRITE | NW_ACCESS_REMOTE_READ,
                   &rkey);
    nw_mr_register(w.a, w.read_a, REGION, NW_ACCESS_REMOTE_WRITE, &lkey);
    nw_peer_add(w.a, IP_B, 0, NW_MODE_RUD, &peer);
    if (size % 3)
        nw_peer_set_coding(w.a, peer, 2 + (uint32_t)(size % 2), 1 + (uint32_t)(size % 3 == 2));
    nw_post_recv(w.b, 1, w.recv_b[0], REGION);
    nw_post_recv(w.b, 2, w.recv_b[1], 100);
    nw_post_write(w.a, peer, 10, w.src_a, 3000, rkey, 500);
    nw_post_send(w.a, peer, 11, w.src_a, 2000);
    nw_post_read(w.a, peer, 12, w.read_a, 2500, rkey, 100);
    step(&w);

    /* Script: [op][len][bytes...]; op bit0 = target, bit1 = source address,
     * bit2 = XOR onto a kept packet, bits 3..7 pick the kept packet. */
    size_t i = 0;
    while (i + 2 <= size) {
        uint8_t op = data[i], len = data[i + 1];
        i += 2;
        if (len > size - i)
            len = (uint8_t)(size - i);
        const uint8_t *chunk = data + i;
        i += len;
        nw_engine_t *to = (op & 1) ? w.a : w.b;
        uint32_t src = (op & 2) ? ((op & 1) ? IP_B : IP_A) : 0x0a0000ffu;
        uint8_t pkt[MTU + 64];
        uint32_t plen;
        if ((op & 4) && w.nkeep > 0) {
            pkt_t *k = &w.keep[(op >> 3) % w.nkeep];
            plen = k->len;
            memcpy(pkt, k->data, plen);
            for (uint32_t j = 0; j + 1 < len; j += 2)
                pkt[chunk[j] % plen] ^= chunk[j + 1];
            if (len & 1)
                plen = plen > chunk[len - 1] ? plen - chunk[len - 1] : plen;
            if ((op & 0xc0) == 0xc0) {
                int32_t t = nw_wire_trim(pkt, plen); /* a switch trimmed it */
                if (t > 0)
                    plen = (uint32_t)t;
            }
        } else {
            plen = len;
            memcpy(pkt, chunk, len);
        }
        nw_input_ecn(to, pkt, plen, src, 4793, (uint8_t)(op >> 6), w.now);
        step(&w);
        check_completions(w.a);
        check_completions(w.b);
    }
    for (int s = 0; s < 8; s++)
        step(&w);
    for (uint32_t g = 0; g < GUARD; g++)
        if (w.region_b[g] != 0 || w.region_b[GUARD + REGION + g] != 0)
            abort();
    nw_engine_free(w.a);
    nw_engine_free(w.b);
    return 0;
}
