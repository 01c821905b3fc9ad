/* The loop's channel to the host (dataplane_host.h): two single-producer,
 * single-consumer rings of fixed-size slots. */
#define _GNU_SOURCE
#include "dataplane_host.h"

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct host_ring {
    uint8_t *mem;          /* slots * stride: a uint32_t length, then the bytes */
    uint32_t slots, stride, frame_max;
    uint64_t head;         /* next to consume (consumer writes) */
    uint64_t tail;         /* next to fill (producer writes) */
    uint64_t accepted, dropped;
} host_ring_t;

struct nw_dp_host {
    uint32_t cpu_port;
    int efd;
    uint32_t pending_notify;
    host_ring_t to_host, from_host;
};

static int ring_init(host_ring_t *r, uint32_t slots, uint32_t frame_max)
{
    r->slots = slots;
    r->frame_max = frame_max;
    r->stride = (uint32_t)((sizeof(uint32_t) + frame_max + 15u) & ~15u);
    r->mem = calloc(slots, r->stride);
    return r->mem ? 0 : -1;
}

static int ring_put(host_ring_t *r, const uint8_t *frame, uint32_t len)
{
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    if (len > r->frame_max || r->tail - head >= r->slots) {
        __atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
        return -1;
    }
    uint8_t *slot = r->mem + (size_t)(r->tail % r->slots) * r->stride;
    memcpy(slot, &len, sizeof(len));
    memcpy(slot + sizeof(len), frame, len);
    __atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&r->accepted, 1, __ATOMIC_RELAXED);
    return 0;
}

/* The oldest slot (its bytes and length) or NULL. */
static const uint8_t *ring_peek(host_ring_t *r, uint32_t *len)
{
    uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (r->head == tail)
        return NULL;
    const uint8_t *slot = r->mem + (size_t)(r->head % r->slots) * r->stride;
    memcpy(len, slot, sizeof(*len));
    if (*len > r->frame_max)
        *len = r->frame_max;
    return slot + sizeof(uint32_t);
}

static void ring_pop(host_ring_t *r)
{
    __atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
}

nw_dp_host_t *nw_dp_host_new(uint32_t cpu_port, uint32_t slots, uint32_t frame_max)
{
    if (cpu_port > 510 || !slots || slots > (1u << 16) || !frame_max || frame_max > (1u << 17))
        return NULL;
    nw_dp_host_t *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->cpu_port = cpu_port;
    h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (h->efd < 0 || ring_init(&h->to_host, slots, frame_max) < 0 ||
        ring_init(&h->from_host, slots, frame_max) < 0) {
        nw_dp_host_free(h);
        return NULL;
    }
    return h;
}

void nw_dp_host_free(nw_dp_host_t *h)
{
    if (!h)
        return;
    if (h->efd >= 0)
        close(h->efd);
    free(h->to_host.mem);
    free(h->from_host.mem);
    free(h);
}

uint32_t nw_dp_host_cpu_port(const nw_dp_host_t *h)
{
    return h->cpu_port;
}

int32_t nw_dp_host_fd(const nw_dp_host_t *h)
{
    return h->efd;
}

int32_t nw_dp_host_take(nw_dp_host_t *h, uint8_t *buf, uint32_t cap)
{
    uint64_t drained;
    if (read(h->efd, &drained, sizeof(drained)) < 0)
        (void)0; /* nothing signalled: the ring may still hold frames */
    uint32_t len = 0;
    const uint8_t *frame = ring_peek(&h->to_host, &len);
    if (!frame)
        return -1;
    if (len > cap)
        return -2;
    memcpy(buf, frame, len);
    ring_pop(&h->to_host);
    return (int32_t)len;
}

int32_t nw_dp_host_inject(nw_dp_host_t *h, const uint8_t *frame, uint32_t len)
{
    return ring_put(&h->from_host, frame, len);
}

void nw_dp_host_stats(const nw_dp_host_t *h, nw_dp_host_stats_t *out)
{
    out->punted = __atomic_load_n(&h->to_host.accepted, __ATOMIC_RELAXED);
    out->punt_drops = __atomic_load_n(&h->to_host.dropped, __ATOMIC_RELAXED);
    out->injected = __atomic_load_n(&h->from_host.accepted, __ATOMIC_RELAXED);
    out->inject_drops = __atomic_load_n(&h->from_host.dropped, __ATOMIC_RELAXED);
}

void nw_dp_host_punt(nw_dp_host_t *h, const uint8_t *frame, uint32_t len)
{
    if (ring_put(&h->to_host, frame, len) == 0)
        h->pending_notify = 1;
}

void nw_dp_host_notify(nw_dp_host_t *h)
{
    if (!h->pending_notify)
        return;
    h->pending_notify = 0;
    uint64_t one = 1;
    if (write(h->efd, &one, sizeof(one)) < 0)
        (void)0; /* the counter is full: the host is being woken already */
}

int32_t nw_dp_host_peek_injected(nw_dp_host_t *h, const uint8_t **frame, uint32_t *len)
{
    const uint8_t *f = ring_peek(&h->from_host, len);
    if (!f)
        return 0;
    *frame = f;
    return 1;
}

void nw_dp_host_release_injected(nw_dp_host_t *h)
{
    ring_pop(&h->from_host);
}
