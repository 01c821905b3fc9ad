/* The engine's event trace (in the spirit of QUIC's qlog): a bounded ring of
 * per-PDC events with the driver's timestamps, drained by the caller
 * (nw_trace_drain). Off by default; when off, recording is one branch on
 * e->trace.cap. When the ring is full the oldest event is overwritten and
 * counted (nw_trace_lost), so a drain always returns the latest history. */
#ifndef NETWEFT_TRACE_H
#define NETWEFT_TRACE_H

#include <stdint.h>

#include "engine.h"

typedef struct {
    nw_trace_event_t *ring;
    uint32_t cap, head, count;
    uint64_t lost;
} nw_trace_t;

struct nw_engine;
/* Records one event (callers use NW_TRACE, which skips the call when off). */
void nw_trace_rec(struct nw_engine *e, uint8_t type, uint32_t pdc, uint32_t psn, uint64_t value,
                  uint8_t flags);

#define NW_TRACE(e, type, pdc, psn, value, flags)                                  \
    do {                                                                            \
        if ((e)->trace.cap)                                                         \
            nw_trace_rec((e), (type), (pdc), (psn), (value), (flags));              \
    } while (0)

#endif
