#ifndef NETWEFT_CHECKSUM_H
#define NETWEFT_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* RFC 1071 one's-complement sum of `len` bytes, folded and complemented. */
uint16_t nw_csum16(const uint8_t *data, size_t len);

/* The running form for headers and payloads summed in pieces: add `len` bytes
 * to `sum` (bytes in network order as they lie in memory; pieces after the
 * first must start at even offsets of the whole), then fold to 16 bits. The
 * folded value is in memory order: store it with memcpy, complemented for a
 * checksum field. */
uint64_t nw_csum_add(uint64_t sum, const uint8_t *data, size_t len);
uint16_t nw_csum_fold(uint64_t sum);

#endif
