/* The bench's traffic generator and sink (dataplane_traffic.h). */
#define _GNU_SOURCE
#include "dataplane_traffic.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "dataplane_ring.h"

#define SPIN_BELOW_NS 20000u  /* shorter waits yield instead of sleeping */
#define SINK_NAP_NS 50000u    /* an idle sink looks at its ring every 50 us */

struct nw_dp_sink {
    nw_dp_ring_t *ring;
};

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put_be(uint8_t *p, uint64_t v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static void wait_ns(uint64_t ns)
{
    if (ns < SPIN_BELOW_NS) {
        sched_yield();
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

int32_t nw_dp_gen_run(const char *ifname, const uint8_t *frame, uint32_t len,
                      const nw_dp_gen_config_t *c, const int32_t *stop, nw_dp_gen_result_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!frame || c->stamp_offset > len || len - c->stamp_offset < NW_DP_STAMP_LEN ||
        c->rate_pps < 0 || (c->seq32_offset && (c->seq32_offset > len || len - c->seq32_offset < 4)))
        return -EINVAL;
    nw_dp_ring_config_t rc = {.rx_frames = 0, .tx_frames = 2048, .max_frame = len};
    int32_t err = 0;
    nw_dp_ring_t *ring = nw_dp_ring_open(ifname, &rc, &err);
    if (!ring)
        return err;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uint32_t batch = c->batch ? c->batch : 32;
    uint64_t templates = c->templates ? c->templates : 1;
    double ns_per_frame = c->rate_pps > 0 ? 1e9 / c->rate_pps : 0;
    uint64_t start = realtime_ns(), seq = 0;
    out->start_ns = start;
    while (seq < c->count && !__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
        uint64_t now = realtime_ns();
        uint64_t due = c->count;
        if (ns_per_frame > 0) {
            due = (uint64_t)((double)(now - start) / ns_per_frame) + 1;
            if (due > c->count)
                due = c->count;
            if (due <= seq) {
                wait_ns((uint64_t)((double)seq * ns_per_frame) - (now - start));
                continue;
            }
        }
        uint32_t filled = 0;
        while (seq < due && filled < batch) {
            uint8_t *slot = nw_dp_ring_tx_slot(ring);
            if (!slot) {
                out->ring_full++;
                break;
            }
            memcpy(slot, frame + (size_t)(seq % templates) * len, len);
            uint8_t *st = slot + c->stamp_offset;
            put_be(st, NW_DP_STAMP_MAGIC, 2);
            put_be(st + 2, c->run_id & 0xffffu, 2);
            put_be(st + 4, seq, 8);
            put_be(st + 12, realtime_ns(), 8);
            if (c->seq32_offset)
                put_be(slot + c->seq32_offset, seq & 0xffffffffu, 4);
            nw_dp_ring_tx_commit(ring, len);
            seq++;
            filled++;
        }
        nw_dp_ring_tx_flush(ring);
        if (!filled)
            sched_yield(); /* the ring is full: let the kernel and the switch drain it */
    }
    out->end_ns = realtime_ns();
    out->sent = seq;
    nw_dp_ring_close(ring);
    return 0;
}

nw_dp_sink_t *nw_dp_sink_open(const char *ifname, uint32_t rx_frames, int32_t *err)
{
    nw_dp_sink_t *s = calloc(1, sizeof(*s));
    if (!s) {
        *err = -ENOMEM;
        return NULL;
    }
    nw_dp_ring_config_t rc = {.rx_frames = rx_frames ? rx_frames : 8192, .tx_frames = 0};
    s->ring = nw_dp_ring_open(ifname, &rc, err);
    if (!s->ring) {
        free(s);
        return NULL;
    }
    return s;
}

void nw_dp_sink_close(nw_dp_sink_t *s)
{
    if (!s)
        return;
    nw_dp_ring_close(s->ring);
    free(s);
}

int32_t nw_dp_sink_run(nw_dp_sink_t *s, uint32_t stamp_offset, uint32_t run_id,
                       const int32_t *stop, int64_t *latency_ns, uint64_t cap,
                       nw_dp_sink_result_t *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t last_seq = 0;
    int any = 0;
    while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
        nw_dp_rx_frame_t f;
        if (!nw_dp_ring_rx_peek(s->ring, &f)) {
            /* no poll(): a reader waiting on the socket makes every frame's sender (the
             * switch under test) pay for a wake-up; a short sleep does not */
            wait_ns(SINK_NAP_NS);
            continue;
        }
        out->frames++;
        if (f.len >= stamp_offset + NW_DP_STAMP_LEN) {
            const uint8_t *st = f.data + stamp_offset;
            if (get_be(st, 2) == NW_DP_STAMP_MAGIC && get_be(st + 2, 2) == (run_id & 0xffffu)) {
                uint64_t seq = get_be(st + 4, 8);
                uint64_t sent = get_be(st + 12, 8);
                if (any && seq < last_seq)
                    out->reordered++;
                if (!any || seq > out->max_seq)
                    out->max_seq = seq;
                last_seq = seq;
                if (!any)
                    out->first_ns = f.rx_realtime_ns;
                any = 1;
                out->last_ns = f.rx_realtime_ns;
                if (out->latencies < cap)
                    latency_ns[out->latencies++] = (int64_t)(f.rx_realtime_ns - sent);
                out->matched++;
            }
        }
        nw_dp_ring_rx_release(s->ring);
    }
    nw_dp_ring_stats_t rs;
    nw_dp_ring_stats(s->ring, &rs);
    out->kernel_drops = rs.rx_kernel_drops;
    return 0;
}
