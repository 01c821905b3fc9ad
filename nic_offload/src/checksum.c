/* RFC 1071 Internet checksum, used for IPv4/UDP headers the engine builds. */
#include "checksum.h"

#include <string.h>

uint16_t nw_csum16(const uint8_t *data, size_t len)
{
    uint32_t sum = 0;
    size_t i = 0;
    for (; i + 1 < len; i += 2)
        sum += ((uint32_t)data[i] << 8) | data[i + 1];
    if (i < len)
        sum += (uint32_t)data[i] << 8;
    while (sum >> 16)
        sum = (sum & 0xffffu) + (sum >> 16);
    return (uint16_t)~sum;
}

/* 32-bit words into a 64-bit accumulator: no carry handling in the loop (2^32
 * words before it could overflow), which compilers vectorize. */
uint64_t nw_csum_add(uint64_t sum, const uint8_t *d, size_t len)
{
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        uint32_t w;
        memcpy(&w, d + i, 4);
        sum += w;
    }
    if (i + 2 <= len) {
        uint16_t w;
        memcpy(&w, d + i, 2);
        sum += w;
        i += 2;
    }
    if (i < len) {
        uint16_t w = 0;
        memcpy(&w, d + i, 1);
        sum += w;
    }
    return sum;
}

uint16_t nw_csum_fold(uint64_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)s;
}
