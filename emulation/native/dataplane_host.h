/* The loop's channel to the host (Python): the CPU port.
 *
 * Frames the pipeline sends to the CPU port (P4Runtime PacketIn) are copied into
 * a bounded ring the host drains (`nw_dp_host_take`); frames the host injects
 * (PacketOut) wait in another bounded ring until the loop runs them through
 * ingress as received on the CPU port.  A full ring drops the frame and counts
 * it.  One producer and one consumer per ring: the loop thread and one host
 * thread.  An eventfd (`nw_dp_host_fd`) becomes readable when PacketIn frames
 * wait, so the host sleeps in poll/select instead of spinning.
 */
#ifndef NW_DATAPLANE_HOST_H
#define NW_DATAPLANE_HOST_H

#include <stdint.h>

typedef struct nw_dp_host nw_dp_host_t;

typedef struct nw_dp_host_stats {
    uint64_t punted, punt_drops;      /* to the host: taken into the ring / ring full or too long */
    uint64_t injected, inject_drops;  /* from the host: accepted / ring full or too long */
} nw_dp_host_stats_t;

/* A channel for `cpu_port` (0..510) with `slots` frames of up to `frame_max` bytes
 * each way; NULL on bad arguments or no memory. */
nw_dp_host_t *nw_dp_host_new(uint32_t cpu_port, uint32_t slots, uint32_t frame_max);
void nw_dp_host_free(nw_dp_host_t *h);
uint32_t nw_dp_host_cpu_port(const nw_dp_host_t *h);
int32_t nw_dp_host_fd(const nw_dp_host_t *h);

/* host side: the next PacketIn frame into buf (its length), or -1 if none wait
 * (-2: buf too small, the frame stays) */
int32_t nw_dp_host_take(nw_dp_host_t *h, uint8_t *buf, uint32_t cap);
/* host side: queue a PacketOut frame; 0, or -1 when the ring is full or the frame too long */
int32_t nw_dp_host_inject(nw_dp_host_t *h, const uint8_t *frame, uint32_t len);
void nw_dp_host_stats(const nw_dp_host_t *h, nw_dp_host_stats_t *out);

/* loop side: copy a frame to the host (counted drop when full) */
void nw_dp_host_punt(nw_dp_host_t *h, const uint8_t *frame, uint32_t len);
/* loop side: wake the host once after a pass that punted */
void nw_dp_host_notify(nw_dp_host_t *h);
/* loop side: the oldest injected frame (1) or none (0); release it after use */
int32_t nw_dp_host_peek_injected(nw_dp_host_t *h, const uint8_t **frame, uint32_t *len);
void nw_dp_host_release_injected(nw_dp_host_t *h);

#endif
