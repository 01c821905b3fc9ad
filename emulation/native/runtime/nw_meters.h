/* v1model meters in C: BMv2's two-rate three-colour marker, as
 * emulation/v1model/meters.py computes it, step for step.
 *
 * Rates are kept as the Python Meter keeps them: the larger rate first (PIR,
 * colour RED), then the smaller (CIR, colour YELLOW); each in units (packets
 * or bytes) per microsecond, with its burst in units. Tokens are computed from
 * the time since the origin, as BMv2 (and the Python back end) does, with the
 * same double arithmetic, so both back ends colour every packet alike. Time is
 * the pipeline's microsecond clock (the driver's clock, X->now).
 */
#ifndef NW_METERS_H
#define NW_METERS_H

#include "nw_runtime.h"

#define NW_METER_MAX_RATES 4u
#define NW_GREEN 0u

typedef struct nw_meter_rate {
    double info_rate;         /* units per microsecond */
    int64_t burst;            /* units */
    int64_t tokens;
    int64_t tokens_last;      /* tokens earned from the origin to the last packet */
    uint32_t color;           /* the colour of a packet this bucket cannot take */
    uint32_t pad;
} nw_meter_rate_t;

typedef struct nw_meter {
    uint32_t nrates;          /* 0: unconfigured, every packet GREEN */
    uint32_t bytes;           /* 1: MeterType.bytes, 0: MeterType.packets */
    nw_meter_rate_t rate[NW_METER_MAX_RATES];
} nw_meter_t;

/* The colour of a packet of `size` bytes arriving at `now_us` (Meter.execute). */
static uint32_t nw_meter_execute(nw_meter_t *m, uint64_t now_us, uint64_t size) {
    int64_t units = m->bytes ? (int64_t)size : 1;
    uint32_t n = m->nrates < NW_METER_MAX_RATES ? m->nrates : NW_METER_MAX_RATES;
    for (uint32_t i = 0; i < n; i++) {
        nw_meter_rate_t *r = &m->rate[i];
        int64_t since_init = (int64_t)((double)now_us * r->info_rate);
        int64_t fresh = since_init - r->tokens_last;
        r->tokens_last = since_init;
        int64_t tokens = r->tokens + fresh;
        r->tokens = tokens < r->burst ? tokens : r->burst;
        if (r->tokens < units)
            return r->color;
        r->tokens -= units;
    }
    return NW_GREEN;
}

/* Direct resources of one table entry (direct_counter, direct_meter): memory the
 * control plane (Python) owns, so that it survives a table rebuild. */
typedef struct nw_direct {
    uint64_t counter[2];      /* packets, bytes */
    nw_meter_t meter;
} nw_direct_t;

#endif /* NW_METERS_H */
