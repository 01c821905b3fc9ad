/* Ethernet/IPv4/UDP framing for the I/O driver's own headers.
 *
 * tx=raw writes IPv4+UDP headers in front of each UET payload, and tx=packet
 * writes whole Ethernet frames into an AF_PACKET ring and parses the frames it
 * receives from one. The parser is the only code that reads those headers off
 * the wire in netweft's C path: every length it uses is checked against the
 * frame first (nic_offload/fuzz/fuzz_udp_frame.c fuzzes it).
 *
 * Addresses and ports are host byte order.
 */
#ifndef NETWEFT_UDP_FRAME_H
#define NETWEFT_UDP_FRAME_H

#include <stdint.h>

#define NW_ETH_HLEN 14u
#define NW_IP_UDP_HLEN 28u  /* IPv4 without options + UDP */
#define NW_FRAME_HLEN 42u   /* Ethernet + IPv4 + UDP */
#define NW_ETH_P_IPV4 0x0800u

typedef struct {
    uint32_t src_ip, dst_ip;
    uint16_t src_port, dst_port;
    uint8_t ecn; /* low two bits of the TOS byte */
} nw_udp_addr_t;

/* How nw_ipv4_udp_write fills the UDP checksum. */
#define NW_UDP_CSUM_NONE 0    /* 0: no checksum (allowed in IPv4) */
#define NW_UDP_CSUM_FULL 1    /* computed over the plen payload bytes that follow h */
#define NW_UDP_CSUM_PARTIAL 2 /* the pseudo-header sum only, for checksum offload
                                 (virtio_net_hdr NEEDS_CSUM: the kernel or NIC completes it) */

/* Writes IPv4 (DF, TTL 64, no options) + UDP headers for plen payload bytes
 * into h[0..28). The payload must already follow h for NW_UDP_CSUM_FULL. */
void nw_ipv4_udp_write(uint8_t *h, uint32_t plen, const nw_udp_addr_t *a, int32_t csum);
/* Writes an Ethernet II header (type IPv4) into h[0..14). */
void nw_eth_write(uint8_t *h, const uint8_t dst_mac[6], const uint8_t src_mac[6]);

/* A received frame's addresses and where its UDP payload lies. */
typedef struct {
    nw_udp_addr_t addr;
    uint8_t src_mac[6];
    uint8_t reserved[2];
    uint32_t payload_off, payload_len;
} nw_frame_t;

/* nw_frame_parse results: NW_FRAME_OK, or why the frame was refused. */
#define NW_FRAME_OK 0
#define NW_FRAME_SHORT -1        /* shorter than the headers or IP total length it claims */
#define NW_FRAME_NOT_IPV4 -2     /* EtherType or IP version is not IPv4 */
#define NW_FRAME_BAD_IP -3       /* IHL < 5, or total length shorter than the IHL */
#define NW_FRAME_BAD_IP_CSUM -4  /* IPv4 header checksum wrong */
#define NW_FRAME_FRAGMENT -5     /* an IP fragment (netweft never fragments: DF) */
#define NW_FRAME_NOT_UDP -6
#define NW_FRAME_BAD_UDP_LEN -7  /* UDP length < 8 or beyond the IP payload */
#define NW_FRAME_BAD_UDP_CSUM -8 /* a nonzero UDP checksum that does not verify */

/* Parses an Ethernet II frame carrying IPv4/UDP. The UDP checksum is verified
 * when verify_udp_csum is set and the checksum is nonzero (a receiver skips
 * it for frames the kernel marks as verified or locally offloaded). */
int32_t nw_frame_parse(const uint8_t *f, uint32_t len, int32_t verify_udp_csum, nw_frame_t *out);

#endif
