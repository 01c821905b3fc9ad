/* simple_switch's packet replication engine and clone sessions, in C.
 *
 * Multicast group id (1..65535) -> ordered (egress port, rid) copies; clone
 * session id (0..32767) -> a port and/or a multicast group, and a truncation
 * length.  Configured from Python before (or between) runs of the loop.
 */
#ifndef NW_DATAPLANE_REPLICATION_H
#define NW_DATAPLANE_REPLICATION_H

#include <stdint.h>

#define NW_DP_MAX_GROUP 65535u
#define NW_DP_MAX_SESSION 32767u
#define NW_DP_NO_PORT 0xffffffffu

typedef struct nw_dp_copy {
    uint32_t port;
    uint32_t rid;
} nw_dp_copy_t;

typedef struct nw_dp_clone_session {
    uint32_t port;       /* NW_DP_NO_PORT: none */
    uint32_t mc_group;   /* 0: none */
    uint32_t truncate;   /* 0: whole packet */
    uint32_t in_use;
} nw_dp_clone_session_t;

typedef struct nw_dp_replication nw_dp_replication_t;

nw_dp_replication_t *nw_dp_replication_new(void);
void nw_dp_replication_free(nw_dp_replication_t *r);
/* Create or replace group `id` (n = 0 deletes it); 0 ok, -1 bad id/port/rid or no memory. */
int32_t nw_dp_group_set(nw_dp_replication_t *r, uint32_t id, const nw_dp_copy_t *copies,
                        uint32_t n);
/* The copies of a group (*n = 0 for an unknown group, as BMv2). */
const nw_dp_copy_t *nw_dp_group_get(const nw_dp_replication_t *r, uint32_t id, uint32_t *n);
/* Create or replace a session (port NW_DP_NO_PORT and mc_group 0 deletes it). */
int32_t nw_dp_session_set(nw_dp_replication_t *r, uint32_t id, uint32_t port,
                          uint32_t mc_group, uint32_t truncate);
/* The session, or NULL when it is not configured (the clone is then dropped). */
const nw_dp_clone_session_t *nw_dp_session_get(const nw_dp_replication_t *r, uint32_t id);

#endif
