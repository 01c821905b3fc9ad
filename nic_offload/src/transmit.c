/* Transmit path of the engine: nw_output picks the next PDC with something to
 * say (round robin) and writes one datagram: a NACK, an ACK (with SACK bitmap
 * and SES response), a REQ_ACK probe, a retransmission or a new data packet
 * of the work request at the head of the PDC's send queue. */
#include <string.h>

#include "engine_state.h"
#include "segmenter.h"
#include "uet_wire.h"

static void fill_dest(nw_pdc_t *p, nw_dest_t *dst)
{
    dst->ip = p->ip;
    dst->port = p->port;
    dst->src_port = nw_entropy_next(&p->entropy);
    dst->ecn = NW_ECN_NOT_ECT;
}

/* A data packet's destination: ECT(0) when the PDC reacts to ECN marks. */
static void fill_data_dest(nw_pdc_t *p, nw_dest_t *dst)
{
    fill_dest(p, dst);
    if (p->cc.nscc_on || p->cc.dcqcn_on)
        dst->ecn = NW_ECN_ECT0;
}

/* An ACK for trigger PSN trig; dup: the report of a duplicate (NW_PDS_F_DUP),
 * which leaves the coalesced ACK state alone (the real trigger still gets
 * its own ACK and the sender its RTT sample). */
static int32_t build_ack(nw_engine_t *e, nw_pdc_t *p, uint32_t trig, int dup, uint8_t *buf,
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
    h->flags = dup ? NW_PDS_F_DUP : 0;
    if (p->cc.ce_pending && !dup) {
        h->flags |= NW_PDS_F_M; /* a packet this ACK covers arrived CE-marked */
        p->cc.ce_pending = 0;
    }
    h->cack_psn = cum;
    h->ack_psn_off = (int16_t)toff;
    h->spdcid = p->local_id;
    h->dpdcid = p->remote_id;
    h->cc_type = NW_CC_NSCC;
    h->mpr = 255;
    h->sack_psn_off = (uint16_t)(base - cum);
    h->sack_bitmap = nw_rxw_sack(&p->rxw, base);
    h->ooo_count = (uint16_t)(p->rxw.count > 0xffff ? 0xffff : p->rxw.count);
    h->rcvd_bytes = (uint32_t)(p->rx_req_bytes & 0xffffff); /* NSCC: bytes that arrived */
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
    if (p->ack_ring_count == 0 && !dup) {
        p->ack_now = p->rsp_count > 0; /* one ACK per pending response */
        p->ack_pending = 0;
        p->ack_deadline = 0;
    }
    e->st.acks_out++;
    return nw_wire_build(&pk, buf, cap);
}

/* The oldest queued CTRL CLOSE (its PDC is already freed). */
static int32_t output_close(nw_engine_t *e, uint8_t *buf, uint32_t cap, nw_dest_t *dst)
{
    nw_close_notice_t *c = &e->closes[e->close_head];
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    pk.pds.type = NW_PDS_CTRL;
    pk.pds.ctl_type = NW_CTRL_CLOSE;
    pk.pds.spdcid = c->local_id;
    pk.pds.dpdcid = c->remote_id;
    dst->ip = c->ip;
    dst->port = c->port;
    dst->src_port = e->cfg.entropy_base;
    dst->ecn = NW_ECN_NOT_ECT;
    e->close_head = (e->close_head + 1) % e->cfg.max_peers;
    e->close_count--;
    return nw_wire_build(&pk, buf, cap);
}

/* A CTRL packet of the PDC (at its next PSN) of type ctl_type with the given
 * PDS flags and payload. */
static int32_t build_ctrl(const nw_pdc_t *p, uint8_t ctl_type, uint8_t flags, uint32_t payload,
                          uint8_t *buf, uint32_t cap)
{
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    pk.pds.type = NW_PDS_CTRL;
    pk.pds.ctl_type = ctl_type;
    pk.pds.flags = flags;
    pk.pds.psn = p->nxt;
    pk.pds.spdcid = p->local_id;
    pk.pds.dpdcid = p->remote_id;
    pk.pds.ctrl_payload = payload;
    return nw_wire_build(&pk, buf, cap);
}

/* A REQ_ACK probe: asks for an ACK now (its payload is the probed message). */
static int32_t build_probe(nw_pdc_t *p, uint8_t *buf, uint32_t cap)
{
    return build_ctrl(p, NW_CTRL_REQ_ACK, NW_PDS_F_AR, p->probe_msg[--p->probe_count], buf, cap);
}

/* A CTRL CREDIT (receiver: the cumulative grant) or CREDIT_REQ (sender: the
 * cumulative demand) for RCCC; rccc.h describes both. */
static int32_t build_credit_ctrl(const nw_pdc_t *p, uint8_t type, uint32_t value, uint8_t *buf,
                                 uint32_t cap)
{
    return build_ctrl(p, type, 0, value, buf, cap);
}

/* NACK (code TRIMMED) for the oldest trimmed PSN still to report. */
static int32_t build_trim_nack(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap)
{
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    pk.pds.type = NW_PDS_NACK;
    pk.pds.nack_code = NW_NACK_TRIMMED;
    pk.pds.nack_psn = p->trim_psn[0];
    pk.pds.nack_payload = p->rxw.cum + 1;
    pk.pds.spdcid = p->local_id;
    pk.pds.dpdcid = p->remote_id;
    p->trim_count--;
    memmove(p->trim_psn, p->trim_psn + 1, p->trim_count * sizeof(p->trim_psn[0]));
    e->st.nacks_out++;
    return nw_wire_build(&pk, buf, cap);
}

static int32_t build_nack(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap)
{
    nw_wire_pkt_t pk;
    memset(&pk, 0, sizeof(pk));
    pk.pds.type = NW_PDS_NACK;
    pk.pds.nack_code = p->nack_code;
    pk.pds.nack_vendor = p->nack_vendor;
    pk.pds.nack_psn = p->nack_psn;
    pk.pds.nack_payload = p->nack_payload;
    pk.pds.spdcid = p->local_id;
    pk.pds.dpdcid = p->remote_id;
    p->nack_pending = 0;
    e->st.nacks_out++;
    return nw_wire_build(&pk, buf, cap);
}

void nw_fill_request_pds(const nw_pdc_t *p, uint32_t psn, nw_pds_hdr_t *h)
{
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
        if (p->cc.rccc_on) { /* the request announces the sender's demand */
            h->type = p->mode == NW_MODE_ROD ? NW_PDS_ROD_CC : NW_PDS_RUD_CC;
            h->credit_target = nw_rccc_target(e, p);
        }
        nw_fill_request_pds(p, psn, h);
        if (retx)
            h->flags |= NW_PDS_F_RETX | NW_PDS_F_AR;
        if (eom || (!retx && nw_cc_ack_wanted(e, p)))
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
    uint32_t len = nw_seg_len(payload_len, off, w->seg_max);
    uint32_t body = len + (w->kind == NW_WR_READ_RESP ? NW_WIRE_SES_RSP_DATA_LEN
                                                      : NW_WIRE_SES_STD_LEN);
    if (nw_ec_tx_close_before(e, p, body))
        return nw_ec_tx_output_parity(e, p, buf, cap, now);
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
    nw_tx_sent(e, p, s, (uint32_t)n, now);
    p->tx_req_bytes += (uint64_t)n;
    p->pdc_data_pkts++;
    nw_ec_tx_on_data(e, p, s, buf, (uint32_t)n);
    return n;
}

static int32_t pdc_output(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap,
                          nw_dest_t *dst, uint64_t now)
{
    if (p->trim_count) {
        fill_dest(p, dst);
        return build_trim_nack(e, p, buf, cap);
    }
    if (p->nack_pending) {
        fill_dest(p, dst);
        return build_nack(e, p, buf, cap);
    }
    if (p->cc.cr_rx.grant_due) {
        p->cc.cr_rx.grant_due = 0;
        e->st.credit_pkts_out++;
        fill_dest(p, dst);
        return build_credit_ctrl(p, NW_CTRL_CREDIT, (uint32_t)p->cc.cr_rx.granted, buf, cap);
    }
    if (p->dup_count) {
        uint32_t psn = p->dup_psn[0];
        p->dup_count--;
        memmove(p->dup_psn, p->dup_psn + 1, p->dup_count * sizeof(p->dup_psn[0]));
        fill_dest(p, dst);
        return build_ack(e, p, psn, 1, buf, cap);
    }
    if (p->ack_ring_count) {
        uint32_t trig = p->ack_ring[p->ack_ring_head];
        p->ack_ring_head = (p->ack_ring_head + 1) & e->wmask;
        p->ack_ring_count--;
        fill_dest(p, dst);
        return build_ack(e, p, trig, 0, buf, cap);
    }
    if (p->ack_now) {
        fill_dest(p, dst);
        return build_ack(e, p, p->ack_trigger, 0, buf, cap);
    }
    if (p->failed)
        return 0;
    if (p->probe_count) {
        fill_dest(p, dst);
        return build_probe(p, buf, cap);
    }
    int allowed = nw_cc_tx_allowed(e, p) && nw_pdc_resend_open(e, p); /* resends too */
    nw_tx_slot_t *s = allowed ? nw_tx_next_lost(e, p) : NULL;
    if (s) {
        p->rto_resend_due = 0;
        int32_t n;
        if (s->ec_kind == NW_EC_SLOT_PARITY) {
            n = nw_ec_tx_resend_parity(e, p, s, buf, cap);
        } else {
            n = build_data(e, p, &e->wrs[s->wr], s->psn, s->msg_off, s->len, 1, buf, cap);
            if (n > 0 && s->ec_kind == NW_EC_SLOT_DATA) {
                nw_ec_mark_packet(buf); /* its shard still counts towards its block */
                e->st.ec_retransmits++;
            }
            if (n > 0) {
                p->tx_req_bytes += (uint64_t)n;
                p->pdc_retransmits++;
            }
        }
        if (n < 0)
            return n;
        s->retx++;
        if (s->fast)
            e->st.fast_retransmits++;
        s->fast = 0;
        nw_tx_sent(e, p, s, (uint32_t)n, now);
        e->st.retransmits++;
        fill_data_dest(p, dst);
        return n;
    }
    if (allowed && nw_ec_tx_parity_due(p)) {
        int32_t n = nw_ec_tx_output_parity(e, p, buf, cap, now);
        if (n > 0)
            fill_data_dest(p, dst);
        return n;
    }
    if (allowed && nw_pdc_new_data_open(e, p)) {
        int32_t n = output_new(e, p, buf, cap, now);
        if (n > 0)
            fill_data_dest(p, dst);
        return n;
    }
    if (p->cc.rccc_on && nw_pdc_has_data(e, p) && nw_rccc_req_due(e, p)) {
        uint32_t d = nw_rccc_target(e, p);
        nw_rccc_on_req_sent(e, p, now);
        fill_dest(p, dst);
        return build_credit_ctrl(p, NW_CTRL_CREDIT_REQ, d, buf, cap);
    }
    if (p->cc.rccc_on && !p->cc.cr_tx.req_deadline && nw_pdc_has_data(e, p) &&
        !nw_rccc_tx_allowed(p))
        nw_rccc_arm_repeat(e, p, now); /* blocked: ask again if no credit comes */
    return 0;
}

int32_t nw_output(nw_engine_t *e, uint8_t *buf, uint32_t cap, nw_dest_t *dst, uint64_t now_ns)
{
    if (cap < e->cfg.mtu)
        return NW_ETOOBIG;
    if (now_ns > e->now)
        e->now = now_ns;
    if (e->close_count > 0) {
        int32_t n = output_close(e, buf, cap, dst);
        if (n > 0) {
            e->st.pkts_out++;
            e->st.bytes_out += (uint64_t)n;
        }
        return n;
    }
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
    return e->active_count > 0 || e->close_count > 0;
}
