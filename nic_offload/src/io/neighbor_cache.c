/* Next-hop MAC addresses learned from received frames (neighbor_cache.h). */
#include "neighbor_cache.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static uint32_t slot_of(uint32_t ip)
{
    return (ip * 2654435761u) >> 22; /* Fibonacci hashing: the top 10 bits */
}

void nw_neigh_init(nw_neigh_cache_t *c)
{
    memset(c, 0, sizeof(*c));
}

void nw_neigh_learn(nw_neigh_cache_t *c, uint32_t ip, const uint8_t mac[6])
{
    if (ip == 0)
        return;
    uint32_t h = slot_of(ip);
    nw_neigh_entry_t *free_slot = NULL;
    for (uint32_t k = 0; k < NW_NEIGH_PROBES; k++) {
        nw_neigh_entry_t *e = &c->slot[(h + k) & (NW_NEIGH_SLOTS - 1)];
        if (e->ip == ip) {
            if (memcmp(e->mac, mac, 6) != 0)
                memcpy(e->mac, mac, 6);
            return;
        }
        if (e->ip == 0 && !free_slot)
            free_slot = e;
    }
    if (!free_slot)
        free_slot = &c->slot[h & (NW_NEIGH_SLOTS - 1)];
    free_slot->ip = ip;
    memcpy(free_slot->mac, mac, 6);
}

const uint8_t *nw_neigh_find(const nw_neigh_cache_t *c, uint32_t ip)
{
    uint32_t h = slot_of(ip);
    for (uint32_t k = 0; k < NW_NEIGH_PROBES; k++) {
        const nw_neigh_entry_t *e = &c->slot[(h + k) & (NW_NEIGH_SLOTS - 1)];
        if (e->ip == ip && ip != 0)
            return e->mac;
    }
    return NULL;
}

/* The next hop towards ip out of ifname by the kernel's main IPv4 table
 * (/proc/net/route, longest prefix): the gateway, or ip itself on the link;
 * 0 if no route leaves through ifname. */
static uint32_t next_hop(uint32_t ip, const char *ifname)
{
    FILE *f = fopen("/proc/net/route", "re");
    if (!f)
        return 0;
    char line[256], dev[64];
    unsigned int dst, gw, flags, mask;
    uint32_t hop = 0;
    int best = -1;
    if (fgets(line, sizeof(line), f)) { /* the header line */
        while (fgets(line, sizeof(line), f)) {
            if (sscanf(line, "%63s %x %x %x %*d %*d %*d %x", dev, &dst, &gw, &flags, &mask) != 5 ||
                !(flags & 0x1) || strcmp(dev, ifname) != 0) /* RTF_UP */
                continue;
            uint32_t d = ntohl(dst), m = ntohl(mask); /* the file holds network order */
            int len = __builtin_popcount(m);
            if ((ip & m) != d || len <= best)
                continue;
            best = len;
            hop = (flags & 0x2) ? ntohl(gw) : ip; /* RTF_GATEWAY */
        }
    }
    fclose(f);
    return hop;
}

/* ip's complete or permanent entry on ifname in /proc/net/arp. */
static int32_t arp_entry(uint32_t ip, const char *ifname, uint8_t mac[6])
{
    FILE *f = fopen("/proc/net/arp", "re");
    if (!f)
        return 0;
    char line[256], addr[64], hw[64], dev[64];
    unsigned int type, flags;
    int32_t found = 0;
    if (!fgets(line, sizeof(line), f)) /* the header line */
        goto done;
    while (!found && fgets(line, sizeof(line), f)) {
        struct in_addr a;
        unsigned int m[6];
        if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %63s", addr, &type, &flags, hw, dev) != 5 ||
            !(flags & 0x6) || /* ATF_COM | ATF_PERM */
            strcmp(dev, ifname) != 0 || inet_pton(AF_INET, addr, &a) != 1 ||
            ntohl(a.s_addr) != ip ||
            sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
            continue;
        for (int i = 0; i < 6; i++)
            mac[i] = (uint8_t)m[i];
        found = 1;
    }
done:
    fclose(f);
    return found;
}

int32_t nw_neigh_from_kernel(nw_neigh_cache_t *c, uint32_t ip, const char *ifname)
{
    uint32_t hop = next_hop(ip, ifname);
    uint8_t mac[6];
    if (hop == 0 || !arp_entry(hop, ifname, mac))
        return 0;
    nw_neigh_learn(c, ip, mac);
    return 1;
}
