/* Multicast groups and clone sessions (dataplane_replication.h). */
#include "dataplane_replication.h"

#include <stdlib.h>
#include <string.h>

typedef struct group {
    nw_dp_copy_t *copies;
    uint32_t n;
} group_t;

struct nw_dp_replication {
    group_t groups[NW_DP_MAX_GROUP + 1];
    nw_dp_clone_session_t sessions[NW_DP_MAX_SESSION + 1];
};

nw_dp_replication_t *nw_dp_replication_new(void)
{
    return calloc(1, sizeof(nw_dp_replication_t));
}

void nw_dp_replication_free(nw_dp_replication_t *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i <= NW_DP_MAX_GROUP; i++)
        free(r->groups[i].copies);
    free(r);
}

int32_t nw_dp_group_set(nw_dp_replication_t *r, uint32_t id, const nw_dp_copy_t *copies,
                        uint32_t n)
{
    if (id == 0 || id > NW_DP_MAX_GROUP || n > 4096u)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        if (copies[i].port > 511u || copies[i].rid > 0xffffu)
            return -1;
    nw_dp_copy_t *mine = NULL;
    if (n) {
        mine = malloc((size_t)n * sizeof(*mine));
        if (!mine)
            return -1;
        memcpy(mine, copies, (size_t)n * sizeof(*mine));
    }
    free(r->groups[id].copies);
    r->groups[id].copies = mine;
    r->groups[id].n = n;
    return 0;
}

const nw_dp_copy_t *nw_dp_group_get(const nw_dp_replication_t *r, uint32_t id, uint32_t *n)
{
    if (id == 0 || id > NW_DP_MAX_GROUP) {
        *n = 0;
        return NULL;
    }
    *n = r->groups[id].n;
    return r->groups[id].copies;
}

int32_t nw_dp_session_set(nw_dp_replication_t *r, uint32_t id, uint32_t port,
                          uint32_t mc_group, uint32_t truncate)
{
    if (id > NW_DP_MAX_SESSION || (port != NW_DP_NO_PORT && port > 511u) ||
        mc_group > NW_DP_MAX_GROUP)
        return -1;
    nw_dp_clone_session_t *s = &r->sessions[id];
    s->port = port;
    s->mc_group = mc_group;
    s->truncate = truncate;
    s->in_use = port != NW_DP_NO_PORT || mc_group != 0;
    return 0;
}

const nw_dp_clone_session_t *nw_dp_session_get(const nw_dp_replication_t *r, uint32_t id)
{
    if (id > NW_DP_MAX_SESSION || !r->sessions[id].in_use)
        return NULL;
    return &r->sessions[id];
}
