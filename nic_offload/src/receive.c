/* Receive path of the engine: nw_input parses every datagram with the wire
 * codec, finds (or opens) its packet delivery context, applies the PSN window
 * (duplicates, out-of-window, ROD ordering), places data exactly once and
 * schedules ACKs, NACKs and SES responses. Every dropped packet is counted by
 * reason. */
#include <string.h>

#include "engine_state.h"
#include "segmenter.h"
#include "uet_wire.h"

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
    p->nack_vendor = 0;
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
    p->established = 1;
    return p;
}

/* PDC of a RUD/ROD request, creating a passive one for a new SYN. */
static nw_pdc_t *pdc_for_request(nw_engine_t *e, const nw_pds_hdr_t *h, uint8_t mode,
                                 uint32_t src_ip, uint64_t now)
{
    nw_pdc_t *p;
    if (h->flags & NW_PDS_F_SYN) {
        p = nw_pdc_find_syn(e, src_ip, mode, h->spdcid);
        if (!p) {
            p = nw_pdc_open_passive(e, src_ip, mode, now);
            if (!p)
                return NULL; /* counted */
        }
        p->last_rx_ns = now;
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
    p->established = 1; /* the remote knows our PDC id: it heard from us */
    p->last_rx_ns = now;
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
    w->seg_max = nw_ec_seg_payload(e, p);
    w->pkts_total = nw_seg_count(w->len, w->seg_max);
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

/* ROD: holds a packet that arrived ahead of the next expected PSN in the
 * reorder buffer. Returns 1 if held (or already held: a duplicate), 0 if it
 * lies beyond the buffer. */
static int rod_hold(nw_engine_t *e, nw_pdc_t *p, uint32_t psn, const uint8_t *raw,
                    uint32_t raw_len)
{
    int32_t d = nw_psn_diff(psn, p->rxw.cum);
    if (!p->rod_buf || d < 2 || (uint32_t)d > e->cfg.window_pkts || raw_len > e->cfg.mtu ||
        raw_len == 0)
        return 0;
    uint32_t i = psn & e->wmask;
    if (p->rod_len[i] && p->rod_psn[i] == psn) {
        e->st.dup_pkts++;
        return 1;
    }
    if (!p->rod_len[i])
        p->rod_held_count++;
    memcpy(p->rod_buf + (size_t)i * e->cfg.mtu, raw, raw_len);
    p->rod_len[i] = raw_len;
    p->rod_psn[i] = psn;
    e->st.rod_held++;
    return 1;
}

/* NACKs the next expected PSN once per value (ROD_OOO, payload = that PSN). */
static void rod_nack_gap(nw_engine_t *e, nw_pdc_t *p, uint32_t trigger_psn)
{
    uint32_t expected = p->rxw.cum + 1;
    if (!p->rod_nack_valid || p->rod_nacked != expected) {
        p->rod_nacked = expected;
        p->rod_nack_valid = 1;
        queue_nack(e, p, NW_NACK_ROD_OOO, trigger_psn, expected);
    }
}

static int32_t input_request(nw_engine_t *e, const nw_wire_pkt_t *pk, const uint8_t *payload,
                             uint32_t len, const uint8_t *raw, uint32_t raw_len,
                             uint32_t src_ip, uint64_t now, nw_pdc_t **rod_accepted);

/* A trimmed request: NACKed at once (code TRIMMED), one NACK per PSN; when
 * more are waiting than a PDC holds, the sender's SACK loss detection finds
 * the rest. */
static void queue_trim_nack(nw_engine_t *e, nw_pdc_t *p, uint32_t psn)
{
    e->st.trimmed_pkts_in++;
    NW_TRACE(e, NW_TR_TRIMMED_RX, nw_pdc_index(e, p), psn, 0, 0);
    for (uint32_t i = 0; i < p->trim_count; i++)
        if (p->trim_psn[i] == psn)
            return;
    if (p->trim_count < NW_TRIM_NACKS)
        p->trim_psn[p->trim_count++] = psn;
    nw_pdc_activate(e, p);
}

/* rx_semantic, noting whether the packet delivered anything through the PDC
 * (bytes placed, a receive buffer taken, a read answered): such a PDC is no
 * longer half-open and is never reclaimed behind the application's back. */
static int semantic_delivering(nw_engine_t *e, nw_pdc_t *p, const nw_wire_pkt_t *pk,
                               const uint8_t *payload, uint32_t len, uint64_t now)
{
    uint64_t placed = e->st.placed_bytes;
    uint32_t reads = e->read_resp_in_use, recvs = e->rq.count;
    int r = rx_semantic(e, p, pk, payload, len, now);
    if (e->st.placed_bytes != placed || e->read_resp_in_use != reads || e->rq.count != recvs)
        p->delivered = 1;
    return r;
}

/* ROD: after an in-order packet, delivers the held packets that now follow
 * the cumulative PSN, in order, through the normal receive path. */
static void rod_drain(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    /* The ACK names the packet that just arrived, not the held ones: the
     * sender takes RTT samples from the trigger PSN. */
    uint32_t trigger = p->ack_trigger;
    while (p->rod_held_count > 0) {
        uint32_t psn = p->rxw.cum + 1;
        uint32_t i = psn & e->wmask;
        if (!p->rod_len[i] || p->rod_psn[i] != psn)
            break;
        uint32_t len = p->rod_len[i];
        p->rod_len[i] = 0;
        p->rod_held_count--;
        const uint8_t *pkt = p->rod_buf + (size_t)i * e->cfg.mtu;
        nw_wire_pkt_t pk;
        int32_t hl = nw_wire_parse(pkt, len, &pk);
        if (hl < 0) { /* parsed once already; cannot happen */
            count_parse_error(e, hl);
            break;
        }
        nw_pdc_t *accepted = NULL;
        input_request(e, &pk, pkt + hl, len - (uint32_t)hl, pkt, len, p->ip, now, &accepted);
        if (accepted != p)
            break; /* refused (e.g. receiver not ready): the sender resends it */
    }
    p->ack_trigger = trigger;
    if (p->rod_held_count > 0)
        rod_nack_gap(e, p, p->rxw.cum + 1);
}

static int32_t input_request(nw_engine_t *e, const nw_wire_pkt_t *pk, const uint8_t *payload,
                             uint32_t len, const uint8_t *raw, uint32_t raw_len,
                             uint32_t src_ip, uint64_t now, nw_pdc_t **rod_accepted)
{
    const nw_pds_hdr_t *h = &pk->pds;
    uint8_t mode = (h->type == NW_PDS_RUD || h->type == NW_PDS_RUD_CC) ? NW_MODE_RUD
                                                                        : NW_MODE_ROD;
    nw_pdc_t *p = pdc_for_request(e, h, mode, src_ip, now);
    if (!p)
        return NW_EINVAL;
    nw_rx_window_t *w = &p->rxw;
    if (h->type == NW_PDS_RUD_CC || h->type == NW_PDS_ROD_CC)
        nw_rccc_on_demand(e, p, h->credit_target, now);
    if (pk->pds.next_hdr != NW_NH_NW_PARITY)
        p->rx_req_bytes += raw_len; /* data bytes that arrived, for the sender's loss estimate */
    int32_t cls = nw_rxw_classify(w, h->psn);
    if (cls == NW_PSN_OUT_OF_WINDOW) {
        e->st.drop_out_of_window++;
        return NW_ERANGE;
    }
    int wants_rsp = pk->pds.next_hdr == NW_NH_REQ_STD && (pk->ses.flags & NW_SES_F_EOM) &&
                    (pk->ses.opcode == NW_SES_OP_WRITE || pk->ses.opcode == NW_SES_OP_SEND);
    if (cls == NW_PSN_DUP) {
        if (pk->pds.next_hdr == NW_NH_NW_PARITY && !(h->flags & NW_PDS_F_RETX)) {
            /* Its block completed first (parity PSNs then count as received).
             * Answered with an ACK all the same: at a message's tail these
             * ACKs are what spares the sender a timeout when one is lost. */
            e->st.ec_parity_late++;
            p->ack_trigger = h->psn;
            p->ack_now = 1;
            nw_pdc_activate(e, p);
            return NW_OK;
        }
        if (wants_rsp)
            nw_pdc_respond(e, p, pk->ses.message_id); /* the first response may be lost */
        e->st.dup_pkts++;
        /* Reported at once in an ACK flagged NW_PDS_F_DUP (netweft's DSACK): the
         * sender learns that its resend was not needed. */
        if (p->dup_count < NW_DUP_REPORTS)
            p->dup_psn[p->dup_count++] = h->psn;
        nw_pdc_activate(e, p);
        return NW_OK;
    }
    if (pk->trimmed) {
        queue_trim_nack(e, p, h->psn);
        return NW_OK;
    }
    int in_order = h->psn == w->cum + 1;
    if (mode == NW_MODE_ROD && !in_order) {
        int held = rod_hold(e, p, h->psn, raw, raw_len);
        if (!held)
            e->st.drop_unordered++;
        rod_nack_gap(e, p, h->psn);
        return held ? NW_OK : NW_ERANGE;
    }
    int r = semantic_delivering(e, p, pk, payload, len, now);
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
    if (mode == NW_MODE_ROD) {
        uint32_t i = h->psn & e->wmask;
        if (p->rod_len && p->rod_len[i] && p->rod_psn[i] == h->psn) {
            p->rod_len[i] = 0; /* a resent copy overtook the held one */
            p->rod_held_count--;
        }
        *rod_accepted = p;
    }
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
    nw_ec_rx_on_packet(e, p, pk, raw, raw_len, now);
    return NW_OK;
}

int32_t nw_rx_recovered(nw_engine_t *e, nw_pdc_t *p, const uint8_t *pkt, uint32_t len,
                        uint64_t now)
{
    nw_wire_pkt_t pk;
    int32_t hl = nw_wire_parse(pkt, len, &pk);
    if (hl < 0) {
        count_parse_error(e, hl);
        return NW_EINVAL;
    }
    p->rx_req_bytes -= len; /* it did not arrive: the peer's loss estimate must see that */
    nw_pdc_t *rod = NULL;
    return input_request(e, &pk, pkt + hl, len - (uint32_t)hl, pkt, len, p->ip, now, &rod);
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
        p = nw_pdc_open_passive(e, src_ip, NW_MODE_UUD, now);
    if (!p)
        return NW_EAGAIN; /* counted */
    p->last_rx_ns = now;
    int r = semantic_delivering(e, p, pk, payload, len, now);
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
    int ecn = (pk->pds.flags & NW_PDS_F_M) && !(pk->pds.flags & NW_PDS_F_DUP);
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
    if (h->type == NW_PDS_ACK_CC && h->cc_type == NW_CC_NSCC) {
        /* rcvd_bytes counts (mod 2^24) the request bytes that reached the
         * peer; a step back is an ACK that was overtaken, not news. */
        uint32_t delta = (h->rcvd_bytes - p->peer_rx_last) & 0xffffff;
        if (delta < 0x800000) { /* both counts start at 0 with the PDC */
            p->peer_rx_bytes += delta;
            p->peer_rx_last = h->rcvd_bytes;
        }
    }
    uint32_t trigger = h->cack_psn + (uint32_t)(int32_t)h->ack_psn_off;
    int32_t r = nw_tx_on_ack(e, p, h->cack_psn, trigger, base, bits, ecn, now);
    if (r == NW_OK && (h->flags & NW_PDS_F_DUP))
        nw_tx_on_dup_report(e, p, trigger, now);
    if (rw && rw->in_use && rw->rsp_seen && rw->msg_id == pk->rsp.message_id)
        nw_wr_write_progress(e, rw); /* all packets were acknowledged before */
    if (r != NW_OK) {
        e->st.drop_out_of_window++;
        return r;
    }
    nw_pdc_activate(e, p);
    return NW_OK;
}

/* A NACK names a PSN we sent and have not seen acknowledged. */
static int in_flight_nack(const nw_pdc_t *p, uint32_t psn)
{
    return nw_psn_diff(psn, p->una) >= 0 && nw_psn_diff(psn, p->nxt) < 0;
}

static int32_t input_nack(nw_engine_t *e, const nw_wire_pkt_t *pk, uint32_t src_ip,
                          uint64_t now)
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
        e->st.trim_nacks_in++;
        NW_TRACE(e, NW_TR_TRIM_NACK, nw_pdc_index(e, p), h->nack_psn, 0, 0);
        nw_tx_on_trim_nack(e, p, h->nack_psn, now); /* resent now, no timeout */
        break;
    case NW_NACK_ROD_OOO:
        nw_tx_on_rod_nack(e, p, h->nack_payload, now);
        break;
    case NW_NACK_NO_SES_MSG_AVAIL:
    case NW_NACK_NO_RESOURCE:
    case NW_NACK_NO_PKT_BUFFER:
        p->retries = 0; /* the peer is alive; the RTO will retry */
        break;
    case NW_NACK_EXP_FATAL:
        if (h->nack_vendor == NW_NACK_VENDOR_TOO_BIG && in_flight_nack(p, h->nack_psn))
            nw_tx_fail(e, p, NW_EMTU);
        break;
    default:
        break;
    }
    nw_pdc_activate(e, p);
    return NW_OK;
}

static int32_t input_ctrl(nw_engine_t *e, const nw_wire_pkt_t *pk, uint32_t src_ip,
                          uint64_t now)
{
    nw_pdc_t *p = pdc_for_reply(e, &pk->pds, src_ip);
    if (!p)
        return NW_EINVAL;
    if (pk->pds.ctl_type == NW_CTRL_CREDIT) {
        nw_rccc_on_credit(e, p, pk->pds.ctrl_payload, now);
        return NW_OK;
    }
    if (pk->pds.ctl_type == NW_CTRL_CREDIT_REQ) {
        nw_rccc_on_request(e, p, pk->pds.ctrl_payload & NW_CREDIT_TARGET_MASK, now);
        return NW_OK;
    }
    if (pk->pds.ctl_type == NW_CTRL_CLOSE) {
        nw_pdc_close(e, p, 0); /* the remote has forgotten this PDC */
        return NW_OK;
    }
    if (pk->pds.ctl_type == NW_CTRL_REQ_ACK && p->rx_started) {
        /* Payload [0, message id]: the sender misses that message's response. */
        nw_pdc_respond(e, p, (uint16_t)(pk->pds.ctrl_payload & 0xffff));
        p->ack_trigger = p->rxw.cum;
        p->ack_now = 1;
        nw_pdc_activate(e, p);
    }
    return NW_OK;
}

/* A reliable request longer than our MTU (the sender's mtu is larger): it
 * is dropped, and the sender is told why with a NACK (EXP_FATAL, vendor code
 * TOO_BIG, payload = our MTU) instead of retrying until its retransmission
 * limit; oversized data of our own READ fail that READ here. UUD has no PDC
 * to answer on: those packets are only counted. */
static void nack_oversized(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                           uint64_t now)
{
    nw_wire_pkt_t pk;
    if (nw_wire_parse(pkt, len, &pk) < 0)
        return;
    uint8_t t = pk.pds.type;
    if (t != NW_PDS_RUD && t != NW_PDS_ROD && t != NW_PDS_RUD_CC && t != NW_PDS_ROD_CC)
        return;
    uint8_t mode = (t == NW_PDS_RUD || t == NW_PDS_RUD_CC) ? NW_MODE_RUD : NW_MODE_ROD;
    nw_pdc_t *p = pdc_for_request(e, &pk.pds, mode, src_ip, now);
    if (!p)
        return; /* counted */
    queue_nack(e, p, NW_NACK_EXP_FATAL, pk.pds.psn, e->cfg.mtu);
    p->nack_vendor = NW_NACK_VENDOR_TOO_BIG;
    if (pk.pds.next_hdr == NW_NH_RSP_DATA) {
        /* Data of our own READ that will never fit: fail the READ here (the
         * target fails its side when the NACK arrives, and sends no more). */
        nw_wr_t *w = nw_wr_by_msg(e, p, pk.rsp.read_req_message_id);
        if (w && w->kind == NW_WR_READ && !w->read_answered) {
            w->status = NW_EMTU;
            w->read_answered = 1; /* completes once the request is acknowledged */
            nw_wr_read_progress(e, w);
        }
    }
}

int32_t nw_input(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                 uint16_t src_port, uint64_t now_ns)
{
    return nw_input_ecn(e, pkt, len, src_ip, src_port, NW_ECN_NOT_ECT, now_ns);
}

/* A CE-marked data request: echoed in the PDC's next ACK (flag M). */
static void note_ce(nw_engine_t *e, const nw_wire_pkt_t *pk, uint32_t src_ip)
{
    nw_pdc_t *p = NULL;
    if (pk->pds.flags & NW_PDS_F_SYN)
        p = nw_pdc_find_syn(e, src_ip, pk->pds.type == NW_PDS_ROD || pk->pds.type ==
                            NW_PDS_ROD_CC ? NW_MODE_ROD : NW_MODE_RUD, pk->pds.spdcid);
    else
        p = nw_pdc_by_id(e, pk->pds.dpdcid);
    if (!p || p->ip != src_ip)
        return;
    e->st.ce_pkts_in++;
    p->cc.ce_pending = 1;
}

int32_t nw_input_ecn(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                     uint16_t src_port, uint8_t ecn, uint64_t now_ns)
{
    if (now_ns > e->now)
        e->now = now_ns;
    e->st.pkts_in++;
    e->st.bytes_in += len;
    if (len > e->cfg.mtu) {
        e->st.drop_oversized++;
        nack_oversized(e, pkt, len, src_ip, now_ns);
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
    {
        nw_pdc_t *rod = NULL;
        int32_t r = input_request(e, &pk, payload, plen, pkt, len, src_ip, now_ns, &rod);
        if ((ecn & 3) == NW_ECN_CE && r != NW_EINVAL)
            note_ce(e, &pk, src_ip);
        if (rod && rod->rod_held_count > 0)
            rod_drain(e, rod, now_ns);
        return r;
    }
    case NW_PDS_UUD:
        return input_uud(e, &pk, payload, plen, src_ip, now_ns);
    case NW_PDS_ACK:
    case NW_PDS_ACK_CC:
    case NW_PDS_ACK_CCX:
        return input_ack(e, &pk, src_ip, now_ns);
    case NW_PDS_NACK:
    case NW_PDS_NACK_CCX:
        return input_nack(e, &pk, src_ip, now_ns);
    case NW_PDS_CTRL:
        return input_ctrl(e, &pk, src_ip, now_ns);
    default:
        e->st.drop_bad_version++; /* RUDI: a type this engine does not speak */
        return NW_EINVAL;
    }
}
