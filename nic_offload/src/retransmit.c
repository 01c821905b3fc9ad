/* Sender side of a PDC: transmit slots, ACK/SACK processing, loss detection
 * by transmission order (a packet is lost once one sent reorder_pkts
 * transmissions after it was acknowledged: fast retransmit from SACK
 * evidence, tolerant of sprayed reordering), go-back-N for ROD, and the
 * retransmission timeout: RFC 6298 smoothing with the variation decaying once
 * per round trip, rto_init_ns as the minimum, exponential backoff with a cap,
 * and spurious-RTO undo. UET has no timestamps, so a spurious RTO is proven by
 * the receiver: it reports every duplicate PSN in an ACK flagged
 * NW_PDS_F_DUP (netweft's DSACK), and a duplicate of an RTO-resent PSN means
 * the resend was not needed. */
#include <string.h>

#include "engine_state.h"

static inline uint32_t slot_index(const nw_engine_t *e, uint32_t psn)
{
    return psn & e->wmask;
}

nw_tx_slot_t *nw_tx_slot(const nw_engine_t *e, const nw_pdc_t *p, uint32_t psn)
{
    return &p->slots[slot_index(e, psn)];
}

uint32_t nw_tx_in_flight(const nw_pdc_t *p)
{
    return p->nxt - p->una;
}

void nw_tx_reset(nw_engine_t *e, nw_pdc_t *p)
{
    memset(p->slots, 0, e->cfg.window_pkts * sizeof(*p->slots));
    p->start_psn = (uint32_t)nw_random(e);
    p->una = p->nxt = p->start_psn;
    p->list_head = p->list_tail = NW_NIL;
    p->lost_head = p->lost_count = 0;
    p->rto_deadline = 0;
    p->rto_cur = e->cfg.rto_init_ns;
    p->retries = 0;
    p->pipe = 0;
    nw_cc_init(e, p);
}

static void list_remove(nw_pdc_t *p, uint32_t i)
{
    nw_tx_slot_t *s = &p->slots[i];
    if (s->prev != NW_NIL)
        p->slots[s->prev].next = s->next;
    else
        p->list_head = s->next;
    if (s->next != NW_NIL)
        p->slots[s->next].prev = s->prev;
    else
        p->list_tail = s->prev;
    s->prev = s->next = NW_NIL;
    p->pipe--;
    p->cc.pipe_bytes -= p->cc.pipe_bytes > s->wire_len ? s->wire_len : p->cc.pipe_bytes;
}

static void list_append(nw_pdc_t *p, uint32_t i)
{
    nw_tx_slot_t *s = &p->slots[i];
    s->next = NW_NIL;
    s->prev = p->list_tail;
    if (p->list_tail != NW_NIL)
        p->slots[p->list_tail].next = i;
    else
        p->list_head = i;
    p->list_tail = i;
    p->pipe++;
    p->cc.pipe_bytes += s->wire_len;
}

/* A learnt RTO floor stays within this many initial RTOs (and rto_max_ns):
 * tail losses must still be repaired in tens of milliseconds at worst. */
#define RTO_FLOOR_MAX_FACTOR 32u
/* A learnt floor loses a quarter after this many initial RTOs without a
 * spurious RTO (1 s at the default 1 ms), so one long stall is forgotten. */
#define RTO_FLOOR_HOLD_FACTOR 1000u

/* How long a fully acknowledged message waits for its SES response before
 * a probe: about an RTT and its variation (a probe is one small packet, so
 * an early one costs little, unlike an early retransmission). */
static uint64_t rsp_wait(const nw_engine_t *e, const nw_pdc_t *p)
{
    uint64_t floor = e->cfg.rto_init_ns / 4;
    if (!p->srtt)
        return e->cfg.rto_init_ns;
    uint64_t w = 2 * p->srtt + 4 * p->rttvar;
    return w < floor ? floor : w;
}

static uint64_t rto_base(const nw_engine_t *e, const nw_pdc_t *p)
{
    uint64_t r = e->cfg.rto_init_ns > p->rto_floor ? e->cfg.rto_init_ns : p->rto_floor;
    if (p->srtt) {
        uint64_t est = p->srtt + 4 * p->rttvar;
        if (est > r)
            r = est;
    }
    return r > e->cfg.rto_max_ns ? e->cfg.rto_max_ns : r;
}

void nw_tx_sent(nw_engine_t *e, nw_pdc_t *p, nw_tx_slot_t *s, uint32_t len, uint64_t now)
{
    s->wire_len = len;
    NW_TRACE(e, NW_TR_SENT, nw_pdc_index(e, p), s->psn, len, s->retx ? NW_TRF_RETX : 0);
    nw_cc_on_sent(e, p, len, now);
    s->tx_seq = ++p->tx_seq;
    s->sent_ns = now;
    s->state = NW_TX_INFLIGHT;
    list_append(p, (uint32_t)(s - p->slots));
    if (p->rto_deadline == 0) {
        p->rto_deadline = now + p->rto_cur;
        p->progress_ns = now;
    }
}

/* RFC 6298 smoothing (gains 1/8 and 1/4). The receiver ACKs every few
 * packets, so a window gives hundreds of samples per round trip; decayed per
 * sample, the variation would forget a scheduling stall within a fraction of
 * an RTT. So, as Linux does, rttvar rises at once with the per-sample
 * variation but falls only at the end of a round trip, a quarter of the way
 * towards the largest variation seen in it. */
static void rtt_sample(nw_pdc_t *p, uint64_t rtt)
{
    if (p->srtt == 0) {
        p->srtt = rtt;
        p->mdev = p->mdev_max = p->rttvar = rtt / 2;
        p->rtt_round_psn = p->nxt;
        return;
    }
    uint64_t err = rtt > p->srtt ? rtt - p->srtt : p->srtt - rtt;
    p->mdev = (3 * p->mdev + err) / 4;
    if (p->mdev > p->mdev_max)
        p->mdev_max = p->mdev;
    if (p->mdev_max > p->rttvar)
        p->rttvar = p->mdev_max;
    p->srtt = (7 * p->srtt + rtt) / 8;
    if (nw_psn_diff(p->una, p->rtt_round_psn) > 0) {
        if (p->mdev_max < p->rttvar)
            p->rttvar -= (p->rttvar - p->mdev_max) / 4;
        p->mdev_max = p->mdev;
        p->rtt_round_psn = p->nxt;
    }
}

void nw_wr_write_progress(nw_engine_t *e, nw_wr_t *w)
{
    if (w->pkts_acked != w->pkts_total || w->pkts_sent != w->pkts_total)
        return;
    nw_pdc_t *p = &e->pdcs[w->pdc];
    if (w->rsp_seen) {
        if (w->awaiting_rsp)
            p->awaiting_rsp--;
        w->awaiting_rsp = 0;
        if (!w->ready)
            nw_wr_finish(e, w);
    } else if (!w->awaiting_rsp) {
        w->awaiting_rsp = 1;
        p->awaiting_rsp++;
    }
}

void nw_wr_read_progress(nw_engine_t *e, nw_wr_t *w)
{
    if (w->kind == NW_WR_READ && w->read_acked && w->read_answered && !w->ready)
        nw_wr_finish(e, w);
}

/* A packet we had declared lost was acknowledged before we resent it: the
 * path reorders more than we allowed for, so widen the reordering window. */
static void spurious_mark(nw_engine_t *e, nw_pdc_t *p)
{
    uint64_t cap = e->cfg.rto_init_ns / 2; /* stay well inside the RTO */
    uint64_t w = p->reo_extra_ns ? p->reo_extra_ns * 2 : (p->srtt ? p->srtt : 1000);
    p->reo_extra_ns = w > cap ? cap : w;
    p->reo_decay_psn = p->nxt + e->cfg.window_pkts;
    e->st.spurious_loss_marks++;
}

/* The RTO fired although the packet had arrived (its ACK was late, e.g. the
 * host did not run our thread or the peer's for a while): undo the backoff
 * (the RTO and retry count from before the episode) and raise this PDC's RTO
 * floor above the ACK silence that fooled it (5/4 of it; twice the floor if
 * that is unknown), so that the same stall does not fire again. */
static void spurious_rto(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    uint64_t f = p->rto_gap_ns ? p->rto_gap_ns + p->rto_gap_ns / 4
                               : 2 * (p->rto_floor ? p->rto_floor : e->cfg.rto_init_ns);
    uint64_t cap = RTO_FLOOR_MAX_FACTOR * e->cfg.rto_init_ns;
    if (cap > e->cfg.rto_max_ns)
        cap = e->cfg.rto_max_ns;
    if (f > cap)
        f = cap;
    if (f > p->rto_floor)
        p->rto_floor = f;
    p->rto_floor_ns = now;
    p->retries = 0;
    uint64_t base = rto_base(e, p);
    p->rto_cur = p->rto_undo_cur > base ? p->rto_undo_cur : base;
    if (p->rto_cur > e->cfg.rto_max_ns)
        p->rto_cur = e->cfg.rto_max_ns;
    if (p->rto_deadline && p->rto_deadline < now + p->rto_cur)
        p->rto_deadline = now + p->rto_cur;
    e->st.spurious_rtos++;
}

/* Without a spurious RTO for a while, a learnt floor decays by a quarter. */
static void floor_decay(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    if (!p->rto_floor || now - p->rto_floor_ns < RTO_FLOOR_HOLD_FACTOR * e->cfg.rto_init_ns)
        return;
    p->rto_floor -= p->rto_floor / 4;
    if (p->rto_floor <= e->cfg.rto_init_ns)
        p->rto_floor = 0;
    p->rto_floor_ns = now;
}

/* An ACK of an RTO-resent packet that comes back sooner than the lowest RTT
 * after the resend (or before it) acknowledges the original. */
static int acks_original(const nw_pdc_t *p, const nw_tx_slot_t *s, uint64_t now)
{
    if (s->state == NW_TX_LOST)
        return 1;
    return p->cc.min_rtt && now >= s->sent_ns && now - s->sent_ns < p->cc.min_rtt;
}

/* Returns 1 if the slot was newly acknowledged (its bytes added to *bytes). */
static int ack_slot(nw_engine_t *e, nw_pdc_t *p, uint32_t psn, uint64_t *bytes, uint64_t now)
{
    nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
    if (s->psn != psn || (s->state != NW_TX_INFLIGHT && s->state != NW_TX_LOST))
        return 0;
    *bytes += s->wire_len;
    /* An RTO resend's verdict stays open until a duplicate report or reuse. */
    if (s->rto_retx && acks_original(p, s, now)) {
        s->rto_retx--;
        spurious_rto(e, p, now);
    }
    if (s->state == NW_TX_INFLIGHT)
        list_remove(p, (uint32_t)(s - p->slots));
    else if (s->fast)
        spurious_mark(e, p);
    s->state = NW_TX_ACKED;
    /* Karn: an ACK of a resent packet may be for its first transmission, so
     * only never-resent packets move the loss-detection horizon (otherwise a
     * spurious resend would declare everything sent before it lost). */
    if (s->retx == 0 && s->tx_seq > p->max_acked_seq)
        p->max_acked_seq = s->tx_seq;
    if (s->ec_kind == NW_EC_SLOT_PARITY)
        return 1; /* parity belongs to no work request */
    nw_wr_t *w = &e->wrs[s->wr];
    w->pkts_acked++;
    if (w->kind == NW_WR_READ) {
        w->read_acked = 1;
        nw_wr_read_progress(e, w);
    } else if (w->kind == NW_WR_READ_RESP) {
        if (w->pkts_acked == w->pkts_total && w->pkts_sent == w->pkts_total)
            nw_wr_complete(e, w, w->status);
    } else {
        nw_wr_write_progress(e, w);
    }
    return 1;
}

static int in_flight_psn(const nw_pdc_t *p, uint32_t psn)
{
    return nw_psn_diff(psn, p->una) >= 0 && nw_psn_diff(psn, p->nxt) < 0;
}

int32_t nw_tx_on_ack(nw_engine_t *e, nw_pdc_t *p, uint32_t cack, uint32_t trigger,
                     uint32_t sack_base, uint64_t sack_bits, int ecn, uint64_t now)
{
    uint64_t bytes = 0;
    int32_t d = nw_psn_diff(cack, p->una - 1);
    if (d > (int32_t)nw_tx_in_flight(p))
        return NW_ERANGE;
    uint32_t newly = 0;
    uint64_t rtt = 0;
    if (in_flight_psn(p, trigger)) {
        nw_tx_slot_t *t = nw_tx_slot(e, p, trigger);
        int fresh = t->psn == trigger && t->state == NW_TX_INFLIGHT && t->retx == 0;
        uint64_t sent = t->sent_ns;
        if (ack_slot(e, p, trigger, &bytes, now)) {
            newly++;
            if (fresh && now > sent) {
                rtt = now - sent;
                rtt_sample(p, rtt);
            }
        }
    }
    for (uint32_t psn = p->una; d > 0 && nw_psn_diff(psn, cack) <= 0; psn++)
        newly += (uint32_t)ack_slot(e, p, psn, &bytes, now);
    while (sack_bits) {
        uint32_t i = (uint32_t)__builtin_ctzll(sack_bits);
        sack_bits &= sack_bits - 1;
        uint32_t psn = sack_base + i;
        if (in_flight_psn(p, psn))
            newly += (uint32_t)ack_slot(e, p, psn, &bytes, now);
    }
    while (p->una != p->nxt) {
        nw_tx_slot_t *s = nw_tx_slot(e, p, p->una);
        if (s->state != NW_TX_ACKED)
            break;
        s->state = NW_TX_FREE;
        p->una++;
    }
    if (bytes)
        NW_TRACE(e, NW_TR_ACKED, nw_pdc_index(e, p), p->una - 1, bytes, 0);
    nw_tx_detect_losses(e, p, now);
    nw_cc_on_ack(e, p, bytes, rtt, ecn, now);
    if (newly) {
        if (p->rto_episode)
            p->rto_gap_ns = now - p->progress_ns;
        p->rto_episode = 0;
        p->progress_ns = now;
        floor_decay(e, p, now);
        p->retries = 0;
        p->rto_cur = rto_base(e, p);
        p->rto_deadline = (p->list_head != NW_NIL || p->awaiting_rsp) ? now + p->rto_cur : 0;
    } else if (p->awaiting_rsp && p->rto_deadline == 0) {
        p->rto_deadline = now + p->rto_cur;
    }
    if (p->awaiting_rsp == 0)
        p->rsp_deadline = 0;
    else if (p->rsp_deadline == 0)
        p->rsp_deadline = now + rsp_wait(e, p);
    return NW_OK;
}

void nw_tx_on_dup_report(nw_engine_t *e, nw_pdc_t *p, uint32_t psn, uint64_t now)
{
    nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
    if (s->psn != psn || nw_psn_diff(psn, p->nxt) >= 0)
        return; /* not a PSN we sent, or its slot was reused */
    if (s->rto_retx == 0)
        return; /* the copy came from fast retransmit or the network */
    s->rto_retx--;
    spurious_rto(e, p, now);
}

/* A packet is lost once a packet sent at least reorder_pkts transmissions
 * after it was acknowledged and it has been out for 5/4 of the smoothed RTT
 * (RACK-style: tolerant of reordering in packets and in time). */
void nw_tx_detect_losses(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    uint64_t reorder = e->cfg.reorder_pkts;
    if (p->reo_extra_ns && nw_psn_diff(p->una, p->reo_decay_psn) >= 0) {
        p->reo_extra_ns -= p->reo_extra_ns / 4; /* no surprise for a window: shrink */
        p->reo_decay_psn = p->nxt + e->cfg.window_pkts;
    }
    uint64_t wait = p->srtt + p->srtt / 4 + p->reo_extra_ns;
    p->rack_deadline = 0;
    while (p->list_head != NW_NIL) {
        nw_tx_slot_t *s = &p->slots[p->list_head];
        if ((s->tx_seq + reorder >= p->max_acked_seq && !nw_ec_tx_verdict(p, s)) ||
            nw_ec_tx_hold(p, s))
            break;
        if (now < s->sent_ns + wait) {
            p->rack_deadline = s->sent_ns + wait;
            break;
        }
        s->fast = 1;
        s->rto_retx = 0;
        nw_tx_mark_lost(e, p, s->psn);
    }
}

static void lost_compact(nw_engine_t *e, nw_pdc_t *p)
{
    uint32_t cap = e->cfg.window_pkts, n = 0;
    for (uint32_t k = 0; k < p->lost_count; k++) {
        uint32_t psn = p->lost[(p->lost_head + k) % cap];
        nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
        if (s->psn == psn && s->state == NW_TX_LOST)
            p->lost[(p->lost_head + n++) % cap] = psn;
    }
    p->lost_count = n;
}

void nw_tx_mark_lost(nw_engine_t *e, nw_pdc_t *p, uint32_t psn)
{
    nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
    if (s->psn != psn || s->state != NW_TX_INFLIGHT)
        return;
    list_remove(p, (uint32_t)(s - p->slots));
    s->state = NW_TX_LOST;
    NW_TRACE(e, NW_TR_LOST, nw_pdc_index(e, p), psn, s->wire_len,
             s->fast ? NW_TRF_FAST : s->rto_retx ? NW_TRF_RTO : 0);
    nw_cc_on_loss(e, p, s);
    uint32_t cap = e->cfg.window_pkts;
    if (p->lost_count >= cap)
        lost_compact(e, p);
    p->lost[(p->lost_head + p->lost_count) % cap] = psn;
    p->lost_count++;
    nw_pdc_activate(e, p);
}

void nw_tx_on_trim_nack(nw_engine_t *e, nw_pdc_t *p, uint32_t psn, uint64_t now)
{
    nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
    if (!in_flight_psn(p, psn) || s->psn != psn || s->state != NW_TX_INFLIGHT)
        return; /* acknowledged or already queued for resending */
    int oldest = p->list_head == (uint32_t)(s - p->slots);
    nw_tx_mark_lost(e, p, psn);
    /* The oldest transmission, the one the timer guards, was answered and its resend
     * leaves now: the timeout runs from now, as that packet's own timer restarts in
     * htsim's model. Left running from the first send, a packet trimmed again and
     * again timed out while its latest copy was still queued (spuriously: 177 of the
     * 222 timeouts of the 64 -> 1 incast with an ACK asked for at the floor). A NACK
     * of a later packet leaves the timer alone: the oldest may still be lost. */
    if (oldest && p->rto_deadline)
        p->rto_deadline = now + p->rto_cur;
}

void nw_tx_go_back_n(nw_engine_t *e, nw_pdc_t *p, uint32_t from_psn)
{
    if (!in_flight_psn(p, from_psn))
        from_psn = p->una;
    for (uint32_t psn = from_psn; psn != p->nxt; psn++)
        nw_tx_mark_lost(e, p, psn);
}

/* How long after sending a ROD packet a NACK for it means loss rather than
 * reordering: about an RTT and its variation (at least rto_init/4). */
static uint64_t rod_wait(const nw_engine_t *e, const nw_pdc_t *p)
{
    uint64_t floor = e->cfg.rto_init_ns / 4;
    if (!p->srtt)
        return e->cfg.rto_init_ns;
    uint64_t w = p->srtt + 4 * p->rttvar;
    return w < floor ? floor : w;
}

void nw_tx_on_rod_nack(nw_engine_t *e, nw_pdc_t *p, uint32_t psn, uint64_t now)
{
    /* The ROD receiver holds packets after a gap in its reorder buffer, so only
     * the missing PSN is resent (not go-back-N), and at most once per RTT: a
     * NACK that comes sooner after the send may be reordering, not loss. */
    if (!in_flight_psn(p, psn))
        return;
    nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
    if (s->psn != psn || s->state != NW_TX_INFLIGHT)
        return; /* acknowledged or already queued for resending */
    uint64_t due = s->sent_ns + rod_wait(e, p);
    if (now >= due) {
        s->fast = 1;
        s->rto_retx = 0;
        nw_tx_mark_lost(e, p, psn);
        return;
    }
    e->st.rod_nacks_deferred++;
    p->rod_recheck_psn = psn;
    p->rod_recheck_deadline = due;
}

void nw_tx_on_rod_recheck(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    p->rod_recheck_deadline = 0;
    nw_tx_on_rod_nack(e, p, p->rod_recheck_psn, now);
}

nw_tx_slot_t *nw_tx_next_lost(nw_engine_t *e, nw_pdc_t *p)
{
    uint32_t cap = e->cfg.window_pkts;
    while (p->lost_count > 0) {
        uint32_t psn = p->lost[p->lost_head];
        p->lost_head = (p->lost_head + 1) % cap;
        p->lost_count--;
        nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
        if (s->psn == psn && s->state == NW_TX_LOST)
            return s;
    }
    return NULL;
}

/* Asks the target again for the responses of fully acknowledged messages. */
static void queue_probes(nw_engine_t *e, nw_pdc_t *p)
{
    uint32_t pi = nw_pdc_index(e, p);
    p->probe_count = 0;
    for (uint32_t i = 0; i < e->nwrs && p->probe_count < NW_MAX_PENDING_RSP; i++) {
        nw_wr_t *w = &e->wrs[i];
        if (w->in_use && w->pdc == pi && w->awaiting_rsp)
            p->probe_msg[p->probe_count++] = w->msg_id;
    }
    nw_pdc_activate(e, p);
}

void nw_tx_fail(nw_engine_t *e, nw_pdc_t *p, int32_t status)
{
    if (p->failed)
        return;
    p->failed = 1;
    p->fail_status = status;
    e->st.pdc_failed++;
    nw_wr_fail_pdc(e, p, status);
    p->awaiting_rsp = 0;
    p->probe_count = 0;
    memset(p->slots, 0, e->cfg.window_pkts * sizeof(*p->slots));
    p->una = p->nxt;
    p->list_head = p->list_tail = NW_NIL;
    p->pipe = 0;
    p->cc.pipe_bytes = 0;
    p->cc.cr_tx.backlog = 0;
    p->lost_count = 0;
    p->rto_resend_due = 0;
    p->rto_deadline = 0;
}

static void rto_lost(nw_engine_t *e, nw_pdc_t *p, nw_tx_slot_t *s)
{
    if (s->rto_retx < UINT8_MAX)
        s->rto_retx++;
    nw_tx_mark_lost(e, p, s->psn);
}

void nw_tx_on_rto(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    if (p->list_head == NW_NIL && p->awaiting_rsp == 0) {
        p->rto_deadline = 0;
        return;
    }
    e->st.rto_fired++;
    if (!p->rto_episode) {
        p->rto_episode = 1;
        p->rto_undo_cur = p->rto_cur;
    }
    if (++p->retries > e->cfg.max_retries) {
        nw_tx_fail(e, p, NW_ETIMEDOUT);
        return;
    }
    uint64_t rto = p->rto_cur;
    p->rto_cur *= 2;
    if (p->rto_cur > e->cfg.rto_max_ns)
        p->rto_cur = e->cfg.rto_max_ns;
    if (p->list_head == NW_NIL)
        queue_probes(e, p);
    else {
        /* The oldest transmission; on ROD the oldest unacknowledged PSN, the one
         * the receiver waits for (it holds the packets after it). */
        nw_tx_slot_t *s = &p->slots[p->list_head];
        nw_tx_slot_t *u = nw_tx_slot(e, p, p->una);
        int rod = p->mode == NW_MODE_ROD;
        if (rod && u->psn == p->una && u->state == NW_TX_INFLIGHT)
            s = u;
        rto_lost(e, p, s);
        /* rto_per_packet (RUD): every other packet out for a whole timeout has timed
         * out too, as its own timer says in htsim's model. Otherwise they stay counted
         * in flight and leave one per backed-off timeout: in the 256 -> 1 NSCC incast a
         * sender whose trimmed headers the switch dropped, its window at the floor,
         * sent one resend per timeout (73, 146, 292, ... us) until about 37 ms. */
        while (e->cfg.rto_per_packet && !rod && p->list_head != NW_NIL) {
            uint32_t head = p->list_head;
            s = &p->slots[head];
            if (now - s->sent_ns < rto)
                break;
            rto_lost(e, p, s);
            if (p->list_head == head)
                break; /* not taken off the in-flight list: nothing more to declare */
        }
        p->rto_resend_due = 1;
    }
    p->rto_deadline = now + p->rto_cur;
}

void nw_tx_on_rsp_timeout(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    if (p->awaiting_rsp == 0 || p->failed) {
        p->rsp_deadline = 0;
        return;
    }
    queue_probes(e, p);
    e->st.rsp_probes++;
    p->rsp_deadline = now + 2 * rsp_wait(e, p);
}
