/* Completion queue ring. */
#include "completion_queue.h"

#include <stdlib.h>

int32_t nw_cq_init(nw_cq_t *q, uint32_t cap)
{
    q->ring = calloc(cap ? cap : 1, sizeof(*q->ring));
    q->cap = cap;
    q->head = q->count = 0;
    return q->ring ? NW_OK : NW_ENOMEM;
}

void nw_cq_destroy(nw_cq_t *q)
{
    free(q->ring);
    q->ring = NULL;
}

int32_t nw_cq_push(nw_cq_t *q, const nw_completion_t *c)
{
    if (q->count >= q->cap)
        return NW_EAGAIN;
    q->ring[(q->head + q->count) % q->cap] = *c;
    q->count++;
    return NW_OK;
}

uint32_t nw_cq_pop(nw_cq_t *q, nw_completion_t *out, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && q->count > 0) {
        out[n++] = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
    }
    return n;
}
