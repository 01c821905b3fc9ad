/* NSCC sender window: see nscc.h for the rules and docs/congestion.md for
 * where they come from and where netweft differs from UEC's htsim model. */
#include "nscc.h"

#define NSCC_APPLY_MTUS 8u      /* apply accumulated increases every 8 MTU acknowledged */
#define NSCC_FAIR_INC_MTUS 2u   /* fair increase: 2 MTU per window acknowledged */
#define NSCC_MD_GAIN_PERMILLE 800u
#define NSCC_MD_FLOOR_PERMILLE 500u
#define NSCC_QA_DELAY_FACTOR 4u /* quick adapt when delay > 4 x target */
#define NSCC_PI_GAIN_PERMILLE 500u /* proportional increase at zero delay: half a window per RTT */

void nw_nscc_init(nw_nscc_t *n, uint64_t cwnd_bytes)
{
    *n = (nw_nscc_t){0};
    n->cwnd = cwnd_bytes;
}

void nw_nscc_clamp(nw_nscc_t *n, const nw_nscc_params_t *pr)
{
    if (n->cwnd > pr->max_bytes)
        n->cwnd = pr->max_bytes;
    if (n->cwnd < pr->min_bytes)
        n->cwnd = pr->min_bytes;
}


/* Once per base RTT + target: if something triggered it, the window becomes
 * what was delivered in that period. Returns 1 if it cut the window. */
static int quick_adapt(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t in_flight,
                       uint64_t now)
{
    if (n->qa_end_ns == 0) {
        n->qa_end_ns = now + pr->base_rtt_ns + pr->target_ns;
        return 0;
    }
    if (now < n->qa_end_ns)
        return 0;
    int cut = 0;
    if (n->trigger_qa && n->achieved < n->cwnd) {
        n->cwnd = n->achieved;
        nw_nscc_clamp(n, pr);
        n->ignore_bytes = in_flight;
        n->inc = 0;
        cut = 1;
    }
    n->trigger_qa = 0;
    n->achieved = 0;
    n->qa_end_ns = now + pr->base_rtt_ns + pr->target_ns;
    return cut;
}

uint32_t nw_nscc_on_loss(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t bytes,
                         uint64_t in_flight, uint64_t now)
{
    n->cwnd = n->cwnd > bytes ? n->cwnd - bytes : 0;
    nw_nscc_clamp(n, pr);
    n->trigger_qa = 1;
    if (n->ignore_bytes == 0 && quick_adapt(n, pr, in_flight, now))
        return NW_NSCC_QA;
    return 0;
}

static void fair_increase(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t newly)
{
    uint64_t w = n->cwnd ? n->cwnd : 1;
    n->inc += newly * NSCC_FAIR_INC_MTUS * pr->mtu / w;
}

static void proportional_increase(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t newly,
                                  uint64_t delay)
{
    uint64_t t = pr->target_ns ? pr->target_ns : 1;
    n->inc += newly * NSCC_PI_GAIN_PERMILLE / 1000u * (t - delay) / t;
    fair_increase(n, pr, newly);
}

static int multiplicative_decrease(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t now)
{
    if (n->last_md_ns && now - n->last_md_ns < pr->base_rtt_ns)
        return 0;
    uint64_t avg = n->avg_delay_ns;
    if (avg <= pr->target_ns)
        return 0;
    uint64_t f = 1000u - NSCC_MD_GAIN_PERMILLE * (avg - pr->target_ns) / avg;
    if (f < NSCC_MD_FLOOR_PERMILLE)
        f = NSCC_MD_FLOOR_PERMILLE;
    n->cwnd = n->cwnd * f / 1000u;
    nw_nscc_clamp(n, pr);
    n->inc = 0;
    n->last_md_ns = now;
    return 1;
}

static int apply_increase(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t now)
{
    if (n->acked_since_apply < (uint64_t)NSCC_APPLY_MTUS * pr->mtu &&
        now - n->last_apply_ns < pr->base_rtt_ns)
        return 0;
    uint64_t before = n->cwnd;
    n->cwnd += n->inc;
    nw_nscc_clamp(n, pr);
    n->inc = 0;
    n->acked_since_apply = 0;
    n->last_apply_ns = now;
    return n->cwnd > before;
}

uint32_t nw_nscc_on_ack(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t newly,
                        int delay_valid, uint64_t delay, int ecn, uint64_t in_flight,
                        uint64_t now)
{
    uint32_t ev = 0;
    n->achieved += newly;
    if (delay_valid) {
        n->avg_delay_ns = n->avg_delay_ns ? (7 * n->avg_delay_ns + delay) / 8 : delay;
        if (delay > (uint64_t)NSCC_QA_DELAY_FACTOR * pr->target_ns)
            n->trigger_qa = 1;
    }
    if (quick_adapt(n, pr, in_flight, now))
        return NW_NSCC_QA;
    if (n->ignore_bytes) {
        /* marks on what was in flight at the quick adapt are old news */
        n->ignore_bytes = newly >= n->ignore_bytes ? 0 : n->ignore_bytes - newly;
        if (ecn)
            return 0;
    }
    if (!delay_valid) {
        if (!ecn)
            fair_increase(n, pr, newly);
    } else if (!ecn && delay >= pr->target_ns) {
        fair_increase(n, pr, newly);
    } else if (!ecn) {
        proportional_increase(n, pr, newly, delay);
    } else if (delay >= pr->target_ns) {
        if (multiplicative_decrease(n, pr, now))
            ev |= NW_NSCC_CUT;
    }
    n->acked_since_apply += newly;
    if (apply_increase(n, pr, now))
        ev |= NW_NSCC_INC;
    return ev;
}
