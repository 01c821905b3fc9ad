/* Round-robin entropy over a configured port range, `burst` packets per value.
 * Retransmissions draw the next value like any packet, so a retransmitted
 * packet usually takes a different path than the lost one. */
#include "entropy.h"

void nw_entropy_init(nw_entropy_t *s, uint16_t base, uint16_t count, uint32_t burst,
                     uint32_t start)
{
    s->base = base;
    s->count = count ? count : 1;
    s->burst = burst ? burst : 1;
    s->index = start % s->count;
    s->used = 0;
}

uint16_t nw_entropy_next(nw_entropy_t *s)
{
    if (s->used >= s->burst) {
        s->used = 0;
        s->index = (s->index + 1) % s->count;
    }
    s->used++;
    return (uint16_t)(s->base + s->index);
}
