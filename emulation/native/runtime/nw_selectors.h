/* Action selector groups: the members (action + action data) one table entry
 * points at. A packet picks member (hash & mask) % n, the hash taken by the
 * generated table code over the selector keys packed as a field list, as
 * emulation/v1model/action_profiles.py's SelectorGroup.select. The control
 * plane (Python) owns a group (nw_group_new/nw_group_free) and replaces its
 * members whole under the pipeline lock.
 */
#ifndef NW_SELECTORS_H
#define NW_SELECTORS_H

#include "nw_runtime.h"

#ifndef NW_MAX_ARGS
#define NW_MAX_ARGS 16u
#endif

typedef struct nw_member {
    uint32_t action;
    uint32_t nargs;
    uint64_t args[NW_MAX_ARGS];
} nw_member_t;

typedef struct nw_group {
    uint32_t n;
    nw_member_t *members;
} nw_group_t;

void *nw_group_new(void) { return calloc(1, sizeof(nw_group_t)); }

void nw_group_free(void *g) {
    if (!g)
        return;
    free(((nw_group_t *)g)->members);
    free(g);
}

/* members i: action[i], nargs[i] words at args + i * NW_MAX_ARGS; 0 ok, -1 no memory, -2 sizes */
int32_t nw_group_set(void *g, uint32_t n, const uint32_t *action, const uint32_t *nargs,
                     const uint64_t *args) {
    nw_group_t *G = g;
    nw_member_t *m = n ? calloc(n, sizeof(*m)) : NULL;
    if (n && !m)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (nargs[i] > NW_MAX_ARGS) {
            free(m);
            return -2;
        }
        m[i].action = action[i];
        m[i].nargs = nargs[i];
        memcpy(m[i].args, args + (size_t)i * NW_MAX_ARGS, nargs[i] * sizeof(uint64_t));
    }
    free(G->members);
    G->members = m;
    G->n = n;
    return 0;
}

#endif /* NW_SELECTORS_H */
