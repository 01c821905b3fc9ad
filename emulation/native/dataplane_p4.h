/* A generated P4 pipeline (pipeline_abi.h) as a dataplane pipeline (dataplane_pipeline.h).
 *
 * The generated shared object exports nw_ingress, nw_egress and
 * nw_pipeline_state_size; Python passes their addresses (and the pipeline
 * object) here, so the loop calls the generated code directly, through the same
 * function table as the stand-in and the minimal forwarder.  The packet flow's
 * requests (clone, resubmit, recirculate) go to the loop in the verdict; an
 * ingress clone re-parses the received frame through nw_clone_i2e
 * (nw_dp_p4_set_clone_i2e).
 */
#ifndef NW_DATAPLANE_P4_H
#define NW_DATAPLANE_P4_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane_pipeline.h"
#include "pipeline_abi.h"

typedef struct nw_dp_p4_functions {
    void *pipeline;  /* nw_pipeline_new()'s object */
    int (*ingress)(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns);
    int (*egress)(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns, const nw_queue_meta_t *queue);
    size_t state_size; /* nw_pipeline_state_size() */
} nw_dp_p4_functions_t;

typedef struct nw_dp_p4 nw_dp_p4_t;

nw_dp_p4_t *nw_dp_p4_new(const nw_dp_p4_functions_t *functions);
/* The same from the functions' addresses (what Python gets from the loaded object). */
nw_dp_p4_t *nw_dp_p4_from_addresses(void *pipeline, uintptr_t ingress, uintptr_t egress,
                                    size_t state_size);
/* nw_clone_i2e's address, for a pipeline generated with the packet flow (c_flow.py):
 * ingress clones are parsed again (as BMv2) and egress clones get the state and
 * payload nw_egress gives them; without it a clone is a copy of the packet */
void nw_dp_p4_set_clone_i2e(nw_dp_p4_t *p, uintptr_t clone_i2e);
void nw_dp_p4_free(nw_dp_p4_t *p);
const nw_dp_pipeline_t *nw_dp_p4_pipeline(nw_dp_p4_t *p);
/* passes the generated code did not finish, by its return code: NW_ERR_ASSERT (1),
 * NW_ERR_NOSPACE (2), NW_ERR_ARG (3), a stack index out of bounds (4), an empty action
 * selector group (5); code 0 counts any other code */
#define NW_DP_P4_ERROR_CODES 8
uint64_t nw_dp_p4_errors(const nw_dp_p4_t *p, uint32_t code);

#endif
