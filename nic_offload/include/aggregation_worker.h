/* One worker of an in-network all-reduce, in C: the sans-IO core.
 *
 * The same state machine as transport/collectives/aggregation/worker.py (the
 * reference; its docstring explains the protocol: a window of slots, the pool
 * bit alternating by round, exponents one round ahead, RFC 6298 timeouts with
 * back-off, results matched by slot, pool and block), producing byte-for-byte
 * the packets codec.py encodes (docs/aggregation.md's agg_t: a 16-byte header,
 * then `lanes` big-endian int32). tests/transport/test_aggregation_native.py
 * runs both on the same events and compares every packet.
 *
 * The caller (transport/collectives/aggregation/native_worker.py) owns the
 * arrays, which must stay valid while the worker lives:
 *   data       chunks * lanes float32, the array cut into blocks (zero padded)
 *   local_exp  chunks int16, this worker's exponent per block
 *   sums       chunks * lanes int32, written: each block's sum from the switch
 *   exponents  chunks int16, written: each block's shared exponent (the caller
 *              fills it with NW_AGG_EXPONENT_MIN first)
 * Quantization (aggregation_quantization.h) of a block on its shared exponent
 * happens when the slot sends it, as the reference's _quantize_chunk does; the
 * driver computes the local exponents before and dequantizes after.
 *
 * Events return the number of packets they queued (>= 0) or a negative NW_E*
 * code; the queued packets are read with nw_agg_tx_packet and dropped with
 * nw_agg_tx_clear (a driver sends them in between). Time is any monotonic
 * nanosecond count. Received payloads are bounds-checked: a payload shorter
 * than the job's packet, of another version or lane count is counted
 * (stats.malformed) and dropped. Not thread-safe: one thread at a time.
 */
#ifndef NETWEFT_AGGREGATION_WORKER_H
#define NETWEFT_AGGREGATION_WORKER_H

#include <stdint.h>

#include "aggregation_quantization.h"

#define NW_AGG_VERSION 1u
#define NW_AGG_HEADER_LEN 16u
#define NW_AGG_FLAG_RESULT 0x01u
#define NW_AGG_FLAG_RETRANSMIT 0x02u
#define NW_AGG_MAX_LANES 1024u
#define NW_AGG_MAX_WINDOW 65535u /* the header's slot field */

/* nw_agg_state values */
#define NW_AGG_RUNNING 0
#define NW_AGG_DONE 1    /* every block's sum and exponent are in sums/exponents */
#define NW_AGG_STALLED 2 /* no result for stall_timeout_ns: the switch stopped answering */

/* A job as one worker sees it (worker.py's AggregationJob, plus the value bits). */
typedef struct {
    uint64_t first_block;
    int64_t timeout_ns;
    int64_t max_timeout_ns;
    int64_t stall_timeout_ns; /* 0: never stall */
    uint32_t job_id;          /* 0..0xFFFF */
    uint32_t worker_id;       /* 0..workers-1, at most 0xFF */
    uint32_t workers;
    uint32_t lanes;           /* K: int32 values per packet, 1..NW_AGG_MAX_LANES */
    uint32_t window;          /* slots, 1..NW_AGG_MAX_WINDOW */
    uint32_t value_bits;      /* P of quantization.value_bits(workers) */
} nw_agg_job_t;

typedef struct {
    uint64_t sent;        /* packets queued, retransmissions included */
    uint64_t retransmits;
    uint64_t results;     /* results taken */
    uint64_t ignored;     /* well-formed results no slot waits for */
    uint64_t malformed;   /* payloads refused by the bounds checks */
} nw_agg_stats_t;

typedef struct nw_agg_worker nw_agg_worker_t;

/* A worker for `chunks` blocks (0 allowed: done at start) over the caller's arrays. */
int32_t nw_agg_worker_new(const nw_agg_job_t *job, const float *data, const int16_t *local_exp,
                          int32_t *sums, int16_t *exponents, uint32_t chunks,
                          nw_agg_worker_t **out);
void nw_agg_worker_free(nw_agg_worker_t *w);

/* The first packet of every slot (exponent-only rounds). */
int32_t nw_agg_start(nw_agg_worker_t *w, int64_t now_ns);
/* A UDP payload from the switch; NW_ERANGE if the next block does not fit its shared
 * exponent (the reference's ValueError: the workers disagree on exponents). */
int32_t nw_agg_on_payload(nw_agg_worker_t *w, const uint8_t *payload, uint32_t len,
                          int64_t now_ns);
/* Timers: retransmissions of slots past their deadline, the stall timeout. */
int32_t nw_agg_on_time(nw_agg_worker_t *w, int64_t now_ns);
/* When nw_agg_on_time must run next, or -1 (none). */
int64_t nw_agg_next_deadline(const nw_agg_worker_t *w);
int32_t nw_agg_state(const nw_agg_worker_t *w);
/* 1 once nw_agg_start ran. */
int32_t nw_agg_started(const nw_agg_worker_t *w);

uint32_t nw_agg_packet_len(const nw_agg_worker_t *w);
uint32_t nw_agg_tx_count(const nw_agg_worker_t *w);
/* The i-th queued packet (packet_len bytes), or NULL past the queue. */
const uint8_t *nw_agg_tx_packet(const nw_agg_worker_t *w, uint32_t i);
void nw_agg_tx_clear(nw_agg_worker_t *w);

void nw_agg_stats_get(const nw_agg_worker_t *w, nw_agg_stats_t *out);
/* The timeout a new send gets (RFC 6298 over result round trips, clamped). */
int64_t nw_agg_rto_ns(const nw_agg_worker_t *w);

#endif
