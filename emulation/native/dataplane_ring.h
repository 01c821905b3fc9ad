/* One switch port: an AF_PACKET socket with TPACKET_V2 receive and transmit rings.
 *
 * The rings are shared with the kernel (mmap): receiving walks the RX ring while
 * slots belong to user space; sending fills TX slots and flushes them with one
 * send() per batch.  PACKET_QDISC_BYPASS sends straight to the device and
 * PACKET_IGNORE_OUTGOING keeps the port's own frames out of its RX ring.
 */
#ifndef NW_DATAPLANE_RING_H
#define NW_DATAPLANE_RING_H

#include <stdint.h>

typedef struct nw_dp_ring nw_dp_ring_t;

typedef struct nw_dp_ring_config {
    uint32_t rx_frames;    /* slots in the RX ring (0: no RX ring) */
    uint32_t tx_frames;    /* slots in the TX ring (0: no TX ring) */
    uint32_t max_frame;    /* longest frame the port carries (0: the interface's MTU + 18) */
    uint32_t tapped;       /* 1: no PACKET_QDISC_BYPASS, so captures (tcpdump) on the
                              interface see the frames sent, as with a plain socket */
} nw_dp_ring_config_t;

/* A received frame, valid until nw_dp_ring_rx_release(). */
typedef struct nw_dp_rx_frame {
    const uint8_t *data;
    uint32_t len;          /* bytes in data (snap length) */
    uint32_t wire_len;     /* the frame's length on the wire; > len: it was cut */
    uint64_t rx_realtime_ns; /* the kernel's receive time (CLOCK_REALTIME) */
} nw_dp_rx_frame_t;

typedef struct nw_dp_ring_stats {
    uint64_t rx_frames, rx_bytes, rx_kernel_drops;
    uint64_t tx_frames, tx_bytes, tx_ring_full, tx_errors, tx_too_long;
} nw_dp_ring_stats_t;

/* Open the port on interface `ifname`; NULL with *err = -errno on failure. */
nw_dp_ring_t *nw_dp_ring_open(const char *ifname, const nw_dp_ring_config_t *config,
                              int32_t *err);
void nw_dp_ring_close(nw_dp_ring_t *r);
int32_t nw_dp_ring_fd(const nw_dp_ring_t *r);
uint32_t nw_dp_ring_max_frame(const nw_dp_ring_t *r);

/* Receiving: peek at the next frame (1) or none (0); release it after use. */
int32_t nw_dp_ring_rx_peek(nw_dp_ring_t *r, nw_dp_rx_frame_t *out);
void nw_dp_ring_rx_release(nw_dp_ring_t *r);

/* Sending: a free slot's data area (NULL: the ring is full), then commit its length.
 * Committed frames leave at the next nw_dp_ring_tx_flush(). */
uint8_t *nw_dp_ring_tx_slot(nw_dp_ring_t *r);
void nw_dp_ring_tx_commit(nw_dp_ring_t *r, uint32_t len);
/* Copy one frame into the ring: 0 ok, -1 the ring is full, -2 too long (both counted). */
int32_t nw_dp_ring_tx_copy(nw_dp_ring_t *r, const uint8_t *frame, uint32_t len);
/* Hand committed frames to the kernel; returns how many were pending.  When the device
 * refuses a frame for now (ENOBUFS: its backlog is full), the frame stays in the ring and
 * the ring stays pending, to be flushed again. */
uint32_t nw_dp_ring_tx_flush(nw_dp_ring_t *r);
/* Frames committed and not yet flushed. */
uint32_t nw_dp_ring_tx_pending(const nw_dp_ring_t *r);

void nw_dp_ring_stats(nw_dp_ring_t *r, nw_dp_ring_stats_t *out);

#endif
