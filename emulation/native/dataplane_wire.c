/* The loop's link model over the one wire model (dataplane_wire.h). */
#include "dataplane_wire.h"

#include <stdlib.h>
#include <string.h>

#define WIRE_PORTS 512u

struct nw_dp_wires {
    nw_link_t *links[2][WIRE_PORTS];
    nw_link_stats_t retired[2];   /* counts of links that were replaced */
};

nw_dp_wires_t *nw_dp_wires_new(void)
{
    return calloc(1, sizeof(nw_dp_wires_t));
}

static void add_stats(nw_link_stats_t *to, const nw_link_stats_t *s)
{
    to->delivered += s->delivered;
    to->dropped_limit += s->dropped_limit;
    to->lost += s->lost;
    to->burst_lost += s->burst_lost;
    to->corrupted += s->corrupted;
}

static void retire(nw_dp_wires_t *w, uint32_t dir, uint32_t port)
{
    nw_link_t *old = w->links[dir][port];
    if (!old)
        return;
    nw_link_stats_t s;
    nw_link_get_stats(old, &s);
    add_stats(&w->retired[dir], &s);
    nw_link_free(old);
    w->links[dir][port] = NULL;
}

void nw_dp_wires_free(nw_dp_wires_t *w)
{
    if (!w)
        return;
    for (uint32_t d = 0; d < 2; d++)
        for (uint32_t p = 0; p < WIRE_PORTS; p++)
            if (w->links[d][p])
                nw_link_free(w->links[d][p]);
    free(w);
}

int32_t nw_dp_wires_set(nw_dp_wires_t *w, uint32_t port, uint32_t direction,
                        const nw_link_config_t *cfg, uint64_t seed)
{
    if (port >= WIRE_PORTS || direction > NW_DP_WIRE_OUT)
        return -1;
    nw_link_t *link = NULL;
    if (cfg) {
        link = nw_link_new(cfg, seed);
        if (!link)
            return -1;
    }
    retire(w, direction, port);
    w->links[direction][port] = link;
    return 0;
}

/* Flip the bit the wire chose; the loop owns the frame's bytes. */
static void corrupt(uint8_t *frame, uint32_t len, const nw_link_result_t *r)
{
    if (r->corrupt_bit != NW_LINK_NO_BIT)
        (void)nw_link_flip_bit(frame, len, r->corrupt_bit);
}

/* Egress: the traffic manager serialized the frame (last bit out at now_ns). */
static int32_t egress(void *self, uint32_t port, uint64_t now_ns, uint8_t *frame,
                      uint32_t len, uint64_t *arrival_ns)
{
    nw_dp_wires_t *w = self;
    nw_link_t *link = port < WIRE_PORTS ? w->links[NW_DP_WIRE_OUT][port] : NULL;
    *arrival_ns = now_ns;
    if (!link)
        return 1;
    nw_link_result_t r;
    if (nw_link_propagate(link, now_ns, len, &r) != NW_LINK_DELIVER)
        return 0;
    corrupt(frame, len, &r);
    *arrival_ns = r.arrive_ns;
    return 1;
}

/* Ingress: the frame reached the link's transmitter at now_ns. */
static int32_t ingress(void *self, uint32_t port, uint64_t now_ns, uint8_t *frame,
                       uint32_t len, uint64_t *arrival_ns)
{
    nw_dp_wires_t *w = self;
    nw_link_t *link = port < WIRE_PORTS ? w->links[NW_DP_WIRE_IN][port] : NULL;
    *arrival_ns = now_ns;
    if (!link)
        return 1;
    nw_link_result_t r;
    if (nw_link_send(link, now_ns, len, &r) != NW_LINK_DELIVER)
        return 0;
    corrupt(frame, len, &r);
    *arrival_ns = r.arrive_ns;
    return 1;
}

void nw_dp_wires_egress_hook(nw_dp_wires_t *w, nw_dp_wire_t *out)
{
    out->self = w;
    out->propagate = egress;
}

void nw_dp_wires_ingress_hook(nw_dp_wires_t *w, nw_dp_wire_t *out)
{
    out->self = w;
    out->propagate = ingress;
}

void nw_dp_wires_stats(const nw_dp_wires_t *w, uint32_t direction, nw_link_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (direction > NW_DP_WIRE_OUT)
        return;
    add_stats(out, &w->retired[direction]);
    for (uint32_t p = 0; p < WIRE_PORTS; p++) {
        if (w->links[direction][p]) {
            nw_link_stats_t s;
            nw_link_get_stats(w->links[direction][p], &s);
            add_stats(out, &s);
        }
    }
}
