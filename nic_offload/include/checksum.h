#ifndef NETWEFT_CHECKSUM_H
#define NETWEFT_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* RFC 1071 one's-complement sum of `len` bytes, folded and complemented. */
uint16_t nw_csum16(const uint8_t *data, size_t len);

#endif
