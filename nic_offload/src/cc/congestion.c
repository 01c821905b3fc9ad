/* Congestion control of a PDC: joins the schemes (nscc.c, rccc.c, dcqcn.c)
 * to the engine. The mode comes from nw_config_t.cc_mode; UUD PDCs are never
 * congestion controlled. Every function takes the driver's time (or the
 * engine's latest, e->now): nothing here reads a clock. */
#include <string.h>

#include "engine_state.h"

static uint64_t bdp_bytes(const nw_engine_t *e, uint64_t rtt_ns)
{
    return (uint64_t)e->cfg.link_rate_mbps * rtt_ns / 8000u; /* Mbit/s x ns / 8000 = bytes */
}

/* NSCC parameters from a base RTT: target 3/4 of it unless configured,
 * largest window 1.5 x BDP (within window_pkts packets). */
static void nscc_size(const nw_engine_t *e, nw_cc_t *c, uint64_t base)
{
    uint64_t wmax = (uint64_t)e->cfg.window_pkts * e->cfg.mtu;
    uint64_t m = bdp_bytes(e, base) * 3 / 2;
    c->np.base_rtt_ns = base;
    c->np.target_ns = e->cfg.cc_target_ns ? e->cfg.cc_target_ns : base * 3 / 4;
    if (c->np.target_ns == 0)
        c->np.target_ns = 1;
    c->np.max_bytes = m < c->np.min_bytes ? c->np.min_bytes : m > wmax ? wmax : m;
}

/* Traces the window and rate when they moved since `cwnd` and `rate`. */
static void trace_change(nw_engine_t *e, nw_pdc_t *p, uint64_t cwnd, uint64_t rate)
{
    const nw_cc_t *c = &p->cc;
    if (c->nscc_on && c->nscc.cwnd != cwnd)
        NW_TRACE(e, NW_TR_CWND, nw_pdc_index(e, p), p->nxt, c->nscc.cwnd, 0);
    if (c->dcqcn_on && c->dcqcn.rc_kbps != rate)
        NW_TRACE(e, NW_TR_RATE, nw_pdc_index(e, p), p->nxt, c->dcqcn.rc_kbps, 0);
}

void nw_cc_init(nw_engine_t *e, nw_pdc_t *p)
{
    nw_cc_t *c = &p->cc;
    memset(c, 0, sizeof(*c));
    uint32_t mode = p->mode == NW_MODE_UUD ? NW_CC_MODE_NONE : e->cfg.cc_mode;
    c->mode = (uint8_t)mode;
    c->nscc_on = mode == NW_CC_MODE_NSCC || mode == NW_CC_MODE_NSCC_RCCC;
    c->rccc_on = mode == NW_CC_MODE_RCCC || mode == NW_CC_MODE_NSCC_RCCC;
    c->dcqcn_on = mode == NW_CC_MODE_DCQCN;
    c->np.mtu = e->cfg.mtu;
    c->np.min_bytes = (uint64_t)e->cfg.cc_min_pkts * e->cfg.mtu;
    c->np.max_bytes = (uint64_t)e->cfg.window_pkts * e->cfg.mtu;
    c->np.target_ns = e->cfg.cc_target_ns;
    if (e->cfg.cc_base_rtt_ns) {
        nscc_size(e, c, e->cfg.cc_base_rtt_ns);
        c->np_sized = 1;
    }
    nw_nscc_init(&c->nscc, c->np.max_bytes);
    c->cr_tx.idle = 1;
    nw_dcqcn_init(&c->dcqcn, (uint64_t)e->cfg.link_rate_mbps * 1000u, e->now);
}

uint32_t nw_cc_spec_bytes(const nw_engine_t *e)
{
    if (e->cfg.cc_spec_bytes)
        return e->cfg.cc_spec_bytes;
    if (e->cfg.cc_base_rtt_ns) {
        uint64_t b = bdp_bytes(e, e->cfg.cc_base_rtt_ns);
        return b < e->cfg.mtu ? e->cfg.mtu : b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
    }
    return 8u * e->cfg.mtu;
}

int nw_cc_window_open(const nw_engine_t *e, const nw_pdc_t *p)
{
    const nw_cc_t *c = &p->cc;
    /* the window rounded to whole packets: another leaves while the pipe plus half an
     * MTU fits (a window of 1.1 MTU sends one packet, not two; one of 1.6 MTU two); an
     * empty pipe always admits one */
    return !c->nscc_on || c->pipe_bytes == 0 ||
           c->pipe_bytes + e->cfg.mtu / 2 <= c->nscc.cwnd;
}

int nw_cc_ack_wanted(const nw_engine_t *e, const nw_pdc_t *p)
{
    const nw_cc_t *c = &p->cc;
    /* the last packet the window admits: after it (about an MTU), the pipe plus half
     * an MTU would not fit (at the one-packet floor, every packet) */
    return c->nscc_on && c->pipe_bytes + e->cfg.mtu + e->cfg.mtu / 2 > c->nscc.cwnd;
}

int nw_cc_tx_allowed(const nw_engine_t *e, const nw_pdc_t *p)
{
    const nw_cc_t *c = &p->cc;
    if (c->dcqcn_on && c->dcqcn.next_send_ns > e->now)
        return 0;
    if (c->rccc_on && !nw_rccc_tx_allowed(p))
        return 0;
    return 1;
}

void nw_cc_on_enqueue(nw_engine_t *e, nw_pdc_t *p, uint64_t wire_bytes)
{
    if (p->cc.rccc_on)
        nw_rccc_on_backlog(e, p, wire_bytes);
}

void nw_cc_on_sent(nw_engine_t *e, nw_pdc_t *p, uint32_t len, uint64_t now)
{
    nw_cc_t *c = &p->cc;
    if (c->rccc_on)
        nw_rccc_on_sent(e, p, len);
    if (c->dcqcn_on) {
        uint64_t rate = c->dcqcn.rc_kbps;
        nw_dcqcn_on_sent(&c->dcqcn, len, now);
        if (e->trace.cap)
            trace_change(e, p, c->nscc.cwnd, rate);
    }
}

void nw_cc_on_loss(nw_engine_t *e, nw_pdc_t *p, const nw_tx_slot_t *s)
{
    nw_cc_t *c = &p->cc;
    uint64_t cwnd = c->nscc.cwnd;
    if (c->rccc_on)
        nw_rccc_on_backlog(e, p, s->wire_len); /* resent bytes re-enter the credit queue */
    if (c->nscc_on && c->np_sized &&
        (nw_nscc_on_loss(&c->nscc, &c->np, s->wire_len, c->pipe_bytes, e->now) & NW_NSCC_QA))
        e->st.quick_adapts++;
    if (e->trace.cap)
        trace_change(e, p, cwnd, c->dcqcn.rc_kbps);
}

/* A fresh RTT sample: the lowest one is the base RTT unless configured. */
static void on_rtt(nw_engine_t *e, nw_cc_t *c, uint64_t rtt)
{
    if (c->min_rtt != 0 && rtt >= c->min_rtt)
        return;
    c->min_rtt = rtt;
    if (e->cfg.cc_base_rtt_ns)
        return;
    int first = !c->np_sized;
    nscc_size(e, c, rtt);
    c->np_sized = 1;
    if (first)
        c->nscc.cwnd = c->np.max_bytes; /* initial window: 1.5 x BDP */
    nw_nscc_clamp(&c->nscc, &c->np);
}

void nw_cc_on_ack(nw_engine_t *e, nw_pdc_t *p, uint64_t newly_bytes, uint64_t rtt, int ecn,
                  uint64_t now)
{
    nw_cc_t *c = &p->cc;
    uint64_t cwnd = c->nscc.cwnd, rate = c->dcqcn.rc_kbps;
    if (rtt)
        on_rtt(e, c, rtt);
    if (ecn) {
        e->st.ecn_echoes_in++;
        NW_TRACE(e, NW_TR_ECN_ECHO, nw_pdc_index(e, p), p->una - 1, 0, 0);
    }
    if (c->dcqcn_on && ecn && nw_dcqcn_on_cnp(&c->dcqcn, now))
        e->st.rate_cuts++;
    if (c->nscc_on && c->np_sized && (newly_bytes || ecn)) {
        /* queueing delay: the RTT above the base RTT */
        uint64_t delay = rtt > c->np.base_rtt_ns ? rtt - c->np.base_rtt_ns : 0;
        uint32_t ev = nw_nscc_on_ack(&c->nscc, &c->np, newly_bytes, rtt != 0, delay, ecn,
                                     c->pipe_bytes, now);
        if (ev & NW_NSCC_CUT)
            e->st.cwnd_cuts++;
        if (ev & NW_NSCC_QA)
            e->st.quick_adapts++;
    }
    if (c->rccc_on)
        nw_rccc_on_ack(e, p);
    if (e->trace.cap)
        trace_change(e, p, cwnd, rate);
}

uint64_t nw_cc_deadline(const nw_engine_t *e, const nw_pdc_t *p)
{
    const nw_cc_t *c = &p->cc;
    uint64_t d = 0;
    if (c->dcqcn_on && c->dcqcn.next_send_ns > e->now && nw_pdc_has_data(e, p))
        d = c->dcqcn.next_send_ns;
    if (c->rccc_on && c->cr_tx.req_deadline && (d == 0 || c->cr_tx.req_deadline < d))
        d = c->cr_tx.req_deadline;
    return d;
}

void nw_cc_on_time(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    if (p->cc.rccc_on)
        nw_rccc_on_time(e, p, now);
}
