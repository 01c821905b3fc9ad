/* One worker of an in-network all-reduce: the sans-IO core (aggregation_worker.h).
 *
 * Mirrors transport/collectives/aggregation/worker.py function by function, with
 * Python's integer semantics where they differ from C's (floor division in the RTT
 * estimator, the modulo that maps a result's slot field to a slot). */
#include "aggregation_worker.h"

#include <stdlib.h>
#include <string.h>

#include "aggregation_quantization.h"
#include "engine.h"

typedef struct {
    int64_t round; /* -1: the exponent-only first round */
    int64_t deadline_ns, timeout_ns, sent_ns;
    uint64_t block; /* of the packet in flight (the wire carries its low 32 bits) */
    uint32_t index; /* 0..window-1 within the job */
    uint8_t pool, in_flight, done, retransmit;
} nw_agg_slot_t;

struct nw_agg_worker {
    nw_agg_job_t job;
    const float *data;
    const int16_t *local_exp;
    int32_t *sums;
    int16_t *exponents;
    uint32_t chunks, nslots, open, packet_len;
    nw_agg_slot_t *slots;
    uint8_t *packets; /* nslots * packet_len: each slot's packet, encoded */
    uint32_t *tx;     /* queued slot indices */
    uint32_t tx_count, tx_cap;
    int64_t srtt_ns, rttvar_ns, rto_ns, progress_ns;
    uint8_t have_srtt, stalled, started;
    nw_agg_stats_t stats;
};

/* ---- wire helpers (big-endian) ---- */
static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* ---- Python's integer arithmetic ---- */
static int64_t floor_div(int64_t a, int64_t b) /* b > 0, rounds towards -inf like // */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* ---- retransmission timeout (RFC 6298) ---- */
static int64_t clamp_timeout(const nw_agg_worker_t *w, int64_t t)
{
    int64_t capped = t < w->job.max_timeout_ns ? t : w->job.max_timeout_ns;
    return capped > w->job.timeout_ns ? capped : w->job.timeout_ns;
}

static void sample_rtt(nw_agg_worker_t *w, int64_t rtt_ns)
{
    if (!w->have_srtt) {
        w->srtt_ns = rtt_ns;
        w->rttvar_ns = floor_div(rtt_ns, 2);
        w->have_srtt = 1;
    } else {
        w->rttvar_ns += floor_div(abs64(w->srtt_ns - rtt_ns) - w->rttvar_ns, 4);
        w->srtt_ns += floor_div(rtt_ns - w->srtt_ns, 8);
    }
    w->rto_ns = clamp_timeout(w, w->srtt_ns + 4 * w->rttvar_ns);
}

/* ---- slots and packets ---- */
static uint64_t chunk_of(const nw_agg_worker_t *w, const nw_agg_slot_t *s, int64_t round)
{
    return s->index + (uint64_t)round * w->job.window; /* round >= 0 */
}

static uint8_t *packet_of(const nw_agg_worker_t *w, const nw_agg_slot_t *s)
{
    return w->packets + (uint64_t)s->index * w->packet_len;
}

static int16_t next_exponent(const nw_agg_worker_t *w, const nw_agg_slot_t *s)
{
    uint64_t nxt = chunk_of(w, s, s->round + 1);
    return nxt < w->chunks ? w->local_exp[nxt] : (int16_t)NW_AGG_EXPONENT_MIN;
}

/* Encodes the slot's packet of its current round (codec.encode_payload). */
static int32_t build_packet(nw_agg_worker_t *w, nw_agg_slot_t *s)
{
    uint8_t *p = packet_of(w, s);
    uint64_t block = w->job.first_block + chunk_of(w, s, s->round + 1), chunk;
    s->block = block;
    s->pool = (uint8_t)((block / w->job.window) & 1u);
    s->retransmit = 0;
    p[0] = NW_AGG_VERSION;
    p[1] = 0;
    put16(p + 2, (uint16_t)w->job.job_id);
    put16(p + 4, (uint16_t)(block % w->job.window));
    p[6] = (uint8_t)(s->pool << 7);
    p[7] = (uint8_t)w->job.worker_id;
    put32(p + 8, (uint32_t)block);
    put16(p + 12, (uint16_t)next_exponent(w, s));
    put16(p + 14, (uint16_t)w->job.lanes);
    if (s->round < 0) {
        memset(p + NW_AGG_HEADER_LEN, 0, 4u * w->job.lanes);
        return NW_OK;
    }
    chunk = chunk_of(w, s, s->round);
    return nw_agg_quantize_block(w->data + chunk * w->job.lanes, w->job.lanes,
                                 w->exponents[chunk], w->job.value_bits, p + NW_AGG_HEADER_LEN);
}

static int32_t queue(nw_agg_worker_t *w, const nw_agg_slot_t *s)
{
    if (w->tx_count >= w->tx_cap)
        return NW_EAGAIN; /* the driver did not drain the queue between events */
    w->tx[w->tx_count++] = s->index;
    w->stats.sent++;
    return NW_OK;
}

static int32_t send_slot(nw_agg_worker_t *w, nw_agg_slot_t *s, int64_t now_ns)
{
    int32_t rc = build_packet(w, s);
    if (rc < 0)
        return rc;
    s->in_flight = 1;
    s->timeout_ns = w->rto_ns;
    s->sent_ns = now_ns;
    s->deadline_ns = now_ns + s->timeout_ns;
    return queue(w, s);
}

/* ---- lifetime ---- */
static int32_t job_valid(const nw_agg_job_t *j)
{
    return j->job_id <= 0xFFFFu && j->workers >= 1 && j->worker_id < j->workers &&
           j->worker_id <= 0xFFu && j->lanes >= 1 && j->lanes <= NW_AGG_MAX_LANES &&
           j->window >= 1 && j->window <= NW_AGG_MAX_WINDOW && j->value_bits >= 1 &&
           j->value_bits <= 30 && j->timeout_ns >= 1 && j->max_timeout_ns >= 0 &&
           j->stall_timeout_ns >= 0;
}

int32_t nw_agg_worker_new(const nw_agg_job_t *job, const float *data, const int16_t *local_exp,
                          int32_t *sums, int16_t *exponents, uint32_t chunks,
                          nw_agg_worker_t **out)
{
    nw_agg_worker_t *w;
    *out = NULL;
    if (!job || !job_valid(job) || (chunks && (!data || !local_exp || !sums || !exponents)))
        return NW_EINVAL;
    w = calloc(1, sizeof *w);
    if (!w)
        return NW_ENOMEM;
    w->job = *job;
    w->data = data;
    w->local_exp = local_exp;
    w->sums = sums;
    w->exponents = exponents;
    w->chunks = chunks;
    w->nslots = chunks ? job->window : 1u; /* every slot, every call (worker.py) */
    w->packet_len = NW_AGG_HEADER_LEN + 4u * job->lanes;
    w->tx_cap = 2u * w->nslots;
    w->rto_ns = job->timeout_ns;
    w->slots = calloc(w->nslots, sizeof *w->slots);
    w->packets = calloc(w->nslots, w->packet_len);
    w->tx = calloc(w->tx_cap, sizeof *w->tx);
    if (!w->slots || !w->packets || !w->tx) {
        nw_agg_worker_free(w);
        return NW_ENOMEM;
    }
    for (uint32_t j = 0; j < w->nslots; j++) {
        w->slots[j].index = j;
        w->slots[j].round = -1;
    }
    *out = w;
    return NW_OK;
}

void nw_agg_worker_free(nw_agg_worker_t *w)
{
    if (!w)
        return;
    free(w->slots);
    free(w->packets);
    free(w->tx);
    free(w);
}

/* ---- events ---- */
static int32_t queued_since(const nw_agg_worker_t *w, uint32_t before, int32_t rc)
{
    return rc < 0 ? rc : (int32_t)(w->tx_count - before);
}

int32_t nw_agg_start(nw_agg_worker_t *w, int64_t now_ns)
{
    uint32_t before = w->tx_count;
    int32_t rc = NW_OK;
    if (w->started)
        return NW_EINVAL;
    w->started = 1;
    if (w->chunks == 0)
        return 0; /* done: nothing to sum */
    w->open = w->nslots;
    w->progress_ns = now_ns;
    for (uint32_t j = 0; j < w->nslots && rc >= 0; j++)
        rc = send_slot(w, &w->slots[j], now_ns);
    return queued_since(w, before, rc);
}

int32_t nw_agg_state(const nw_agg_worker_t *w)
{
    if (w->started && w->open == 0)
        return NW_AGG_DONE;
    return w->stalled ? NW_AGG_STALLED : NW_AGG_RUNNING;
}

int32_t nw_agg_started(const nw_agg_worker_t *w)
{
    return w->started;
}

int64_t nw_agg_next_deadline(const nw_agg_worker_t *w)
{
    int64_t due = -1;
    if (w->stalled)
        return -1;
    for (uint32_t j = 0; j < w->nslots; j++) {
        const nw_agg_slot_t *s = &w->slots[j];
        if (!s->done && s->in_flight && (due < 0 || s->deadline_ns < due))
            due = s->deadline_ns;
    }
    if (due >= 0 && w->job.stall_timeout_ns) {
        int64_t stall = w->progress_ns + w->job.stall_timeout_ns;
        due = stall < due ? stall : due;
    }
    return due;
}

int32_t nw_agg_on_time(nw_agg_worker_t *w, int64_t now_ns)
{
    uint32_t before = w->tx_count;
    int32_t rc = NW_OK;
    if (w->stalled || nw_agg_state(w) == NW_AGG_DONE)
        return 0;
    if (w->job.stall_timeout_ns && now_ns - w->progress_ns >= w->job.stall_timeout_ns) {
        w->stalled = 1;
        return 0;
    }
    for (uint32_t j = 0; j < w->nslots && rc >= 0; j++) {
        nw_agg_slot_t *s = &w->slots[j];
        if (s->done || !s->in_flight || s->deadline_ns > now_ns)
            continue;
        s->timeout_ns = clamp_timeout(w, s->timeout_ns * 2);
        w->rto_ns = w->rto_ns > s->timeout_ns ? w->rto_ns : s->timeout_ns;
        s->deadline_ns = now_ns + s->timeout_ns;
        s->retransmit = 1;
        packet_of(w, s)[1] = NW_AGG_FLAG_RETRANSMIT;
        w->stats.retransmits++;
        rc = queue(w, s);
    }
    return queued_since(w, before, rc);
}

/* The slot a well-formed result is for, or NULL (counted as ignored). */
static nw_agg_slot_t *slot_for(nw_agg_worker_t *w, const uint8_t *p)
{
    int64_t window = w->job.window;
    int64_t index = ((int64_t)get16(p + 4) - (int64_t)(w->job.first_block % (uint64_t)window))
                    % window;
    nw_agg_slot_t *s;
    if (index < 0)
        index += window;
    if (w->stalled || get16(p + 2) != w->job.job_id || index >= (int64_t)w->nslots)
        return NULL;
    s = &w->slots[index];
    if (s->done || !s->in_flight || (p[6] >> 7) != s->pool || get32(p + 8) != (uint32_t)s->block)
        return NULL;
    return s;
}

static void store_sums(nw_agg_worker_t *w, uint64_t c, const uint8_t *lanes)
{
    int32_t *dst = w->sums + c * w->job.lanes;
    for (uint32_t i = 0; i < w->job.lanes; i++)
        dst[i] = (int32_t)get32(lanes + 4u * i);
}

int32_t nw_agg_on_payload(nw_agg_worker_t *w, const uint8_t *p, uint32_t len, int64_t now_ns)
{
    uint32_t before = w->tx_count;
    nw_agg_slot_t *s;
    uint64_t nxt;
    if (len < w->packet_len || p[0] != NW_AGG_VERSION || get16(p + 14) != w->job.lanes) {
        w->stats.malformed++;
        return 0;
    }
    s = slot_for(w, p);
    if (!s) {
        w->stats.ignored++;
        return 0;
    }
    w->stats.results++;
    w->progress_ns = now_ns;
    if (!s->retransmit)
        sample_rtt(w, now_ns > s->sent_ns ? now_ns - s->sent_ns : 0);
    if (s->round >= 0)
        store_sums(w, chunk_of(w, s, s->round), p + NW_AGG_HEADER_LEN);
    nxt = chunk_of(w, s, s->round + 1);
    if (nxt < w->chunks) {
        w->exponents[nxt] = (int16_t)get16(p + 12);
        s->round++;
        return queued_since(w, before, send_slot(w, s, now_ns));
    }
    s->done = 1;
    s->in_flight = 0;
    w->open--;
    return 0;
}

/* ---- the queue and counters ---- */
uint32_t nw_agg_packet_len(const nw_agg_worker_t *w)
{
    return w->packet_len;
}

uint32_t nw_agg_tx_count(const nw_agg_worker_t *w)
{
    return w->tx_count;
}

const uint8_t *nw_agg_tx_packet(const nw_agg_worker_t *w, uint32_t i)
{
    return i < w->tx_count ? w->packets + (uint64_t)w->tx[i] * w->packet_len : NULL;
}

void nw_agg_tx_clear(nw_agg_worker_t *w)
{
    w->tx_count = 0;
}

void nw_agg_stats_get(const nw_agg_worker_t *w, nw_agg_stats_t *out)
{
    *out = w->stats;
}

int64_t nw_agg_rto_ns(const nw_agg_worker_t *w)
{
    return w->rto_ns;
}
