/* Receive-side message reassembly for sends: match the first packet of a
 * message to the oldest posted receive buffer, place every packet at its
 * message offset, complete when all bytes are placed. Reliable modes rely on
 * the PSN window for duplicate suppression; UUD, which has no PSN, tracks the
 * packets of each message in a 64-bit mask and gives up after uud_timeout_ns. */
#include <string.h>

#include "engine_state.h"
#include "uet_wire.h"

static void finish(nw_engine_t *e, nw_pdc_t *p, nw_rx_msg_t *m, int32_t status, uint64_t bytes)
{
    nw_cq_post(e, m->wr_id, bytes, status, nw_pdc_index(e, p), NW_OP_RECV, p->mode);
    m->in_use = 0;
    m->done = 1;
    m->done_id = m->msg_id;
}

void nw_rxm_cancel(nw_engine_t *e, nw_pdc_t *p)
{
    for (uint32_t i = 0; i < e->cfg.window_pkts; i++)
        if (p->rx_msgs[i].in_use)
            finish(e, p, &p->rx_msgs[i], NW_ECANCELED, p->rx_msgs[i].placed);
}

static void arm_uud(nw_pdc_t *p, uint64_t deadline)
{
    if (p->uud_deadline == 0 || deadline < p->uud_deadline)
        p->uud_deadline = deadline;
}

void nw_rxm_on_send_pkt(nw_engine_t *e, nw_pdc_t *p, const uint8_t *payload, uint32_t len,
                        uint16_t msg_id, uint32_t msg_off, uint32_t total, uint64_t now,
                        int32_t *rnr, int32_t *bad)
{
    int uud = p->mode == NW_MODE_UUD;
    nw_rx_msg_t *m = &p->rx_msgs[msg_id & e->wmask];
    *rnr = *bad = 0;
    if ((uint64_t)msg_off + len > total) {
        *bad = 1;
        return;
    }
    if (m->in_use && m->msg_id != msg_id) {
        if (!uud) {
            *rnr = 1; /* cannot happen within a window; retry later */
            return;
        }
        finish(e, p, m, NW_ELOST, m->placed);
    }
    if (uud && !m->in_use && m->done && m->done_id == msg_id) {
        e->st.dup_pkts++; /* a late copy of a message already completed */
        return;
    }
    if (!m->in_use) {
        nw_recv_buf_t rb;
        if (!nw_rq_pop(&e->rq, &rb)) {
            *rnr = 1;
            return;
        }
        memset(m, 0, sizeof(*m));
        m->in_use = 1;
        m->msg_id = msg_id;
        m->wr_id = rb.wr_id;
        m->buf = rb.buf;
        m->cap = rb.cap;
        m->total = total;
        m->status = total > rb.cap ? NW_ETOOLONG : NW_OK;
        if (m->status == NW_ETOOLONG && !uud)
            nw_pdc_queue_rsp(e, p, msg_id, NW_SES_RC_TOO_LONG);
        if (uud) {
            m->deadline = now + e->cfg.uud_timeout_ns;
            arm_uud(p, m->deadline);
        }
    }
    if (m->total != total) {
        *bad = 1;
        return;
    }
    if (uud) {
        uint32_t idx = msg_off / e->max_payload;
        if (idx >= 64 || msg_off % e->max_payload != 0) {
            *bad = 1;
            return;
        }
        if (m->pkt_mask & (1ull << idx)) {
            e->st.dup_pkts++;
            return;
        }
        m->pkt_mask |= 1ull << idx;
    }
    if (m->status == NW_OK && len > 0) {
        memcpy(m->buf + msg_off, payload, len);
        e->st.placed_bytes += len;
    }
    m->placed += len;
    if (m->placed >= m->total) /* > only if a hostile sender overlaps offsets */
        finish(e, p, m, m->status, m->total);
}

void nw_rxm_on_time(nw_engine_t *e, nw_pdc_t *p, uint64_t now)
{
    uint64_t next = 0;
    for (uint32_t i = 0; i < e->cfg.window_pkts; i++) {
        nw_rx_msg_t *m = &p->rx_msgs[i];
        if (!m->in_use || m->deadline == 0)
            continue;
        if (m->deadline <= now)
            finish(e, p, m, NW_ELOST, m->placed);
        else if (next == 0 || m->deadline < next)
            next = m->deadline;
    }
    p->uud_deadline = next;
}
