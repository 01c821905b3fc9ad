/* Delay-based congestion window: additive increase while the RTT stays within
 * target_ns of the lowest RTT seen, a multiplicative decrease proportional to
 * the excess delay (at most halving, at most once per RTT) when it does not. */
#include "congestion.h"

#define CC_AI_PER_RTT 4u     /* packets added per window acknowledged */
#define CC_BETA_PERMILLE 800u /* decrease factor per unit of relative excess delay */

void nw_cc_init(nw_cc_t *cc, uint32_t max_pkts)
{
    cc->cwnd = max_pkts;
    cc->acc = 0;
    cc->min_rtt = 0;
    cc->last_cut = 0;
}

static void increase(nw_cc_t *cc, uint32_t newly, uint32_t max_pkts)
{
    cc->acc += newly * CC_AI_PER_RTT;
    while (cc->acc >= cc->cwnd && cc->cwnd < max_pkts) {
        cc->acc -= cc->cwnd;
        cc->cwnd++;
    }
    if (cc->cwnd >= max_pkts)
        cc->acc = 0;
}

int nw_cc_on_ack(nw_cc_t *cc, uint32_t newly, uint64_t rtt, uint64_t now, uint64_t target_ns,
                 uint32_t min_pkts, uint32_t max_pkts)
{
    if (rtt && (cc->min_rtt == 0 || rtt < cc->min_rtt))
        cc->min_rtt = rtt;
    if (target_ns == 0) {
        cc->cwnd = max_pkts;
        return 0;
    }
    uint64_t target = cc->min_rtt + target_ns;
    if (rtt == 0 || rtt <= target) {
        increase(cc, newly, max_pkts);
        return 0;
    }
    if (cc->last_cut != 0 && now - cc->last_cut < rtt)
        return 0; /* one decrease per RTT: the excess was measured before the last cut acted */
    uint64_t excess_permille = (rtt - target) * 1000u / rtt;
    uint64_t cut = excess_permille * CC_BETA_PERMILLE / 1000u;
    if (cut > 500)
        cut = 500;
    uint64_t w = (uint64_t)cc->cwnd * (1000u - cut) / 1000u;
    cc->cwnd = w < min_pkts ? min_pkts : (uint32_t)w;
    cc->acc = 0;
    cc->last_cut = now;
    return 1;
}
