/* RCCC receiver credits: the sender's accounting (what it may send, what it
 * announces), the receiver's per-PDC grants and the engine's pull pacer.
 * See rccc.h for the protocol; docs/congestion.md for the design. */
#include "engine_state.h"

#define RCCC_PACE_PERCENT 99u      /* the pacer grants at 0.99 x link rate */
#define RCCC_REQ_MIN_NS 20000ull   /* repeat a CREDIT_REQ at most this often */

/* ------------------------------------------------------------ sender */

int nw_rccc_tx_allowed(const nw_pdc_t *p)
{
    const nw_credit_tx_t *t = &p->cc.cr_tx;
    return t->sent < t->granted + t->spec_used + t->spec_left;
}

/* Cumulative bytes the receiver must credit: sent on credit + still to send
 * beyond what speculative credit covers; with work queued, at least one
 * more packet (the backlog is an estimate and must never stall a sender). */
uint64_t nw_rccc_demand(const nw_engine_t *e, const nw_pdc_t *p)
{
    const nw_credit_tx_t *t = &p->cc.cr_tx;
    uint64_t need = t->backlog > t->spec_left ? t->backlog - t->spec_left : 0;
    uint64_t d = t->sent - t->spec_used + need;
    if (nw_pdc_has_data(e, p) && !nw_rccc_tx_allowed(p) && d < t->granted + e->cfg.mtu)
        d = t->granted + e->cfg.mtu;
    return d;
}

uint32_t nw_rccc_target(const nw_engine_t *e, nw_pdc_t *p)
{
    nw_credit_tx_t *t = &p->cc.cr_tx;
    uint64_t d = nw_rccc_demand(e, p);
    if (d > t->granted + NW_CREDIT_TARGET_CAP)
        d = t->granted + NW_CREDIT_TARGET_CAP;
    t->announced = d;
    return (uint32_t)(d & NW_CREDIT_TARGET_MASK);
}

/* How long a blocked sender waits for credit before repeating its request:
 * max(2 srtt, rto_init / 4), doubled per unanswered repeat (at most 2^6). */
static uint64_t req_interval(const nw_engine_t *e, const nw_pdc_t *p)
{
    uint64_t w = 2 * p->srtt, floor = e->cfg.rto_init_ns / 4;
    if (w < floor)
        w = floor;
    if (w < RCCC_REQ_MIN_NS)
        w = RCCC_REQ_MIN_NS;
    uint8_t b = p->cc.cr_tx.req_backoff;
    return w << (b > 6 ? 6 : b);
}

int nw_rccc_req_due(const nw_engine_t *e, const nw_pdc_t *p)
{
    const nw_credit_tx_t *t = &p->cc.cr_tx;
    if (nw_rccc_tx_allowed(p))
        return 0;
    uint64_t d = nw_rccc_demand(e, p);
    uint64_t cap = t->granted + NW_CREDIT_TARGET_CAP;
    if (d > cap)
        d = cap;
    return d != t->announced || t->req_repeat;
}

void nw_rccc_on_req_sent(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    nw_credit_tx_t *t = &p->cc.cr_tx;
    if (t->req_repeat && t->req_backoff < UINT8_MAX)
        t->req_backoff++;
    t->req_repeat = 0;
    t->req_deadline = now + req_interval(e, p);
    e->st.credit_reqs_out++;
    NW_TRACE(e, NW_TR_CREDIT_REQ, nw_pdc_index(e, p), p->nxt, t->announced, 0);
}

void nw_rccc_arm_repeat(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    p->cc.cr_tx.req_deadline = now + req_interval(e, p);
}

void nw_rccc_on_backlog(nw_engine_t *e, nw_pdc_t *p, uint64_t bytes)
{
    nw_credit_tx_t *t = &p->cc.cr_tx;
    if (t->idle) {
        t->idle = 0;
        t->credited = 0;
        t->spec_left = nw_cc_spec_bytes(e);
    }
    t->backlog += bytes;
}

void nw_rccc_on_sent(nw_engine_t *e, nw_pdc_t *p, uint32_t len)
{
    nw_credit_tx_t *t = &p->cc.cr_tx;
    t->sent += len;
    t->backlog = t->backlog > len ? t->backlog - len : 0;
    uint64_t covered = t->granted + t->spec_used;
    if (t->sent > covered && t->spec_left) {
        uint64_t use = t->sent - covered;
        if (use > t->spec_left)
            use = t->spec_left;
        t->spec_used += use;
        t->spec_left -= (uint32_t)use;
        e->st.spec_bytes_out += use;
    }
}

void nw_rccc_on_ack(nw_engine_t *e, nw_pdc_t *p)
{
    nw_credit_tx_t *t = &p->cc.cr_tx;
    if (t->backlog == 0 && p->list_head == NW_NIL && p->lost_count == 0 &&
        p->sq_head == NW_NIL && t->sent >= t->granted) {
        t->idle = 1; /* the next backlog starts with speculative credit again */
        t->spec_left = 0;
        t->req_deadline = 0;
        t->req_repeat = 0;
        t->req_backoff = 0;
    }
}

void nw_rccc_on_credit(nw_engine_t *e, nw_pdc_t *p, uint32_t wire, uint64_t now)
{
    nw_credit_tx_t *t = &p->cc.cr_tx;
    uint32_t delta = wire - t->granted_wire;
    if (delta == 0 || delta >= 0x80000000u)
        return; /* a repeat, or overtaken by a later grant */
    t->granted += delta;
    t->granted_wire = wire;
    t->spec_left = 0; /* the first credit cancels the speculative rest */
    t->credited = 1;
    t->req_repeat = 0;
    t->req_backoff = 0;
    t->req_deadline = now + req_interval(e, p);
    e->st.credit_bytes_in += delta;
    NW_TRACE(e, NW_TR_CREDIT_IN, nw_pdc_index(e, p), p->nxt, t->granted, 0);
    nw_pdc_activate(e, p);
}

void nw_rccc_on_time(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    nw_credit_tx_t *t = &p->cc.cr_tx;
    if (!t->req_deadline || t->req_deadline > now)
        return;
    t->req_deadline = 0;
    if (nw_pdc_has_data(e, p) && !nw_rccc_tx_allowed(p)) {
        t->req_repeat = 1; /* still blocked: ask again (nw_output sends it) */
        nw_pdc_activate(e, p);
    }
}

/* ------------------------------------------------------------ receiver */

static void pacer_push(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    nw_pull_pacer_t *q = &e->pull;
    uint32_t cap = e->cfg.max_peers;
    if (q->count >= cap)
        return; /* stale entries of freed PDCs; the next demand update retries */
    if (q->count == 0 && q->next_ns < now)
        q->next_ns = now; /* no credit saved up while nobody asked */
    q->ring[(q->head + q->count) % cap] = nw_pdc_index(e, p);
    q->count++;
    p->cc.cr_rx.queued = 1;
}

void nw_rccc_on_demand(nw_engine_t *e, nw_pdc_t *p, uint32_t wire24, uint64_t now)
{
    nw_credit_rx_t *r = &p->cc.cr_rx;
    uint32_t delta = (wire24 - r->demand_wire) & NW_CREDIT_TARGET_MASK;
    if (delta && delta < (NW_CREDIT_TARGET_MASK + 1u) / 2u) {
        r->demand += delta;
        r->demand_wire = wire24 & NW_CREDIT_TARGET_MASK;
    }
    if (r->demand > r->granted && !r->queued)
        pacer_push(e, p, now);
}

void nw_rccc_on_request(nw_engine_t *e, nw_pdc_t *p, uint32_t wire24, uint64_t now)
{
    nw_rccc_on_demand(e, p, wire24, now);
    if (p->cc.cr_rx.granted) {
        p->cc.cr_rx.grant_due = 1; /* repeat the grant: the last one may be lost */
        nw_pdc_activate(e, p);
    }
}

static uint64_t pull_ns(const nw_engine_t *e, uint64_t bytes)
{
    uint64_t rate = (uint64_t)e->cfg.link_rate_mbps * RCCC_PACE_PERCENT;
    return bytes * 8000u * 100u / (rate ? rate : 1);
}

uint32_t nw_rccc_pull_bytes(const nw_engine_t *e)
{
    return e->cfg.cc_pull_bytes ? e->cfg.cc_pull_bytes : 4u * e->cfg.mtu;
}

void nw_rccc_pacer_run(nw_engine_t *e, uint64_t now)
{
    nw_pull_pacer_t *q = &e->pull;
    uint32_t cap = e->cfg.max_peers;
    while (q->count > 0 && q->next_ns <= now) {
        uint32_t idx = q->ring[q->head];
        q->head = (q->head + 1) % cap;
        q->count--;
        nw_pdc_t *p = &e->pdcs[idx];
        nw_credit_rx_t *r = &p->cc.cr_rx;
        if (!p->in_use || !r->queued)
            continue;
        r->queued = 0;
        if (r->demand <= r->granted)
            continue;
        uint64_t g = r->demand - r->granted;
        if (g > nw_rccc_pull_bytes(e))
            g = nw_rccc_pull_bytes(e);
        r->granted += g;
        r->grant_due = 1;
        e->st.credit_bytes_granted += g;
        NW_TRACE(e, NW_TR_CREDIT_GRANT, idx, p->rxw.cum, r->granted, 0);
        q->next_ns += pull_ns(e, g);
        nw_pdc_activate(e, p);
        if (r->demand > r->granted)
            pacer_push(e, p, now);
    }
}

uint64_t nw_rccc_pacer_deadline(const nw_engine_t *e)
{
    return e->pull.count ? e->pull.next_ns : 0;
}
