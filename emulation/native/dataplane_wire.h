/* The loop's link model: per port and direction, the one wire model (nw_link_*,
 * nic_offload/src/link/wire_model.c) behind the loop's nw_dp_wire_t hooks.
 *
 * Semantics of emulation/links (and so of the Python switch): frames arriving on
 * a port cross its ingress link with nw_link_send (the link's transmitter, its
 * waiting room, then the wire); frames leaving a port have been serialized by the
 * traffic manager's port transmitter (the link's rate) and cross the wire with
 * nw_link_propagate, only when the link has wire effects (delay, jitter, loss,
 * corruption).  Seeds are the caller's (Python passes seed64("SEED/PORT/DIR"), as
 * LinkDirection does), so a seeded run takes the same draws as the Python path.
 *
 * Not thread-safe: change links while the loop is not in a pass (the loop holds
 * its guard, the pipeline lock, around every pass).
 */
#ifndef NW_DATAPLANE_WIRE_H
#define NW_DATAPLANE_WIRE_H

#include <stdint.h>

#include "dataplane_loop.h"
#include "wire_model.h"

#define NW_DP_WIRE_IN 0u
#define NW_DP_WIRE_OUT 1u

typedef struct nw_dp_wires nw_dp_wires_t;

nw_dp_wires_t *nw_dp_wires_new(void);
void nw_dp_wires_free(nw_dp_wires_t *w);
/* Port `port`'s link in `direction` (NW_DP_WIRE_IN/OUT) runs `cfg` seeded with `seed`
 * (cfg NULL: an ideal link).  A replaced link's counts are kept.  0, or -1 for a bad
 * port/direction or a config the wire model refuses. */
int32_t nw_dp_wires_set(nw_dp_wires_t *w, uint32_t port, uint32_t direction,
                        const nw_link_config_t *cfg, uint64_t seed);
/* The hooks to give nw_dp_loop_set_wire / nw_dp_loop_set_ingress_wire. */
void nw_dp_wires_egress_hook(nw_dp_wires_t *w, nw_dp_wire_t *out);
void nw_dp_wires_ingress_hook(nw_dp_wires_t *w, nw_dp_wire_t *out);
/* Frames by outcome over every link of one direction (replaced ones included). */
void nw_dp_wires_stats(const nw_dp_wires_t *w, uint32_t direction, nw_link_stats_t *out);

#endif
