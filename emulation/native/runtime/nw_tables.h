/* Match-action tables of a generated pipeline.
 *
 * A key is the table's key fields, each big-endian in (width + 7) / 8 bytes,
 * concatenated. An entry holds per key byte a value and a mask (exact: all
 * ones; lpm: the prefix; ternary: the mask; optional: all ones or zero) and,
 * for range fields, the low and high bounds. The control plane (Python,
 * emulation/native/objects.py) keeps the entries' semantics exactly as
 * v1model/match_table.py: it gives each entry a rank (lpm: the prefix length;
 * ternary/range/optional: the priority) and a sequence number, and the winner
 * is the matching entry with the largest rank, then the smallest sequence.
 *
 * All-exact tables are hash tables; the others are kept sorted by (rank,
 * sequence) and scanned in that order (first match wins). An update is
 * applied whole between two packets (single-threaded).
 */
#ifndef NW_TABLES_H
#define NW_TABLES_H

#include "nw_runtime.h"

#define NW_MAX_ARGS 16u
#define NW_MAX_RANGES 8u

typedef struct nw_entry {
    uint64_t handle;
    int64_t rank;
    uint64_t seq;
    uint32_t action;
    uint32_t nargs;
    uint64_t args[NW_MAX_ARGS];   /* action data; a wider-than-64-bit one takes two (hi, lo) */
    uint64_t hash;                /* exact tables: hash of the key */
    struct nw_entry *next;        /* exact tables: bucket chain */
    uint8_t bytes[];              /* value[klen], mask[klen], lo[klen], hi[klen] */
} nw_entry_t;

typedef struct nw_table {
    uint32_t klen;                /* key bytes */
    uint32_t exact;               /* all keys exact: hash lookup */
    uint32_t nranges;
    uint32_t range_off[NW_MAX_RANGES], range_len[NW_MAX_RANGES];
    uint32_t default_action;
    uint32_t default_nargs;
    uint64_t default_args[NW_MAX_ARGS];
    nw_entry_t **entries;         /* sorted (rank desc, seq asc) */
    uint32_t count, cap;
    nw_entry_t **buckets;         /* exact tables */
    uint32_t nbuckets;
} nw_table_t;

static inline uint64_t nw_key_hash(const uint8_t *k, uint32_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (uint32_t i = 0; i < n; i++) {
        h ^= k[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void nw_table_rehash(nw_table_t *t) {
    uint32_t want = 16;
    while (want < t->count * 2)
        want <<= 1;
    if (want <= t->nbuckets && t->buckets)
        return;
    nw_entry_t **b = calloc(want, sizeof(*b));
    if (!b)
        return;
    for (uint32_t i = 0; i < t->count; i++) {
        nw_entry_t *e = t->entries[i];
        uint32_t s = (uint32_t)(e->hash & (want - 1));
        e->next = b[s];
        b[s] = e;
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = want;
}

static int nw_entry_before(const nw_entry_t *a, const nw_entry_t *b) {
    if (a->rank != b->rank)
        return a->rank > b->rank;
    return a->seq < b->seq;
}

/* 0 ok, -1 no memory, -2 bad sizes */
static int nw_table_insert(nw_table_t *t, uint64_t handle, const uint8_t *value,
                           const uint8_t *mask, const uint8_t *lo, const uint8_t *hi,
                           int64_t rank, uint64_t seq, uint32_t action,
                           const uint64_t *args, uint32_t nargs) {
    if (nargs > NW_MAX_ARGS)
        return -2;
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        nw_entry_t **n = realloc(t->entries, cap * sizeof(*n));
        if (!n)
            return -1;
        t->entries = n;
        t->cap = cap;
    }
    uint32_t k = t->klen;
    nw_entry_t *e = calloc(1, sizeof(*e) + 4u * k + 1u);
    if (!e)
        return -1;
    e->handle = handle;
    e->rank = rank;
    e->seq = seq;
    e->action = action;
    e->nargs = nargs;
    if (nargs)
        memcpy(e->args, args, nargs * sizeof(uint64_t));
    memcpy(e->bytes, value, k);
    memcpy(e->bytes + k, mask, k);
    memcpy(e->bytes + 2 * k, lo, k);
    memcpy(e->bytes + 3 * k, hi, k);
    for (uint32_t i = 0; i < k; i++)
        e->bytes[i] &= e->bytes[k + i];
    uint32_t pos = t->count;
    while (pos > 0 && nw_entry_before(e, t->entries[pos - 1])) {
        t->entries[pos] = t->entries[pos - 1];
        pos--;
    }
    t->entries[pos] = e;
    t->count++;
    if (t->exact) {
        e->hash = nw_key_hash(e->bytes, k);
        if (t->count * 2 > t->nbuckets) {
            nw_table_rehash(t);
        } else {
            uint32_t s = (uint32_t)(e->hash & (t->nbuckets - 1));
            e->next = t->buckets[s];
            t->buckets[s] = e;
        }
    }
    return 0;
}

static void nw_table_clear(nw_table_t *t) {
    for (uint32_t i = 0; i < t->count; i++)
        free(t->entries[i]);
    t->count = 0;
    if (t->buckets)
        memset(t->buckets, 0, t->nbuckets * sizeof(*t->buckets));
}

static void nw_table_destroy(nw_table_t *t) {
    nw_table_clear(t);
    free(t->entries);
    free(t->buckets);
    t->entries = NULL;
    t->buckets = NULL;
    t->cap = t->nbuckets = 0;
}

static nw_entry_t *nw_table_find(nw_table_t *t, uint64_t handle) {
    for (uint32_t i = 0; i < t->count; i++)
        if (t->entries[i]->handle == handle)
            return t->entries[i];
    return NULL;
}

static int nw_range_ok(const nw_table_t *t, const nw_entry_t *e, const uint8_t *key) {
    uint32_t k = t->klen;
    for (uint32_t r = 0; r < t->nranges; r++) {
        uint32_t off = t->range_off[r], len = t->range_len[r];
        if (memcmp(key + off, e->bytes + 2 * k + off, len) < 0)
            return 0;
        if (memcmp(key + off, e->bytes + 3 * k + off, len) > 0)
            return 0;
    }
    return 1;
}

static nw_entry_t *nw_table_lookup(nw_table_t *t, const uint8_t *key) {
    uint32_t k = t->klen;
    if (t->exact) {
        if (!t->nbuckets)
            return NULL;
        uint64_t h = nw_key_hash(key, k);
        for (nw_entry_t *e = t->buckets[h & (t->nbuckets - 1)]; e; e = e->next)
            if (e->hash == h && memcmp(e->bytes, key, k) == 0)
                return e;
        return NULL;
    }
    for (uint32_t i = 0; i < t->count; i++) {
        nw_entry_t *e = t->entries[i];
        const uint8_t *v = e->bytes, *m = e->bytes + k;
        uint32_t j = 0;
        for (; j < k; j++)
            if ((key[j] & m[j]) != v[j])
                break;
        if (j == k && (t->nranges == 0 || nw_range_ok(t, e, key)))
            return e;
    }
    return NULL;
}

#endif /* NW_TABLES_H */
