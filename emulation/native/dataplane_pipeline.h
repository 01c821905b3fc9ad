/* How a pipeline plugs into the dataplane loop: a table of function pointers.
 *
 * The minimal forwarder, the stand-in pipeline and the generated P4 pipeline
 * are all reached through nw_dp_pipeline_t, so the loop never knows which one
 * runs.  A pipeline has two halves around the traffic manager, as v1model:
 * ingress decides where a packet goes (a port, a multicast group, a clone),
 * the dataplane replicates and queues it, and egress runs per copy when the
 * copy leaves its queue, with the queue metadata the traffic manager measured.
 *
 * The dataplane owns packet buffers: `data` holds `len` bytes and room for
 * `cap`; a pipeline may rewrite the bytes and change `len` up to `cap`
 * (a deparser pushing headers).  `state` is the pipeline's own per-packet
 * state (its headers and metadata, `state_size` bytes, 64-byte aligned), carried
 * across the queues and copied with the packet when the dataplane replicates it.
 */
#ifndef NW_DATAPLANE_PIPELINE_H
#define NW_DATAPLANE_PIPELINE_H

#include <stdint.h>

#include "dataplane_tm.h"

#define NW_DP_DROP_PORT 511u

/* v1model instance types the dataplane sets on copies */
#define NW_DP_INSTANCE_NORMAL 0u
#define NW_DP_INSTANCE_INGRESS_CLONE 1u
#define NW_DP_INSTANCE_EGRESS_CLONE 2u
#define NW_DP_INSTANCE_RECIRC 4u
#define NW_DP_INSTANCE_REPLICATION 5u
#define NW_DP_INSTANCE_RESUBMIT 6u

/* nw_dp_packet_t.flow_flags */
#define NW_DP_PKT_PRESERVED 1u  /* a resubmit/recirculation pass: state holds the previous
                                   pass's, whose field list preserved_fl the pass keeps */
#define NW_DP_PKT_EGRESS_RID 2u /* a clone's multicast copy: egress sees rid */

/* flags of a pipeline */
#define NW_DP_PIPELINE_DIRECT 1u /* ring to ring: only `direct` is called, no queues */

typedef struct nw_dp_packet {
    uint8_t *data;
    uint32_t len;
    uint32_t cap;
    uint32_t ingress_port;
    uint32_t ingress_len;    /* bytes as received: the length the queues count */
    uint32_t egress_port;    /* set by the dataplane before egress */
    uint32_t instance_type;  /* NW_DP_INSTANCE_* */
    uint32_t rid;            /* replication id of a multicast copy */
    uint32_t passes;         /* pipeline passes before this one (clones of clones) */
    void *state;             /* state_size bytes of pipeline state */
    uint32_t truncate;       /* in to egress: bytes kept on output (0 = whole frame) */
    uint32_t flow_flags;     /* NW_DP_PKT_* */
    uint32_t preserved_fl;   /* with NW_DP_PKT_PRESERVED */
} nw_dp_packet_t;

/* A half's decision; the dataplane fills the defaults before each call. */
typedef struct nw_dp_verdict {
    uint32_t egress_spec;    /* NW_DP_DROP_PORT drops (the default) */
    uint32_t priority;       /* ingress: the egress queue (0 = lowest) */
    uint32_t mcast_grp;      /* ingress: 0 = unicast */
    int32_t clone_session;   /* -1 = no clone */
    uint32_t truncate;       /* 0 = whole frame, else bytes kept on output */
    uint32_t malformed;      /* the frame failed to parse: counted apart from program drops */
    /* BMv2's packet flow (dataplane_flow.c); 0 unless the pipeline asks */
    uint32_t clone_fl;       /* field list of the clone */
    uint32_t resubmit;       /* ingress: run ingress again on the received frame */
    uint32_t resubmit_fl;
    uint32_t recirculate;    /* egress: run ingress on the deparsed frame */
    uint32_t recirc_fl;
    const void *clone_state; /* egress clone: its state (valid until the next pass) */
    uint32_t clone_payload_at, clone_payload_len; /* egress clone: its bytes in data */
} nw_dp_verdict_t;

typedef struct nw_dp_pipeline {
    const char *name;
    void *self;
    uint32_t state_size;
    uint32_t flags;
    void (*ingress)(void *self, uint64_t now_ns, nw_dp_packet_t *pkt, nw_dp_verdict_t *v);
    void (*egress)(void *self, uint64_t now_ns, nw_dp_packet_t *pkt,
                   const nw_tm_queue_meta_t *queue, nw_dp_verdict_t *v);
    /* NW_DP_PIPELINE_DIRECT only: the egress port of a frame (NW_DP_DROP_PORT drops) */
    uint32_t (*direct)(void *self, uint32_t in_port, const uint8_t *frame, uint32_t len);
    /* optional: an ingress clone's state, the frame of src parsed again into dst_state
     * with field list field_list of src's state kept (0 on success) */
    int32_t (*clone_i2e)(void *self, uint64_t now_ns, const nw_dp_packet_t *src,
                         uint32_t field_list, void *dst_state);
} nw_dp_pipeline_t;

#endif
