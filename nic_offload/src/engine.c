/* The engine: configuration, lifecycle, work-request posting, and the
 * sans-IO loop (packets and time in; packets, deadlines and completions out).
 * Every header is read and written through the wire codec (uet_wire.h). */
#include <stdlib.h>
#include <string.h>

#include "engine_state.h"
#include "segmenter.h"
#include "uet_wire.h"

#define NW_UUD_MAX_PKTS 64u

/* ------------------------------------------------------------------ config */

void nw_config_default(nw_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->local_port = NW_WIRE_UDP_PORT;
    c->dst_port = NW_WIRE_UDP_PORT;
    c->mtu = 1472;
    c->entropy_base = 49152;
    c->entropy_count = 64;
    c->entropy_burst = 1;
    c->window_pkts = 512;
    c->rto_init_ns = 1000000ull;
    c->rto_max_ns = 200000000ull;
    c->max_retries = 12;
    c->reorder_pkts = 8;
    c->ack_every_pkts = 4;
    c->ack_delay_ns = 20000ull;
    c->ooo_ack_every_pkts = 16;
    c->uud_timeout_ns = 5000000ull;
    c->max_peers = 64;
    c->max_mrs = 256;
    c->max_wrs = 4096;
    c->max_recvs = 4096;
    c->seed = 1;
}

const char *nw_config_check(const nw_config_t *c)
{
    if (!c)
        return "config is NULL";
    if (nw_seg_max_payload(c->mtu) == 0 || c->mtu > NW_WIRE_MAX_PKT)
        return "mtu: must leave room for the 56 header bytes and be at most 16447";
    if (c->window_pkts < 64 || c->window_pkts > NW_MAX_WINDOW ||
        (c->window_pkts & (c->window_pkts - 1)))
        return "window_pkts: must be a power of two between 64 and 4096";
    if (c->entropy_count == 0 || (uint32_t)c->entropy_base + c->entropy_count > 65536)
        return "entropy_count: must be >= 1 and entropy_base + entropy_count <= 65536";
    if (c->rto_init_ns == 0 || c->rto_max_ns < c->rto_init_ns)
        return "rto_init_ns/rto_max_ns: need 0 < rto_init_ns <= rto_max_ns";
    if (c->max_peers == 0 || c->max_peers > 4095)
        return "max_peers: must be between 1 and 4095";
    if (c->max_mrs == 0 || c->max_mrs > 65535)
        return "max_mrs: must be between 1 and 65535";
    if (c->max_wrs == 0 || c->max_wrs > (1u << 24) || c->max_recvs == 0 ||
        c->max_recvs > (1u << 24))
        return "max_wrs/max_recvs: must be between 1 and 2^24";
    if (c->ack_every_pkts == 0 || c->reorder_pkts == 0)
        return "ack_every_pkts/reorder_pkts: must be >= 1";
    if (c->ooo_ack_every_pkts == 0 || c->ooo_ack_every_pkts > 32)
        return "ooo_ack_every_pkts: must be between 1 and 32";
    if (c->uud_timeout_ns == 0)
        return "uud_timeout_ns: must be > 0";
    return NULL;
}

nw_engine_t *nw_engine_new(const nw_config_t *cfg)
{
    if (nw_config_check(cfg))
        return NULL;
    nw_engine_t *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->cfg = *cfg;
    e->max_payload = nw_seg_max_payload(cfg->mtu);
    e->wmask = cfg->window_pkts - 1;
    e->rng = cfg->seed;
    e->wr_credits = cfg->max_wrs;
    e->recv_credits = cfg->max_recvs;
    if (nw_pdc_table_init(e) != NW_OK || nw_wr_init(e) != NW_OK ||
        nw_mr_table_init(&e->mrs, cfg->max_mrs) != NW_OK ||
        nw_rq_init(&e->rq, cfg->max_recvs) != NW_OK ||
        nw_cq_init(&e->cq, cfg->max_wrs + cfg->max_recvs) != NW_OK) {
        nw_engine_free(e);
        return NULL;
    }
    return e;
}

void nw_engine_free(nw_engine_t *e)
{
    if (!e)
        return;
    nw_pdc_table_destroy(e);
    nw_wr_destroy(e);
    nw_mr_table_destroy(&e->mrs);
    nw_rq_destroy(&e->rq);
    nw_cq_destroy(&e->cq);
    free(e);
}

uint32_t nw_max_payload(const nw_engine_t *e)
{
    return e->max_payload;
}

/* ---------------------------------------------------- memory and peers */

int32_t nw_mr_register(nw_engine_t *e, void *base, uint64_t len, uint32_t access,
                       uint32_t *rkey_out)
{
    if (!rkey_out)
        return NW_EINVAL;
    return nw_mr_table_add(&e->mrs, base, len, access, rkey_out);
}

int32_t nw_mr_deregister(nw_engine_t *e, uint32_t rkey)
{
    return nw_mr_table_remove(&e->mrs, rkey);
}

int32_t nw_peer_add(nw_engine_t *e, uint32_t ip, uint16_t port, uint8_t mode,
                    uint32_t *peer_out)
{
    if (mode > NW_MODE_UUD || !peer_out)
        return NW_EINVAL;
    if (port == 0)
        port = e->cfg.dst_port;
    nw_pdc_t *p = nw_pdc_find(e, ip, mode, port);
    if (!p)
        p = nw_pdc_create(e, ip, port, mode);
    if (!p)
        return NW_EAGAIN;
    *peer_out = nw_pdc_index(e, p);
    return NW_OK;
}

static nw_pdc_t *peer_get(nw_engine_t *e, uint32_t peer)
{
    if (peer >= e->cfg.max_peers || !e->pdcs[peer].in_use)
        return NULL;
    return &e->pdcs[peer];
}

int32_t nw_peer_info(const nw_engine_t *e, uint32_t peer, uint32_t *ip, uint16_t *port,
                     uint8_t *mode)
{
    const nw_pdc_t *p = peer_get((nw_engine_t *)e, peer);
    if (!p)
        return NW_ENOPEER;
    if (ip)
        *ip = p->ip;
    if (port)
        *port = p->port;
    if (mode)
        *mode = p->mode;
    return NW_OK;
}

/* ---------------------------------------------------------- posting */

static int32_t post(nw_engine_t *e, uint32_t peer, uint8_t kind, uint64_t wr_id,
                    const void *src, void *dst, uint64_t len, uint32_t rkey, uint64_t roffset)
{
    nw_pdc_t *p = peer_get(e, peer);
    if (!p)
        return NW_ENOPEER;
    if (p->failed)
        return NW_ETIMEDOUT;
    if (len > UINT32_MAX || (len > 0 && !src && !dst))
        return NW_EINVAL;
    if (p->mode == NW_MODE_UUD &&
        (kind == NW_WR_READ || nw_seg_count(len, e->max_payload) > NW_UUD_MAX_PKTS))
        return NW_EINVAL;
    if (e->wr_credits == 0)
        return NW_EAGAIN;
    nw_wr_t *w = nw_wr_alloc(e);
    if (!w)
        return NW_EAGAIN;
    e->wr_credits--;
    w->kind = kind;
    w->wr_id = wr_id;
    w->src = src;
    w->dst = dst;
    w->len = len;
    w->rkey = rkey;
    w->roffset = roffset;
    w->pkts_total = nw_seg_count(kind == NW_WR_READ ? 0 : len, e->max_payload);
    w->seq = p->post_seq++;
    nw_wr_enqueue(e, p, w);
    return NW_OK;
}

int32_t nw_post_write(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *local,
                      uint64_t len, uint32_t rkey, uint64_t roffset)
{
    if (len > 0 && !local)
        return NW_EINVAL;
    return post(e, peer, NW_WR_WRITE, wr_id, local, NULL, len, rkey, roffset);
}

int32_t nw_post_read(nw_engine_t *e, uint32_t peer, uint64_t wr_id, void *local, uint64_t len,
                     uint32_t rkey, uint64_t roffset)
{
    if (len > 0 && !local)
        return NW_EINVAL;
    return post(e, peer, NW_WR_READ, wr_id, NULL, local, len, rkey, roffset);
}

int32_t nw_post_send(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *buf,
                     uint64_t len)
{
    if (len > 0 && !buf)
        return NW_EINVAL;
    return post(e, peer, NW_WR_SEND, wr_id, buf, NULL, len, 0, 0);
}

int32_t nw_post_recv(nw_engine_t *e, uint64_t wr_id, void *buf, uint64_t cap)
{
    if (cap > 0 && !buf)
        return NW_EINVAL;
    if (e->recv_credits == 0)
        return NW_EAGAIN;
    int32_t r = nw_rq_push(&e->rq, wr_id, buf, cap);
    if (r == NW_OK)
        e->recv_credits--;
    return r;
}

/* ---------------------------------------------------------- input */

static void count_parse_error(nw_engine_t *e, int32_t r)
{
    switch (r) {
    case NW_WIRE_ETRUNC: e->st.drop_truncated++; break;
    case NW_WIRE_EOVERSIZE: e->st.drop_oversized++; break;
    case NW_WIRE_EVERSION:
    case NW_WIRE_ETYPE: e->st.drop_bad_version++; break;
    default: e->st.drop_malformed++; break;
    }
}

static void queue_nack(nw_engine_t *e, nw_pdc_t *p, uint8_t code, uint32_t psn, uint32_t payload)
{
    p->nack_pending = 1;
    p->nack_code = code;
    p->nack_psn = psn;
    p->nack_payload = payload;
    nw_pdc_activate(e, p);
}

/* PDC of an ACK/NACK/CTRL (always addressed by our PDC id), or NULL (counted). */
static nw_pdc_t *pdc_for_reply(nw_engine_t *e, const nw_pds_hdr_t *h, uint32_t src_ip)
{
    nw_pdc_t *p = nw_pdc_by_id(e, h->dpdcid);
    if (!p || p->mode == NW_MODE_UUD) {
        e->st.drop_unknown_pdc++;
        return NULL;
    }
    if (p->ip != src_ip || (p->remote_known && p->remote_id != h->spdcid)) {
        e->st.drop_spoofed_pdc++;
        return NULL;
    }
    if (!p->remote_known) {
        p->remote_id = h->spdcid;
        p->remote_known = 1;
    }
    return p;
}

/* PDC of a RUD/ROD request, creating a passive one for a new SYN. */
static nw_pdc_t *pdc_for_request(nw_engine_t *e, const nw_pds_hdr_t *h, uint8_t mode,
                                 uint32_t src_ip)
{
    nw_pdc_t *p;
    if (h->flags & NW_PDS_F_SYN) {
        p = nw_pdc_find_syn(e, src_ip, mode, h->spdcid);
        if (!p) {
            p = nw_pdc_create(e, src_ip, e->cfg.dst_port, mode);
            if (!p) {
                e->st.drop_no_peer_slot++;
                return NULL;
            }
        }
        if (!p->remote_known) {
            p->remote_id = h->spdcid;
            p->remote_known = 1;
        }
        if (!p->rx_started) {
            nw_rxw_reset(&p->rxw, h->psn - h->start_psn_off);
            p->rx_started = 1;
        }
        return p;
    }
    p = nw_pdc_by_id(e, h->dpdcid);
    if (!p) {
        e->st.drop_unknown_pdc++;
        return NULL;
    }
    if (p->ip != src_ip || p->mode != mode || !p->rx_started ||
        (p->remote_known && p->remote_id != h->spdcid)) {
        e->st.drop_spoofed_pdc++;
        return NULL;
    }
    return p;
}

#define RX_ACCEPT 0
#define RX_RNR 1
#define RX_BAD 2

static uint8_t rc_of(int32_t err)
{
    return err == NW_ENOKEY || err == NW_EACCES ? NW_SES_RC_BAD_MKEY : NW_SES_RC_BAD_ADDR;
}

static int rx_write(nw_engine_t *e, nw_pdc_t *p, const nw_ses_std_t *s, uint32_t msg_off,
                    const uint8_t *payload, uint32_t len, int reliable)
{
    /* The whole message must fit, so a write is refused in all its packets or
     * in none (msg_off + len <= request_length was checked by the caller). */
    uint8_t *dst = NULL;
    int32_t r = NW_ENOKEY;
    if (s->mem_key <= UINT32_MAX)
        r = nw_mr_table_resolve(&e->mrs, (uint32_t)s->mem_key, s->buffer_offset,
                                s->request_length, NW_ACCESS_REMOTE_WRITE, &dst);
    if (r != NW_OK) {
        e->st.remote_access_errors++;
        if (reliable)
            nw_pdc_queue_rsp(e, p, s->message_id, rc_of(r));
        return RX_ACCEPT;
    }
    if (len) {
        memcpy(dst + msg_off, payload, len);
        e->st.placed_bytes += len;
    }
    return RX_ACCEPT;
}

static int rx_read_request(nw_engine_t *e, nw_pdc_t *p, const nw_ses_std_t *s)
{
    if (e->read_resp_in_use >= e->cfg.max_wrs)
        return RX_RNR;
    uint8_t *src = NULL;
    int32_t r = NW_ENOKEY;
    if (s->mem_key <= UINT32_MAX)
        r = nw_mr_table_resolve(&e->mrs, (uint32_t)s->mem_key, s->buffer_offset,
                                s->request_length, NW_ACCESS_REMOTE_READ, &src);
    nw_wr_t *w = nw_wr_alloc(e);
    if (!w)
        return RX_RNR;
    e->read_resp_in_use++;
    w->kind = NW_WR_READ_RESP;
    w->read_req_msg_id = s->message_id;
    if (r == NW_OK) {
        w->src = src;
        w->len = s->request_length;
        w->rkey = (uint32_t)s->mem_key;
        w->rsp_code = NW_SES_RC_OK;
        nw_mr_table_get(&e->mrs, w->rkey)->refs++;
    } else {
        e->st.remote_access_errors++;
        w->rsp_code = rc_of(r);
        w->rkey = 0;
    }
    w->pkts_total = nw_seg_count(w->len, e->max_payload);
    nw_wr_enqueue(e, p, w);
    return RX_ACCEPT;
}

static int rx_read_response(nw_engine_t *e, nw_pdc_t *p, const nw_ses_rsp_t *rsp,
                            const uint8_t *payload, uint32_t len)
{
    nw_wr_t *w = nw_wr_by_msg(e, p, rsp->read_req_message_id);
    if (!w || w->kind != NW_WR_READ || w->read_answered)
        return RX_BAD;
    if (rsp->return_code != NW_SES_RC_OK) {
        w->status = NW_EREMOTE_ACCESS;
        w->read_answered = 1;
        nw_wr_read_progress(e, w);
        return RX_ACCEPT;
    }
    if ((uint64_t)rsp->message_offset + len > w->len)
        return RX_BAD;
    if (len) {
        memcpy(w->dst + rsp->message_offset, payload, len);
        e->st.placed_bytes += len;
    }
    w->read_done += len;
    if (w->read_done >= w->len) {
        w->read_answered = 1;
        nw_wr_read_progress(e, w);
    }
    return RX_ACCEPT;
}

static int rx_semantic(nw_engine_t *e, nw_pdc_t *p, const nw_wire_pkt_t *pk,
                       const uint8_t *payload, uint32_t len, uint64_t now)
{
    if (pk->pds.next_hdr == NW_NH_RSP_DATA)
        return rx_read_response(e, p, &pk->rsp, payload, len);
    if (pk->pds.next_hdr != NW_NH_REQ_STD)
        return RX_ACCEPT; /* nothing to place (e.g. parity, which this engine ignores) */
    const nw_ses_std_t *s = &pk->ses;
    uint32_t msg_off = (s->flags & NW_SES_F_SOM) ? 0 : s->message_offset;
    if ((uint64_t)msg_off + len > s->request_length && s->opcode != NW_SES_OP_READ)
        return RX_BAD;
    int reliable = p->mode != NW_MODE_UUD;
    switch (s->opcode) {
    case NW_SES_OP_WRITE:
        return rx_write(e, p, s, msg_off, payload, len, reliable);
    case NW_SES_OP_READ:
        return reliable ? rx_read_request(e, p, s) : RX_BAD;
    case NW_SES_OP_SEND: {
        int32_t rnr, bad;
        nw_rxm_on_send_pkt(e, p, payload, len, s->message_id, msg_off, s->request_length, now,
                           &rnr, &bad);
        return bad ? RX_BAD : rnr ? RX_RNR : RX_ACCEPT;
    }
    default:
        if (reliable)
            nw_pdc_queue_rsp(e, p, s->message_id, NW_SES_RC_UNSUPPORTED_OP);
        return reliable ? RX_ACCEPT : RX_BAD;
    }
}

static int32_t input_request(nw_engine_t *e, const nw_wire_pkt_t *pk, const uint8_t *payload,
                             uint32_t len, uint32_t src_ip, uint64_t now)
{
    const nw_pds_hdr_t *h = &pk->pds;
    uint8_t mode = (h->type == NW_PDS_RUD || h->type == NW_PDS_RUD_CC) ? NW_MODE_RUD
                                                                        : NW_MODE_ROD;
    nw_pdc_t *p = pdc_for_request(e, h, mode, src_ip);
    if (!p)
        return NW_EINVAL;
    nw_rx_window_t *w = &p->rxw;
    int32_t cls = nw_rxw_classify(w, h->psn);
    if (cls == NW_PSN_OUT_OF_WINDOW) {
        e->st.drop_out_of_window++;
        return NW_ERANGE;
    }
    int wants_rsp = pk->pds.next_hdr == NW_NH_REQ_STD && (pk->ses.flags & NW_SES_F_EOM) &&
                    (pk->ses.opcode == NW_SES_OP_WRITE || pk->ses.opcode == NW_SES_OP_SEND);
    if (cls == NW_PSN_DUP) {
        if (wants_rsp)
            nw_pdc_respond(e, p, pk->ses.message_id); /* the first response may be lost */
        e->st.dup_pkts++;
        p->ack_trigger = h->psn;
        p->ack_now = 1;
        nw_pdc_activate(e, p);
        return NW_OK;
    }
    if (pk->trimmed) {
        queue_nack(e, p, NW_NACK_TRIMMED, h->psn, w->cum + 1);
        return NW_OK;
    }
    int in_order = h->psn == w->cum + 1;
    if (mode == NW_MODE_ROD && !in_order) {
        e->st.drop_unordered++;
        if (!p->rod_nack_valid || p->rod_nacked != w->cum + 1) {
            p->rod_nacked = w->cum + 1;
            p->rod_nack_valid = 1;
            queue_nack(e, p, NW_NACK_ROD_OOO, h->psn, w->cum + 1);
        }
        return NW_ERANGE;
    }
    int r = rx_semantic(e, p, pk, payload, len, now);
    if (r == RX_RNR) {
        e->st.drop_rnr++;
        queue_nack(e, p, NW_NACK_NO_SES_MSG_AVAIL, h->psn, w->cum + 1);
        return NW_EAGAIN;
    }
    if (r == RX_BAD) {
        e->st.drop_malformed++;
        return NW_EINVAL;
    }
    nw_rxw_mark(w, h->psn);
    if (wants_rsp)
        nw_pdc_respond(e, p, pk->ses.message_id);
    p->ack_trigger = h->psn;
    p->ack_pending++;
    int contiguous = h->psn == p->last_rx_psn + 1;
    p->last_rx_psn = h->psn;
    if (!in_order || w->count > 0) {
        /* Out of order: ACK at least every ooo_ack_every_pkts packets (each ACK's
         * SACK bitmap covers the 64 PSNs up to its trigger), and at once after
         * a jump, so that the sender sees every arrival around a hole. */
        if (contiguous && !(h->flags & NW_PDS_F_AR) &&
            p->ack_pending < e->cfg.ooo_ack_every_pkts) {
            if (p->ack_deadline == 0)
                p->ack_deadline = now + e->cfg.ack_delay_ns;
        } else {
            if (p->ack_ring_count < e->cfg.window_pkts) {
                p->ack_ring[(p->ack_ring_head + p->ack_ring_count) & e->wmask] = h->psn;
                p->ack_ring_count++;
            } else {
                p->ack_now = 1;
            }
            p->ack_pending = 0;
            nw_pdc_activate(e, p);
        }
    } else if ((h->flags & NW_PDS_F_AR) || p->ack_pending >= e->cfg.ack_every_pkts) {
        p->ack_now = 1;
        nw_pdc_activate(e, p);
    } else if (p->ack_deadline == 0) {
        p->ack_deadline = now + e->cfg.ack_delay_ns;
    }
    return NW_OK;
}

static int32_t input_uud(nw_engine_t *e, const nw_wire_pkt_t *pk, const uint8_t *payload,
                         uint32_t len, uint32_t src_ip, uint64_t now)
{
    if (pk->pds.next_hdr != NW_NH_REQ_STD || pk->trimmed) {
        e->st.drop_malformed++;
        return NW_EINVAL;
    }
    nw_pdc_t *p = nw_pdc_find(e, src_ip, NW_MODE_UUD, -1);
    if (!p)
        p = nw_pdc_create(e, src_ip, e->cfg.dst_port, NW_MODE_UUD);
    if (!p) {
        e->st.drop_no_peer_slot++;
        return NW_EAGAIN;
    }
    int r = rx_semantic(e, p, pk, payload, len, now);
    if (r == RX_RNR) {
        e->st.drop_rnr++;
        return NW_EAGAIN;
    }
    if (r == RX_BAD) {
        e->st.drop_malformed++;
        return NW_EINVAL;
    }
    return NW_OK;
}

static int32_t input_ack(nw_engine_t *e, const nw_wire_pkt_t *pk, uint32_t src_ip, uint64_t now)
{
    const nw_pds_hdr_t *h = &pk->pds;
    nw_pdc_t *p = pdc_for_reply(e, h, src_ip);
    if (!p)
        return NW_EINVAL;
    e->st.acks_in++;
    p->tx_synced = 1;
    nw_wr_t *rw = NULL;
    if (pk->pds.next_hdr == NW_NH_RSP) {
        rw = nw_wr_by_msg(e, p, pk->rsp.message_id);
        if (rw && (rw->kind == NW_WR_WRITE || rw->kind == NW_WR_SEND)) {
            uint8_t rc = pk->rsp.return_code;
            if (rc != NW_SES_RC_OK && rc != NW_SES_RC_NULL)
                rw->status = rc == NW_SES_RC_TOO_LONG ? NW_ETOOLONG : NW_EREMOTE_ACCESS;
            rw->rsp_seen = 1;
        } else {
            rw = NULL;
        }
    }
    uint32_t base = h->cack_psn + 1;
    uint64_t bits = 0;
    if (h->type != NW_PDS_ACK) {
        base = h->cack_psn + h->sack_psn_off;
        bits = h->sack_bitmap;
    }
    int32_t r = nw_tx_on_ack(e, p, h->cack_psn, h->cack_psn + (uint32_t)(int32_t)h->ack_psn_off,
                             base, bits, now);
    if (rw && rw->in_use && rw->rsp_seen && rw->msg_id == pk->rsp.message_id)
        nw_wr_write_progress(e, rw); /* all packets were acknowledged before */
    if (r != NW_OK) {
        e->st.drop_out_of_window++;
        return r;
    }
    nw_pdc_activate(e, p);
    return NW_OK;
}

static int32_t input_nack(nw_engine_t *e, const nw_wire_pkt_t *pk, uint32_t src_ip)
{
    const nw_pds_hdr_t *h = &pk->pds;
    nw_pdc_t *p = pdc_for_reply(e, h, src_ip);
    if (!p)
        return NW_EINVAL;
    e->st.nacks_in++;
    p->tx_synced = 1;
    switch (h->nack_code) {
    case NW_NACK_TRIMMED:
    case NW_NACK_TRIMMED_LASTHOP:
    case NW_NACK_TRIMMED_ACK:
        nw_tx_mark_lost(e, p, h->nack_psn);
        break;
    case NW_NACK_ROD_OOO:
        nw_tx_go_back_n(e, p, h->nack_payload);
        break;
    case NW_NACK_NO_SES_MSG_AVAIL:
    case NW_NACK_NO_RESOURCE:
    case NW_NACK_NO_PKT_BUFFER:
        p->retries = 0; /* the peer is alive; the RTO will retry */
        break;
    default:
        break;
    }
    nw_pdc_activate(e, p);
    return NW_OK;
}

static int32_t input_ctrl(nw_engine_t *e, const nw_wire_pkt_t *pk, uint32_t src_ip)
{
    nw_pdc_t *p = pdc_for_reply(e, &pk->pds, src_ip);
    if (!p)
        return NW_EINVAL;
    if (pk->pds.ctl_type == NW_CTRL_REQ_ACK && p->rx_started) {
        /* Payload [0, message id]: the sender misses that message's response. */
        nw_pdc_respond(e, p, (uint16_t)(pk->pds.ctrl_payload & 0xffff));
        p->ack_trigger = p->rxw.cum;
        p->ack_now = 1;
        nw_pdc_activate(e, p);
    }
    return NW_OK;
}

int32_t nw_input(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                 uint16_t src_port, uint64_t now_ns)
{
    e->st.pkts_in++;
    e->st.bytes_in += len;
    if (len > e->cfg.mtu) {
        e->st.drop_oversized++;
        return NW_ETOOBIG;
    }
    nw_wire_pkt_t pk;
    int32_t hl = nw_wire_parse(pkt, len, &pk);
    if (hl < 0) {
        count_parse_error(e, hl);
        return NW_EINVAL;
    }
    const uint8_t *payload = pkt + hl;
    uint32_t plen = len - (uint32_t)hl;
    switch (pk.pds.type) {
    case NW_PDS_RUD:
    case NW_PDS_ROD:
    case NW_PDS_RUD_CC:
    case NW_PDS_ROD_CC:
        return input_request(e, &pk, payload, plen, src_ip, now_ns);
    case NW_PDS_UUD:
        return input_uud(e, &pk, payload, plen, src_ip, now_ns);
    case NW_PDS_ACK:
    case NW_PDS_ACK_CC:
    case NW_PDS_ACK_CCX:
        return input_ack(e, &pk, src_ip, now_ns);
    case NW_PDS_NACK:
    case NW_PDS_NACK_CCX:
        return input_nack(e, &pk, src_ip);
    case NW_PDS_CTRL:
        return input_ctrl(e, &pk, src_ip);
    default:
        e->st.drop_bad_version++; /* RUDI: a type this engine does not speak */
        return NW_EINVAL;
    }
}

/* ---------------------------------------------------------- output */

static void fill_dest(nw_pdc_t *p, nw_dest_t *dst)
{
    dst->ip = p->ip;
    dst->port = p->port;
    dst->src_port = nw_entropy_next(&p->entropy);
}

static int32_t build_ack(nw_engine_t *e, nw_pdc_t *p, uint32_t trig, uint8_t *buf,
                         uint32_t cap)
{
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    nw_pds_hdr_t *h = &pk.pds;
    uint32_t cum = p->rxw.cum;
    int32_t toff = nw_psn_diff(trig, cum);
    if (toff < -32768 || toff > 32767)
        toff = 0;
    uint32_t base = cum + 1;
    if (nw_psn_diff(trig, cum) > 64)
        base = trig - 63;
    h->type = NW_PDS_ACK_CC;
    h->cack_psn = cum;
    h->ack_psn_off = (int16_t)toff;
    h->spdcid = p->local_id;
    h->dpdcid = p->remote_id;
    h->cc_type = NW_CC_NSCC;
    h->mpr = 255;
    h->sack_psn_off = (uint16_t)(base - cum);
    h->sack_bitmap = nw_rxw_sack(&p->rxw, base);
    h->ooo_count = (uint16_t)(p->rxw.count > 0xffff ? 0xffff : p->rxw.count);
    if (p->rsp_count > 0) {
        /* Responses go out in message order, one per ACK; a refusal goes to the
         * back of the line until it has ridden NW_RSP_REPEAT ACKs, so that
         * losing one ACK does not lose it. */
        uint16_t msg = p->rsp_msg[0];
        uint8_t rc = p->rsp_code[0], left = (uint8_t)(p->rsp_left[0] - 1);
        h->next_hdr = NW_NH_RSP;
        pk.rsp.opcode = NW_SES_RSP_RESPONSE;
        pk.rsp.return_code = rc;
        pk.rsp.message_id = msg;
        uint32_t n = --p->rsp_count;
        memmove(p->rsp_msg, p->rsp_msg + 1, n * sizeof(p->rsp_msg[0]));
        memmove(p->rsp_code, p->rsp_code + 1, n * sizeof(p->rsp_code[0]));
        memmove(p->rsp_left, p->rsp_left + 1, n * sizeof(p->rsp_left[0]));
        if (left > 0) {
            p->rsp_msg[n] = msg;
            p->rsp_code[n] = rc;
            p->rsp_left[n] = left;
            p->rsp_count++;
        }
    }
    if (p->ack_ring_count == 0) {
        p->ack_now = p->rsp_count > 0; /* one ACK per pending response */
        p->ack_pending = 0;
        p->ack_deadline = 0;
    }
    e->st.acks_out++;
    return nw_wire_build(&pk, buf, cap);
}

static int32_t build_probe(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap)
{
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    pk.pds.type = NW_PDS_CTRL;
    pk.pds.ctl_type = NW_CTRL_REQ_ACK;
    pk.pds.flags = NW_PDS_F_AR;
    pk.pds.psn = p->nxt;
    pk.pds.spdcid = p->local_id;
    pk.pds.dpdcid = p->remote_id;
    pk.pds.ctrl_payload = p->probe_msg[--p->probe_count];
    return nw_wire_build(&pk, buf, cap);
}

static int32_t build_nack(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap)
{
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    pk.pds.type = NW_PDS_NACK;
    pk.pds.nack_code = p->nack_code;
    pk.pds.nack_psn = p->nack_psn;
    pk.pds.nack_payload = p->nack_payload;
    pk.pds.spdcid = p->local_id;
    pk.pds.dpdcid = p->remote_id;
    p->nack_pending = 0;
    e->st.nacks_out++;
    return nw_wire_build(&pk, buf, cap);
}

/* Writes one data packet of work request w: payload bytes [off, off+len). */
static int32_t build_data(nw_engine_t *e, nw_pdc_t *p, nw_wr_t *w, uint32_t psn, uint32_t off,
                          uint32_t len, int retx, uint8_t *buf, uint32_t cap)
{
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    nw_pds_hdr_t *h = &pk.pds;
    int eom = (uint64_t)off + len >= (w->kind == NW_WR_READ ? 0 : w->len);
    if (p->mode == NW_MODE_UUD) {
        h->type = NW_PDS_UUD;
    } else {
        h->type = p->mode == NW_MODE_ROD ? NW_PDS_ROD : NW_PDS_RUD;
        h->psn = psn;
        h->spdcid = p->local_id;
        int32_t clr = nw_psn_diff(p->una, psn);
        h->clear_psn_off = (int16_t)(clr < -32768 ? -32768 : clr);
        if (!p->tx_synced) {
            h->flags |= NW_PDS_F_SYN;
            h->start_psn_off = (uint16_t)(psn - p->start_psn);
        } else {
            h->dpdcid = p->remote_id;
        }
        if (retx)
            h->flags |= NW_PDS_F_RETX | NW_PDS_F_AR;
        if (eom)
            h->flags |= NW_PDS_F_AR;
    }
    if (w->kind == NW_WR_READ_RESP) {
        h->next_hdr = NW_NH_RSP_DATA;
        pk.rsp.opcode = NW_SES_RSP_WITH_DATA;
        pk.rsp.return_code = w->rsp_code;
        pk.rsp.message_id = w->msg_id;
        pk.rsp.read_req_message_id = w->read_req_msg_id;
        pk.rsp.payload_length = (uint16_t)len;
        pk.rsp.modified_length = (uint32_t)w->len;
        pk.rsp.message_offset = off;
    } else {
        h->next_hdr = NW_NH_REQ_STD;
        nw_ses_std_t *s = &pk.ses;
        s->opcode = w->kind == NW_WR_WRITE  ? NW_SES_OP_WRITE
                    : w->kind == NW_WR_READ ? NW_SES_OP_READ
                                            : NW_SES_OP_SEND;
        s->flags = (off == 0 ? NW_SES_F_SOM : 0) | (eom ? NW_SES_F_EOM : 0);
        s->message_id = w->msg_id;
        s->buffer_offset = w->kind == NW_WR_SEND ? 0 : w->roffset;
        s->mem_key = w->kind == NW_WR_SEND ? 0 : w->rkey;
        s->request_length = (uint32_t)w->len;
        if (off != 0) {
            s->payload_length = (uint16_t)len;
            s->message_offset = off;
        }
    }
    int32_t hl = nw_wire_build(&pk, buf, cap);
    if (hl < 0)
        return hl;
    if ((uint32_t)hl + len > cap)
        return NW_ETOOBIG;
    if (len)
        memcpy(buf + hl, w->src + off, len);
    return hl + (int32_t)len;
}

static int32_t output_new(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap,
                          uint64_t now)
{
    nw_wr_t *w = &e->wrs[p->sq_head];
    uint32_t widx = p->sq_head;
    if (!w->started) {
        uint32_t *slot = &p->wr_by_msg[p->next_msg_id & e->wmask];
        if (*slot != NW_NIL && e->wrs[*slot].in_use && e->wrs[*slot].started &&
            e->wrs[*slot].pdc == nw_pdc_index(e, p))
            return 0; /* message id still owned by an unfinished message */
        w->msg_id = p->next_msg_id++;
        w->started = 1;
        *slot = widx;
    }
    uint64_t payload_len = w->kind == NW_WR_READ ? 0 : w->len;
    uint32_t off = w->seg_off;
    uint32_t len = nw_seg_len(payload_len, off, e->max_payload);
    uint32_t psn = p->nxt;
    int32_t n = build_data(e, p, w, psn, off, len, 0, buf, cap);
    if (n < 0)
        return n;
    w->seg_off += len;
    w->pkts_sent++;
    if (w->pkts_sent == w->pkts_total) {
        p->sq_head = w->next;
        if (p->sq_head == NW_NIL)
            p->sq_tail = NW_NIL;
    }
    e->st.data_pkts_out++;
    if (p->mode == NW_MODE_UUD) {
        if (w->pkts_sent == w->pkts_total)
            nw_wr_complete(e, w, NW_OK);
        return n;
    }
    nw_tx_slot_t *s = nw_tx_slot(e, p, psn);
    memset(s, 0, sizeof(*s));
    s->psn = psn;
    s->wr = widx;
    s->msg_off = off;
    s->len = len;
    s->prev = s->next = NW_NIL;
    p->nxt++;
    nw_tx_sent(e, p, s, now);
    return n;
}

static int32_t pdc_output(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap,
                          nw_dest_t *dst, uint64_t now)
{
    if (p->nack_pending) {
        fill_dest(p, dst);
        return build_nack(e, p, buf, cap);
    }
    if (p->ack_ring_count) {
        uint32_t trig = p->ack_ring[p->ack_ring_head];
        p->ack_ring_head = (p->ack_ring_head + 1) & e->wmask;
        p->ack_ring_count--;
        fill_dest(p, dst);
        return build_ack(e, p, trig, buf, cap);
    }
    if (p->ack_now) {
        fill_dest(p, dst);
        return build_ack(e, p, p->ack_trigger, buf, cap);
    }
    if (p->failed)
        return 0;
    if (p->probe_count) {
        fill_dest(p, dst);
        return build_probe(e, p, buf, cap);
    }
    nw_tx_slot_t *s = nw_tx_next_lost(e, p);
    if (s) {
        nw_wr_t *w = &e->wrs[s->wr];
        int32_t n = build_data(e, p, w, s->psn, s->msg_off, s->len, 1, buf, cap);
        if (n < 0)
            return n;
        s->retx++;
        if (s->fast)
            e->st.fast_retransmits++;
        s->fast = 0;
        nw_tx_sent(e, p, s, now);
        e->st.retransmits++;
        fill_dest(p, dst);
        return n;
    }
    if (p->sq_head != NW_NIL && nw_pdc_has_output(e, p)) {
        int32_t n = output_new(e, p, buf, cap, now);
        if (n > 0)
            fill_dest(p, dst);
        return n;
    }
    return 0;
}

int32_t nw_output(nw_engine_t *e, uint8_t *buf, uint32_t cap, nw_dest_t *dst, uint64_t now_ns)
{
    if (cap < e->cfg.mtu)
        return NW_ETOOBIG;
    uint32_t tries = e->active_count;
    while (tries-- > 0 && e->active_count > 0) {
        uint32_t idx = e->active[e->active_head];
        e->active_head = (e->active_head + 1) % e->cfg.max_peers;
        e->active_count--;
        nw_pdc_t *p = &e->pdcs[idx];
        p->in_active = 0;
        int32_t n = pdc_output(e, p, buf, cap, dst, now_ns);
        if (n > 0)
            nw_pdc_activate(e, p);
        if (n != 0) {
            if (n > 0) {
                e->st.pkts_out++;
                e->st.bytes_out += (uint64_t)n;
            }
            return n;
        }
    }
    return 0;
}

int32_t nw_has_output(const nw_engine_t *e)
{
    return e->active_count > 0;
}

/* ---------------------------------------------------------- time */

static void min_deadline(uint64_t *d, uint64_t t)
{
    if (t && t < *d)
        *d = t;
}

uint64_t nw_next_deadline(const nw_engine_t *e)
{
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        const nw_pdc_t *p = &e->pdcs[i];
        if (!p->in_use)
            continue;
        min_deadline(&d, p->rto_deadline);
        min_deadline(&d, p->ack_deadline);
        min_deadline(&d, p->uud_deadline);
        min_deadline(&d, p->rack_deadline);
    }
    return d;
}

void nw_on_time(nw_engine_t *e, uint64_t now_ns)
{
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        nw_pdc_t *p = &e->pdcs[i];
        if (!p->in_use)
            continue;
        if (p->ack_deadline && p->ack_deadline <= now_ns) {
            p->ack_deadline = 0;
            p->ack_now = 1;
        }
        if (p->rack_deadline && p->rack_deadline <= now_ns)
            nw_tx_detect_losses(e, p, now_ns);
        if (p->rto_deadline && p->rto_deadline <= now_ns)
            nw_tx_on_rto(e, p, now_ns);
        if (p->uud_deadline && p->uud_deadline <= now_ns)
            nw_rxm_on_time(e, p, now_ns);
        nw_pdc_activate(e, p);
    }
}

/* ---------------------------------------------------------- completions */

int32_t nw_poll_cq(nw_engine_t *e, nw_completion_t *out, uint32_t max)
{
    uint32_t n = nw_cq_pop(&e->cq, out, max);
    for (uint32_t i = 0; i < n; i++) {
        if (out[i].opcode == NW_OP_RECV)
            e->recv_credits++;
        else
            e->wr_credits++;
    }
    return (int32_t)n;
}

void nw_stats_get(const nw_engine_t *e, nw_stats_t *out)
{
    *out = e->st;
}

const char *nw_strerror(int32_t err)
{
    switch (err) {
    case NW_OK: return "success";
    case NW_EINVAL: return "invalid argument";
    case NW_ENOMEM: return "out of memory";
    case NW_EAGAIN: return "queue full: poll completions and retry";
    case NW_ENOPEER: return "unknown peer";
    case NW_ENOKEY: return "unknown memory key";
    case NW_ERANGE: return "offset or length outside the memory region";
    case NW_EACCES: return "memory region lacks the requested access";
    case NW_ETOOLONG: return "message longer than the receive buffer";
    case NW_ETIMEDOUT: return "peer unreachable: retransmission limit reached";
    case NW_ELOST: return "unreliable message partly lost";
    case NW_EREMOTE_ACCESS: return "remote refused the memory access (bad key, range or rights)";
    case NW_ECLOSED: return "closed";
    case NW_EBUSY: return "memory region in use by pending operations";
    case NW_ETOOBIG: return "packet does not fit the buffer";
    case NW_ESYS: return "system call failed";
    case NW_EPERM: return "operation not permitted";
    case NW_ECANCELED: return "canceled";
    default: return "unknown error";
    }
}
