/* Completion queue: a fixed ring of nw_completion_t in completion order. */
#ifndef NETWEFT_COMPLETION_QUEUE_H
#define NETWEFT_COMPLETION_QUEUE_H

#include <stdint.h>

#include "engine.h"

typedef struct {
    nw_completion_t *ring;
    uint32_t cap, head, count;
} nw_cq_t;

int32_t nw_cq_init(nw_cq_t *q, uint32_t cap);
void nw_cq_destroy(nw_cq_t *q);
/* NW_EAGAIN if full (the engine's credit accounting prevents that). */
int32_t nw_cq_push(nw_cq_t *q, const nw_completion_t *c);
uint32_t nw_cq_pop(nw_cq_t *q, nw_completion_t *out, uint32_t max);

#endif
