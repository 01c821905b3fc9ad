/* The stand-in pipeline: p4/basic_forward.p4's behaviour written by hand in C.
 *
 * It exercises the dataplane the way a generated pipeline will (two halves,
 * queues between them) until the generated one plugs into the same table:
 * ingress parses Ethernet and IPv4 (a frame too short for a header it names
 * is malformed: counted and dropped), drops IPv4 with options, a bad header
 * checksum or TTL <= 1, looks the destination up in a small LPM table
 * (default: drop), rewrites the MACs and decrements the TTL; egress
 * recomputes the header checksum.
 */
#ifndef NW_DATAPLANE_STANDIN_H
#define NW_DATAPLANE_STANDIN_H

#include <stdint.h>

#include "dataplane_pipeline.h"

#define NW_DP_STANDIN_MAX_ROUTES 256u

typedef struct nw_dp_standin nw_dp_standin_t;

nw_dp_standin_t *nw_dp_standin_new(void);
void nw_dp_standin_free(nw_dp_standin_t *s);
/* ipv4_forward(dmac, port) for prefix/plen (host byte order); 0 ok, -1 full or bad. */
int32_t nw_dp_standin_add_route(nw_dp_standin_t *s, uint32_t prefix, uint32_t plen,
                                const uint8_t *dmac, uint32_t port);
/* An egress priority for every packet (default 0). */
void nw_dp_standin_set_priority(nw_dp_standin_t *s, uint32_t priority);
const nw_dp_pipeline_t *nw_dp_standin_pipeline(nw_dp_standin_t *s);

#endif
