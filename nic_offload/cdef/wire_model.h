/* cffi view of include/wire_model.h: the one wire model. */
#define NW_LINK_DELIVER ...
#define NW_LINK_DROP_LIMIT ...
#define NW_LINK_DROP_LOSS ...
#define NW_LINK_DROP_BURST ...
#define NW_LINK_NO_BIT ...

typedef struct nw_link_config {
    uint64_t rate_bps;
    uint32_t limit;
    uint32_t gemodel;
    uint64_t delay_ns;
    uint64_t jitter_ns;
    double loss;
    double ge_p;
    double ge_r;
    double ge_loss_good;
    double ge_loss_bad;
    double corrupt;
} nw_link_config_t;

typedef struct nw_link_result {
    uint32_t verdict;
    uint64_t depart_ns;
    uint64_t arrive_ns;
    uint64_t corrupt_bit;
} nw_link_result_t;

typedef struct nw_link_stats {
    uint64_t delivered;
    uint64_t dropped_limit;
    uint64_t lost;
    uint64_t burst_lost;
    uint64_t corrupted;
} nw_link_stats_t;

typedef struct nw_link nw_link_t;

nw_link_t *nw_link_new(const nw_link_config_t *cfg, uint64_t seed);
void nw_link_free(nw_link_t *link);
uint32_t nw_link_send(nw_link_t *link, uint64_t now_ns, uint32_t len, nw_link_result_t *out);
uint32_t nw_link_propagate(nw_link_t *link, uint64_t now_ns, uint32_t len,
                           nw_link_result_t *out);
uint64_t nw_link_serialization_ns(uint64_t rate_bps, uint32_t len);
uint64_t nw_link_transmit_ns(const nw_link_t *link, uint32_t len);
uint64_t nw_link_busy_until(const nw_link_t *link);
void nw_link_get_stats(const nw_link_t *link, nw_link_stats_t *out);
int nw_link_flip_bit(uint8_t *frame, uint32_t len, uint64_t bit);
