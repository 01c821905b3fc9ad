/* C-level check of the aggregation worker core under AddressSanitizer and UBSan: a
 * one-worker all-reduce whose results come back echoed, with every result preceded by
 * hostile payloads (lengths from 0 to past the packet, random bytes, the real header
 * with a flipped bit over random lanes, whole results of another job, block or pool). The hostile ones are counted and dropped, nothing reads out of bounds, and
 * the sums are the data's quantized values. Exits non-zero on the first failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregation_worker.h"
#include "engine.h"

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

enum { LANES = 64, CHUNKS = 37, WINDOW = 4 };

static uint64_t rng_state = 88172645463325252ULL;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

/* Hostile payloads before a real result; each is fed from its own heap copy of its
 * exact length, so ASan sees any read past it. Returns how many were fed. */
static uint32_t feed_hostile(nw_agg_worker_t *w, const uint8_t *result, uint32_t len,
                             int64_t now)
{
    uint32_t fed = 0;
    for (uint32_t n = 0; n <= len + 8; n += 1 + rnd() % 97) {
        uint8_t *p = malloc(n ? n : 1);
        CHECK(p != NULL);
        for (uint32_t i = 0; i < n; i++)
            p[i] = (uint8_t)rnd();
        if (n >= 16 && rnd() % 2) { /* the real header over random lanes, with a bit
                                       flipped in a field a result must match */
            static const uint8_t checked[] = {2, 3, 4, 5, 8, 9, 10, 11, 14, 15};
            memcpy(p, result, 16);
            p[checked[rnd() % sizeof checked]] ^= (uint8_t)(1u << (rnd() % 8));
        }
        CHECK(nw_agg_on_payload(w, p, n, now) == 0); /* never a new round */
        free(p);
        fed++;
    }
    for (uint32_t k = 0; k < 3; k++) { /* whole results of another job, block or pool */
        uint8_t *p = malloc(len);
        CHECK(p != NULL);
        memcpy(p, result, len);
        p[k == 0 ? 3 : k == 1 ? 11 : 6] ^= k == 2 ? 0x80 : 0x01;
        CHECK(nw_agg_on_payload(w, p, len, now) == 0);
        free(p);
        fed++;
    }
    return fed;
}

int main(void)
{
    float *data = malloc(sizeof(float) * LANES * CHUNKS);
    int16_t local[CHUNKS], exps[CHUNKS];
    int32_t *sums = calloc(LANES * CHUNKS, sizeof(int32_t));
    nw_agg_job_t job = {.first_block = 4000000000ULL, .timeout_ns = 1000,
                        .max_timeout_ns = 64000, .job_id = 9, .worker_id = 0, .workers = 1,
                        .lanes = LANES, .window = WINDOW, .value_bits = 30};
    nw_agg_worker_t *w;
    nw_agg_stats_t st;
    uint32_t plen, hostile = 0;
    int64_t now = 0;
    CHECK(data && sums);
    for (uint32_t i = 0; i < LANES * CHUNKS; i++)
        data[i] = (float)((int32_t)(rnd() % 2001) - 1000) / 64.0f;
    CHECK(nw_agg_local_exponents(data, CHUNKS, LANES, local) == NW_OK);
    for (uint32_t c = 0; c < CHUNKS; c++)
        exps[c] = NW_AGG_EXPONENT_MIN;
    CHECK(nw_agg_worker_new(&job, data, local, sums, exps, CHUNKS, &w) == NW_OK);
    plen = nw_agg_packet_len(w);
    CHECK(nw_agg_start(w, now) == WINDOW);
    while (nw_agg_state(w) == NW_AGG_RUNNING) {
        uint32_t count = nw_agg_tx_count(w);
        uint8_t *batch = malloc((size_t)count * plen + 1);
        CHECK(count > 0 && batch != NULL);
        for (uint32_t i = 0; i < count; i++)
            memcpy(batch + (size_t)i * plen, nw_agg_tx_packet(w, i), plen);
        CHECK(nw_agg_tx_packet(w, count) == NULL);
        nw_agg_tx_clear(w);
        for (uint32_t i = 0; i < count; i++) {
            uint8_t *r = batch + (size_t)i * plen;
            r[1] = NW_AGG_FLAG_RESULT; /* one worker: the switch echoes the contribution */
            hostile += feed_hostile(w, r, plen, ++now);
            CHECK(nw_agg_on_payload(w, r, plen, ++now) >= 0);
        }
        free(batch);
    }
    CHECK(nw_agg_state(w) == NW_AGG_DONE && nw_agg_next_deadline(w) == -1);
    nw_agg_stats_get(w, &st);
    CHECK(st.results == CHUNKS + WINDOW && st.retransmits == 0);
    CHECK(st.malformed + st.ignored == hostile && st.malformed > 0 && st.ignored > 0);
    for (uint32_t i = 0; i < LANES * CHUNKS; i++) /* x * 2**(30 - e): exact here */
        CHECK((double)sums[i] == (double)data[i] * (double)(1u << (30 - exps[i / LANES])));
    nw_agg_worker_free(w);
    free(data);
    free(sums);
    printf("aggregation worker check passed (%u hostile payloads)\n", hostile);
    return 0;
}
