/* tx=packet: an AF_PACKET socket with memory-mapped receive and transmit rings.
 *
 * The I/O driver's fastest path on Linux without special hardware. Frames are
 * built in a TPACKET_V2 transmit ring shared with the kernel and handed over
 * with one send() per batch, whatever their source ports (entropy) are;
 * PACKET_QDISC_BYPASS hands them straight to the device. Frames for the
 * endpoint's address and port are copied by the socket's tap into a receive
 * ring before the interface's ingress hook, where tcx_divert.h's program
 * keeps them from the IP/UDP stack, so reading them takes no system call while
 * traffic flows. A classic BPF filter on the socket admits only IPv4/UDP to
 * local_ip:local_port.
 *
 * UDP checksums are left to checksum offload (a virtio_net_hdr with
 * NEEDS_CSUM per frame: veth skips it like it does for the kernel's own UDP,
 * a device without offload has the kernel complete it); kernels without
 * PACKET_VNET_HDR on rings get a checksum computed here. Received frames are
 * parsed with udp_frame.h (bounds-checked); a nonzero UDP checksum is verified
 * unless the kernel marks the frame as verified or locally offloaded.
 *
 * The next hop's MAC address comes from neighbor_cache.h; a packet to a peer
 * not heard from yet is not put in the ring (nw_pring_tx_reserve says so) and
 * the driver sends it through its UDP socket instead.
 */
#ifndef NETWEFT_PACKET_RING_H
#define NETWEFT_PACKET_RING_H

#include <stdint.h>

#include "engine.h"
#include "neighbor_cache.h"
#include "udp_frame.h"

typedef struct {
    uint32_t ifindex;     /* interface to bind (> 0) */
    uint32_t local_ip;    /* the endpoint's address and port (host order) */
    uint16_t local_port;
    uint16_t reserved;
    uint32_t max_payload; /* largest UDP payload (the engine's MTU) */
    uint32_t rx_bytes;    /* receive ring size (rounded to whole blocks) */
    uint32_t tx_bytes;    /* transmit ring size */
} nw_pring_config_t;

typedef struct {
    uint64_t rx_frames;     /* frames read from the ring */
    uint64_t rx_malformed;  /* refused by nw_frame_parse (counted and dropped) */
    uint64_t rx_bad_csum;   /* of which a UDP checksum that did not verify */
    uint64_t rx_truncated;  /* longer than the largest packet (left to the stack and rx_fd) */
    uint64_t rx_ring_drops; /* frames the kernel dropped because the ring was full */
    uint64_t tx_frames;     /* frames handed to the kernel */
    uint64_t tx_flushes;    /* send() calls */
    uint64_t tx_errors;     /* send() failures */
    uint64_t tx_ring_full;  /* reservations refused: no free frame */
    uint64_t tx_no_neighbor; /* packets for peers whose MAC is unknown (sent by UDP socket) */
} nw_pring_stats_t;

typedef struct nw_pring nw_pring_t;

/* Opens the socket, maps the rings, attaches the filters. On failure returns
 * NULL and stores NW_EPERM (no CAP_NET_RAW / CAP_BPF), NW_ENOMEM or NW_ESYS
 * (errno kept) in *err. */
nw_pring_t *nw_pring_open(const nw_pring_config_t *cfg, int32_t *err);
void nw_pring_close(nw_pring_t *r);
int32_t nw_pring_fd(const nw_pring_t *r);
/* 1 if checksums go to offload (virtio_net_hdr), 0 if computed here. */
int32_t nw_pring_offloads_checksum(const nw_pring_t *r);

/* Transmit. Frames are filled in ring order: nw_pring_tx_payload(r, k) is the
 * payload area of the k-th frame after those already committed (NULL when that
 * frame is still the kernel's); nw_pring_tx_fill writes its headers for plen
 * payload bytes (0 if the destination's MAC is unknown: nothing was written);
 * nw_pring_tx_commit(r, n) gives the first n filled frames to the kernel and
 * sends them. */
uint8_t *nw_pring_tx_payload(nw_pring_t *r, uint32_t k);
int32_t nw_pring_tx_fill(nw_pring_t *r, uint32_t k, uint32_t plen, const nw_dest_t *d);
int32_t nw_pring_tx_commit(nw_pring_t *r, uint32_t n);

/* Receive: the next frame addressed to the endpoint, parsed. Returns 1 with
 * *out and *payload set (valid until nw_pring_rx_release), 0 if the ring is
 * empty. Malformed frames are counted, released and skipped. */
int32_t nw_pring_rx_next(nw_pring_t *r, nw_frame_t *out, const uint8_t **payload);
void nw_pring_rx_release(nw_pring_t *r);
/* 1 if a frame is waiting (one memory read: for busy polling). */
int32_t nw_pring_rx_ready(const nw_pring_t *r);

/* A new peer: take its MAC from the kernel's ARP table if it is there
 * (neighbor_cache.h), else frames wait until the peer is heard from. */
void nw_pring_peer_hint(nw_pring_t *r, uint32_t ip);

void nw_pring_stats(nw_pring_t *r, nw_pring_stats_t *out);

#endif
