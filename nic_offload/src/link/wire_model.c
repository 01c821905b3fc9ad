/* The one wire model (see wire_model.h for what each parameter means). */
#include "wire_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { STREAM_LOSS, STREAM_GEMODEL, STREAM_JITTER, STREAM_CORRUPT, STREAMS };

struct nw_link {
    nw_link_config_t cfg;
    uint64_t rng[STREAMS][4];  /* xoshiro256** states, one per effect */
    uint32_t bad;              /* Gilbert-Elliott state: 1 = bad */
    uint64_t busy_until_ns;
    uint64_t last_arrival_ns;
    /* End times of the frames waiting for or on the transmitter, oldest first
     * (a ring of cfg.limit entries; none without a limit). */
    uint64_t *waiting;
    uint32_t waiting_head;
    uint32_t waiting_len;
    nw_link_stats_t stats;
};

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro256ss(uint64_t s[4])
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1) with 53 random bits. */
static double uniform01(uint64_t s[4])
{
    return (double)(xoshiro256ss(s) >> 11) * 0x1.0p-53;
}

/* Uniform on [0, n) (multiply-high; the bias is below n / 2^64). */
static uint64_t below(uint64_t s[4], uint64_t n)
{
    return (uint64_t)(((unsigned __int128)xoshiro256ss(s) * n) >> 64);
}

static int is_probability(double p)
{
    return p >= 0.0 && p <= 1.0;  /* false for NaN */
}

static int config_valid(const nw_link_config_t *cfg)
{
    return is_probability(cfg->loss) && is_probability(cfg->corrupt)
        && is_probability(cfg->ge_p) && is_probability(cfg->ge_r)
        && is_probability(cfg->ge_loss_good) && is_probability(cfg->ge_loss_bad)
        && cfg->delay_ns <= INT64_MAX / 4 && cfg->jitter_ns <= INT64_MAX / 4;
}

nw_link_t *nw_link_new(const nw_link_config_t *cfg, uint64_t seed)
{
    if (cfg == NULL || !config_valid(cfg))
        return NULL;
    nw_link_t *link = calloc(1, sizeof(*link));
    if (link == NULL)
        return NULL;
    link->cfg = *cfg;
    if (cfg->limit > 0) {
        link->waiting = calloc(cfg->limit, sizeof(uint64_t));
        if (link->waiting == NULL) {
            free(link);
            return NULL;
        }
    }
    uint64_t sm = seed;
    for (uint32_t stream = 0; stream < STREAMS; stream++)
        for (uint32_t i = 0; i < 4; i++)
            link->rng[stream][i] = splitmix64(&sm);
    return link;
}

void nw_link_free(nw_link_t *link)
{
    if (link != NULL) {
        free(link->waiting);
        free(link);
    }
}

uint64_t nw_link_serialization_ns(uint64_t rate_bps, uint32_t len)
{
    if (rate_bps == 0)
        return 0;
    unsigned __int128 bits_ns = (unsigned __int128)len * 8u * 1000000000u;
    uint64_t ns = (uint64_t)((bits_ns + rate_bps / 2) / rate_bps);
    return ns ? ns : 1;
}

uint64_t nw_link_transmit_ns(const nw_link_t *link, uint32_t len)
{
    return nw_link_serialization_ns(link->cfg.rate_bps, len);
}

uint64_t nw_link_busy_until(const nw_link_t *link)
{
    return link->busy_until_ns;
}

void nw_link_get_stats(const nw_link_t *link, nw_link_stats_t *out)
{
    *out = link->stats;
}

int nw_link_flip_bit(uint8_t *frame, uint32_t len, uint64_t bit)
{
    if (bit >= (uint64_t)len * 8u)
        return -1;
    frame[bit >> 3] ^= (uint8_t)(0x80u >> (bit & 7u));
    return 0;
}

/* Forget the frames whose last bit has left by `now_ns`. */
static void waiting_expire(nw_link_t *link, uint64_t now_ns)
{
    while (link->waiting_len > 0 && link->waiting[link->waiting_head] <= now_ns) {
        link->waiting_head = (link->waiting_head + 1) % link->cfg.limit;
        link->waiting_len--;
    }
}

static void waiting_push(nw_link_t *link, uint64_t end_ns)
{
    uint32_t tail = (link->waiting_head + link->waiting_len) % link->cfg.limit;
    link->waiting[tail] = end_ns;
    link->waiting_len++;
}

/* One Gilbert-Elliott step: move, then draw the loss of the state it is in. */
static int gemodel_drops(nw_link_t *link)
{
    const nw_link_config_t *cfg = &link->cfg;
    uint64_t *s = link->rng[STREAM_GEMODEL];
    double move = uniform01(s);
    if (link->bad)
        link->bad = !(move < cfg->ge_r);
    else
        link->bad = move < cfg->ge_p;
    return uniform01(s) < (link->bad ? cfg->ge_loss_bad : cfg->ge_loss_good);
}

/* The signed jitter of one frame, uniform on [-jitter_ns, +jitter_ns]. */
static int64_t jitter_draw(nw_link_t *link)
{
    uint64_t j = link->cfg.jitter_ns;
    return (int64_t)below(link->rng[STREAM_JITTER], 2 * j + 1) - (int64_t)j;
}

uint32_t nw_link_propagate(nw_link_t *link, uint64_t now_ns, uint32_t len,
                           nw_link_result_t *out)
{
    const nw_link_config_t *cfg = &link->cfg;
    /* Every enabled effect draws for every frame, whatever the others decide. */
    int lost = cfg->loss > 0.0 && uniform01(link->rng[STREAM_LOSS]) < cfg->loss;
    int burst = cfg->gemodel && gemodel_drops(link);
    int64_t jitter = cfg->jitter_ns ? jitter_draw(link) : 0;
    uint64_t bit = NW_LINK_NO_BIT;
    if (cfg->corrupt > 0.0 && uniform01(link->rng[STREAM_CORRUPT]) < cfg->corrupt && len > 0)
        bit = below(link->rng[STREAM_CORRUPT], (uint64_t)len * 8u);

    out->depart_ns = now_ns;
    out->arrive_ns = 0;
    out->corrupt_bit = NW_LINK_NO_BIT;
    if (lost || burst) {
        out->verdict = lost ? NW_LINK_DROP_LOSS : NW_LINK_DROP_BURST;
        if (lost)
            link->stats.lost++;
        else
            link->stats.burst_lost++;
        return out->verdict;
    }
    int64_t delay = (int64_t)cfg->delay_ns + jitter;
    uint64_t arrive = now_ns + (uint64_t)(delay > 0 ? delay : 0);
    if (arrive < link->last_arrival_ns)
        arrive = link->last_arrival_ns;  /* one wire: frames keep their order */
    link->last_arrival_ns = arrive;
    if (bit != NW_LINK_NO_BIT)
        link->stats.corrupted++;
    link->stats.delivered++;
    out->verdict = NW_LINK_DELIVER;
    out->arrive_ns = arrive;
    out->corrupt_bit = bit;
    return NW_LINK_DELIVER;
}

uint32_t nw_link_send(nw_link_t *link, uint64_t now_ns, uint32_t len, nw_link_result_t *out)
{
    if (link->cfg.rate_bps == 0)
        return nw_link_propagate(link, now_ns, len, out);
    if (link->cfg.limit > 0) {
        waiting_expire(link, now_ns);
        if (link->waiting_len >= link->cfg.limit) {
            link->stats.dropped_limit++;
            out->verdict = NW_LINK_DROP_LIMIT;
            out->depart_ns = out->arrive_ns = 0;
            out->corrupt_bit = NW_LINK_NO_BIT;
            return NW_LINK_DROP_LIMIT;
        }
    }
    uint64_t start = link->busy_until_ns > now_ns ? link->busy_until_ns : now_ns;
    uint64_t end = start + nw_link_transmit_ns(link, len);
    link->busy_until_ns = end;
    if (link->cfg.limit > 0)
        waiting_push(link, end);
    return nw_link_propagate(link, end, len, out);
}
