/* BMv2's algorithms over two byte strings, one after the other: the field list
 * then the payload (verify_checksum_with_payload, update_checksum_with_payload,
 * as emulation/v1model/context.py's checksum_bits with with_payload). The
 * payload is the bytes after the parsed headers. Nothing is copied: each
 * algorithm walks both strings as one.
 */
#ifndef NW_CHECKSUMS_H
#define NW_CHECKSUMS_H

#include "nw_runtime.h"

static uint32_t nw_crc_feed(const nw_crc_t *c, uint32_t rem, const uint8_t *data, uint32_t n) {
    uint32_t shift = c->width - 8;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t byte = c->reflect_data ? c->reflect8[data[i]] : data[i];
        rem = c->table[(byte ^ (rem >> shift)) & 0xFFu] ^ ((rem << 8) & c->mask);
    }
    return rem;
}

static uint64_t nw_crc2(const nw_crc_t *c, const uint8_t *a, uint32_t na, const uint8_t *b,
                        uint32_t nb) {
    uint32_t rem = nw_crc_feed(c, nw_crc_feed(c, c->initial, a, na), b, nb);
    if (c->reflect_rem)
        rem = nw_reflect(rem, c->width);
    return (uint64_t)(rem ^ c->final_xor);
}

/* the byte at position i of a then b */
static inline uint32_t nw_byte2(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t i) {
    return i < na ? a[i] : b[i - na];
}

static uint64_t nw_csum16_2(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    uint64_t sum = 0;
    uint64_t n = (uint64_t)na + nb;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t byte = nw_byte2(a, na, b, (uint32_t)i);
        sum += (i & 1u) ? byte : (uint64_t)byte << 8;
    }
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    return (~sum) & 0xFFFFu;
}

static uint64_t nw_xor16_2(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    uint64_t out = 0;
    uint64_t n = (uint64_t)na + nb;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t byte = nw_byte2(a, na, b, (uint32_t)i);
        out ^= (i & 1u) ? byte : (uint64_t)byte << 8;
    }
    return out;
}

static uint64_t nw_identity2(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    uint64_t out = 0;
    uint64_t n = (uint64_t)na + nb;
    for (uint64_t i = 0; i < n && i < 8; i++)
        out = (out << 8) | nw_byte2(a, na, b, (uint32_t)i);
    return out;
}

#endif /* NW_CHECKSUMS_H */
