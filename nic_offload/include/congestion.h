/* Delay-based congestion window of a PDC (Swift-like, sans-IO).
 *
 * Why: without it the sender hands a whole window to the kernel at once, the
 * queue builds in socket buffers where a retransmission waits behind every
 * packet sent before it, and every loss then costs a full queueing delay. The
 * window keeps the queue inside the engine, where repairs jump ahead of new
 * data. Random loss never shrinks the window (loss should only cost the lost
 * share of goodput); queueing delay above the lowest RTT seen does.
 * Off unless cc_target_ns is set: on a CPU-bound host (veth/loopback tests)
 * thread scheduling delay is indistinguishable from queueing delay. */
#ifndef NETWEFT_CONGESTION_H
#define NETWEFT_CONGESTION_H

#include <stdint.h>

typedef struct {
    uint32_t cwnd;       /* packets allowed in flight (not SACKed, not queued for repair) */
    uint32_t acc;        /* packets acknowledged towards the next additive increase */
    uint64_t min_rtt;    /* lowest RTT sample seen (0 = none yet) */
    uint64_t last_cut;   /* time of the last multiplicative decrease */
} nw_cc_t;

/* Starts at max_pkts (datacenter: no slow start). */
void nw_cc_init(nw_cc_t *cc, uint32_t max_pkts);
/* An ACK newly acknowledged `newly` packets; rtt is a fresh sample or 0.
 * Returns 1 if the window was cut. */
int nw_cc_on_ack(nw_cc_t *cc, uint32_t newly, uint64_t rtt, uint64_t now, uint64_t target_ns,
                 uint32_t min_pkts, uint32_t max_pkts);

#endif
