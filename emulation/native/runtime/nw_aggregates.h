/* Helpers for header stacks, header unions and == on aggregates in the
 * generated pipeline code (emulation/native/c_types.py, c_expressions.py).
 * Included once into each generated translation unit (everything static). */
#ifndef NW_AGGREGATES_H
#define NW_AGGREGATES_H

#include <stdint.h>
#include <string.h>

/* A stack's next/last out of bounds outside a parser: the packet is dropped
 * and counted as an internal error, as the Python back end does. */
#define NW_ERR_STACK_BOUNDS 4

/* Two varbit values (bytes MSB first, `abits`/`bbits` long, at most `cap`
 * bytes each) as numbers, whatever their lengths: the Python back end's
 * header equality compares a varbit field's value only. */
static inline int nw_varbit_eq(const uint8_t *a, uint32_t abits, const uint8_t *b,
                               uint32_t bbits, uint32_t cap) {
    uint32_t an = (abits + 7u) / 8u, bn = (bbits + 7u) / 8u;
    if (an > cap)
        an = cap;
    if (bn > cap)
        bn = cap;
    for (; an > bn; an--, a++)
        if (*a)
            return 0;
    for (; bn > an; bn--, b++)
        if (*b)
            return 0;
    return memcmp(a, b, an) == 0;
}

/* The same value and the same length (P4's == on two varbit fields). */
static inline int nw_varbit_same(const uint8_t *a, uint32_t abits, const uint8_t *b,
                                 uint32_t bbits, uint32_t cap) {
    uint32_t n = (abits + 7u) / 8u;
    return abits == bbits && memcmp(a, b, n > cap ? cap : n) == 0;
}

#endif /* NW_AGGREGATES_H */
