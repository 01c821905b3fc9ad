/* Ethernet/IPv4/UDP headers: writer and bounds-checked parser (udp_frame.h). */
#include "udp_frame.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "checksum.h"

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

/* The UDP pseudo-header (addresses at ip+12, protocol, UDP length) summed. */
static uint64_t pseudo_sum(const uint8_t *ip, uint16_t udp_len)
{
    uint64_t s = nw_csum_add(0, ip + 12, 8);
    s += htons(IPPROTO_UDP);
    s += htons(udp_len);
    return s;
}

void nw_ipv4_udp_write(uint8_t *h, uint32_t plen, const nw_udp_addr_t *a, int32_t csum)
{
    uint16_t udp_len = (uint16_t)(plen + 8);
    memset(h, 0, NW_IP_UDP_HLEN);
    h[0] = 0x45;
    h[1] = a->ecn & 3; /* TOS: DSCP 0 and the packet's ECN codepoint */
    put16(h + 2, (uint16_t)(plen + NW_IP_UDP_HLEN));
    h[6] = 0x40; /* DF */
    h[8] = 64;
    h[9] = IPPROTO_UDP;
    put32(h + 12, a->src_ip);
    put32(h + 16, a->dst_ip);
    uint16_t ipc = (uint16_t)~nw_csum_fold(nw_csum_add(0, h, 20));
    memcpy(h + 10, &ipc, 2);
    put16(h + 20, a->src_port);
    put16(h + 22, a->dst_port);
    put16(h + 24, udp_len);
    if (csum == NW_UDP_CSUM_PARTIAL) {
        uint16_t c = nw_csum_fold(pseudo_sum(h, udp_len));
        memcpy(h + 26, &c, 2);
    } else if (csum == NW_UDP_CSUM_FULL) {
        uint64_t s = pseudo_sum(h, udp_len);
        s = nw_csum_add(s, h + 20, 8 + plen);
        uint16_t c = (uint16_t)~nw_csum_fold(s);
        if (c == 0)
            c = 0xffff; /* 0 means "no checksum" */
        memcpy(h + 26, &c, 2);
    }
}

void nw_eth_write(uint8_t *h, const uint8_t dst_mac[6], const uint8_t src_mac[6])
{
    memcpy(h, dst_mac, 6);
    memcpy(h + 6, src_mac, 6);
    put16(h + 12, NW_ETH_P_IPV4);
}

int32_t nw_frame_parse(const uint8_t *f, uint32_t len, int32_t verify_udp_csum, nw_frame_t *out)
{
    if (len < NW_ETH_HLEN + 20)
        return NW_FRAME_SHORT;
    if (get16(f + 12) != NW_ETH_P_IPV4)
        return NW_FRAME_NOT_IPV4;
    const uint8_t *ip = f + NW_ETH_HLEN;
    uint32_t room = len - NW_ETH_HLEN; /* bytes after the Ethernet header (may include padding) */
    if ((ip[0] >> 4) != 4)
        return NW_FRAME_NOT_IPV4;
    uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4u;
    uint32_t total = get16(ip + 2);
    if (ihl < 20 || total < ihl)
        return NW_FRAME_BAD_IP;
    if (total > room)
        return NW_FRAME_SHORT;
    if (nw_csum_fold(nw_csum_add(0, ip, ihl)) != 0xffff)
        return NW_FRAME_BAD_IP_CSUM;
    if (get16(ip + 6) & 0x3fff) /* MF or a fragment offset */
        return NW_FRAME_FRAGMENT;
    if (ip[9] != IPPROTO_UDP)
        return NW_FRAME_NOT_UDP;
    if (total - ihl < 8)
        return NW_FRAME_SHORT;
    const uint8_t *udp = ip + ihl;
    uint32_t udp_len = get16(udp + 4);
    if (udp_len < 8 || udp_len > total - ihl)
        return NW_FRAME_BAD_UDP_LEN;
    uint16_t c;
    memcpy(&c, udp + 6, 2);
    if (verify_udp_csum && c != 0) {
        uint64_t s = pseudo_sum(ip, (uint16_t)udp_len);
        s = nw_csum_add(s, udp, udp_len);
        if (nw_csum_fold(s) != 0xffff)
            return NW_FRAME_BAD_UDP_CSUM;
    }
    memcpy(out->src_mac, f + 6, 6);
    out->reserved[0] = out->reserved[1] = 0;
    out->addr.src_ip = get32(ip + 12);
    out->addr.dst_ip = get32(ip + 16);
    out->addr.src_port = get16(udp);
    out->addr.dst_port = get16(udp + 2);
    out->addr.ecn = ip[1] & 3;
    out->payload_off = NW_ETH_HLEN + ihl + 8;
    out->payload_len = udp_len - 8;
    return NW_FRAME_OK;
}
