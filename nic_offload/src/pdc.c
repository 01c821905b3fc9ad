/* Packet delivery contexts: the table of peers, PDC id allocation, lookups for
 * arriving packets and the queue of PDCs that have output to give. */
#include <stdlib.h>
#include <string.h>

#include "engine_state.h"
#include "uet_wire.h"

uint64_t nw_random(nw_engine_t *e)
{
    /* splitmix64: deterministic per seed, good enough for PSNs and ids. */
    uint64_t z = (e->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int32_t nw_pdc_table_init(nw_engine_t *e)
{
    e->pdcs = calloc(e->cfg.max_peers, sizeof(*e->pdcs));
    e->active = calloc(e->cfg.max_peers, sizeof(*e->active));
    e->closes = calloc(e->cfg.max_peers, sizeof(*e->closes));
    e->pull.ring = calloc(e->cfg.max_peers, sizeof(*e->pull.ring));
    e->active_head = e->active_count = 0;
    e->close_head = e->close_count = 0;
    return (e->pdcs && e->active && e->closes && e->pull.ring) ? NW_OK : NW_ENOMEM;
}

static void pdc_free_arrays(nw_pdc_t *p)
{
    free(p->slots);
    free(p->lost);
    free(p->wr_by_msg);
    free(p->rx_msgs);
    free(p->ack_ring);
    free(p->rod_buf);
    free(p->rod_len);
    free(p->rod_psn);
    nw_rxw_destroy(&p->rxw);
    nw_ec_free(p);
}

void nw_pdc_table_destroy(nw_engine_t *e)
{
    if (e->pdcs)
        for (uint32_t i = 0; i < e->cfg.max_peers; i++)
            if (e->pdcs[i].in_use)
                pdc_free_arrays(&e->pdcs[i]);
    free(e->pdcs);
    free(e->active);
    free(e->closes);
    free(e->pull.ring);
    e->pull.ring = NULL;
    e->closes = NULL;
    e->pdcs = NULL;
    e->active = NULL;
}

uint32_t nw_pdc_index(const nw_engine_t *e, const nw_pdc_t *p)
{
    return (uint32_t)(p - e->pdcs);
}

/* The ROD receiver's reorder buffer: one whole packet per window entry. */
static int32_t rod_buffer_init(const nw_engine_t *e, nw_pdc_t *p)
{
    uint32_t w = e->cfg.window_pkts;
    p->rod_buf = malloc((size_t)w * e->cfg.mtu);
    p->rod_len = calloc(w, sizeof(*p->rod_len));
    p->rod_psn = calloc(w, sizeof(*p->rod_psn));
    return (p->rod_buf && p->rod_len && p->rod_psn) ? NW_OK : NW_ENOMEM;
}

/* Opens a fresh PDC in the free table slot i. */
static nw_pdc_t *pdc_init_at(nw_engine_t *e, uint32_t i, uint32_t ip, uint16_t port,
                             uint8_t mode)
{
    uint32_t w = e->cfg.window_pkts;
    nw_pdc_t *p = &e->pdcs[i];
    memset(p, 0, sizeof(*p));
    p->slots = calloc(w, sizeof(*p->slots));
    p->lost = calloc(w, sizeof(*p->lost));
    p->wr_by_msg = malloc(w * sizeof(*p->wr_by_msg));
    p->rx_msgs = calloc(w, sizeof(*p->rx_msgs));
    p->ack_ring = calloc(w, sizeof(*p->ack_ring));
    if (!p->slots || !p->lost || !p->wr_by_msg || !p->rx_msgs || !p->ack_ring ||
        nw_rxw_init(&p->rxw, w < 64 ? 64 : w) != NW_OK ||
        (mode == NW_MODE_ROD && rod_buffer_init(e, p) != NW_OK)) {
        pdc_free_arrays(p);
        memset(p, 0, sizeof(*p));
        return NULL;
    }
    for (uint32_t j = 0; j < w; j++)
        p->wr_by_msg[j] = NW_NIL;
    p->in_use = 1;
    p->ip = ip;
    p->port = port;
    p->mode = mode;
    p->local_id = (uint16_t)(i + 1);
    p->sq_head = p->sq_tail = NW_NIL;
    p->next_msg_id = (uint16_t)nw_random(e);
    nw_tx_reset(e, p);
    nw_entropy_init(&p->entropy, e->cfg.entropy_base, e->cfg.entropy_count,
                    e->cfg.entropy_burst, (uint32_t)nw_random(e));
    e->st.pdc_opened++;
    return p;
}

nw_pdc_t *nw_pdc_create(nw_engine_t *e, uint32_t ip, uint16_t port, uint8_t mode)
{
    for (uint32_t i = 0; i < e->cfg.max_peers; i++)
        if (!e->pdcs[i].in_use)
            return pdc_init_at(e, i, ip, port, mode);
    return NULL;
}

int nw_pdc_is_half_open(const nw_pdc_t *p)
{
    return p->in_use && p->passive && !p->established && !p->delivered;
}

void nw_pdc_free(nw_engine_t *e, nw_pdc_t *p)
{
    uint32_t idx = nw_pdc_index(e, p), cap = e->cfg.max_peers, n = 0;
    for (uint32_t k = 0; k < e->active_count; k++) {
        uint32_t v = e->active[(e->active_head + k) % cap];
        if (v != idx)
            e->active[(e->active_head + n++) % cap] = v;
    }
    e->active_count = n;
    pdc_free_arrays(p);
    memset(p, 0, sizeof(*p));
}

void nw_pdc_close(nw_engine_t *e, nw_pdc_t *p, int notify)
{
    nw_wr_fail_pdc(e, p, NW_ECANCELED);
    nw_rxm_cancel(e, p);
    uint32_t cap = e->cfg.max_peers;
    if (notify && p->remote_known && p->mode != NW_MODE_UUD && e->close_count < cap) {
        nw_close_notice_t *c = &e->closes[(e->close_head + e->close_count) % cap];
        c->ip = p->ip;
        c->port = p->port;
        c->local_id = p->local_id;
        c->remote_id = p->remote_id;
        e->close_count++;
    }
    e->st.pdc_closed++;
    if (!p->named) {
        nw_pdc_free(e, p);
        return;
    }
    /* The application holds this handle: keep it, as a fresh PDC to the same
     * peer (the next work request opens a new PDC pair with a SYN). */
    uint32_t i = nw_pdc_index(e, p), ip = p->ip;
    uint16_t port = p->port;
    uint8_t mode = p->mode;
    uint32_t k = p->ec_tx ? p->ec_tx->k : 0, m = p->ec_tx ? p->ec_tx->m : 0;
    nw_pdc_free(e, p);
    if (pdc_init_at(e, i, ip, port, mode)) {
        e->pdcs[i].named = e->pdcs[i].established = 1;
        nw_ec_set(e, &e->pdcs[i], k, m); /* the application's choice of coding stays */
    }
}

static uint32_t half_open_from(const nw_engine_t *e, uint32_t ip)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->cfg.max_peers; i++)
        if (e->pdcs[i].ip == ip && nw_pdc_is_half_open(&e->pdcs[i]))
            n++;
    return n;
}

static int reclaim_oldest_half_open(nw_engine_t *e)
{
    nw_pdc_t *oldest = NULL;
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        nw_pdc_t *p = &e->pdcs[i];
        if (nw_pdc_is_half_open(p) && (!oldest || p->last_rx_ns < oldest->last_rx_ns))
            oldest = p;
    }
    if (!oldest)
        return 0;
    nw_pdc_free(e, oldest);
    e->st.pdc_reclaimed++;
    return 1;
}

nw_pdc_t *nw_pdc_open_passive(nw_engine_t *e, uint32_t ip, uint8_t mode, uint64_t now)
{
    if (half_open_from(e, ip) >= NW_HALF_OPEN_PER_SOURCE) {
        e->st.drop_syn_half_open++;
        return NULL;
    }
    nw_pdc_t *p = nw_pdc_create(e, ip, e->cfg.dst_port, mode);
    if (!p && reclaim_oldest_half_open(e))
        p = nw_pdc_create(e, ip, e->cfg.dst_port, mode);
    if (!p) {
        e->st.drop_no_peer_slot++;
        return NULL;
    }
    p->passive = 1;
    p->last_rx_ns = now;
    return p;
}

uint64_t nw_pdc_half_open_deadline(const nw_engine_t *e, const nw_pdc_t *p)
{
    return nw_pdc_is_half_open(p) ? p->last_rx_ns + 2 * e->cfg.rto_max_ns : 0;
}

void nw_pdc_expire_half_open(nw_engine_t *e, uint64_t now)
{
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        nw_pdc_t *p = &e->pdcs[i];
        uint64_t d = nw_pdc_half_open_deadline(e, p);
        if (d && d <= now) {
            nw_pdc_free(e, p);
            e->st.pdc_reclaimed++;
        }
    }
}

nw_pdc_t *nw_pdc_by_id(nw_engine_t *e, uint16_t local_id)
{
    if (local_id == 0 || local_id > e->cfg.max_peers)
        return NULL;
    nw_pdc_t *p = &e->pdcs[local_id - 1];
    return p->in_use ? p : NULL;
}

nw_pdc_t *nw_pdc_find(nw_engine_t *e, uint32_t ip, uint8_t mode, int32_t port)
{
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        nw_pdc_t *p = &e->pdcs[i];
        if (p->in_use && p->ip == ip && p->mode == mode && (port < 0 || p->port == port))
            return p;
    }
    return NULL;
}

nw_pdc_t *nw_pdc_find_syn(nw_engine_t *e, uint32_t ip, uint8_t mode, uint16_t spdcid)
{
    nw_pdc_t *unbound = NULL;
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        nw_pdc_t *p = &e->pdcs[i];
        if (!p->in_use || p->ip != ip || p->mode != mode)
            continue;
        if (p->remote_known && p->remote_id == spdcid)
            return p;
        if (!p->remote_known && !unbound)
            unbound = p;
    }
    return unbound;
}

void nw_pdc_activate(nw_engine_t *e, nw_pdc_t *p)
{
    if (p->in_active || !nw_pdc_has_output(e, p))
        return;
    uint32_t cap = e->cfg.max_peers;
    e->active[(e->active_head + e->active_count) % cap] = nw_pdc_index(e, p);
    e->active_count++;
    p->in_active = 1;
}

int nw_pdc_has_data(const nw_engine_t *e, const nw_pdc_t *p)
{
    return !p->failed && (p->lost_count > 0 || nw_ec_tx_parity_due(p) || p->sq_head != NW_NIL);
}

int nw_pdc_resend_open(const nw_engine_t *e, const nw_pdc_t *p)
{
    if (nw_cc_window_open(e, p) || p->rto_resend_due)
        return 1; /* after an RTO one resend never waits: a window shrunk below the packets
                     still counted in flight would otherwise hold every repair back until
                     one RTO per packet had drained them, and the PDC fail at max_retries */
    /* ROD: the oldest unacknowledged PSN is lost and the receiver acknowledges
     * nothing past that hole, so the packets it holds keep the window shut until
     * the repair arrives: that repair never waits for the window. (On RUD the
     * held packets are SACKed and leave the window.) */
    const nw_tx_slot_t *s = nw_tx_slot(e, p, p->una);
    return p->mode == NW_MODE_ROD && p->una != p->nxt && s->psn == p->una &&
           s->state == NW_TX_LOST;
}

int nw_pdc_new_data_open(const nw_engine_t *e, const nw_pdc_t *p)
{
    if (p->sq_head == NW_NIL)
        return 0;
    if (p->mode == NW_MODE_UUD)
        return 1;
    uint32_t limit = e->cfg.window_pkts;
    if (!p->tx_synced && limit > NW_MAX_WINDOW - 1)
        limit = NW_MAX_WINDOW - 1;
    if (!p->tx_synced && (uint32_t)(p->nxt - p->start_psn) >= NW_MAX_WINDOW - 1)
        return 0;
    return nw_tx_in_flight(p) < limit && nw_cc_window_open(e, p);
}

int32_t nw_pdc_has_output(const nw_engine_t *e, const nw_pdc_t *p)
{
    if (p->ack_now || p->nack_pending || p->trim_count || p->ack_ring_count || p->probe_count ||
        p->dup_count || p->cc.cr_rx.grant_due)
        return 1;
    if (p->failed)
        return 0;
    int resend = (p->lost_count > 0 || nw_ec_tx_parity_due(p)) && nw_pdc_resend_open(e, p);
    int data = resend || nw_pdc_new_data_open(e, p);
    if (!data)
        return 0;
    if (nw_cc_tx_allowed(e, p))
        return 1;
    return p->cc.rccc_on && nw_rccc_req_due(e, p); /* blocked on credit: ask for it */
}

static uint8_t error_of(const nw_pdc_t *p, uint16_t msg_id)
{
    for (uint32_t i = 0; i < NW_ERR_MEMORY; i++)
        if (p->err_rc[i] != 0 && p->err_msg[i] == msg_id)
            return p->err_rc[i];
    return NW_SES_RC_OK;
}

void nw_pdc_queue_rsp(nw_engine_t *e, nw_pdc_t *p, uint16_t msg_id, uint8_t rc)
{
    if (rc != NW_SES_RC_OK && error_of(p, msg_id) == NW_SES_RC_OK) {
        uint32_t slot = p->err_next++ % NW_ERR_MEMORY;
        p->err_msg[slot] = msg_id;
        p->err_rc[slot] = rc;
    }
    uint32_t i = 0;
    while (i < p->rsp_count && p->rsp_msg[i] != msg_id)
        i++;
    if (i == p->rsp_count) {
        if (p->rsp_count >= NW_MAX_PENDING_RSP)
            return; /* the sender will probe for it (CTRL REQ_ACK) */
        p->rsp_count++;
    } else if (p->rsp_code[i] != NW_SES_RC_OK && rc == NW_SES_RC_OK) {
        rc = p->rsp_code[i]; /* never downgrade a refusal to OK */
    }
    p->rsp_msg[i] = msg_id;
    p->rsp_code[i] = rc;
    p->rsp_left[i] = rc == NW_SES_RC_OK ? 1 : NW_RSP_REPEAT;
    p->ack_now = 1;
    nw_pdc_activate(e, p);
}

void nw_pdc_respond(nw_engine_t *e, nw_pdc_t *p, uint16_t msg_id)
{
    nw_pdc_queue_rsp(e, p, msg_id, error_of(p, msg_id));
}
