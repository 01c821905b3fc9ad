/* The traffic manager (dataplane_tm.h), after emulation/traffic_manager.py. */
#include "dataplane_tm.h"

#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000.0

typedef struct tm_entry {
    uint64_t handle;
    uint64_t enq_ns;
    uint32_t length;
    uint32_t enq_depth;
} tm_entry_t;

typedef struct tm_queue {
    tm_entry_t *ring;     /* FIFO of cap entries (a power of two), head..head+count */
    uint32_t cap, head, count;
    uint64_t bytes;
    uint64_t eligible_at;
    nw_tm_queue_config_t config;
    double ns_per_packet, ns_per_byte;
} tm_queue_t;

typedef struct tm_port {
    tm_queue_t queues[NW_TM_MAX_PRIORITIES]; /* index = priority; the highest is served first */
    uint32_t number;
    uint32_t count;        /* packets in all its queues */
    uint32_t active_slot;  /* index in tm->active while count > 0 */
    uint64_t free_at;
} tm_port_t;

typedef struct tm_overrides {
    uint8_t has_port;
    uint8_t has_queue[NW_TM_MAX_PRIORITIES];
    nw_tm_queue_config_t port;
    nw_tm_queue_config_t queue[NW_TM_MAX_PRIORITIES];
} tm_overrides_t;

struct nw_tm {
    uint32_t n;                          /* priority queues per port */
    nw_tm_queue_config_t default_queue;
    tm_overrides_t *overrides;           /* NW_TM_MAX_PORTS */
    tm_port_t *ports[NW_TM_MAX_PORTS];   /* created on first use */
    double link_ns_per_byte[NW_TM_MAX_PORTS];
    uint32_t active[NW_TM_MAX_PORTS];    /* ports holding packets */
    uint32_t n_active;
    int cached;                          /* next departure known */
    uint64_t cached_t;
    tm_port_t *cached_port;
    nw_tm_stats_t st;
};

/* ------------------------------------------------------------------ configuration */

static void queue_apply(tm_queue_t *q, const nw_tm_queue_config_t *c)
{
    q->config = *c;
    q->ns_per_packet = c->rate_pps > 0 ? NS_PER_S / c->rate_pps : 0.0;
    q->ns_per_byte = c->rate_bps > 0 ? 8 * NS_PER_S / c->rate_bps : 0.0;
}

/* int(max(ns_per_packet, length * ns_per_byte) + 0.5), as Python computes it */
static uint64_t service_ns(const tm_queue_t *q, uint32_t length)
{
    double by_bytes = (double)length * q->ns_per_byte;
    double t = q->ns_per_packet > by_bytes ? q->ns_per_packet : by_bytes;
    return (uint64_t)(t + 0.5);
}

static void changed(nw_tm_queue_config_t *c, uint32_t mask, const nw_tm_queue_config_t *v)
{
    if (mask & NW_TM_SET_DEPTH_PACKETS)
        c->depth_packets = v->depth_packets;
    if (mask & NW_TM_SET_DEPTH_BYTES) {
        c->has_depth_bytes = v->has_depth_bytes;
        c->depth_bytes = v->depth_bytes;
    }
    if (mask & NW_TM_SET_RATE_PPS)
        c->rate_pps = v->rate_pps;
    if (mask & NW_TM_SET_RATE_BPS)
        c->rate_bps = v->rate_bps;
}

static const nw_tm_queue_config_t *config_of(const nw_tm_t *tm, uint32_t port, uint32_t prio)
{
    const tm_overrides_t *o = &tm->overrides[port];
    if (o->has_queue[prio])
        return &o->queue[prio];
    if (o->has_port)
        return &o->port;
    return &tm->default_queue;
}

static int valid_config(const nw_tm_queue_config_t *c)
{
    return c->rate_pps >= 0 && c->rate_bps >= 0;
}

nw_tm_t *nw_tm_new(uint32_t priority_queues, const nw_tm_queue_config_t *default_queue)
{
    if (priority_queues < 1 || priority_queues > NW_TM_MAX_PRIORITIES)
        return NULL;
    if (default_queue && !valid_config(default_queue))
        return NULL;
    nw_tm_t *tm = calloc(1, sizeof(*tm));
    if (!tm)
        return NULL;
    tm->overrides = calloc(NW_TM_MAX_PORTS, sizeof(*tm->overrides));
    if (!tm->overrides) {
        free(tm);
        return NULL;
    }
    tm->n = priority_queues;
    if (default_queue)
        tm->default_queue = *default_queue;
    else
        tm->default_queue.depth_packets = NW_TM_DEFAULT_DEPTH;
    return tm;
}

void nw_tm_free(nw_tm_t *tm)
{
    if (!tm)
        return;
    for (uint32_t p = 0; p < NW_TM_MAX_PORTS; p++) {
        if (!tm->ports[p])
            continue;
        for (uint32_t q = 0; q < NW_TM_MAX_PRIORITIES; q++)
            free(tm->ports[p]->queues[q].ring);
        free(tm->ports[p]);
    }
    free(tm->overrides);
    free(tm);
}

uint32_t nw_tm_priority_queues(const nw_tm_t *tm)
{
    return tm->n;
}

static void reapply_all(nw_tm_t *tm)
{
    for (uint32_t p = 0; p < NW_TM_MAX_PORTS; p++) {
        tm_port_t *port = tm->ports[p];
        if (!port)
            continue;
        for (uint32_t q = 0; q < tm->n; q++)
            queue_apply(&port->queues[q], config_of(tm, p, q));
    }
    tm->cached = 0;
}

int32_t nw_tm_configure(nw_tm_t *tm, int32_t port, int32_t priority, uint32_t mask,
                        const nw_tm_queue_config_t *v)
{
    if (!valid_config(v) || port >= (int32_t)NW_TM_MAX_PORTS || priority >= (int32_t)tm->n)
        return -1;
    if (priority >= 0 && port < 0)
        return -1; /* a priority needs a port */
    if (port < 0) {
        changed(&tm->default_queue, mask, v);
        for (uint32_t p = 0; p < NW_TM_MAX_PORTS; p++) {
            tm_overrides_t *o = &tm->overrides[p];
            if (o->has_port)
                changed(&o->port, mask, v);
            for (uint32_t q = 0; q < NW_TM_MAX_PRIORITIES; q++)
                if (o->has_queue[q])
                    changed(&o->queue[q], mask, v);
        }
    } else if (priority < 0) {
        tm_overrides_t *o = &tm->overrides[port];
        nw_tm_queue_config_t base = *config_of(tm, (uint32_t)port, 0); /* as Python's */
        changed(&base, mask, v);
        o->port = base;
        o->has_port = 1;
        for (uint32_t q = 0; q < NW_TM_MAX_PRIORITIES; q++)
            if (o->has_queue[q])
                changed(&o->queue[q], mask, v);
    } else {
        tm_overrides_t *o = &tm->overrides[port];
        nw_tm_queue_config_t base = *config_of(tm, (uint32_t)port, (uint32_t)priority);
        changed(&base, mask, v);
        o->queue[priority] = base;
        o->has_queue[priority] = 1;
    }
    reapply_all(tm);
    return 0;
}

int32_t nw_tm_queue_config(const nw_tm_t *tm, uint32_t port, uint32_t priority,
                           nw_tm_queue_config_t *out)
{
    if (port >= NW_TM_MAX_PORTS || priority >= tm->n)
        return -1;
    *out = *config_of(tm, port, priority);
    return 0;
}

int32_t nw_tm_set_port_rate(nw_tm_t *tm, uint32_t port, double rate_bps)
{
    if (port >= NW_TM_MAX_PORTS || rate_bps < 0)
        return -1;
    tm->link_ns_per_byte[port] = rate_bps > 0 ? 8 * NS_PER_S / rate_bps : 0.0;
    tm->cached = 0;
    return 0;
}

/* ------------------------------------------------------------------ ports and queues */

static tm_port_t *port_of(nw_tm_t *tm, uint32_t number)
{
    tm_port_t *p = tm->ports[number];
    if (p)
        return p;
    p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->number = number;
    for (uint32_t q = 0; q < tm->n; q++)
        queue_apply(&p->queues[q], config_of(tm, number, q));
    tm->ports[number] = p;
    return p;
}

static int queue_push(tm_queue_t *q, const tm_entry_t *e)
{
    if (q->count == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 64;
        tm_entry_t *ring = malloc((size_t)cap * sizeof(*ring));
        if (!ring)
            return -1;
        for (uint32_t i = 0; i < q->count; i++)
            ring[i] = q->ring[(q->head + i) & (q->cap - 1)];
        free(q->ring);
        q->ring = ring;
        q->cap = cap;
        q->head = 0;
    }
    q->ring[(q->head + q->count) & (q->cap - 1)] = *e;
    q->count++;
    return 0;
}

static tm_entry_t queue_pop(tm_queue_t *q)
{
    tm_entry_t e = q->ring[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    q->count--;
    return e;
}

/* When the port's next packet may leave (it has packets). */
static uint64_t ready_at(const nw_tm_t *tm, const tm_port_t *p)
{
    int found = 0;
    uint64_t t = 0;
    for (uint32_t q = 0; q < tm->n; q++) {
        const tm_queue_t *qu = &p->queues[q];
        if (qu->count && (!found || qu->eligible_at < t)) {
            t = qu->eligible_at;
            found = 1;
        }
    }
    return t > p->free_at ? t : p->free_at;
}

static void activate(nw_tm_t *tm, tm_port_t *p)
{
    p->active_slot = tm->n_active;
    tm->active[tm->n_active++] = p->number;
}

static void deactivate(nw_tm_t *tm, tm_port_t *p)
{
    uint32_t last = tm->active[--tm->n_active];
    tm->active[p->active_slot] = last;
    tm->ports[last]->active_slot = p->active_slot;
}

/* ------------------------------------------------------------------ packets */

int32_t nw_tm_enqueue(nw_tm_t *tm, uint64_t now, uint32_t port, uint32_t priority,
                      uint32_t length, uint64_t handle)
{
    if (priority >= tm->n) {
        tm->st.drop_priority++;
        return NW_TM_DROP_PRIORITY;
    }
    if (port >= NW_TM_MAX_PORTS) {
        tm->st.drop_port++;
        return NW_TM_DROP_PORT;
    }
    tm_port_t *p = port_of(tm, port);
    if (!p) {
        tm->st.drop_nomem++;
        return NW_TM_DROP_NOMEM;
    }
    tm_queue_t *q = &p->queues[priority];
    const nw_tm_queue_config_t *c = &q->config;
    if (q->count >= c->depth_packets || (c->has_depth_bytes && q->bytes + length > c->depth_bytes)) {
        tm->st.drop_queue_full++;
        return NW_TM_DROP_QUEUE_FULL;
    }
    if (!q->count && q->eligible_at < now)
        q->eligible_at = now; /* an idle queue's next packet may leave now */
    tm_entry_t e = {.handle = handle, .enq_ns = now, .length = length, .enq_depth = p->count};
    if (queue_push(q, &e) < 0) {
        tm->st.drop_nomem++;
        return NW_TM_DROP_NOMEM;
    }
    q->bytes += length;
    if (!p->count)
        activate(tm, p);
    p->count++;
    tm->st.queued++;
    tm->cached = 0;
    return NW_TM_QUEUED;
}

/* The port whose packet leaves first and when (ties: the lower port number). */
static int next_of(nw_tm_t *tm)
{
    if (tm->cached)
        return 1;
    if (!tm->n_active)
        return 0;
    tm_port_t *best = NULL;
    uint64_t best_t = 0;
    for (uint32_t i = 0; i < tm->n_active; i++) {
        tm_port_t *p = tm->ports[tm->active[i]];
        uint64_t t = ready_at(tm, p);
        if (!best || t < best_t || (t == best_t && p->number < best->number)) {
            best = p;
            best_t = t;
        }
    }
    tm->cached = 1;
    tm->cached_t = best_t;
    tm->cached_port = best;
    return 1;
}

int32_t nw_tm_pass_through(nw_tm_t *tm, uint64_t now, uint32_t port, uint32_t priority,
                           uint32_t length, nw_tm_queue_meta_t *meta)
{
    if (priority >= tm->n || port >= NW_TM_MAX_PORTS)
        return 0;
    tm_port_t *p = port_of(tm, port);
    if (!p || p->count || p->free_at > now)
        return 0;
    tm_queue_t *q = &p->queues[priority];
    const nw_tm_queue_config_t *c = &q->config;
    if (q->eligible_at > now || c->depth_packets < 1 ||
        (c->has_depth_bytes && length > c->depth_bytes))
        return 0;
    uint64_t s = service_ns(q, length);
    if (s)
        q->eligible_at = now + s;
    meta->enq_timestamp = now / 1000;
    meta->enq_qdepth = 0;
    meta->deq_timedelta = 0;
    meta->deq_qdepth = 0;
    meta->qid = tm->n - 1 - priority;
    return 1;
}

int32_t nw_tm_next_departure(nw_tm_t *tm, uint64_t *when)
{
    if (!next_of(tm))
        return 0;
    *when = tm->cached_t;
    return 1;
}

int32_t nw_tm_dequeue(nw_tm_t *tm, uint64_t now, nw_tm_departure_t *out)
{
    if (!next_of(tm) || tm->cached_t > now)
        return 0;
    uint64_t best_t = tm->cached_t;
    tm_port_t *best = tm->cached_port;
    tm->cached = 0;
    uint32_t prio = tm->n;
    tm_queue_t *q = NULL;
    while (prio-- > 0) {
        q = &best->queues[prio];
        if (q->count && q->eligible_at <= best_t)
            break;
    }
    tm_entry_t e = queue_pop(q);
    q->bytes -= e.length;
    best->count--;
    tm->st.queued--;
    if (!best->count)
        deactivate(tm, best);
    uint64_t s = service_ns(q, e.length);
    if (s)
        q->eligible_at = best_t + s;
    out->time_ns = best_t;
    out->handle = e.handle;
    out->port = best->number;
    out->priority = prio;
    out->length = e.length;
    out->meta.enq_timestamp = e.enq_ns / 1000;
    out->meta.enq_qdepth = e.enq_depth;
    out->meta.deq_timedelta = best_t / 1000 - e.enq_ns / 1000;
    out->meta.deq_qdepth = best->count;
    out->meta.qid = tm->n - 1 - prio;
    return 1;
}

uint64_t nw_tm_transmitted(nw_tm_t *tm, uint32_t port, uint64_t now, uint32_t length)
{
    if (port >= NW_TM_MAX_PORTS)
        return now;
    tm_port_t *p = port_of(tm, port);
    double per_byte = tm->link_ns_per_byte[port];
    uint64_t end = now + (per_byte ? (uint64_t)((double)length * per_byte + 0.5) : 0);
    if (p)
        p->free_at = end;
    tm->cached = 0;
    return end;
}

uint32_t nw_tm_depth(const nw_tm_t *tm, uint32_t port, int32_t priority)
{
    if (port >= NW_TM_MAX_PORTS || !tm->ports[port])
        return 0;
    if (priority < 0)
        return tm->ports[port]->count;
    if ((uint32_t)priority >= tm->n)
        return 0;
    return tm->ports[port]->queues[priority].count;
}

void nw_tm_stats(const nw_tm_t *tm, nw_tm_stats_t *out)
{
    *out = tm->st;
}
