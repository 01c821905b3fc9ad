/* A generated P4 pipeline behind the dataplane's function table (dataplane_p4.h). */
#include "dataplane_p4.h"

#include <stdlib.h>
#include <string.h>

struct nw_dp_p4 {
    nw_dp_p4_functions_t f;
    nw_dp_pipeline_t ops;
    uint64_t errors[NW_DP_P4_ERROR_CODES]; /* by the generated code's return code */
    int (*clone_i2e)(void *pipeline, nw_pkt_t *pkt, void *clone_state, uint64_t now_ns);
    void *preserved;   /* state_size bytes: the previous pass's state (resubmit, recirculate) */
    void *clone_state; /* state_size bytes: an egress clone's state */
};

static void count_error(nw_dp_p4_t *a, int rc)
{
    uint32_t code = rc > 0 && rc < NW_DP_P4_ERROR_CODES ? (uint32_t)rc : 0;
    a->errors[code]++;
}

static void to_abi(const nw_dp_packet_t *p, nw_pkt_t *k)
{
    memset(k, 0, sizeof(*k));
    k->data = p->data;
    k->len = p->len;
    k->cap = p->cap;
    k->ingress_port = (uint16_t)p->ingress_port;
    k->egress_port = (uint16_t)p->egress_port;
    k->egress_rid = (uint16_t)p->rid;
    k->instance_type = (uint8_t)p->instance_type;
    k->clone_session = -1;
    k->state = p->state;
    if (p->flow_flags & NW_DP_PKT_EGRESS_RID)
        k->flags |= NW_F_EGRESS_RID;
    if (p->truncate) {
        k->flags |= NW_F_TRUNCATE;
        k->truncate_len = p->truncate;
    }
}

static void ingress(void *self, uint64_t now_ns, nw_dp_packet_t *p, nw_dp_verdict_t *v)
{
    nw_dp_p4_t *a = self;
    nw_pkt_t k;
    to_abi(p, &k);
    k.flags = 0;
    if ((p->flow_flags & NW_DP_PKT_PRESERVED) && a->preserved) {
        memcpy(a->preserved, p->state, a->f.state_size);
        k.preserved = a->preserved;
        k.preserved_fl = p->preserved_fl;
    }
    int rc = a->f.ingress(a->f.pipeline, &k, now_ns);
    if (rc != NW_OK) {
        count_error(a, rc);
        return; /* dropped (egress_spec stays the drop port) */
    }
    p->len = k.len <= p->cap ? k.len : p->cap;
    if (k.flags & NW_F_CLONE) {
        v->clone_session = k.clone_session;
        v->clone_fl = k.clone_fl;
    }
    if (k.flags & NW_F_RESUBMIT) {
        v->resubmit = 1;
        v->resubmit_fl = k.resubmit_fl;
        return;
    }
    if (k.flags & NW_F_DROP) {
        v->malformed = (k.flags & NW_F_PARSER_ERROR) != 0;
        return;
    }
    v->egress_spec = k.egress_spec;
    v->priority = k.priority;
    v->mcast_grp = k.mcast_grp;
    if (k.flags & NW_F_TRUNCATE)
        v->truncate = k.truncate_len ? k.truncate_len : 1;
}

static void egress(void *self, uint64_t now_ns, nw_dp_packet_t *p,
                   const nw_tm_queue_meta_t *queue, nw_dp_verdict_t *v)
{
    nw_dp_p4_t *a = self;
    nw_pkt_t k;
    to_abi(p, &k);
    k.clone_state = a->clone_i2e ? a->clone_state : NULL; /* a generated pipeline's flow */
    nw_queue_meta_t q = {.enq_timestamp = queue->enq_timestamp, .enq_qdepth = queue->enq_qdepth,
                         .deq_timedelta = queue->deq_timedelta, .deq_qdepth = queue->deq_qdepth,
                         .qid = queue->qid};
    int rc = a->f.egress(a->f.pipeline, &k, now_ns, &q);
    v->egress_spec = NW_DP_DROP_PORT;
    if (rc != NW_OK) {
        count_error(a, rc);
        return;
    }
    p->len = k.len <= p->cap ? k.len : p->cap;
    if (k.flags & NW_F_CLONE) {
        v->clone_session = k.clone_session;
        v->clone_fl = k.clone_fl;
        v->clone_state = k.clone_state;
        v->clone_payload_at = k.clone_payload_at;
        v->clone_payload_len = k.clone_payload_len;
    }
    if (k.flags & NW_F_DROP)
        return;
    if (k.flags & NW_F_RECIRCULATE) {
        v->recirculate = 1;
        v->recirc_fl = k.recirc_fl;
        return;
    }
    v->egress_spec = p->egress_port;
    /* nw_egress already cut the frame to the truncation length */
}

static int32_t clone_i2e(void *self, uint64_t now_ns, const nw_dp_packet_t *src,
                         uint32_t field_list, void *dst_state)
{
    nw_dp_p4_t *a = self;
    nw_pkt_t k;
    to_abi(src, &k);
    k.clone_fl = field_list;
    int rc = a->clone_i2e(a->f.pipeline, &k, dst_state, now_ns);
    if (rc != NW_OK)
        count_error(a, rc);
    return rc;
}

void nw_dp_p4_set_clone_i2e(nw_dp_p4_t *a, uintptr_t address)
{
    a->clone_i2e = (int (*)(void *, nw_pkt_t *, void *, uint64_t))address;
    a->ops.clone_i2e = a->clone_i2e ? clone_i2e : NULL;
}

nw_dp_p4_t *nw_dp_p4_new(const nw_dp_p4_functions_t *f)
{
    if (!f || !f->ingress || !f->egress || f->state_size > (1u << 20))
        return NULL;
    nw_dp_p4_t *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->f = *f;
    size_t size = (f->state_size + 63u) & ~(size_t)63u;
    a->preserved = size ? aligned_alloc(64, size) : NULL;
    a->clone_state = size ? aligned_alloc(64, size) : NULL;
    if (size && (!a->preserved || !a->clone_state)) {
        nw_dp_p4_free(a);
        return NULL;
    }
    a->ops.name = "generated P4 pipeline";
    a->ops.self = a;
    a->ops.state_size = (uint32_t)f->state_size;
    a->ops.ingress = ingress;
    a->ops.egress = egress;
    return a;
}

nw_dp_p4_t *nw_dp_p4_from_addresses(void *pipeline, uintptr_t ingress, uintptr_t egress,
                                    size_t state_size)
{
    nw_dp_p4_functions_t f = {.pipeline = pipeline, .state_size = state_size};
    f.ingress = (int (*)(void *, nw_pkt_t *, uint64_t))ingress;
    f.egress = (int (*)(void *, nw_pkt_t *, uint64_t, const nw_queue_meta_t *))egress;
    return nw_dp_p4_new(&f);
}

void nw_dp_p4_free(nw_dp_p4_t *a)
{
    if (!a)
        return;
    free(a->preserved);
    free(a->clone_state);
    free(a);
}

const nw_dp_pipeline_t *nw_dp_p4_pipeline(nw_dp_p4_t *a)
{
    return &a->ops;
}

uint64_t nw_dp_p4_errors(const nw_dp_p4_t *a, uint32_t code)
{
    if (code >= NW_DP_P4_ERROR_CODES)
        return 0;
    return a->errors[code];
}
