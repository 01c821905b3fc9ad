/* Work requests: the pool, per-PDC send queues, message-id lookup and
 * completion into the CQ. */
#include <stdlib.h>

#include "engine_state.h"

int32_t nw_wr_init(nw_engine_t *e)
{
    /* Twice the user's limit: the second half serves read responses. */
    e->nwrs = e->cfg.max_wrs * 2;
    e->wrs = calloc(e->nwrs, sizeof(*e->wrs));
    if (!e->wrs)
        return NW_ENOMEM;
    for (uint32_t i = 0; i < e->nwrs; i++)
        e->wrs[i].next = i + 1 < e->nwrs ? i + 1 : NW_NIL;
    e->wr_free = 0;
    return NW_OK;
}

void nw_wr_destroy(nw_engine_t *e)
{
    free(e->wrs);
    e->wrs = NULL;
}

nw_wr_t *nw_wr_alloc(nw_engine_t *e)
{
    if (e->wr_free == NW_NIL)
        return NULL;
    nw_wr_t *w = &e->wrs[e->wr_free];
    e->wr_free = w->next;
    *w = (nw_wr_t){0};
    w->in_use = 1;
    w->next = NW_NIL;
    return w;
}

static void wr_free(nw_engine_t *e, nw_wr_t *w)
{
    w->in_use = 0;
    w->next = e->wr_free;
    e->wr_free = (uint32_t)(w - e->wrs);
}

void nw_wr_enqueue(nw_engine_t *e, nw_pdc_t *p, nw_wr_t *w)
{
    uint32_t idx = (uint32_t)(w - e->wrs);
    w->pdc = nw_pdc_index(e, p);
    w->next = NW_NIL;
    if (p->sq_tail == NW_NIL)
        p->sq_head = idx;
    else
        e->wrs[p->sq_tail].next = idx;
    p->sq_tail = idx;
    uint32_t hdr = NW_WIRE_PDS_REQ_CC_LEN + (w->kind == NW_WR_READ_RESP ? NW_WIRE_SES_RSP_DATA_LEN
                                                                        : NW_WIRE_SES_STD_LEN);
    uint64_t body = w->kind == NW_WR_READ ? 0 : w->len;
    nw_cc_on_enqueue(e, p, body + (uint64_t)(w->pkts_total ? w->pkts_total : 1) * hdr);
    nw_pdc_activate(e, p);
}

void nw_cq_post(nw_engine_t *e, uint64_t wr_id, uint64_t bytes, int32_t status, uint32_t pdc,
                uint8_t opcode, uint8_t mode)
{
    nw_completion_t c = {0};
    c.wr_id = wr_id;
    c.bytes = bytes;
    c.status = status;
    c.peer = pdc;
    c.opcode = opcode;
    c.mode = mode;
    nw_cq_push(&e->cq, &c); /* cannot fail: credits bound the entries */
}

void nw_wr_complete(nw_engine_t *e, nw_wr_t *w, int32_t status)
{
    nw_pdc_t *p = &e->pdcs[w->pdc];
    if (w->started) {
        uint32_t *slot = &p->wr_by_msg[w->msg_id & e->wmask];
        if (*slot == (uint32_t)(w - e->wrs))
            *slot = NW_NIL;
    }
    if (w->kind == NW_WR_READ_RESP) {
        nw_mr_t *mr = w->rkey ? nw_mr_table_get(&e->mrs, w->rkey) : NULL;
        if (mr && mr->refs)
            mr->refs--;
        e->read_resp_in_use--;
    } else {
        static const uint8_t op[] = {0, NW_OP_WRITE, NW_OP_READ, NW_OP_SEND};
        uint64_t bytes = status == NW_OK ? w->len : (w->kind == NW_WR_READ ? w->read_done : 0);
        nw_cq_post(e, w->wr_id, bytes, status, w->pdc, op[w->kind], p->mode);
    }
    wr_free(e, w);
    nw_pdc_activate(e, p); /* a freed message id may unblock the send queue */
}

void nw_wr_finish(nw_engine_t *e, nw_wr_t *w)
{
    nw_pdc_t *p = &e->pdcs[w->pdc];
    if (p->mode != NW_MODE_ROD) {
        nw_wr_complete(e, w, w->status);
        return;
    }
    if (w->seq != p->done_seq) {
        w->ready = 1; /* an earlier work request is still open: hold this one */
        p->held++;
        return;
    }
    uint32_t pi = w->pdc;
    p->done_seq++;
    nw_wr_complete(e, w, w->status);
    /* Release held successors in order (rare: only after out-of-order finishes). */
    for (int found = 1; found && p->held > 0;) {
        found = 0;
        for (uint32_t i = 0; i < e->nwrs; i++) {
            nw_wr_t *x = &e->wrs[i];
            if (x->in_use && x->pdc == pi && x->ready && x->seq == p->done_seq) {
                p->done_seq++;
                p->held--;
                nw_wr_complete(e, x, x->status);
                found = 1;
                break;
            }
        }
    }
}

nw_wr_t *nw_wr_by_msg(nw_engine_t *e, nw_pdc_t *p, uint16_t msg_id)
{
    uint32_t idx = p->wr_by_msg[msg_id & e->wmask];
    if (idx == NW_NIL)
        return NULL;
    nw_wr_t *w = &e->wrs[idx];
    if (!w->in_use || !w->started || w->msg_id != msg_id || w->pdc != nw_pdc_index(e, p))
        return NULL;
    return w;
}

void nw_wr_fail_pdc(nw_engine_t *e, nw_pdc_t *p, int32_t status)
{
    uint32_t pi = nw_pdc_index(e, p);
    for (uint32_t i = 0; i < e->nwrs; i++)
        if (e->wrs[i].in_use && e->wrs[i].pdc == pi)
            nw_wr_complete(e, &e->wrs[i], status);
    p->sq_head = p->sq_tail = NW_NIL;
    p->held = 0;
}
