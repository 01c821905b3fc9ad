/* The dataplane loop (dataplane_loop.h). */
#define _GNU_SOURCE
#include "dataplane_loop.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "dataplane_host.h"
#include "dataplane_pcap.h"
#include "dataplane_ring.h"

#define HEADROOM 256u              /* room for headers a deparser pushes */
#define STATS_EVERY_NS 100000000ull /* ring statistics read every 100 ms */
#define NO_INDEX 0xffffu
#define ETH_HEADER_LEN 14u          /* shorter frames are counted and dropped, as BMv2 */
#define TX_RETRY_NS 50000ull        /* how soon frames a device refused are offered again */

typedef struct delivery {
    uint64_t time_ns;
    uint32_t slot;
} delivery_t;

typedef struct dp_port {
    nw_dp_ring_t *ring;
    uint32_t number;
    nw_dp_port_counters_t c;
    delivery_t *held;               /* frames on the wire (FIFO: a wire keeps order) */
    uint32_t held_head, held_count;
    delivery_t *arriving;           /* frames on the ingress link, before ingress (FIFO) */
    uint32_t arriving_head, arriving_count;
} dp_port_t;

struct nw_dp_loop {
    nw_dp_loop_config_t cfg;
    const nw_dp_pipeline_t *pipe;
    nw_tm_t *tm;
    const nw_dp_replication_t *rep;
    nw_dp_wire_t wire;
    int has_wire;
    nw_dp_wire_t in_wire;           /* the ingress links (dataplane_wire.h) */
    int has_in_wire;
    nw_dp_guard_t guard;            /* held around every pass (the pipeline lock) */
    nw_dp_host_t *host;             /* the CPU port's channel, or NULL */
    nw_dp_pcap_t *pcap;             /* per-port captures, or NULL */
    dp_port_t ports[NW_DP_MAX_LOOP_PORTS];
    uint32_t n_ports;
    uint16_t index_of[512];         /* switch port -> index in ports, NO_INDEX */
    /* packet buffers: slot i is pkts[i], its bytes and state at mem + i * stride */
    uint8_t *mem;
    nw_dp_packet_t *pkts;
    uint32_t *free_slots;
    uint32_t n_free, pool_n, buf_cap, stride;
    int efd;
    int stop;
    uint64_t t0;
    uint64_t last_stats;
    nw_dp_counters_t c;             /* the loop thread's own */
    nw_dp_counters_t pub;           /* published copies, read by any thread */
    nw_dp_port_counters_t pub_ports[NW_DP_MAX_LOOP_PORTS];
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t nw_dp_loop_now(const nw_dp_loop_t *loop)
{
    return mono_ns() - loop->t0;
}

static void publish_words(uint64_t *dst, const uint64_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

static void read_words(uint64_t *dst, const uint64_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ set-up */

nw_dp_loop_t *nw_dp_loop_new(const nw_dp_pipeline_t *pipeline, nw_tm_t *tm,
                             const nw_dp_replication_t *replication,
                             const nw_dp_loop_config_t *config, int32_t *err)
{
    *err = -EINVAL;
    if (!pipeline)
        return NULL;
    int direct = (pipeline->flags & NW_DP_PIPELINE_DIRECT) != 0;
    if (direct ? !pipeline->direct
               : (!pipeline->ingress || !pipeline->egress || !tm || !replication))
        return NULL;
    if (pipeline->state_size > (1u << 20))
        return NULL;
    nw_dp_loop_t *loop = calloc(1, sizeof(*loop));
    if (!loop) {
        *err = -ENOMEM;
        return NULL;
    }
    if (config)
        loop->cfg = *config;
    if (!loop->cfg.rx_frames)
        loop->cfg.rx_frames = 1024;
    if (!loop->cfg.tx_frames)
        loop->cfg.tx_frames = 1024;
    if (!loop->cfg.batch)
        loop->cfg.batch = 64;
    if (!loop->cfg.pool_packets)
        loop->cfg.pool_packets = 4096;
    if (!loop->cfg.idle_wakeup_us)
        loop->cfg.idle_wakeup_us = 200000;
    if (loop->cfg.pool_packets > (1u << 20)) {
        free(loop);
        return NULL;
    }
    loop->pipe = pipeline;
    loop->tm = tm;
    loop->rep = replication;
    for (uint32_t i = 0; i < 512; i++)
        loop->index_of[i] = NO_INDEX;
    loop->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (loop->efd < 0) {
        *err = -errno;
        free(loop);
        return NULL;
    }
    loop->t0 = mono_ns();
    *err = 0;
    return loop;
}

int32_t nw_dp_loop_add_port(nw_dp_loop_t *loop, uint32_t number, const char *ifname)
{
    if (number >= NW_DP_DROP_PORT || loop->index_of[number] != NO_INDEX ||
        loop->n_ports == NW_DP_MAX_LOOP_PORTS || loop->mem)
        return -EINVAL;
    nw_dp_ring_config_t rc = {.rx_frames = loop->cfg.rx_frames,
                              .tx_frames = loop->cfg.tx_frames,
                              .tapped = loop->cfg.tapped};
    int32_t err = 0;
    nw_dp_ring_t *ring = nw_dp_ring_open(ifname, &rc, &err);
    if (!ring)
        return err;
    dp_port_t *p = &loop->ports[loop->n_ports];
    memset(p, 0, sizeof(*p));
    p->ring = ring;
    p->number = number;
    loop->index_of[number] = (uint16_t)loop->n_ports++;
    return 0;
}

void nw_dp_loop_set_wire(nw_dp_loop_t *loop, const nw_dp_wire_t *wire)
{
    loop->has_wire = wire && wire->propagate;
    if (loop->has_wire)
        loop->wire = *wire;
}

void nw_dp_loop_set_ingress_wire(nw_dp_loop_t *loop, const nw_dp_wire_t *wire)
{
    loop->has_in_wire = wire && wire->propagate;
    if (loop->has_in_wire)
        loop->in_wire = *wire;
}

void nw_dp_loop_set_guard(nw_dp_loop_t *loop, const nw_dp_guard_t *guard)
{
    if (guard && guard->lock && guard->unlock)
        loop->guard = *guard;
    else
        memset(&loop->guard, 0, sizeof(loop->guard));
}

void nw_dp_loop_set_host(nw_dp_loop_t *loop, nw_dp_host_t *host)
{
    loop->host = host;
}

void nw_dp_loop_set_pcap(nw_dp_loop_t *loop, nw_dp_pcap_t *pcap)
{
    loop->pcap = pcap;
}

void nw_dp_loop_wake(nw_dp_loop_t *loop)
{
    uint64_t one = 1;
    if (write(loop->efd, &one, sizeof(one)) < 0)
        (void)0; /* the counter is full: the loop is being woken already */
}

/* Packet buffers and per-port wire FIFOs, sized once the ports are known. */
static int32_t make_pool(nw_dp_loop_t *loop)
{
    uint32_t max_frame = 0;
    for (uint32_t i = 0; i < loop->n_ports; i++) {
        uint32_t m = nw_dp_ring_max_frame(loop->ports[i].ring);
        if (m > max_frame)
            max_frame = m;
    }
    uint32_t n = loop->cfg.pool_packets;
    /* the state starts 64-byte aligned: a pipeline's state may hold 128-bit fields */
    loop->buf_cap = (max_frame + HEADROOM + 63u) & ~63u;
    loop->stride = (loop->buf_cap + loop->pipe->state_size + 63u) & ~63u;
    loop->mem = aligned_alloc(64, (size_t)n * loop->stride);
    loop->pkts = calloc(n, sizeof(*loop->pkts));
    loop->free_slots = malloc((size_t)n * sizeof(uint32_t));
    if (!loop->mem || !loop->pkts || !loop->free_slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        loop->free_slots[i] = n - 1 - i;
    loop->n_free = loop->pool_n = n;
    for (uint32_t i = 0; i < loop->n_ports; i++) {
        loop->ports[i].held = malloc((size_t)n * sizeof(delivery_t));
        loop->ports[i].arriving = malloc((size_t)n * sizeof(delivery_t));
        if (!loop->ports[i].held || !loop->ports[i].arriving)
            return -ENOMEM;
    }
    return 0;
}

/* ------------------------------------------------------------------ packet buffers */

static int64_t slot_take(nw_dp_loop_t *loop)
{
    if (!loop->n_free) {
        loop->c.drop_no_buffer++;
        return -1;
    }
    uint32_t s = loop->free_slots[--loop->n_free];
    nw_dp_packet_t *p = &loop->pkts[s];
    memset(p, 0, sizeof(*p));
    p->data = loop->mem + (size_t)s * loop->stride;
    p->cap = loop->buf_cap;
    p->state = loop->pipe->state_size ? p->data + loop->buf_cap : NULL;
    return s;
}

static void slot_give(nw_dp_loop_t *loop, uint32_t s)
{
    loop->free_slots[loop->n_free++] = s;
}

/* A copy of packet `s` (bytes, state and fields), or -1. */
static int64_t slot_copy(nw_dp_loop_t *loop, uint32_t s)
{
    int64_t c = slot_take(loop);
    if (c < 0)
        return -1;
    nw_dp_packet_t *src = &loop->pkts[s], *dst = &loop->pkts[c];
    uint8_t *data = dst->data;
    void *state = dst->state;
    *dst = *src;
    dst->data = data;
    dst->state = state;
    memcpy(data, src->data, src->len);
    if (state)
        memcpy(state, src->state, loop->pipe->state_size);
    dst->passes = src->passes + 1;
    return c;
}

static void verdict_init(nw_dp_verdict_t *v)
{
    v->egress_spec = NW_DP_DROP_PORT;
    v->priority = 0;
    v->mcast_grp = 0;
    v->clone_session = -1;
    v->truncate = 0;
    v->malformed = 0;
    v->clone_fl = 0;
    v->resubmit = v->resubmit_fl = 0;
    v->recirculate = v->recirc_fl = 0;
    v->clone_state = NULL;
    v->clone_payload_at = v->clone_payload_len = 0;
}

/* ------------------------------------------------------------------ output */

/* Count a refused copy into a TX ring: full, or a frame longer than the port takes. */
static void tx_refused(nw_dp_loop_t *loop, dp_port_t *port, int32_t rc)
{
    if (rc == -2) {
        loop->c.drop_tx_too_long++;
        return;
    }
    loop->c.drop_tx_ring_full++;
    port->c.tx_ring_full++;
}

static void transmit(nw_dp_loop_t *loop, dp_port_t *port, const nw_dp_packet_t *p)
{
    if (p->len < ETH_HEADER_LEN) { /* a truncate() below the header: AF_PACKET refuses it */
        loop->c.drop_tx_runt++;
        return;
    }
    int32_t rc = nw_dp_ring_tx_copy(port->ring, p->data, p->len);
    if (rc < 0) {
        tx_refused(loop, port, rc);
        return;
    }
    loop->c.tx++;
    loop->c.tx_bytes += p->len;
    port->c.tx++;
    if (loop->pcap)
        nw_dp_pcap_write(loop->pcap, port->number, NW_DP_PCAP_OUT, p->data, p->len);
}

/* Egress passed the packet in slot s at now: onto the port's transmitter and wire. */
static void emit(nw_dp_loop_t *loop, uint32_t s, uint64_t now)
{
    nw_dp_packet_t *p = &loop->pkts[s];
    uint32_t idx = p->egress_port < 512 ? loop->index_of[p->egress_port] : NO_INDEX;
    if (idx == NO_INDEX && loop->host && p->egress_port == nw_dp_host_cpu_port(loop->host)) {
        nw_dp_host_punt(loop->host, p->data, p->len); /* PacketIn: the host takes it */
        slot_give(loop, s);
        return;
    }
    if (idx == NO_INDEX) {
        loop->c.drop_no_port++;
        slot_give(loop, s);
        return;
    }
    dp_port_t *port = &loop->ports[idx];
    uint64_t end = nw_tm_transmitted(loop->tm, p->egress_port, now, p->len);
    if (loop->has_wire &&
        !loop->wire.propagate(loop->wire.self, p->egress_port, end, p->data, p->len, &end)) {
        loop->c.drop_wire_lost++;
        slot_give(loop, s);
        return;
    }
    if (end <= now && !port->held_count) {
        transmit(loop, port, p);
        slot_give(loop, s);
        return;
    }
    uint32_t at = (port->held_head + port->held_count) % loop->pool_n;
    port->held[at].time_ns = end;
    port->held[at].slot = s;
    port->held_count++;
}

static void enqueue(nw_dp_loop_t *loop, uint32_t s, uint32_t priority, uint64_t now);
static void ingress_run(nw_dp_loop_t *loop, int64_t s, uint64_t now);

/* A clone in slot t (frame, state, instance type set) to its session: a copy per
 * member of the session's multicast group, then t itself to the session's port. */
static void send_clone(nw_dp_loop_t *loop, uint32_t t, const nw_dp_clone_session_t *cs,
                       uint64_t now)
{
    nw_dp_packet_t *T = &loop->pkts[t];
    T->truncate = cs->truncate;
    T->flow_flags = 0;
    T->rid = 0;
    if (cs->mc_group) {
        uint32_t n = 0;
        const nw_dp_copy_t *copies = nw_dp_group_get(loop->rep, cs->mc_group, &n);
        for (uint32_t i = 0; i < n; i++) {
            int64_t c = slot_copy(loop, t);
            if (c < 0)
                break;
            nw_dp_packet_t *C = &loop->pkts[c];
            C->passes = T->passes;
            C->egress_port = copies[i].port;
            C->rid = copies[i].rid;
            C->flow_flags = NW_DP_PKT_EGRESS_RID;
            loop->c.copies_clone++;
            enqueue(loop, (uint32_t)c, 0, now);
        }
    }
    if (cs->port == NW_DP_NO_PORT) {
        slot_give(loop, t);
        return;
    }
    T->egress_port = cs->port;
    loop->c.copies_clone++;
    enqueue(loop, t, 0, now);
}

/* An E2E clone of slot s: the state egress wrote for it and the deparsed payload. */
static void egress_clone(nw_dp_loop_t *loop, uint32_t s, const nw_dp_verdict_t *v, uint64_t now)
{
    const nw_dp_clone_session_t *cs = nw_dp_session_get(loop->rep, (uint32_t)v->clone_session);
    if (!cs) {
        loop->c.drop_clone_no_session++;
        return;
    }
    const nw_dp_packet_t *p = &loop->pkts[s];
    int64_t t;
    if (!v->clone_state) { /* a pipeline without E2E state: a copy of the packet */
        t = slot_copy(loop, s);
    } else {
        /* the bytes egress deparsed, whole: a truncation only shortened len */
        uint32_t at = v->clone_payload_at, n = v->clone_payload_len;
        if (at > p->cap || n > p->cap - at || n > loop->buf_cap) {
            loop->c.drop_clone_no_session++;
            return;
        }
        t = slot_take(loop);
        if (t >= 0) {
            nw_dp_packet_t *T = &loop->pkts[t];
            memcpy(T->data, p->data + at, n);
            T->len = n;
            if (T->state)
                memcpy(T->state, v->clone_state, loop->pipe->state_size);
            T->ingress_port = p->ingress_port;
            T->ingress_len = p->ingress_len;
            T->passes = p->passes + 1;
        }
    }
    if (t < 0)
        return;
    loop->pkts[t].instance_type = NW_DP_INSTANCE_EGRESS_CLONE;
    send_clone(loop, (uint32_t)t, cs, now);
}

/* Egress asked to recirculate slot s: its deparsed frame goes through ingress again
 * (port 0, the field list kept), whole: a truncation does not apply. */
static void recirculate(nw_dp_loop_t *loop, uint32_t s, uint32_t field_list, uint64_t now)
{
    nw_dp_packet_t *p = &loop->pkts[s];
    p->ingress_port = 0;
    p->ingress_len = p->len;
    p->instance_type = NW_DP_INSTANCE_RECIRC;
    p->flow_flags = NW_DP_PKT_PRESERVED;
    p->preserved_fl = field_list;
    p->truncate = 0;
    p->rid = 0;
    p->passes++;
    loop->c.recirculated++;
    ingress_run(loop, s, now);
}

/* Egress for the packet in slot s leaving its queue at now. */
static void depart(nw_dp_loop_t *loop, uint32_t s, const nw_tm_queue_meta_t *meta, uint64_t now)
{
    nw_dp_packet_t *p = &loop->pkts[s];
    nw_dp_verdict_t v;
    verdict_init(&v);
    v.egress_spec = p->egress_port;
    loop->pipe->egress(loop->pipe->self, now, p, meta, &v);
    if (p->len > p->cap)
        p->len = p->cap; /* a pipeline never gets to send beyond its buffer */
    if (v.clone_session >= 0)
        egress_clone(loop, s, &v, now);
    if (v.recirculate) {
        recirculate(loop, s, v.recirc_fl, now);
        return;
    }
    if (v.egress_spec == NW_DP_DROP_PORT) {
        loop->c.drop_program++;
        slot_give(loop, s);
        return;
    }
    uint32_t cut = v.truncate ? v.truncate : p->truncate;
    if (cut && p->len > cut)
        p->len = cut;
    emit(loop, s, now);
}

/* Into the traffic manager (or straight to egress when the port is idle). */
static void enqueue(nw_dp_loop_t *loop, uint32_t s, uint32_t priority, uint64_t now)
{
    nw_dp_packet_t *p = &loop->pkts[s];
    nw_tm_queue_meta_t meta;
    if (p->passes >= NW_DP_MAX_PASSES) { /* e.g. an egress that clones every clone */
        loop->c.drop_pass_limit++;
        slot_give(loop, s);
        return;
    }
    if (nw_tm_pass_through(loop->tm, now, p->egress_port, priority, p->ingress_len, &meta)) {
        depart(loop, s, &meta, now);
        return;
    }
    int32_t r = nw_tm_enqueue(loop->tm, now, p->egress_port, priority, p->ingress_len, s);
    if (r == NW_TM_QUEUED)
        return;
    if (r == NW_TM_DROP_PRIORITY)
        loop->c.drop_priority++;
    else if (r == NW_TM_DROP_PORT)
        loop->c.drop_no_port++;
    else
        loop->c.drop_queue_full++;
    slot_give(loop, s);
}

/* Copies of slot s to the members of multicast group `group` (s itself is not used). */
static void replicate(nw_dp_loop_t *loop, uint32_t s, uint32_t group, uint32_t instance,
                      uint32_t priority, uint64_t now)
{
    uint32_t n = 0;
    const nw_dp_copy_t *copies = nw_dp_group_get(loop->rep, group, &n);
    for (uint32_t i = 0; i < n; i++) {
        int64_t c = slot_copy(loop, s);
        if (c < 0)
            return;
        loop->pkts[c].egress_port = copies[i].port;
        loop->pkts[c].rid = copies[i].rid;
        loop->pkts[c].instance_type = instance;
        loop->pkts[c].truncate = 0; /* a copy's truncation starts unset (BMv2) */
        loop->pkts[c].flow_flags = 0;
        loop->c.copies_multicast++;
        enqueue(loop, (uint32_t)c, priority, now);
    }
}

/* An I2E clone of slot s (as BMv2: the frame ingress received, parsed again). */
static void ingress_clone(nw_dp_loop_t *loop, uint32_t s, const nw_dp_verdict_t *v, uint64_t now)
{
    const nw_dp_clone_session_t *cs = nw_dp_session_get(loop->rep, (uint32_t)v->clone_session);
    if (!cs) {
        loop->c.drop_clone_no_session++;
        return;
    }
    int64_t t = slot_copy(loop, s);
    if (t < 0)
        return;
    nw_dp_packet_t *T = &loop->pkts[t];
    if (loop->pipe->clone_i2e &&
        loop->pipe->clone_i2e(loop->pipe->self, now, &loop->pkts[s], v->clone_fl, T->state)) {
        slot_give(loop, (uint32_t)t);
        return;
    }
    T->instance_type = NW_DP_INSTANCE_INGRESS_CLONE;
    send_clone(loop, (uint32_t)t, cs, now);
}

/* ------------------------------------------------------------------ input */

/* Ingress asked to resubmit slot s: the frame it received goes through ingress
 * again (port 0, the field list kept). */
static void resubmit(nw_dp_loop_t *loop, uint32_t s, uint32_t field_list, uint64_t now)
{
    nw_dp_packet_t *p = &loop->pkts[s];
    p->ingress_port = 0;
    p->instance_type = NW_DP_INSTANCE_RESUBMIT;
    p->flow_flags = NW_DP_PKT_PRESERVED;
    p->preserved_fl = field_list;
    p->truncate = 0;
    p->passes++;
    loop->c.resubmitted++;
    ingress_run(loop, s, now);
}

/* Ingress for the frame in slot s (received on p->ingress_port), at now; then, in
 * simple_switch's order: clone, resubmit, multicast, drop, unicast. */
static void ingress_run(nw_dp_loop_t *loop, int64_t s, uint64_t now)
{
    nw_dp_packet_t *p = &loop->pkts[s];
    if (p->passes >= NW_DP_MAX_PASSES) { /* e.g. a program that resubmits every packet */
        loop->c.drop_pass_limit++;
        slot_give(loop, (uint32_t)s);
        return;
    }
    nw_dp_verdict_t v;
    verdict_init(&v);
    loop->pipe->ingress(loop->pipe->self, now, p, &v);
    p->flow_flags = 0;
    if (p->len > p->cap)
        p->len = p->cap;
    if (v.clone_session >= 0)
        ingress_clone(loop, (uint32_t)s, &v, now);
    if (v.resubmit) {
        resubmit(loop, (uint32_t)s, v.resubmit_fl, now);
        return;
    }
    if (v.malformed) {
        loop->c.drop_malformed++;
        slot_give(loop, (uint32_t)s);
        return;
    }
    if (v.mcast_grp) {
        replicate(loop, (uint32_t)s, v.mcast_grp, NW_DP_INSTANCE_REPLICATION, v.priority, now);
        slot_give(loop, (uint32_t)s);
        return;
    }
    if (v.egress_spec >= NW_DP_DROP_PORT) {
        loop->c.drop_program++;
        slot_give(loop, (uint32_t)s);
        return;
    }
    p->truncate = v.truncate; /* egress cuts the frame it deparses */
    p->egress_port = v.egress_spec;
    p->instance_type = NW_DP_INSTANCE_NORMAL;
    p->passes++;
    enqueue(loop, (uint32_t)s, v.priority, now);
}

/* A frame received on switch port `number` (a ring's, or one the host injected on
 * the CPU port): across the port's ingress link (held until it arrives), then ingress. */
static void ingress_frame(nw_dp_loop_t *loop, dp_port_t *port, uint32_t number,
                          const uint8_t *data, uint32_t len, uint64_t now)
{
    if (len > loop->buf_cap) {
        loop->c.drop_rx_truncated++;
        return;
    }
    int64_t s = slot_take(loop);
    if (s < 0)
        return;
    nw_dp_packet_t *p = &loop->pkts[s];
    memcpy(p->data, data, len);
    p->len = len;
    p->ingress_port = number;
    p->ingress_len = len;
    uint64_t arrival = now;
    if (loop->has_in_wire && port) {
        if (!loop->in_wire.propagate(loop->in_wire.self, number, now, p->data, len, &arrival)) {
            loop->c.drop_wire_in++;
            slot_give(loop, (uint32_t)s);
            return;
        }
        if (arrival > now || port->arriving_count) {
            uint32_t at = (port->arriving_head + port->arriving_count) % loop->pool_n;
            port->arriving[at].time_ns = arrival;
            port->arriving[at].slot = (uint32_t)s;
            port->arriving_count++;
            return;
        }
    }
    ingress_run(loop, s, now);
}

/* Frames the host injected on the CPU port (PacketOut). */
static uint32_t receive_injected(nw_dp_loop_t *loop, uint64_t now)
{
    const uint8_t *frame;
    uint32_t len, n = 0;
    while (n < loop->cfg.batch && nw_dp_host_peek_injected(loop->host, &frame, &len)) {
        n++;
        ingress_frame(loop, NULL, nw_dp_host_cpu_port(loop->host), frame, len, now);
        nw_dp_host_release_injected(loop->host);
    }
    return n;
}

static void direct_frame(nw_dp_loop_t *loop, dp_port_t *port, const nw_dp_rx_frame_t *f)
{
    uint32_t out = loop->pipe->direct(loop->pipe->self, port->number, f->data, f->len);
    uint32_t idx = out < 512 ? loop->index_of[out] : NO_INDEX;
    if (out >= NW_DP_DROP_PORT) {
        loop->c.drop_program++;
        return;
    }
    if (idx == NO_INDEX) {
        loop->c.drop_no_port++;
        return;
    }
    dp_port_t *to = &loop->ports[idx];
    int32_t rc = nw_dp_ring_tx_copy(to->ring, f->data, f->len);
    if (rc < 0) {
        tx_refused(loop, to, rc);
        return;
    }
    loop->c.tx++;
    loop->c.tx_bytes += f->len;
    to->c.tx++;
}

/* Up to a batch of frames from one port; returns how many. */
static uint32_t receive(nw_dp_loop_t *loop, dp_port_t *port, uint64_t now)
{
    int direct = (loop->pipe->flags & NW_DP_PIPELINE_DIRECT) != 0;
    nw_dp_rx_frame_t f;
    uint32_t n = 0;
    while (n < loop->cfg.batch && nw_dp_ring_rx_peek(port->ring, &f)) {
        n++;
        loop->c.rx++;
        loop->c.rx_bytes += f.wire_len;
        port->c.rx++;
        if (loop->pcap)
            nw_dp_pcap_write(loop->pcap, port->number, NW_DP_PCAP_IN, f.data, f.len);
        if (f.wire_len > f.len)
            loop->c.drop_rx_truncated++;
        else if (direct)
            direct_frame(loop, port, &f);
        else
            ingress_frame(loop, port, port->number, f.data, f.len, now);
        nw_dp_ring_rx_release(port->ring);
    }
    return n;
}

/* ------------------------------------------------------------------ timers */

/* The port whose FIFO (held or arriving) has the earliest head, and that time; NULL if
 * every FIFO is empty. */
static dp_port_t *earliest_head(nw_dp_loop_t *loop, int arriving, uint64_t *when)
{
    dp_port_t *best = NULL;
    for (uint32_t i = 0; i < loop->n_ports; i++) {
        dp_port_t *port = &loop->ports[i];
        uint32_t count = arriving ? port->arriving_count : port->held_count;
        if (!count)
            continue;
        uint64_t t = arriving ? port->arriving[port->arriving_head].time_ns
                              : port->held[port->held_head].time_ns;
        if (!best || t < *when) {
            best = port;
            *when = t;
        }
    }
    return best;
}

enum due_kind { DUE_NONE, DUE_DELIVERY, DUE_ARRIVAL, DUE_DEPARTURE };

/* Everything due before `before`, in time order as SoftSwitch.advance runs it (at one
 * time: a frame leaving a wire, then a frame reaching ingress, then a departure), so a
 * queue has let out what was due before a later frame joins it. */
static void run_due(nw_dp_loop_t *loop, uint64_t before)
{
    if (!loop->tm)
        return;
    for (;;) {
        enum due_kind kind = DUE_NONE;
        uint64_t t = 0, th = 0, ta = 0, td = 0;
        dp_port_t *held = earliest_head(loop, 0, &th);
        dp_port_t *arriving = earliest_head(loop, 1, &ta);
        if (held) {
            kind = DUE_DELIVERY;
            t = th;
        }
        if (arriving && (kind == DUE_NONE || ta < t)) {
            kind = DUE_ARRIVAL;
            t = ta;
        }
        if (nw_tm_next_departure(loop->tm, &td) && (kind == DUE_NONE || td < t)) {
            kind = DUE_DEPARTURE;
            t = td;
        }
        if (kind == DUE_NONE || t >= before)
            return;
        if (kind == DUE_DELIVERY) {
            uint32_t s = held->held[held->held_head].slot;
            held->held_head = (held->held_head + 1) % loop->pool_n;
            held->held_count--;
            transmit(loop, held, &loop->pkts[s]);
            slot_give(loop, s);
        } else if (kind == DUE_ARRIVAL) {
            uint32_t s = arriving->arriving[arriving->arriving_head].slot;
            arriving->arriving_head = (arriving->arriving_head + 1) % loop->pool_n;
            arriving->arriving_count--;
            ingress_run(loop, s, t);
        } else {
            nw_tm_departure_t d;
            if (!nw_tm_dequeue(loop->tm, t, &d))
                return; /* cannot happen: the departure was due */
            depart(loop, (uint32_t)d.handle, &d.meta, d.time_ns);
        }
    }
}

/* 1 and the earliest deadline (a departure or a frame leaving a wire), else 0. */
static int next_deadline(nw_dp_loop_t *loop, uint64_t *when)
{
    int found = 0;
    uint64_t t = 0;
    if (loop->tm && nw_tm_next_departure(loop->tm, &t))
        found = 1;
    for (uint32_t i = 0; i < loop->n_ports; i++) {
        const dp_port_t *port = &loop->ports[i];
        if (port->held_count) {
            uint64_t h = port->held[port->held_head].time_ns;
            if (!found || h < t)
                t = h;
            found = 1;
        }
        if (port->arriving_count) {
            uint64_t a = port->arriving[port->arriving_head].time_ns;
            if (!found || a < t)
                t = a;
            found = 1;
        }
    }
    *when = t;
    return found;
}

/* ------------------------------------------------------------------ the loop */

static void publish(nw_dp_loop_t *loop, uint64_t now, int final)
{
    if (final || now - loop->last_stats >= STATS_EVERY_NS) {
        loop->last_stats = now;
        uint64_t kernel_drops = 0, tx_errors = 0;
        for (uint32_t i = 0; i < loop->n_ports; i++) {
            nw_dp_ring_stats_t rs;
            nw_dp_ring_stats(loop->ports[i].ring, &rs);
            loop->ports[i].c.rx_kernel_drops = rs.rx_kernel_drops;
            kernel_drops += rs.rx_kernel_drops;
            tx_errors += rs.tx_errors;
        }
        loop->c.rx_kernel_drops = kernel_drops;
        loop->c.tx_errors = tx_errors;
    }
    if (loop->pcap)
        nw_dp_pcap_flush(loop->pcap);
    for (uint32_t i = 0; i < loop->n_ports; i++)
        publish_words((uint64_t *)&loop->pub_ports[i], (const uint64_t *)&loop->ports[i].c,
                      sizeof(nw_dp_port_counters_t) / sizeof(uint64_t));
    publish_words((uint64_t *)&loop->pub, (const uint64_t *)&loop->c,
                  sizeof(nw_dp_counters_t) / sizeof(uint64_t));
}

/* Nanoseconds the loop may sleep: to the next deadline, the idle wake-up at most. */
static uint64_t sleep_time(nw_dp_loop_t *loop, uint64_t now)
{
    uint64_t wait = (uint64_t)loop->cfg.idle_wakeup_us * 1000u, when;
    if (next_deadline(loop, &when))
        wait = when <= now ? 0 : (when - now < wait ? when - now : wait);
    return wait;
}

static void guard_enter(nw_dp_loop_t *loop)
{
    if (loop->guard.lock)
        loop->guard.lock(loop->guard.self);
}

static void guard_leave(nw_dp_loop_t *loop)
{
    if (loop->guard.unlock)
        loop->guard.unlock(loop->guard.self);
}

static void sleep_until_work(nw_dp_loop_t *loop, struct pollfd *fds, uint64_t wait)
{
    if (!wait)
        return;
    struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000u),
                          .tv_nsec = (long)(wait % 1000000000u)};
    loop->c.sleeps++;
    if (ppoll(fds, loop->n_ports + 1, &ts, NULL) > 0 && (fds[loop->n_ports].revents & POLLIN)) {
        uint64_t v;
        if (read(loop->efd, &v, sizeof(v)) < 0)
            (void)0; /* drained by another wake-up */
    }
}

int32_t nw_dp_loop_run(nw_dp_loop_t *loop)
{
    if (!loop->n_ports)
        return -EINVAL;
    int direct = (loop->pipe->flags & NW_DP_PIPELINE_DIRECT) != 0;
    if (!direct && !loop->mem) {
        int32_t rc = make_pool(loop);
        if (rc < 0)
            return rc;
    }
    struct pollfd fds[NW_DP_MAX_LOOP_PORTS + 1];
    for (uint32_t i = 0; i < loop->n_ports; i++)
        fds[i] = (struct pollfd){.fd = nw_dp_ring_fd(loop->ports[i].ring), .events = POLLIN};
    fds[loop->n_ports] = (struct pollfd){.fd = loop->efd, .events = POLLIN};
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* departures on time, not 50 us late */
    while (!__atomic_load_n(&loop->stop, __ATOMIC_ACQUIRE)) {
        guard_enter(loop); /* control-plane updates happen between passes */
        uint64_t now = nw_dp_loop_now(loop);
        uint32_t got = 0;
        if (!direct)
            run_due(loop, now); /* what was due before this pass's frames came leaves first */
        for (uint32_t i = 0; i < loop->n_ports; i++)
            got += receive(loop, &loop->ports[i], now);
        if (loop->host && !direct)
            got += receive_injected(loop, now);
        if (!direct)
            run_due(loop, nw_dp_loop_now(loop) + 1);
        uint32_t tx_waiting = 0;
        for (uint32_t i = 0; i < loop->n_ports; i++) {
            nw_dp_ring_tx_flush(loop->ports[i].ring);
            tx_waiting += nw_dp_ring_tx_pending(loop->ports[i].ring);
        }
        if (loop->host)
            nw_dp_host_notify(loop->host);
        loop->c.passes++;
        publish(loop, now, 0);
        uint64_t wait = got ? 0 : sleep_time(loop, nw_dp_loop_now(loop));
        if (tx_waiting && wait > TX_RETRY_NS)
            wait = TX_RETRY_NS; /* a device refused frames for now: offer them again soon */
        guard_leave(loop);
        sleep_until_work(loop, fds, wait);
    }
    __atomic_store_n(&loop->stop, 0, __ATOMIC_RELEASE);
    publish(loop, nw_dp_loop_now(loop), 1);
    return 0;
}

void nw_dp_loop_stop(nw_dp_loop_t *loop)
{
    __atomic_store_n(&loop->stop, 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(loop->efd, &one, sizeof(one)) < 0)
        (void)0; /* the counter is full: the loop is being woken already */
}

void nw_dp_loop_counters(const nw_dp_loop_t *loop, nw_dp_counters_t *out)
{
    read_words((uint64_t *)out, (const uint64_t *)&loop->pub,
               sizeof(nw_dp_counters_t) / sizeof(uint64_t));
}

int32_t nw_dp_loop_port_counters(const nw_dp_loop_t *loop, uint32_t index,
                                 nw_dp_port_counters_t *out)
{
    if (index >= loop->n_ports)
        return -1;
    read_words((uint64_t *)out, (const uint64_t *)&loop->pub_ports[index],
               sizeof(nw_dp_port_counters_t) / sizeof(uint64_t));
    return 0;
}

void nw_dp_loop_free(nw_dp_loop_t *loop)
{
    if (!loop)
        return;
    if (loop->tm && loop->mem) { /* queued packets point into our buffers: drop them */
        nw_tm_departure_t d;
        while (nw_tm_dequeue(loop->tm, UINT64_MAX, &d))
            (void)d;
    }
    for (uint32_t i = 0; i < loop->n_ports; i++) {
        nw_dp_ring_close(loop->ports[i].ring);
        free(loop->ports[i].held);
        free(loop->ports[i].arriving);
    }
    if (loop->efd >= 0)
        close(loop->efd);
    free(loop->mem);
    free(loop->pkts);
    free(loop->free_slots);
    free(loop);
}
