/* The ABI of a generated native (C) pipeline: what the packet I/O loop and the
 * traffic manager call, and what the Python driver calls through cffi.
 *
 * A pipeline is one P4 program (v1model) lowered to C and compiled into a
 * shared object (emulation/native/). Its state (tables, registers, counters,
 * the random generator) lives behind `void *pipeline`; one packet's state
 * between ingress and egress (headers, user metadata, standard_metadata, the
 * parser's offset) lives in `nw_pkt_t.state`, `nw_pipeline_state_size()` bytes
 * the caller owns (so a traffic manager can hold many packets).  The state
 * buffer must be at least 16-byte aligned: it may hold 128-bit fields
 * (unsigned __int128), which the compiler may access with aligned vector
 * instructions; the dataplane loop aligns it to 64 bytes, malloc to 16.
 *
 * The flow, as BMv2 simple_switch's:
 *   nw_ingress()   parser -> verify_checksum -> ingress; fills the routing fields
 *   (the caller)   NW_F_DROP: drop (count); NW_F_RESUBMIT: run nw_ingress again on
 *                  the same frame with instance_type = NW_INSTANCE_RESUBMIT (see
 *                  nw_pipeline_prepare_resubmit); mcast_grp != 0: one copy per
 *                  (port, rid) of the group (nw_state_copy, set egress_rid and
 *                  instance_type = NW_INSTANCE_REPLICATION); else unicast to
 *                  egress_spec; clone_session >= 0: a clone (NW_INSTANCE_INGRESS_CLONE)
 *   (the TM)       queue by (egress port, priority)
 *   nw_egress()    egress -> compute_checksum -> deparser; the frame in data[0..len)
 *                  is rewritten in place (headers emitted, then the payload)
 *   (the caller)   NW_F_DROP: drop; NW_F_RECIRCULATE: run nw_ingress on the new
 *                  frame with instance_type = NW_INSTANCE_RECIRC; truncate_len:
 *                  cut the frame; then transmit on egress_port.
 *
 * Threads: the pipeline's passes are not reentrant. A C packet loop takes
 * nw_pipeline_lock() around its passes (per batch is fine); the Python control
 * plane takes it around every table update, so an update happens between
 * packets, whole (an entry is never half-visible to a packet).
 *
 * Stable: fields are only ever added at the end of structs, functions only
 * added. NW_PIPELINE_ABI_VERSION changes when that is not possible.
 */
#ifndef NW_PIPELINE_ABI_H
#define NW_PIPELINE_ABI_H

#include <stdint.h>
#include <stddef.h>

#define NW_PIPELINE_ABI_VERSION 1u

/* standard_metadata.instance_type values (BMv2 simple_switch) */
#define NW_INSTANCE_NORMAL 0u
#define NW_INSTANCE_INGRESS_CLONE 1u
#define NW_INSTANCE_EGRESS_CLONE 2u
#define NW_INSTANCE_COALESCED 3u
#define NW_INSTANCE_RECIRC 4u
#define NW_INSTANCE_REPLICATION 5u
#define NW_INSTANCE_RESUBMIT 6u

#define NW_DROP_PORT 511u

/* nw_pkt_t.flags, set by nw_ingress / nw_egress */
#define NW_F_DROP 1u          /* egress_spec (ingress) / egress_spec (egress) is the drop port */
#define NW_F_PARSER_ERROR 2u  /* the parser failed (standard_metadata.parser_error != 0) */
#define NW_F_RESUBMIT 4u      /* ingress asked for resubmit (field list in resubmit_fl) */
#define NW_F_RECIRCULATE 8u   /* egress asked for recirculate (field list in recirc_fl) */
#define NW_F_TRUNCATE 16u     /* truncate_len is set */
#define NW_F_CLONE 32u        /* clone_session / clone_fl are set */
#define NW_F_DIGEST 64u       /* (not produced: digests go to the pipeline's digest ring) */
#define NW_F_EGRESS_RID 128u  /* in to nw_egress: set egress_rid from pkt (a clone's
                                 multicast copy; REPLICATION copies always get it) */
#define NW_FIELD_LIST_NONE 0xffffffffu /* clone_fl etc.: no field list (plain clone) */

/* return codes of nw_ingress / nw_egress */
#define NW_OK 0
#define NW_ERR_ASSERT 1       /* assert/assume failed: drop the packet, count it */
#define NW_ERR_NOSPACE 2      /* egress: the deparsed frame would not fit in cap */
#define NW_ERR_ARG 3          /* bad argument (state NULL, len > cap ...) */

typedef struct nw_pkt {
    uint8_t *data;            /* the frame; nw_egress rewrites it in place */
    uint32_t len;             /* bytes in data */
    uint32_t cap;             /* bytes data can hold (egress may grow the frame) */
    uint16_t ingress_port;    /* in: received on (nw_ingress) */
    uint16_t egress_spec;     /* out of nw_ingress: standard_metadata.egress_spec */
    uint16_t egress_port;     /* in to nw_egress: the port the copy leaves on */
    uint16_t mcast_grp;       /* out of nw_ingress: 0 = unicast */
    uint16_t egress_rid;      /* in to nw_egress: replication id of a multicast copy */
    uint8_t priority;         /* out of nw_ingress: standard_metadata.priority (queue) */
    uint8_t instance_type;    /* in: NW_INSTANCE_* of this pass */
    uint32_t flags;           /* out: NW_F_* */
    int32_t clone_session;    /* out: clone session id (NW_F_CLONE) */
    uint32_t clone_fl;        /* out: field list of the clone (NW_FIELD_LIST_NONE: none) */
    uint32_t resubmit_fl;     /* out: field list of the resubmit */
    uint32_t recirc_fl;       /* out: field list of the recirculation */
    uint32_t truncate_len;    /* out: bytes to keep (NW_F_TRUNCATE) */
    uint32_t ingress_len;     /* out of nw_ingress: standard_metadata.packet_length */
    uint32_t parser_error;    /* out of nw_ingress: the error code (Program.errors index) */
    void *state;              /* nw_pipeline_state_size() bytes the caller owns */
    /* in to nw_egress: state_size bytes an E2E clone's state is written to (NULL: the
     * caller takes no egress clones); out with NW_F_CLONE: the clone's payload is
     * data[clone_payload_at .. + clone_payload_len) when nw_egress returns */
    void *clone_state;
    uint32_t clone_payload_at;
    uint32_t clone_payload_len;
    /* in to nw_ingress: the state of the pass a resubmitted or recirculated packet
     * comes from, whose field list preserved_fl is copied after parsing (NULL: none) */
    const void *preserved;
    uint32_t preserved_fl;
} nw_pkt_t;

/* What the traffic manager measured for a packet (BMv2 units: microseconds,
 * packets); same fields as dataplane_tm.h's nw_tm_queue_meta_t.
 * enq_timestamp UINT64_MAX: not queued (the egress time is used). */
typedef struct nw_queue_meta {
    uint64_t enq_timestamp;   /* microseconds */
    uint32_t enq_qdepth;
    uint64_t deq_timedelta;
    uint32_t deq_qdepth;
    uint32_t qid;
} nw_queue_meta_t;

/* ---- the pipeline object (exported by every generated shared object) */

/* A new pipeline with empty tables, zeroed registers and counters; `seed` seeds
 * random() as Python's random.Random(seed) does. NULL on allocation failure. */
void *nw_pipeline_new(uint64_t seed);
void nw_pipeline_free(void *pipeline);
/* a recursive mutex serialising passes and control-plane updates (see above) */
void nw_pipeline_lock(void *pipeline);
void nw_pipeline_unlock(void *pipeline);
uint32_t nw_pipeline_abi_version(void);
/* bytes of nw_pkt_t.state for this program */
size_t nw_pipeline_state_size(void);
/* the most bytes the deparser can emit: give nw_egress cap >= len + this */
uint32_t nw_pipeline_emit_max(void);

/* Parser, verify_checksum and ingress for pkt->data[0..len) received on
 * pkt->ingress_port at now_ns. The state is initialised (headers invalid,
 * metadata zero); a RESUBMIT/RECIRC pass gives pkt->preserved, whose field list
 * pkt->preserved_fl is copied in after parsing (as simple_switch). */
int nw_ingress(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns);

/* Egress, compute_checksum and deparser for a packet nw_ingress ran on
 * (its state), leaving on pkt->egress_port; queue NULL: no queueing (the
 * timestamps are now). The frame is rewritten in pkt->data (len updated). */
int nw_egress(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns, const nw_queue_meta_t *queue);

/* Copy one packet's state (multicast copies, clones): dst gets src's headers,
 * metadata and payload offset. */
void nw_state_copy(void *dst_state, const void *src_state);

/* Reset dst's metadata and standard_metadata and copy field list `field_list`
 * (NW_FIELD_LIST_NONE: none) from src into it. */
void nw_state_prepare_pass(void *dst_state, const void *src_state, uint32_t field_list);

/* ---- the packet flow's requests (emulation/native/c_flow.py)
 *
 * An I2E clone (NW_F_CLONE out of nw_ingress, session configured): the frame
 * as received parsed again from the same port into clone_state, metadata reset
 * except field list pkt->clone_fl, instance_type NW_INSTANCE_INGRESS_CLONE. */
int nw_clone_i2e(void *pipeline, nw_pkt_t *pkt, void *clone_state, uint64_t now_ns);
/* 1 if the program clones, resubmits or recirculates (nw_process is then not used) */
uint32_t nw_pipeline_uses_flow(void);
/* Digests (which 0: site, aux = receiver) and log_msg messages (which 1: site,
 * aux = bit k set when value k is present) wait in two bounded rings, one
 * producer (the passes) and one consumer (any thread); a full ring counts a drop.
 * nw_flow_pop copies nw_flow_words() words; 1, or 0 when the ring is empty. */
uint32_t nw_flow_words(void);
int32_t nw_flow_pop(void *p, uint32_t which, uint32_t *site, uint32_t *aux, uint64_t *w);
uint64_t nw_flow_pending(void *p);
uint64_t nw_flow_dropped(void *p, uint32_t which);

/* ---- run to completion without a traffic manager (the in-process fast path)
 *
 * nw_process: nw_ingress, then for a unicast packet with no clone, resubmit or
 * digest, nw_egress on the same buffer: returns NW_OK with the frame out on
 * pkt->egress_port, or NW_F_DROP set. When the packet needs the driver
 * (multicast, clone, resubmit, recirculate, digest) it returns NW_NEEDS_DRIVER
 * with the state as nw_ingress (or nw_egress, NW_F_RECIRCULATE) left it and
 * NW_STAGE_* in pkt->flags' upper bits (NW_F_AFTER_EGRESS). */
#define NW_NEEDS_DRIVER 16
#define NW_F_AFTER_EGRESS 0x10000u  /* with NW_NEEDS_DRIVER: egress already ran */
int nw_process(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns);

/* nw_process over n packets (each with its own data/cap/state); the return
 * codes go to rc[i]. Time advances by step_ns per packet from now_ns. */
void nw_process_batch(void *pipeline, nw_pkt_t *pkts, int32_t *rc, uint32_t n,
                      uint64_t now_ns, uint64_t step_ns);

#endif /* NW_PIPELINE_ABI_H */
