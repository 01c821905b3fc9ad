/* Helpers the generated pipeline code calls: bit access into packet bytes,
 * P4 width rules, BMv2's hash and checksum algorithms, and a Mersenne
 * Twister seeded and drawn exactly as Python's random.Random (so that
 * random() gives the Python back end's values under the same seed).
 * Included once into each generated translation unit (everything static). */
#ifndef NW_RUNTIME_H
#define NW_RUNTIME_H

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 nw_u128;

#define NW_U128(hi, lo) ((((nw_u128)(uint64_t)(hi)) << 64) | (nw_u128)(uint64_t)(lo))
#define NW_MASK128(w) ((((nw_u128)1) << (w)) - 1)

/* ---- bits in packet bytes (MSB first) */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NW_LITTLE_ENDIAN 1
#else
#define NW_LITTLE_ENDIAN 0
#endif

/* w (1..64) bits at bit offset `bitoff` of p.  Whole aligned bytes of 8/16/32/64 bits are
 * one load (the common header fields: with constant arguments the other paths fold away);
 * up to 8 bytes in a 64-bit accumulator, more (a field straddling 9 bytes) in 128 bits. */
static inline uint64_t nw_rd64(const uint8_t *p, uint32_t bitoff, uint32_t w) {
    const uint8_t *q = p + (bitoff >> 3);
    if (NW_LITTLE_ENDIAN && !(bitoff & 7u)) {
        if (w == 8)
            return q[0];
        if (w == 16) { uint16_t v; memcpy(&v, q, 2); return __builtin_bswap16(v); }
        if (w == 32) { uint32_t v; memcpy(&v, q, 4); return __builtin_bswap32(v); }
        if (w == 64) { uint64_t v; memcpy(&v, q, 8); return __builtin_bswap64(v); }
    }
    uint32_t nbits = (bitoff & 7u) + w;
    uint32_t nb = (nbits + 7u) >> 3;
    if (nb <= 8) {
        uint64_t acc = 0;
        for (uint32_t i = 0; i < nb; i++)
            acc = (acc << 8) | q[i];
        acc >>= (nb * 8u - nbits);
        return w == 64 ? acc : acc & ((1ULL << w) - 1);
    }
    nw_u128 acc = 0;
    for (uint32_t i = 0; i < nb; i++)
        acc = (acc << 8) | q[i];
    acc >>= (nb * 8u - nbits);
    return w == 64 ? (uint64_t)acc : (uint64_t)acc & ((1ULL << w) - 1);
}

static inline nw_u128 nw_rd128(const uint8_t *p, uint32_t bitoff, uint32_t w) {
    uint32_t lo_w = 64, hi_w = w - 64;
    return ((nw_u128)nw_rd64(p, bitoff, hi_w) << 64) | nw_rd64(p, bitoff + hi_w, lo_w);
}

/* OR the low w (1..64) bits of v into p at bitoff (the bits there are zero); the same
 * fast paths as nw_rd64 */
static inline void nw_wr64(uint8_t *p, uint32_t bitoff, uint32_t w, uint64_t v) {
    uint8_t *q = p + (bitoff >> 3);
    if (w < 64)
        v &= (1ULL << w) - 1;
    if (NW_LITTLE_ENDIAN && !(bitoff & 7u)) {
        if (w == 8) { q[0] |= (uint8_t)v; return; }
        if (w == 16) {
            uint16_t c; memcpy(&c, q, 2); c |= __builtin_bswap16((uint16_t)v);
            memcpy(q, &c, 2); return;
        }
        if (w == 32) {
            uint32_t c; memcpy(&c, q, 4); c |= __builtin_bswap32((uint32_t)v);
            memcpy(q, &c, 4); return;
        }
        if (w == 64) {
            uint64_t c; memcpy(&c, q, 8); c |= __builtin_bswap64(v);
            memcpy(q, &c, 8); return;
        }
    }
    uint32_t nbits = (bitoff & 7u) + w;
    uint32_t nb = (nbits + 7u) >> 3;
    if (nb <= 8) {
        uint64_t acc = v << (nb * 8u - nbits);
        for (uint32_t i = nb; i-- > 0;) {
            q[i] |= (uint8_t)acc;
            acc >>= 8;
        }
        return;
    }
    nw_u128 acc = ((nw_u128)v) << (nb * 8u - nbits);
    for (uint32_t i = nb; i-- > 0;) {
        q[i] |= (uint8_t)acc;
        acc >>= 8;
    }
}

static inline void nw_wr128(uint8_t *p, uint32_t bitoff, uint32_t w, nw_u128 v) {
    uint32_t hi_w = w - 64;
    nw_wr64(p, bitoff, hi_w, (uint64_t)(v >> 64));
    nw_wr64(p, bitoff + hi_w, 64, (uint64_t)v);
}

/* v's low nb*8 bits big-endian into p[0..nb) (table keys) */
static inline void nw_be_put64(uint8_t *p, uint64_t v, uint32_t nb) {
    for (uint32_t i = nb; i-- > 0;) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}
static inline void nw_be_put128(uint8_t *p, nw_u128 v, uint32_t nb) {
    for (uint32_t i = nb; i-- > 0;) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* ---- P4 width rules on canonical values (the low w bits) */

static inline int64_t nw_sx64(uint64_t x, uint32_t w) {
    if (w >= 64)
        return (int64_t)x;
    uint64_t sign = 1ULL << (w - 1);
    x &= (1ULL << w) - 1;
    return (int64_t)((x ^ sign) - sign);
}

static inline uint64_t nw_mask64(uint64_t x, uint32_t w) {
    return w >= 64 ? x : x & ((1ULL << w) - 1);
}

static inline nw_u128 nw_mask128(nw_u128 x, uint32_t w) {
    return w >= 128 ? x : x & NW_MASK128(w);
}

static inline uint64_t nw_div64(uint64_t a, uint64_t b) { return b ? a / b : 0; }
static inline uint64_t nw_mod64(uint64_t a, uint64_t b) { return b ? a % b : 0; }
static inline nw_u128 nw_div128(nw_u128 a, nw_u128 b) { return b ? a / b : 0; }
static inline nw_u128 nw_mod128(nw_u128 a, nw_u128 b) { return b ? a % b : 0; }

static inline uint64_t nw_shl64(uint64_t a, uint64_t b, uint32_t w) {
    return b >= w ? 0 : nw_mask64(a << b, w);
}
static inline nw_u128 nw_shl128(nw_u128 a, uint64_t b, uint32_t w) {
    return b >= w ? 0 : nw_mask128(a << b, w);
}
static inline uint64_t nw_shr64(uint64_t a, uint64_t b) { return b >= 64 ? 0 : a >> b; }
static inline nw_u128 nw_shr128(nw_u128 a, uint64_t b) { return b >= 128 ? 0 : a >> b; }
/* arithmetic shift of an int<w> (w <= 64) */
static inline uint64_t nw_sar64(uint64_t a, uint64_t b, uint32_t w) {
    int64_t s = nw_sx64(a, w);
    s = b >= 63 ? (s < 0 ? -1 : 0) : s >> b;
    return nw_mask64((uint64_t)s, w);
}

static inline uint64_t nw_usat_add64(uint64_t a, uint64_t b, uint32_t w) {
    uint64_t max = w >= 64 ? ~0ULL : (1ULL << w) - 1;
    uint64_t s = a + b;
    return (s < a || s > max) ? max : s;
}
static inline uint64_t nw_usat_sub64(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }
static inline nw_u128 nw_usat_add128(nw_u128 a, nw_u128 b, uint32_t w) {
    nw_u128 max = w >= 128 ? ~(nw_u128)0 : NW_MASK128(w);
    nw_u128 s = a + b;
    return (s < a || s > max) ? max : s;
}
static inline nw_u128 nw_usat_sub128(nw_u128 a, nw_u128 b) { return a > b ? a - b : 0; }
/* saturating int<w> (w <= 63) add/sub */
static inline uint64_t nw_ssat64(uint64_t a, uint64_t b, uint32_t w, int sub) {
    int64_t x = nw_sx64(a, w), y = nw_sx64(b, w);
    int64_t r = sub ? x - y : x + y;
    int64_t hi = (int64_t)((1ULL << (w - 1)) - 1), lo = -hi - 1;
    if (r > hi)
        r = hi;
    if (r < lo)
        r = lo;
    return nw_mask64((uint64_t)r, w);
}

/* ---- field lists: fields concatenated MSB first, zero-padded to bytes (BMv2 BufBuilder) */

#define NW_BITS_MAX 4096u   /* bytes; the generator refuses longer field lists */

typedef struct nw_bits {
    uint8_t buf[NW_BITS_MAX];
    uint32_t nbits;
} nw_bits_t;

static inline void nw_bits_put64(nw_bits_t *b, uint64_t v, uint32_t w) {
    nw_wr64(b->buf, b->nbits, w, v);
    b->nbits += w;
}
static inline void nw_bits_put128(nw_bits_t *b, nw_u128 v, uint32_t w) {
    nw_wr128(b->buf, b->nbits, w, v);
    b->nbits += w;
}

/* nbits bits of a varbit field (bytes MSB first) */
static inline void nw_bits_put_var(nw_bits_t *b, const uint8_t *bytes, uint32_t nbits) {
    uint32_t i = 0;
    for (; i + 8 <= nbits; i += 8)
        nw_bits_put64(b, bytes[i / 8], 8);
    if (i < nbits)
        nw_bits_put64(b, (uint64_t)(bytes[i / 8] >> (8 - (nbits - i))), nbits - i);
}

/* ---- BMv2's algorithms over bytes (bm_sim/calculations.cpp) */

typedef struct nw_crc {
    uint32_t table[256];
    uint8_t reflect8[256];
    uint32_t width, initial, final_xor, reflect_data, reflect_rem, mask;
} nw_crc_t;

static inline uint32_t nw_reflect(uint32_t v, uint32_t nbits) {
    uint32_t out = 0;
    for (uint32_t i = 0; i < nbits; i++) {
        out = (out << 1) | (v & 1u);
        v >>= 1;
    }
    return out;
}

static void nw_crc_init(nw_crc_t *c, uint32_t width, uint32_t poly, uint32_t initial,
                        uint32_t final_xor, uint32_t reflect_data, uint32_t reflect_rem) {
    uint32_t top = 1u << (width - 1);
    uint32_t mask = width == 32 ? 0xFFFFFFFFu : (1u << width) - 1;
    for (uint32_t d = 0; d < 256; d++) {
        uint32_t rem = (d << (width - 8)) & mask;
        for (int i = 0; i < 8; i++)
            rem = ((rem & top) ? ((rem << 1) ^ poly) : (rem << 1)) & mask;
        c->table[d] = rem;
        c->reflect8[d] = (uint8_t)nw_reflect(d, 8);
    }
    c->width = width;
    c->initial = initial;
    c->final_xor = final_xor;
    c->reflect_data = reflect_data;
    c->reflect_rem = reflect_rem;
    c->mask = mask;
}

static uint64_t nw_crc(const nw_crc_t *c, const uint8_t *data, uint32_t n) {
    uint32_t rem = c->initial, shift = c->width - 8;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t byte = c->reflect_data ? c->reflect8[data[i]] : data[i];
        rem = c->table[(byte ^ (rem >> shift)) & 0xFFu] ^ ((rem << 8) & c->mask);
    }
    if (c->reflect_rem)
        rem = nw_reflect(rem, c->width);
    return (uint64_t)(rem ^ c->final_xor);
}

static uint64_t nw_csum16(const uint8_t *data, uint32_t n) {
    uint64_t sum = 0;
    uint32_t i = 0;
    for (; i + 1 < n; i += 2)
        sum += ((uint32_t)data[i] << 8) | data[i + 1];
    if (i < n)
        sum += (uint32_t)data[i] << 8;
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    return (~sum) & 0xFFFFu;
}

static uint64_t nw_xor16(const uint8_t *data, uint32_t n) {
    uint64_t out = 0;
    uint32_t i = 0;
    for (; i + 1 < n; i += 2)
        out ^= ((uint32_t)data[i] << 8) | data[i + 1];
    if (i < n)
        out ^= (uint32_t)data[i] << 8;
    return out;
}

static uint64_t nw_identity(const uint8_t *data, uint32_t n) {
    uint64_t out = 0;
    for (uint32_t i = 0; i < n && i < 8; i++)
        out = (out << 8) | data[i];
    return out;
}

/* v1model hash output mapping (BMv2): base + raw % max, max 0 meaning none */
static inline uint64_t nw_hash_offset(uint64_t raw, uint64_t base, uint64_t max) {
    return max == 0 ? base + raw : base + raw % max;
}

/* ---- Python's random.Random: MT19937, init_by_array, getrandbits, randint */

typedef struct nw_mt {
    uint32_t mt[624];
    uint32_t index;
} nw_mt_t;

static void nw_mt_init_genrand(nw_mt_t *r, uint32_t s) {
    r->mt[0] = s;
    for (uint32_t i = 1; i < 624; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + i;
    r->index = 624;
}

static void nw_mt_seed(nw_mt_t *r, uint64_t seed) {
    /* Python: the key is |seed| as 32-bit words, least significant first ([0] for 0) */
    uint32_t key[2];
    uint32_t klen = 0;
    key[klen++] = (uint32_t)seed;
    if (seed >> 32)
        key[klen++] = (uint32_t)(seed >> 32);
    nw_mt_init_genrand(r, 19650218u);
    uint32_t i = 1, j = 0, k = 624 > klen ? 624 : klen;
    for (; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] + j;
        i++;
        j++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
        if (j >= klen)
            j = 0;
    }
    for (k = 623; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - i;
        i++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000u;
    r->index = 624;
}

static uint32_t nw_mt_next(nw_mt_t *r) {
    if (r->index >= 624) {
        for (uint32_t kk = 0; kk < 624; kk++) {
            uint32_t y = (r->mt[kk] & 0x80000000u) | (r->mt[(kk + 1) % 624] & 0x7fffffffu);
            r->mt[kk] = r->mt[(kk + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        r->index = 0;
    }
    uint32_t y = r->mt[r->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

static uint64_t nw_mt_getrandbits(nw_mt_t *r, uint32_t k) {
    if (k == 0)
        return 0;
    if (k <= 32)
        return nw_mt_next(r) >> (32 - k);
    uint64_t lo = nw_mt_next(r);
    uint64_t hi = nw_mt_next(r) >> (64 - k);
    return lo | (hi << 32);
}

/* random.Random.randint(lo, hi) for hi - lo < 2**64 - 1 (arguments swapped if hi < lo) */
static uint64_t nw_mt_randint(nw_mt_t *r, uint64_t lo, uint64_t hi) {
    if (hi < lo) {
        uint64_t t = lo;
        lo = hi;
        hi = t;
    }
    uint64_t n = hi - lo + 1;
    if (n == 0)   /* the whole 64-bit range */
        return nw_mt_getrandbits(r, 64);
    uint32_t k = 64 - (uint32_t)__builtin_clzll(n);
    uint64_t v = nw_mt_getrandbits(r, k);
    while (v >= n)
        v = nw_mt_getrandbits(r, k);
    return lo + v;
}

#endif /* NW_RUNTIME_H */
