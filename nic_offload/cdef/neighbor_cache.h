/* cffi view of include/neighbor_cache.h (constants' values come from the compiler). */
#define NW_NEIGH_SLOTS ...
#define NW_NEIGH_PROBES ...

typedef struct {
    uint32_t ip;
    uint8_t mac[6];
    uint8_t reserved[2];
} nw_neigh_entry_t;

typedef struct {
    nw_neigh_entry_t slot[...];
} nw_neigh_cache_t;

void nw_neigh_init(nw_neigh_cache_t *c);
void nw_neigh_learn(nw_neigh_cache_t *c, uint32_t ip, const uint8_t mac[6]);
const uint8_t *nw_neigh_find(const nw_neigh_cache_t *c, uint32_t ip);
int32_t nw_neigh_from_kernel(nw_neigh_cache_t *c, uint32_t ip, const char *ifname);
