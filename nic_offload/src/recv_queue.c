/* Shared receive queue ring. */
#include "recv_queue.h"

#include <stdlib.h>

#include "engine.h"

int32_t nw_rq_init(nw_recv_queue_t *q, uint32_t cap)
{
    q->ring = calloc(cap ? cap : 1, sizeof(*q->ring));
    q->cap = cap;
    q->head = q->count = 0;
    return q->ring ? NW_OK : NW_ENOMEM;
}

void nw_rq_destroy(nw_recv_queue_t *q)
{
    free(q->ring);
    q->ring = NULL;
}

int32_t nw_rq_push(nw_recv_queue_t *q, uint64_t wr_id, void *buf, uint64_t cap)
{
    if (q->count >= q->cap)
        return NW_EAGAIN;
    nw_recv_buf_t *r = &q->ring[(q->head + q->count) % q->cap];
    r->wr_id = wr_id;
    r->buf = buf;
    r->cap = cap;
    q->count++;
    return NW_OK;
}

int32_t nw_rq_pop(nw_recv_queue_t *q, nw_recv_buf_t *out)
{
    if (q->count == 0)
        return 0;
    *out = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return 1;
}
