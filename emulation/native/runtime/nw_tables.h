/* Match-action tables of a generated pipeline.
 *
 * A key is the table's key fields, each big-endian in (width + 7) / 8 bytes,
 * concatenated. An entry holds per key byte a value and a mask (exact: all
 * ones; lpm: the prefix; ternary: the mask; optional: all ones or zero; range:
 * zero) and, for range fields, the low and high bounds. The control plane
 * (Python, emulation/native/objects.py) keeps the entries' semantics exactly
 * as v1model/match_table.py: it gives each entry a rank (lpm: the prefix
 * length; ternary/range/optional: the priority) and a sequence number, and
 * the winner is the matching entry with the largest rank, then the smallest
 * sequence.
 *
 * All-exact tables are one hash table. The others are a tuple space: the
 * entries are grouped by mask, each group a hash table of the masked values
 * (its chains in winning order), the groups probed by decreasing best rank
 * until no group left can beat the best match found. An lpm table's groups
 * are its prefix lengths, probed longest first: the first hit wins. A group
 * of one entry is compared directly (no hash). An entry may point at its
 * direct counter and meter (nw_direct_t, owned by Python) and at an action
 * selector group (nw_group_t). Updates are applied whole under the pipeline
 * lock; a delete rebuilds the table.
 */
#ifndef NW_TABLES_H
#define NW_TABLES_H

#include "nw_runtime.h"
#include "nw_meters.h"
#include "nw_selectors.h"

#ifndef NW_MAX_ARGS
#define NW_MAX_ARGS 16u
#endif
#define NW_MAX_RANGES 8u

typedef struct nw_entry {
    uint64_t handle;
    int64_t rank;
    uint64_t seq;
    uint32_t action;
    uint32_t nargs;
    uint64_t args[NW_MAX_ARGS];   /* action data; a wider-than-64-bit one takes two (hi, lo) */
    nw_direct_t *direct;          /* direct counter and meter, or NULL */
    nw_group_t *group;            /* an action selector group, or NULL: the action above */
    uint64_t hash;                /* hash of the masked value */
    struct nw_entry *next;        /* bucket chain */
    uint8_t bytes[];              /* value[klen], mask[klen], lo[klen], hi[klen] */
} nw_entry_t;

typedef struct nw_mgroup {        /* the entries of one mask */
    uint8_t *mask;
    int64_t best_rank;
    uint32_t count;
    nw_entry_t *single;           /* count == 1: the entry, compared directly */
    nw_entry_t **buckets;
    uint32_t nbuckets;
    uint64_t mask_hash;
} nw_mgroup_t;

typedef struct nw_table {
    uint32_t klen;                /* key bytes */
    uint32_t exact;               /* all keys exact: one hash table */
    uint32_t nranges;
    uint32_t range_off[NW_MAX_RANGES], range_len[NW_MAX_RANGES];
    uint32_t default_action;
    uint32_t default_nargs;
    uint64_t default_args[NW_MAX_ARGS];
    nw_entry_t **entries;         /* in insertion order */
    uint32_t count, cap;
    nw_entry_t **buckets;         /* exact tables */
    uint32_t nbuckets;
    nw_mgroup_t **groups;         /* other tables: by best rank, descending */
    uint32_t ngroups, gcap;
    nw_mgroup_t **gindex;         /* open addressing by mask hash */
    uint32_t gindex_cap;
} nw_table_t;

static inline uint64_t nw_key_hash(const uint8_t *k, uint32_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (uint32_t i = 0; i < n; i++) {
        h ^= k[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* the hash of key & mask, without building it */
static inline uint64_t nw_masked_hash(const uint8_t *k, const uint8_t *m, uint32_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (uint32_t i = 0; i < n; i++) {
        h ^= (uint8_t)(k[i] & m[i]);
        h *= 1099511628211ULL;
    }
    return h;
}

static int nw_entry_before(const nw_entry_t *a, const nw_entry_t *b) {
    if (a->rank != b->rank)
        return a->rank > b->rank;
    return a->seq < b->seq;
}

/* insert e into a chain kept in winning order */
static void nw_chain_insert(nw_entry_t **head, nw_entry_t *e) {
    while (*head && !nw_entry_before(e, *head))
        head = &(*head)->next;
    e->next = *head;
    *head = e;
}

/* grow a bucket array to hold `count` entries at load 1/2; 0 ok, -1 no memory */
static int nw_buckets_fit(nw_entry_t ***buckets, uint32_t *nbuckets, uint32_t count) {
    uint32_t want = 16;
    while (want < count * 2u)
        want <<= 1;
    if (want <= *nbuckets && *buckets)
        return 0;
    nw_entry_t **b = calloc(want, sizeof(*b));
    if (!b)
        return -1;
    for (uint32_t s = 0; s < *nbuckets; s++) {
        nw_entry_t *e = (*buckets)[s];
        while (e) {
            nw_entry_t *next = e->next;
            nw_chain_insert(&b[e->hash & (want - 1)], e);
            e = next;
        }
    }
    free(*buckets);
    *buckets = b;
    *nbuckets = want;
    return 0;
}

static int nw_gindex_put(nw_table_t *t, nw_mgroup_t *g) {
    if ((t->ngroups + 1u) * 2u > t->gindex_cap) {
        uint32_t cap = t->gindex_cap ? t->gindex_cap * 2u : 16u;
        nw_mgroup_t **n = calloc(cap, sizeof(*n));
        if (!n)
            return -1;
        for (uint32_t i = 0; i < t->ngroups; i++) {
            uint32_t s = (uint32_t)(t->groups[i]->mask_hash & (cap - 1));
            while (n[s])
                s = (s + 1) & (cap - 1);
            n[s] = t->groups[i];
        }
        free(t->gindex);
        t->gindex = n;
        t->gindex_cap = cap;
    }
    uint32_t s = (uint32_t)(g->mask_hash & (t->gindex_cap - 1));
    while (t->gindex[s])
        s = (s + 1) & (t->gindex_cap - 1);
    t->gindex[s] = g;
    return 0;
}

/* the group of mask m, created if new; NULL: no memory */
static nw_mgroup_t *nw_group_of(nw_table_t *t, const uint8_t *m) {
    uint32_t k = t->klen;
    uint64_t h = nw_key_hash(m, k);
    if (t->gindex_cap) {
        for (uint32_t s = (uint32_t)(h & (t->gindex_cap - 1)); t->gindex[s];
             s = (s + 1) & (t->gindex_cap - 1)) {
            nw_mgroup_t *g = t->gindex[s];
            if (g->mask_hash == h && memcmp(g->mask, m, k) == 0)
                return g;
        }
    }
    if (t->ngroups == t->gcap) {
        uint32_t cap = t->gcap ? t->gcap * 2u : 8u;
        nw_mgroup_t **n = realloc(t->groups, cap * sizeof(*n));
        if (!n)
            return NULL;
        t->groups = n;
        t->gcap = cap;
    }
    nw_mgroup_t *g = calloc(1, sizeof(*g) + k + 1u);
    if (!g)
        return NULL;
    g->mask = (uint8_t *)(g + 1);
    memcpy(g->mask, m, k);
    g->mask_hash = h;
    g->best_rank = INT64_MIN;
    if (nw_gindex_put(t, g) != 0) {
        free(g);
        return NULL;
    }
    t->groups[t->ngroups++] = g;
    return g;
}

/* keep the groups ordered by best rank (descending) after g's rose */
static void nw_groups_reorder(nw_table_t *t, nw_mgroup_t *g) {
    uint32_t i = 0;
    while (t->groups[i] != g)
        i++;
    while (i > 0 && t->groups[i - 1]->best_rank < g->best_rank) {
        t->groups[i] = t->groups[i - 1];
        i--;
    }
    t->groups[i] = g;
}

static int nw_group_add(nw_table_t *t, nw_mgroup_t *g, nw_entry_t *e) {
    if (nw_buckets_fit(&g->buckets, &g->nbuckets, g->count + 1u) != 0)
        return -1;
    nw_chain_insert(&g->buckets[e->hash & (g->nbuckets - 1)], e);
    g->count++;
    g->single = g->count == 1 ? e : NULL;
    if (e->rank > g->best_rank) {
        g->best_rank = e->rank;
        nw_groups_reorder(t, g);
    }
    return 0;
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
    e->hash = nw_key_hash(e->bytes, k);
    int rc;
    if (t->exact) {
        rc = nw_buckets_fit(&t->buckets, &t->nbuckets, t->count + 1u);
        if (rc == 0)
            nw_chain_insert(&t->buckets[e->hash & (t->nbuckets - 1)], e);
    } else {
        nw_mgroup_t *g = nw_group_of(t, e->bytes + k);
        rc = g ? nw_group_add(t, g, e) : -1;
    }
    if (rc != 0) {
        free(e);
        return rc;
    }
    t->entries[t->count++] = e;
    return 0;
}

static void nw_table_clear(nw_table_t *t) {
    for (uint32_t i = 0; i < t->count; i++)
        free(t->entries[i]);
    t->count = 0;
    if (t->buckets)
        memset(t->buckets, 0, t->nbuckets * sizeof(*t->buckets));
    for (uint32_t i = 0; i < t->ngroups; i++) {
        free(t->groups[i]->buckets);
        free(t->groups[i]);
    }
    t->ngroups = 0;
    if (t->gindex)
        memset(t->gindex, 0, t->gindex_cap * sizeof(*t->gindex));
}

static void nw_table_destroy(nw_table_t *t) {
    nw_table_clear(t);
    free(t->entries);
    free(t->buckets);
    free(t->groups);
    free(t->gindex);
    t->entries = NULL;
    t->buckets = NULL;
    t->groups = NULL;
    t->gindex = NULL;
    t->cap = t->nbuckets = t->gcap = t->gindex_cap = 0;
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

static inline int nw_masked_equal(const uint8_t *key, const uint8_t *mask, const uint8_t *value,
                                  uint32_t k) {
    for (uint32_t j = 0; j < k; j++)
        if ((key[j] & mask[j]) != value[j])
            return 0;
    return 1;
}

/* the best entry of group g matching key, or NULL */
static nw_entry_t *nw_group_lookup(const nw_table_t *t, const nw_mgroup_t *g,
                                   const uint8_t *key) {
    uint32_t k = t->klen;
    if (g->single) {
        nw_entry_t *e = g->single;
        if (nw_masked_equal(key, g->mask, e->bytes, k) &&
            (t->nranges == 0 || nw_range_ok(t, e, key)))
            return e;
        return NULL;
    }
    if (!g->nbuckets)
        return NULL;
    uint64_t h = nw_masked_hash(key, g->mask, k);
    for (nw_entry_t *e = g->buckets[h & (g->nbuckets - 1)]; e; e = e->next)
        if (e->hash == h && nw_masked_equal(key, g->mask, e->bytes, k) &&
            (t->nranges == 0 || nw_range_ok(t, e, key)))
            return e;   /* the chain is in winning order */
    return NULL;
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
    nw_entry_t *best = NULL;
    for (uint32_t i = 0; i < t->ngroups; i++) {
        const nw_mgroup_t *g = t->groups[i];
        if (best && g->best_rank < best->rank)
            break;   /* no entry left can win */
        nw_entry_t *e = nw_group_lookup(t, g, key);
        if (e && (!best || nw_entry_before(e, best)))
            best = e;
    }
    return best;
}

#endif /* NW_TABLES_H */
