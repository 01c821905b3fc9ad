/* The minimal forwarder: the physical limit beside the P4 pipelines.
 *
 * No parsing and no queues: a frame received on port A is copied from A's RX
 * ring into port B's TX ring (B = the forwarder's map of A).  The dataplane
 * loop runs it as a NW_DP_PIPELINE_DIRECT pipeline.
 */
#ifndef NW_DATAPLANE_FORWARDER_H
#define NW_DATAPLANE_FORWARDER_H

#include <stdint.h>

#include "dataplane_pipeline.h"

typedef struct nw_dp_forwarder nw_dp_forwarder_t;

nw_dp_forwarder_t *nw_dp_forwarder_new(void);
void nw_dp_forwarder_free(nw_dp_forwarder_t *f);
/* Frames from in_port go to out_port (NW_DP_DROP_PORT: dropped, the default). */
int32_t nw_dp_forwarder_map(nw_dp_forwarder_t *f, uint32_t in_port, uint32_t out_port);
/* The forwarder as a pipeline (valid while f lives). */
const nw_dp_pipeline_t *nw_dp_forwarder_pipeline(nw_dp_forwarder_t *f);

#endif
