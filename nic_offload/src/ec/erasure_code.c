/* Reed-Solomon coding of packets with Intel ISA-L (see erasure_code.h for the
 * scheme). Sender: blocks of first transmissions, parity after each block,
 * empty parity headers as resends of lost parity. Receiver: a ring of shards
 * by PSN, blocks learnt from parity headers, decode into a scratch shard that
 * is rebuilt into a packet and handed to the normal receive path. */
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>

#include "engine_state.h"

/* ------------------------------------------------------------ codes */

/* Cauchy generator matrix (identity on top) and encode tables for (k, m). */
static void code_for(nw_ec_code_t *c, uint8_t k, uint8_t m)
{
    if (c->k == k && c->m == m)
        return;
    gf_gen_cauchy1_matrix(c->matrix, k + m, k);
    ec_init_tables(k, m, c->matrix + (size_t)k * k, c->tables);
    c->k = k;
    c->m = m;
}

static uint32_t shard_cap(const nw_engine_t *e)
{
    /* The largest shard whose parity packet still fits the MTU. */
    return e->cfg.mtu - NW_WIRE_PDS_REQ_LEN - NW_WIRE_PARITY_LEN;
}

static void put16(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static uint32_t get16(const uint8_t *b)
{
    return ((uint32_t)b[0] << 8) | b[1];
}

/* Shard prefix: next header, PDS flags worth keeping, body length. */
static void shard_prefix(uint8_t *b, uint8_t next_hdr, uint8_t flags, uint32_t body)
{
    b[0] = next_hdr;
    b[1] = flags & NW_PDS_F_AR;
    put16(b + 2, body);
}

void nw_ec_mark_packet(uint8_t *pkt)
{
    pkt[1] |= NW_PDS_F_EC; /* the PDS flags are the low 7 bits of byte 1 */
}

/* ------------------------------------------------------------ setup */

static void rx_free(nw_ec_rx_t *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r->psn);
    free(r->len);
    free(r->retx);
    free(r->out);
    free(r->pkt);
    free(r);
}

void nw_ec_free(nw_pdc_t *p)
{
    if (p->ec_tx) {
        free(p->ec_tx->data);
        free(p->ec_tx->parity);
        free(p->ec_tx);
        p->ec_tx = NULL;
    }
    rx_free(p->ec_rx);
    p->ec_rx = NULL;
}

static void tx_close(nw_engine_t *e, nw_pdc_t *p);

int32_t nw_ec_set(nw_engine_t *e, nw_pdc_t *p, uint32_t k, uint32_t m)
{
    if ((k == 0) != (m == 0) || k > NW_EC_MAX_K || m > NW_EC_MAX_M)
        return NW_EINVAL;
    if (k && p->mode != NW_MODE_RUD)
        return NW_EINVAL;
    if (!p->ec_tx) {
        if (k == 0)
            return NW_OK;
        nw_ec_tx_t *t = calloc(1, sizeof(*t));
        if (!t)
            return NW_ENOMEM;
        t->cap = shard_cap(e);
        t->data = calloc(NW_EC_MAX_K, t->cap);
        t->parity = calloc(NW_EC_MAX_M, t->cap);
        p->ec_tx = t;
        if (!t->data || !t->parity) {
            free(t->data);
            free(t->parity);
            free(t);
            p->ec_tx = NULL;
            return NW_ENOMEM;
        }
    }
    tx_close(e, p); /* an open block keeps the code it started with */
    p->ec_tx->k = (uint8_t)k;
    p->ec_tx->m = (uint8_t)m;
    return NW_OK;
}

uint32_t nw_ec_seg_payload(const nw_engine_t *e, const nw_pdc_t *p)
{
    uint32_t cc_hdr = p->cc.rccc_on ? NW_WIRE_PDS_REQ_CC_LEN - NW_WIRE_PDS_REQ_LEN : 0;
    if (!p->ec_tx || !p->ec_tx->k)
        return e->max_payload - cc_hdr; /* RUD_CC requests carry 4 more header bytes */
    uint32_t coded = shard_cap(e) - NW_EC_LEN_PREFIX - NW_WIRE_SES_STD_LEN;
    return coded < e->max_payload ? coded : e->max_payload;
}

/* ------------------------------------------------------------ sender */

static int tx_active(const nw_pdc_t *p)
{
    return p->ec_tx && p->ec_tx->k && p->mode == NW_MODE_RUD;
}

/* Free PSNs in the PDC's window (and, before the peer answered, in the
 * 12-bit start-PSN offset SYN packets carry). */
static uint32_t tx_room(const nw_engine_t *e, const nw_pdc_t *p)
{
    uint32_t limit = e->cfg.window_pkts;
    if (!p->tx_synced && limit > NW_MAX_WINDOW - 1)
        limit = NW_MAX_WINDOW - 1;
    uint32_t used = nw_tx_in_flight(p);
    uint32_t room = used < limit ? limit - used : 0;
    if (!p->tx_synced) {
        uint32_t s = p->nxt - p->start_psn;
        uint32_t r2 = s < NW_MAX_WINDOW - 1 ? NW_MAX_WINDOW - 1 - s : 0;
        room = r2 < room ? r2 : room;
    }
    return room;
}

/* Ends the open block: computes its parity, which nw_output sends next. */
static void tx_close(nw_engine_t *e, nw_pdc_t *p)
{
    nw_ec_tx_t *t = p->ec_tx;
    if (!t || t->count == 0 || t->parity_left)
        return;
    uint8_t *d[NW_EC_MAX_K], *c[NW_EC_MAX_M];
    for (uint32_t i = 0; i < t->count; i++) {
        uint8_t *s = t->data + (size_t)i * t->cap;
        uint32_t len = NW_EC_LEN_PREFIX + get16(s + 2);
        memset(s + len, 0, t->shard_len - len);
        d[i] = s;
    }
    for (uint32_t j = 0; j < t->bm; j++)
        c[j] = t->parity + (size_t)j * t->cap;
    code_for(&t->code, t->count, t->bm);
    ec_encode_data((int)t->shard_len, t->count, t->bm, t->code.tables, d, c);
    t->parity_left = t->bm;
    e->st.ec_blocks_sent++;
}

int nw_ec_tx_parity_due(const nw_pdc_t *p)
{
    return p->ec_tx && p->ec_tx->parity_left > 0;
}

int nw_ec_tx_close_before(nw_engine_t *e, nw_pdc_t *p, uint32_t body_len)
{
    nw_ec_tx_t *t = p->ec_tx;
    if (!t || t->count == 0 || t->parity_left)
        return 0;
    if (tx_active(p) && body_len + NW_EC_LEN_PREFIX <= t->cap)
        return 0;
    tx_close(e, p); /* the next packet cannot join the block */
    return 1;
}

void nw_ec_tx_on_data(nw_engine_t *e, nw_pdc_t *p, nw_tx_slot_t *s, uint8_t *pkt, uint32_t n)
{
    uint32_t pds = p->cc.rccc_on ? NW_WIRE_PDS_REQ_CC_LEN : NW_WIRE_PDS_REQ_LEN;
    if (!tx_active(p) || n < pds)
        return;
    nw_ec_tx_t *t = p->ec_tx;
    uint32_t body = n - pds, len = body + NW_EC_LEN_PREFIX;
    if (len > t->cap || t->parity_left)
        return;
    if (t->count == 0) {
        if (tx_room(e, p) < t->m)
            return; /* no room for parity after it: goes uncoded */
        t->base_psn = s->psn;
        t->bm = t->m;
        t->shard_len = 0;
    }
    nw_ec_mark_packet(pkt);
    uint8_t *dst = t->data + (size_t)t->count * t->cap;
    shard_prefix(dst, (uint8_t)((pkt[0] & 0x07) << 1 | pkt[1] >> 7), pkt[1], body);
    memcpy(dst + NW_EC_LEN_PREFIX, pkt + pds, body);
    if (len > t->shard_len)
        t->shard_len = len;
    s->ec_kind = NW_EC_SLOT_DATA;
    s->ec_base = t->base_psn;
    t->count++;
    if (t->count >= t->k || p->sq_head == NW_NIL || tx_room(e, p) <= t->bm ||
        !nw_cc_window_open(e, p))
        tx_close(e, p);
}

/* PDS request header of a parity packet (the PDC's fields as a data packet's). */
static void parity_pds(const nw_pdc_t *p, uint32_t psn, nw_pds_hdr_t *h)
{
    h->type = NW_PDS_RUD;
    h->next_hdr = NW_NH_NW_PARITY;
    nw_fill_request_pds(p, psn, h);
}

int32_t nw_ec_tx_output_parity(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap,
                               uint64_t now)
{
    nw_ec_tx_t *t = p->ec_tx;
    uint32_t idx = (uint32_t)t->bm - t->parity_left, psn = p->nxt;
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    parity_pds(p, psn, &pk.pds);
    if (t->parity_left == 1)
        pk.pds.flags |= NW_PDS_F_AR; /* the block's verdict comes back at once */
    pk.parity.base_psn = t->base_psn;
    pk.parity.k = t->count;
    pk.parity.m = t->bm;
    pk.parity.index = (uint8_t)idx;
    pk.parity.shard_len = (uint16_t)t->shard_len;
    int32_t hl = nw_wire_build(&pk, buf, cap);
    if (hl < 0)
        return hl;
    if ((uint32_t)hl + t->shard_len > cap)
        return NW_ETOOBIG;
    memcpy(buf + hl, t->parity + (size_t)idx * t->cap, t->shard_len);
    int32_t n = hl + (int32_t)t->shard_len;
    nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
    memset(s, 0, sizeof(*s));
    s->psn = psn;
    s->wr = NW_NIL;
    s->prev = s->next = NW_NIL;
    s->ec_kind = NW_EC_SLOT_PARITY;
    s->ec_base = t->base_psn;
    s->ec_k = t->count;
    s->ec_m = t->bm;
    s->ec_index = (uint8_t)idx;
    p->nxt++;
    nw_tx_sent(e, p, s, (uint32_t)n, now);
    e->st.ec_parity_pkts_out++;
    e->st.ec_parity_bytes_out += (uint64_t)n;
    if (idx == 0) {
        /* The block's verdict: an ACK of its first parity packet or of anything
         * sent later (the receiver then had every data packet that was going
         * to arrive, and parity behind them). */
        for (uint32_t i = 0; i < t->count; i++) {
            nw_tx_slot_t *d = nw_tx_slot(e, p, t->base_psn + i);
            if (d->psn == t->base_psn + i && d->ec_kind == NW_EC_SLOT_DATA)
                d->ec_end_seq = s->tx_seq;
        }
    }
    if (--t->parity_left == 0)
        t->count = 0;
    return n;
}

int32_t nw_ec_tx_resend_parity(nw_engine_t *e, nw_pdc_t *p, nw_tx_slot_t *s, uint8_t *buf,
                               uint32_t cap)
{
    /* The parity bytes are gone; an empty parity header still tells the
     * receiver which block the PSN belongs to, so that it can count it. */
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    parity_pds(p, s->psn, &pk.pds);
    pk.pds.flags |= NW_PDS_F_RETX | NW_PDS_F_AR;
    pk.parity.base_psn = s->ec_base;
    pk.parity.k = s->ec_k;
    pk.parity.m = s->ec_m;
    pk.parity.index = s->ec_index;
    int32_t n = nw_wire_build(&pk, buf, cap);
    if (n > 0)
        e->st.ec_parity_bytes_out += (uint64_t)n;
    return n;
}

int nw_ec_tx_hold(const nw_pdc_t *p, const nw_tx_slot_t *s)
{
    return s->ec_kind == NW_EC_SLOT_DATA && s->retx == 0 &&
           (s->ec_end_seq == 0 || p->max_acked_seq < s->ec_end_seq);
}

int nw_ec_tx_verdict(const nw_pdc_t *p, const nw_tx_slot_t *s)
{
    return s->ec_kind == NW_EC_SLOT_DATA && s->ec_end_seq != 0 &&
           p->max_acked_seq >= s->ec_end_seq;
}

/* ------------------------------------------------------------ receiver */

static nw_ec_rx_t *rx_state(const nw_engine_t *e, nw_pdc_t *p)
{
    if (p->ec_rx)
        return p->ec_rx;
    nw_ec_rx_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    uint32_t ring = e->cfg.window_pkts < NW_EC_RX_RING_MAX ? e->cfg.window_pkts
                                                           : NW_EC_RX_RING_MAX;
    r->ring = ring;
    r->cap = e->cfg.mtu;
    r->buf = malloc((size_t)ring * r->cap);
    r->psn = calloc(ring, sizeof(*r->psn));
    r->len = calloc(ring, sizeof(*r->len));
    r->retx = calloc(ring, 1);
    r->out = malloc((size_t)NW_EC_MAX_M * r->cap);
    r->pkt = malloc((size_t)r->cap + NW_WIRE_PDS_REQ_LEN);
    if (!r->buf || !r->psn || !r->len || !r->retx || !r->out || !r->pkt) {
        rx_free(r);
        return NULL;
    }
    p->ec_rx = r;
    return r;
}

static uint32_t ring_slot(const nw_ec_rx_t *r, uint32_t psn)
{
    return psn & (r->ring - 1);
}

static void rx_store(nw_ec_rx_t *r, uint32_t psn, const uint8_t *shard, uint32_t len, int retx)
{
    uint32_t i = ring_slot(r, psn);
    memcpy(r->buf + (size_t)i * r->cap, shard, len);
    r->psn[i] = psn;
    r->len[i] = (uint16_t)len;
    r->retx[i] = (uint8_t)retx;
}

/* The slot holding psn's shard, or NULL. */
static uint8_t *rx_shard(const nw_ec_rx_t *r, uint32_t psn, uint32_t *len)
{
    uint32_t i = ring_slot(r, psn);
    if (!r->len[i] || r->psn[i] != psn)
        return NULL;
    *len = r->len[i];
    return r->buf + (size_t)i * r->cap;
}

static void rx_mark(nw_pdc_t *p, uint32_t psn)
{
    if (nw_rxw_classify(&p->rxw, psn) == NW_PSN_NEW)
        nw_rxw_mark(&p->rxw, psn);
}

/* A complete block: its parity PSNs count as received (acknowledged, never
 * delivered). */
static void rx_finish(nw_engine_t *e, nw_pdc_t *p, nw_ec_block_t *b, int decoded)
{
    b->done = 1;
    for (uint32_t j = 0; j < b->m; j++)
        rx_mark(p, b->base + b->k + j);
    if (decoded) {
        e->st.ec_blocks_recovered++;
        return;
    }
    nw_ec_rx_t *r = p->ec_rx;
    for (uint32_t i = 0; i < b->k; i++) {
        uint32_t s = ring_slot(r, b->base + i);
        if (r->len[s] && r->psn[s] == b->base + i && r->retx[s]) {
            e->st.ec_blocks_repaired++;
            break;
        }
    }
}

/* Rebuilds recovered shard `out` as the data packet with PSN psn and hands it
 * to the receive path. */
static void rx_deliver(nw_engine_t *e, nw_pdc_t *p, nw_ec_rx_t *r, const uint8_t *out,
                       uint32_t shard_len, uint32_t psn, uint64_t now)
{
    uint32_t body = get16(out + 2);
    if (body + NW_EC_LEN_PREFIX > shard_len || out[0] > 15) {
        e->st.drop_malformed++; /* a parity packet that does not match its block */
        return;
    }
    if (out[0] == NW_NH_NW_PARITY) {
        e->st.drop_malformed++;
        return;
    }
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    pk.pds.type = NW_PDS_RUD;
    pk.pds.flags = out[1] & NW_PDS_F_AR;
    pk.pds.psn = psn;
    pk.pds.spdcid = p->remote_id;
    pk.pds.dpdcid = p->local_id;
    int32_t hl = nw_wire_build(&pk, r->pkt, NW_WIRE_PDS_REQ_LEN);
    if (hl != NW_WIRE_PDS_REQ_LEN) {
        e->st.drop_malformed++;
        return;
    }
    /* The PDS header alone (next header 0), then the shard's next header:
     * nw_rx_recovered parses the whole packet again. */
    r->pkt[0] |= (uint8_t)((out[0] >> 1) & 0x07);
    r->pkt[1] |= (uint8_t)((out[0] & 1) << 7);
    memcpy(r->pkt + hl, out + NW_EC_LEN_PREFIX, body);
    e->st.ec_pkts_recovered++;
    nw_rx_recovered(e, p, r->pkt, (uint32_t)hl + body, now);
}

/* Completes block b if all its data arrived, or decodes the missing data
 * once k of its k + m shards are in. */
static void rx_try_block(nw_engine_t *e, nw_pdc_t *p, nw_ec_rx_t *r, nw_ec_block_t *b,
                         uint64_t now)
{
    if (b->done)
        return;
    uint8_t miss[NW_EC_MAX_K];
    uint32_t nmiss = 0, k = b->k, m = b->m;
    for (uint32_t i = 0; i < k; i++)
        if (!nw_rxw_received(&p->rxw, b->base + i))
            miss[nmiss++] = (uint8_t)i;
    if (nmiss == 0) {
        rx_finish(e, p, b, 0);
        return;
    }
    if (nmiss > m || b->shard_len == 0)
        return;
    uint8_t *src[NW_EC_MAX_K], idx[NW_EC_MAX_K];
    uint32_t n = 0;
    for (uint32_t i = 0; i < k + m && n < k; i++) {
        uint32_t len;
        uint8_t *s = rx_shard(r, b->base + i, &len);
        if (!s || len > b->shard_len || (i >= k && len != b->shard_len))
            continue;
        memset(s + len, 0, b->shard_len - len);
        src[n] = s;
        idx[n++] = (uint8_t)i;
    }
    if (n < k)
        return;
    code_for(&r->code, (uint8_t)k, (uint8_t)m);
    for (uint32_t i = 0; i < k; i++)
        memcpy(r->sub + i * k, r->code.matrix + (size_t)idx[i] * k, k);
    if (gf_invert_matrix(r->sub, r->inv, (int)k) != 0)
        return; /* any k rows of a Cauchy code are independent; not reached */
    uint8_t *out[NW_EC_MAX_M];
    for (uint32_t j = 0; j < nmiss; j++) {
        memcpy(r->dec + j * k, r->inv + (size_t)miss[j] * k, k);
        out[j] = r->out + (size_t)j * r->cap;
    }
    ec_init_tables((int)k, (int)nmiss, r->dec, r->dec_tables);
    ec_encode_data((int)b->shard_len, (int)k, (int)nmiss, r->dec_tables, src, out);
    uint32_t base = b->base, shard_len = b->shard_len;
    rx_finish(e, p, b, 1);
    for (uint32_t j = 0; j < nmiss; j++)
        if (!nw_rxw_received(&p->rxw, base + miss[j]))
            rx_deliver(e, p, r, out[j], shard_len, base + miss[j], now);
}

/* The block a parity header names (found or added), or NULL if it
 * contradicts a known one. */
static nw_ec_block_t *rx_block(nw_ec_rx_t *r, const nw_parity_hdr_t *h)
{
    nw_ec_block_t *free_b = NULL;
    for (uint32_t i = 0; i < NW_EC_RX_BLOCKS; i++) {
        nw_ec_block_t *b = &r->blocks[i];
        if (b->in_use && b->base == h->base_psn)
            return (b->k == h->k && b->m == h->m) ? b : NULL;
        if (!free_b && (!b->in_use || b->done))
            free_b = b;
    }
    if (!free_b) {
        free_b = &r->blocks[r->next_block];
        r->next_block = (r->next_block + 1) % NW_EC_RX_BLOCKS;
    }
    memset(free_b, 0, sizeof(*free_b));
    free_b->in_use = 1;
    free_b->base = h->base_psn;
    free_b->k = h->k;
    free_b->m = h->m;
    return free_b;
}

static void rx_on_parity(nw_engine_t *e, nw_pdc_t *p, nw_ec_rx_t *r, const nw_wire_pkt_t *pk,
                         const uint8_t *payload, uint64_t now)
{
    const nw_parity_hdr_t *h = &pk->parity;
    if (h->k == 0 || h->k > NW_EC_MAX_K || h->m == 0 || h->m > NW_EC_MAX_M ||
        h->index >= h->m || pk->pds.psn != h->base_psn + h->k + h->index ||
        h->shard_len > r->cap || (h->shard_len && h->shard_len <= NW_EC_LEN_PREFIX)) {
        e->st.drop_malformed++; /* accepted as a PSN, useless as parity */
        return;
    }
    e->st.ec_parity_pkts_in++;
    nw_ec_block_t *b = rx_block(r, h);
    if (!b)
        return;
    if (h->shard_len) {
        if (b->shard_len && b->shard_len != h->shard_len)
            return;
        b->shard_len = h->shard_len;
        rx_store(r, pk->pds.psn, payload, h->shard_len, 0);
    }
    rx_try_block(e, p, r, b, now);
}

static void rx_on_data(nw_engine_t *e, nw_pdc_t *p, nw_ec_rx_t *r, const nw_wire_pkt_t *pk,
                       const uint8_t *raw, uint32_t raw_len, uint64_t now)
{
    uint32_t pds = (pk->pds.type == NW_PDS_RUD || pk->pds.type == NW_PDS_ROD)
                       ? NW_WIRE_PDS_REQ_LEN : NW_WIRE_PDS_REQ_CC_LEN;
    if (raw_len < pds || raw_len - pds + NW_EC_LEN_PREFIX > r->cap)
        return;
    uint32_t body = raw_len - pds, i = ring_slot(r, pk->pds.psn);
    uint8_t *dst = r->buf + (size_t)i * r->cap;
    shard_prefix(dst, pk->pds.next_hdr, pk->pds.flags, body);
    memcpy(dst + NW_EC_LEN_PREFIX, raw + pds, body);
    r->psn[i] = pk->pds.psn;
    r->len[i] = (uint16_t)(body + NW_EC_LEN_PREFIX);
    r->retx[i] = (pk->pds.flags & NW_PDS_F_RETX) != 0;
    for (uint32_t j = 0; j < NW_EC_RX_BLOCKS; j++) {
        nw_ec_block_t *b = &r->blocks[j];
        int32_t d = nw_psn_diff(pk->pds.psn, b->base);
        if (b->in_use && !b->done && d >= 0 && d < b->k) {
            rx_try_block(e, p, r, b, now);
            return;
        }
    }
}

void nw_ec_rx_on_packet(nw_engine_t *e, nw_pdc_t *p, const nw_wire_pkt_t *pk,
                        const uint8_t *raw, uint32_t raw_len, uint64_t now)
{
    if (p->mode != NW_MODE_RUD)
        return;
    int parity = pk->pds.next_hdr == NW_NH_NW_PARITY;
    if (!parity && !(pk->pds.flags & NW_PDS_F_EC))
        return;
    nw_ec_rx_t *r = rx_state(e, p);
    if (!r)
        return; /* out of memory: selective repeat repairs everything */
    if (parity)
        rx_on_parity(e, p, r, pk, raw + pk->hdr_len, now);
    else
        rx_on_data(e, p, r, pk, raw, raw_len, now);
}
