/* Per-packet entropy: the UDP source port switches hash on to spray a PDC. */
#ifndef NETWEFT_ENTROPY_H
#define NETWEFT_ENTROPY_H

#include <stdint.h>

typedef struct {
    uint16_t base, count;   /* values base .. base+count-1 */
    uint32_t burst;         /* packets per value before moving on */
    uint32_t index, used;   /* current value index, packets sent on it */
} nw_entropy_t;

void nw_entropy_init(nw_entropy_t *s, uint16_t base, uint16_t count, uint32_t burst,
                     uint32_t start);
/* The entropy value (UDP source port) for the next packet. */
uint16_t nw_entropy_next(nw_entropy_t *s);

#endif
