/* The stand-in pipeline: basic_forward.p4 by hand (dataplane_standin.h). */
#include "dataplane_standin.h"

#include <stdlib.h>
#include <string.h>

#define ETH_LEN 14u
#define IPV4_LEN 20u
#define ETHERTYPE_IPV4 0x0800u

typedef struct route {
    uint32_t prefix, mask, plen, port;
    uint8_t dmac[6];
} route_t;

struct nw_dp_standin {
    route_t routes[NW_DP_STANDIN_MAX_ROUTES]; /* longest prefix first */
    uint32_t n_routes;
    uint32_t priority;
    nw_dp_pipeline_t ops;
};

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t ipv4_checksum(const uint8_t *h)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < IPV4_LEN; i += 2)
        if (i != 10)
            sum += (uint32_t)h[i] << 8 | h[i + 1];
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static const route_t *lookup(const nw_dp_standin_t *s, uint32_t dst)
{
    for (uint32_t i = 0; i < s->n_routes; i++)
        if ((dst & s->routes[i].mask) == s->routes[i].prefix)
            return &s->routes[i];
    return NULL;
}

static void ingress(void *self, uint64_t now_ns, nw_dp_packet_t *pkt, nw_dp_verdict_t *v)
{
    (void)now_ns;
    const nw_dp_standin_t *s = self;
    uint8_t *d = pkt->data;
    if (pkt->len < ETH_LEN) {
        v->malformed = 1;
        return;
    }
    if (((uint32_t)d[12] << 8 | d[13]) != ETHERTYPE_IPV4)
        return; /* not IPv4: dropped by the program */
    if (pkt->len < ETH_LEN + IPV4_LEN) {
        v->malformed = 1; /* PacketTooShort */
        return;
    }
    uint8_t *ip = d + ETH_LEN;
    if ((ip[0] & 0x0f) != 5) {
        v->malformed = 1; /* IPv4OptionsNotSupported */
        return;
    }
    if (ipv4_checksum(ip) != ((uint32_t)ip[10] << 8 | ip[11]) || ip[8] <= 1)
        return;
    const route_t *r = lookup(s, be32(ip + 16));
    if (!r)
        return;
    uint8_t old_dst[6];
    memcpy(old_dst, d, sizeof(old_dst));
    memcpy(d, r->dmac, 6);        /* the next hop's MAC */
    memcpy(d + 6, old_dst, 6);    /* the old destination is the new source */
    ip[8]--;
    v->egress_spec = r->port;
    v->priority = s->priority;
}

static void egress(void *self, uint64_t now_ns, nw_dp_packet_t *pkt,
                   const nw_tm_queue_meta_t *queue, nw_dp_verdict_t *v)
{
    (void)self;
    (void)now_ns;
    (void)queue;
    v->egress_spec = pkt->egress_port;
    if (pkt->len >= ETH_LEN + IPV4_LEN &&
        ((uint32_t)pkt->data[12] << 8 | pkt->data[13]) == ETHERTYPE_IPV4) {
        uint8_t *ip = pkt->data + ETH_LEN;
        uint16_t c = ipv4_checksum(ip);
        ip[10] = (uint8_t)(c >> 8);
        ip[11] = (uint8_t)c;
    }
}

nw_dp_standin_t *nw_dp_standin_new(void)
{
    nw_dp_standin_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->ops.name = "stand-in basic_forward";
    s->ops.self = s;
    s->ops.ingress = ingress;
    s->ops.egress = egress;
    return s;
}

void nw_dp_standin_free(nw_dp_standin_t *s)
{
    free(s);
}

int32_t nw_dp_standin_add_route(nw_dp_standin_t *s, uint32_t prefix, uint32_t plen,
                                const uint8_t *dmac, uint32_t port)
{
    if (s->n_routes == NW_DP_STANDIN_MAX_ROUTES || plen > 32 || port >= NW_DP_DROP_PORT)
        return -1;
    uint32_t mask = plen ? 0xffffffffu << (32 - plen) : 0;
    uint32_t at = 0;
    while (at < s->n_routes && s->routes[at].plen >= plen)
        at++;
    memmove(&s->routes[at + 1], &s->routes[at], (s->n_routes - at) * sizeof(route_t));
    route_t *r = &s->routes[at];
    r->prefix = prefix & mask;
    r->mask = mask;
    r->plen = plen;
    r->port = port;
    memcpy(r->dmac, dmac, 6);
    s->n_routes++;
    return 0;
}

void nw_dp_standin_set_priority(nw_dp_standin_t *s, uint32_t priority)
{
    s->priority = priority;
}

const nw_dp_pipeline_t *nw_dp_standin_pipeline(nw_dp_standin_t *s)
{
    return &s->ops;
}
