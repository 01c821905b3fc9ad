/* Next-hop Ethernet addresses by IPv4 address, learned from received frames.
 *
 * tx=packet writes whole frames, so it needs the MAC address that leads to
 * each peer. A frame from IP X that arrived with source MAC M says that M is
 * the next hop towards X (X itself on a link, or the router or switch port in
 * between). Until a peer has been heard from, the I/O driver sends to it
 * through its UDP socket, and the kernel resolves the address (ARP).
 * A fixed table: no allocation; a full probe sequence overwrites its first slot.
 */
#ifndef NETWEFT_NEIGHBOR_CACHE_H
#define NETWEFT_NEIGHBOR_CACHE_H

#include <stdint.h>

#define NW_NEIGH_SLOTS 1024u /* power of two */
#define NW_NEIGH_PROBES 8u

typedef struct {
    uint32_t ip; /* host order; 0 = empty (0.0.0.0 is never a peer) */
    uint8_t mac[6];
    uint8_t reserved[2];
} nw_neigh_entry_t;

typedef struct {
    nw_neigh_entry_t slot[NW_NEIGH_SLOTS];
} nw_neigh_cache_t;

void nw_neigh_init(nw_neigh_cache_t *c);
/* Records (or refreshes) ip -> mac. */
void nw_neigh_learn(nw_neigh_cache_t *c, uint32_t ip, const uint8_t mac[6]);
/* The MAC for ip, or NULL if it was never learned (or was evicted). */
const uint8_t *nw_neigh_find(const nw_neigh_cache_t *c, uint32_t ip);
/* Asks the kernel for ip's next hop out of interface ifname: the route
 * (/proc/net/route: the gateway, or ip itself on the link) and that hop's
 * complete or permanent ARP entry (/proc/net/arp), so that frames can go out
 * from a peer's first packet. Returns 1 if it learned an entry. */
int32_t nw_neigh_from_kernel(nw_neigh_cache_t *c, uint32_t ip, const char *ifname);

#endif
