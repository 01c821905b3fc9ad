/* DCQCN-like rate control: see dcqcn.h. Rates in kbit/s, alpha in 1/65536. */
#include "dcqcn.h"

#define DCQCN_ONE 65536u
#define DCQCN_G_SHIFT 8u               /* g = 1/256 */
#define DCQCN_CNP_GAP_NS 50000ull      /* one CNP per 50 us counts */
#define DCQCN_ALPHA_PERIOD_NS 55000ull
#define DCQCN_TIMER_PERIOD_NS 55000ull
#define DCQCN_BYTE_COUNTER 153600ull   /* 150 KB */
#define DCQCN_FAST_STEPS 5u
#define DCQCN_AI_DIV 500u              /* additive step: line rate / 500 */
#define DCQCN_HAI_DIV 50u              /* hyper step: line rate / 50 */
#define DCQCN_MIN_DIV 1000u            /* lowest rate: line rate / 1000 */
#define DCQCN_MAX_CATCHUP 64u          /* timer steps run at once after a long gap */

void nw_dcqcn_init(nw_dcqcn_t *d, uint64_t line_kbps, uint64_t now)
{
    *d = (nw_dcqcn_t){0};
    d->line_kbps = line_kbps ? line_kbps : 1;
    d->rc_kbps = d->rt_kbps = d->line_kbps;
    d->alpha = DCQCN_ONE;
    d->alpha_ns = d->timer_ns = now;
}

int nw_dcqcn_on_cnp(nw_dcqcn_t *d, uint64_t now)
{
    nw_dcqcn_advance(d, now);
    if (d->last_cnp_ns && now - d->last_cnp_ns < DCQCN_CNP_GAP_NS)
        return 0;
    d->last_cnp_ns = now;
    d->rt_kbps = d->rc_kbps;
    d->rc_kbps -= d->rc_kbps * d->alpha / (2u * DCQCN_ONE);
    uint64_t floor = d->line_kbps / DCQCN_MIN_DIV;
    if (d->rc_kbps < floor)
        d->rc_kbps = floor ? floor : 1;
    d->alpha = d->alpha - (d->alpha >> DCQCN_G_SHIFT) + (DCQCN_ONE >> DCQCN_G_SHIFT);
    d->alpha_ns = d->timer_ns = now;
    d->t_stage = d->b_stage = 0;
    d->bytes = 0;
    return 1;
}

/* One rate-increase step (timer or byte counter). */
static void increase(nw_dcqcn_t *d)
{
    uint32_t hi = d->t_stage > d->b_stage ? d->t_stage : d->b_stage;
    uint32_t lo = d->t_stage < d->b_stage ? d->t_stage : d->b_stage;
    if (lo > DCQCN_FAST_STEPS)
        d->rt_kbps += d->line_kbps / DCQCN_HAI_DIV * (lo - DCQCN_FAST_STEPS);
    else if (hi > DCQCN_FAST_STEPS)
        d->rt_kbps += d->line_kbps / DCQCN_AI_DIV;
    if (d->rt_kbps > d->line_kbps)
        d->rt_kbps = d->line_kbps;
    d->rc_kbps = (d->rt_kbps + d->rc_kbps) / 2;
}

void nw_dcqcn_advance(nw_dcqcn_t *d, uint64_t now)
{
    uint32_t n = 0;
    while (now >= d->alpha_ns + DCQCN_ALPHA_PERIOD_NS && n++ < DCQCN_MAX_CATCHUP) {
        d->alpha -= d->alpha >> DCQCN_G_SHIFT;
        d->alpha_ns += DCQCN_ALPHA_PERIOD_NS;
    }
    if (now >= d->alpha_ns + DCQCN_ALPHA_PERIOD_NS)
        d->alpha_ns = now;
    n = 0;
    while (now >= d->timer_ns + DCQCN_TIMER_PERIOD_NS && n++ < DCQCN_MAX_CATCHUP) {
        d->timer_ns += DCQCN_TIMER_PERIOD_NS;
        d->t_stage++;
        increase(d);
    }
    if (now >= d->timer_ns + DCQCN_TIMER_PERIOD_NS)
        d->timer_ns = now;
}

void nw_dcqcn_on_sent(nw_dcqcn_t *d, uint32_t bytes, uint64_t now)
{
    nw_dcqcn_advance(d, now);
    uint64_t start = d->next_send_ns > now ? d->next_send_ns : now;
    /* bytes * 8 bits / (kbit/s) = ms * ...: ns = bytes * 8e6 / kbps */
    d->next_send_ns = start + (uint64_t)bytes * 8000000ull / d->rc_kbps;
    d->bytes += bytes;
    if (d->bytes >= DCQCN_BYTE_COUNTER) {
        d->bytes = 0;
        d->b_stage++;
        increase(d);
    }
}
