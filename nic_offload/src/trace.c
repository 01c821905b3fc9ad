/* The engine's event trace: see trace.h. */
#include <stdlib.h>

#include "engine_state.h"

int32_t nw_trace_start(nw_engine_t *e, uint32_t capacity)
{
    if (capacity > (1u << 24))
        return NW_EINVAL;
    free(e->trace.ring);
    e->trace = (nw_trace_t){0};
    if (capacity == 0)
        return NW_OK;
    e->trace.ring = calloc(capacity, sizeof(*e->trace.ring));
    if (!e->trace.ring)
        return NW_ENOMEM;
    e->trace.cap = capacity;
    return NW_OK;
}

void nw_trace_rec(nw_engine_t *e, uint8_t type, uint32_t pdc, uint32_t psn, uint64_t value,
                  uint8_t flags)
{
    nw_trace_t *t = &e->trace;
    uint32_t i = (t->head + t->count) % t->cap;
    if (t->count == t->cap) { /* full: the oldest event gives way */
        t->head = (t->head + 1) % t->cap;
        t->lost++;
    } else {
        t->count++;
    }
    t->ring[i] = (nw_trace_event_t){.t_ns = e->now, .value = value, .psn = psn,
                                    .pdc = (uint16_t)pdc, .type = type, .flags = flags};
}

int32_t nw_trace_drain(nw_engine_t *e, nw_trace_event_t *out, uint32_t max)
{
    nw_trace_t *t = &e->trace;
    uint32_t n = 0;
    while (n < max && t->count > 0) {
        out[n++] = t->ring[t->head];
        t->head = (t->head + 1) % t->cap;
        t->count--;
    }
    return (int32_t)n;
}

uint64_t nw_trace_lost(const nw_engine_t *e)
{
    return e->trace.lost;
}
