/* Parser value sets in the generated pipeline: members (value, mask) over the
 * select keys concatenated (first key most significant, at most 128 bits), as
 * emulation/v1model/value_sets.py matches them. The control plane replaces
 * the members between packets (emulation/native/value_sets.py).
 * Included once into each generated translation unit (everything static). */
#ifndef NW_VALUE_SETS_H
#define NW_VALUE_SETS_H

#include <stdint.h>
#include <stdlib.h>

typedef struct nw_vset {
    uint32_t n, cap;
    nw_u128 *value;           /* value & mask */
    nw_u128 *mask;
} nw_vset_t;

static void nw_vset_free(nw_vset_t *s) {
    free(s->value);
    free(s->mask);
    s->value = s->mask = NULL;
    s->n = s->cap = 0;
}

/* 0, or -1 when memory runs out */
static int32_t nw_vset_push(nw_vset_t *s, nw_u128 value, nw_u128 mask) {
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? 2u * s->cap : 8u;
        nw_u128 *v = realloc(s->value, cap * sizeof *v);
        if (!v)
            return -1;
        s->value = v;
        nw_u128 *m = realloc(s->mask, cap * sizeof *m);
        if (!m)
            return -1;
        s->mask = m;
        s->cap = cap;
    }
    s->value[s->n] = value & mask;
    s->mask[s->n] = mask;
    s->n++;
    return 0;
}

static inline int nw_vset_match(const nw_vset_t *s, nw_u128 key) {
    for (uint32_t i = 0; i < s->n; i++)
        if ((key & s->mask[i]) == s->value[i])
            return 1;
    return 0;
}

#endif /* NW_VALUE_SETS_H */
