/* libFuzzer harness for nw_frame_parse (udp_frame.h): arbitrary bytes must
 * never crash the parser or make it read outside the frame, in both UDP
 * checksum modes, and whatever it accepts must agree with the headers that
 * nw_ipv4_udp_write writes for the same addresses and payload.
 * Build: see nic_offload/fuzz/Makefile (clang, -fsanitize=fuzzer,address). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "udp_frame.h"

#define MAX_FRAME 2048u

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

/* Parses an exact-size heap copy (so that ASan sees any overread); out starts
 * as junk so that a field the parser forgets shows. */
static int32_t parse(const uint8_t *data, uint32_t size, int32_t verify, nw_frame_t *out)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    memset(out, 0x5a, sizeof(*out));
    int32_t rc = nw_frame_parse(copy, size, verify, out);
    if (memcmp(copy, data, size) != 0) /* the parser only reads */
        abort();
    free(copy);
    return rc;
}

static int same_addr(const nw_frame_t *a, const nw_frame_t *b)
{
    return a->addr.src_ip == b->addr.src_ip && a->addr.dst_ip == b->addr.dst_ip &&
           a->addr.src_port == b->addr.src_port && a->addr.dst_port == b->addr.dst_port &&
           a->addr.ecn == b->addr.ecn && memcmp(a->src_mac, b->src_mac, 6) == 0 &&
           a->payload_off == b->payload_off && a->payload_len == b->payload_len &&
           memcmp(a->reserved, b->reserved, 2) == 0;
}

/* An accepted frame: its fields are the bytes they came from, the payload lies
 * inside the frame, and writing the headers again for the same addresses and
 * payload gives a frame that parses to the same result. */
static void check_accepted(const uint8_t *f, uint32_t size, const nw_frame_t *out,
                           int32_t verified)
{
    uint32_t ihl = (uint32_t)(f[NW_ETH_HLEN] & 0x0f) * 4u;
    if (ihl < 20 || out->payload_off != NW_ETH_HLEN + ihl + 8 ||
        out->payload_off > size || out->payload_len > size - out->payload_off ||
        out->reserved[0] != 0 || out->reserved[1] != 0 || out->addr.ecn > 3 ||
        out->addr.ecn != (f[NW_ETH_HLEN + 1] & 3) || memcmp(out->src_mac, f + 6, 6) != 0)
        abort();
    /* the payload also lies inside the IP datagram the header announces */
    if (out->payload_off + out->payload_len > NW_ETH_HLEN + get16(f + NW_ETH_HLEN + 2))
        abort();

    uint32_t n = NW_FRAME_HLEN + out->payload_len;
    uint8_t *g = malloc(n);
    if (!g)
        abort();
    uint8_t dst_mac[6];
    memcpy(dst_mac, f, 6);
    nw_eth_write(g, dst_mac, out->src_mac);
    memcpy(g + NW_FRAME_HLEN, f + out->payload_off, out->payload_len);
    nw_ipv4_udp_write(g + NW_ETH_HLEN, out->payload_len, &out->addr, NW_UDP_CSUM_FULL);

    /* Ethernet addresses and type, IP addresses, ports and UDP length where they were */
    const uint8_t *udp = f + NW_ETH_HLEN + ihl;
    if (memcmp(g, f, 14) != 0 || memcmp(g + 26, f + 26, 8) != 0 ||
        memcmp(g + 34, udp, 6) != 0 || (g[15] & 3) != (f[15] & 3))
        abort();
    /* the UDP checksum covers only what was written again (pseudo-header,
     * UDP header, payload): a nonzero one that verified is the one we compute */
    uint16_t c = get16(udp + 6);
    if (verified && c != 0 && get16(g + 40) != c)
        abort();
    if (ihl == 20 && out->payload_off + out->payload_len == size &&
        get16(f + 18) == 0 && get16(f + 20) == 0x4000 && f[22] == 64 && (f[15] >> 2) == 0 &&
        verified && c != 0 && (memcmp(f, g, 24) != 0 || memcmp(f + 26, g + 26, n - 26) != 0))
        abort(); /* a frame just like ours is ours byte for byte (an IP checksum of
                    0xffff verifies where we write 0: one's complement's two zeros) */

    nw_frame_t again;
    if (parse(g, n, 1, &again) != NW_FRAME_OK)
        abort();
    if (again.addr.src_ip != out->addr.src_ip || again.addr.dst_ip != out->addr.dst_ip ||
        again.addr.src_port != out->addr.src_port || again.addr.dst_port != out->addr.dst_port ||
        again.addr.ecn != out->addr.ecn || memcmp(again.src_mac, out->src_mac, 6) != 0 ||
        again.payload_off != NW_FRAME_HLEN || again.payload_len != out->payload_len)
        abort();

    /* the offload form: only the checksum differs, and it parses unverified */
    nw_ipv4_udp_write(g + NW_ETH_HLEN, out->payload_len, &out->addr, NW_UDP_CSUM_PARTIAL);
    if (parse(g, n, 0, &again) != NW_FRAME_OK || again.payload_len != out->payload_len)
        abort();
    free(g);
}

/* nw_csum_add over the same bytes in pieces cut at even offsets folds to the
 * one sum, and agrees with nw_csum16. */
static void check_csum(const uint8_t *data, uint32_t size)
{
    uint32_t cut = size >= 2 ? (uint32_t)(data[0] % (size / 2 + 1)) * 2 : 0;
    uint16_t whole = nw_csum_fold(nw_csum_add(0, data, size));
    uint16_t split = nw_csum_fold(nw_csum_add(nw_csum_add(0, data, cut), data + cut, size - cut));
    if (whole != split)
        abort();
    uint8_t be[2];
    memcpy(be, &whole, 2); /* memory order: the big-endian sum */
    uint16_t c = (uint16_t)~(((uint16_t)be[0] << 8) | be[1]);
    if (nw_csum16(data, size) != c)
        abort();
}

/* Every check on one input. */
static void check_frame(const uint8_t *data, uint32_t n)
{
    nw_frame_t plain, verified;
    int32_t rc0 = parse(data, n, 0, &plain);
    int32_t rc1 = parse(data, n, 1, &verified);
    if (rc0 > 0 || rc0 < NW_FRAME_BAD_UDP_CSUM || rc1 > 0 || rc1 < NW_FRAME_BAD_UDP_CSUM)
        abort();
    /* verification adds exactly one refusal and changes nothing else */
    if (rc0 == NW_FRAME_BAD_UDP_CSUM)
        abort();
    if (rc0 != NW_FRAME_OK && rc1 != rc0)
        abort();
    if (rc0 == NW_FRAME_OK && rc1 != NW_FRAME_OK && rc1 != NW_FRAME_BAD_UDP_CSUM)
        abort();
    if (rc0 == NW_FRAME_OK) {
        check_accepted(data, n, &plain, 0);
        if (rc1 == NW_FRAME_OK) {
            if (!same_addr(&plain, &verified))
                abort();
            check_accepted(data, n, &verified, 1);
        } else if (get16(data + plain.payload_off - 2) == 0) {
            abort(); /* a zero UDP checksum is never verified */
        }
    }
}

/* RFC 1071, written out byte by byte (independent of checksum.c). */
static uint16_t ref_csum(uint32_t sum, const uint8_t *p, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        sum += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* The input with whichever checksums fit in it made right: without this the
 * fuzzer would rarely get past the IP header checksum. The first input byte
 * (a destination MAC byte, which the parser ignores) picks which to repair. */
static void repair(uint8_t *f, uint32_t n)
{
    if (n < NW_ETH_HLEN + 20)
        return;
    uint8_t *ip = f + NW_ETH_HLEN;
    uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4u;
    if ((f[0] & 1) && ihl >= 20 && NW_ETH_HLEN + ihl + 8 <= n) {
        uint8_t *udp = ip + ihl;
        uint32_t ulen = get16(udp + 4);
        if (ulen >= 8 && ulen <= n - NW_ETH_HLEN - ihl) {
            uint32_t s = get16(ip + 12) + get16(ip + 14) + get16(ip + 16) + get16(ip + 18) +
                         17u + ulen;
            udp[6] = udp[7] = 0;
            uint16_t c = ref_csum(s, udp, ulen);
            if (c == 0)
                c = 0xffff;
            udp[6] = (uint8_t)(c >> 8);
            udp[7] = (uint8_t)c;
        }
    }
    if (ihl >= 20 && NW_ETH_HLEN + ihl <= n) {
        ip[10] = ip[11] = 0;
        uint16_t c = ref_csum(0, ip, ihl);
        ip[10] = (uint8_t)(c >> 8);
        ip[11] = (uint8_t)c;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_FRAME)
        return 0;
    uint32_t n = (uint32_t)size;
    check_frame(data, n);
    check_csum(data, n);
    uint8_t fixed[MAX_FRAME];
    memcpy(fixed, data, n);
    repair(fixed, n);
    check_frame(fixed, n);
    return 0;
}
