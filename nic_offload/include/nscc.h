/* NSCC: the sender window of Ultra Ethernet's network-signal congestion
 * control (sans-IO; the PDC feeds it acknowledged bytes, RTT samples, ECN
 * echoes and trims with the driver's time).
 *
 * Window in bytes from two signals: the ECN-marked fraction (an ACK's M flag)
 * and the queueing delay (RTT above the base RTT) against a target. Four cases
 * on each ACK, as in UEC's htsim model (docs/congestion.md cites it):
 *   no ECN, delay >= target  fair increase (2 MTU per window acknowledged)
 *   no ECN, delay <  target  proportional increase: half a window per window
 *                            acknowledged x (target - delay) / target, plus
 *                            the fair increase
 *   ECN,    delay >= target  multiplicative decrease, at most once per base RTT:
 *                            x max(1 - 0.8 (avg - target) / avg, 0.5)
 *   ECN,    delay <  target  no change
 * Increases accumulate and apply every 8 MTU acknowledged or every base RTT.
 * Quick adapt: after a trim or NACK, or a delay above 4 x target, the window
 * becomes the bytes actually delivered in the last base RTT + target; each
 * packet declared lost also takes its bytes off the window at once.
 * The window counts whole packets, rounded: another leaves while the pipe plus
 * half an MTU fits (nw_cc_window_open). Feedback: the last packet a window admits
 * (at the one-packet floor, every packet) asks for an ACK at once
 * (nw_cc_ack_wanted, congestion.c), as in htsim, so that a window of fewer
 * packets than the receiver's ACK coalescing is acknowledged within an RTT and
 * every sender, at the floor or above it, has the same ACK clock. */
#ifndef NETWEFT_NSCC_H
#define NETWEFT_NSCC_H

#include <stdint.h>

typedef struct {
    uint64_t base_rtt_ns;  /* unloaded RTT */
    uint64_t target_ns;    /* target queueing delay */
    uint32_t mtu;          /* bytes of a full packet */
    uint64_t max_bytes;    /* largest window (1.5 x BDP) */
    uint64_t min_bytes;    /* smallest window */
} nw_nscc_params_t;

typedef struct {
    uint64_t cwnd;          /* bytes allowed in flight */
    uint64_t inc;           /* increase accumulated, not yet applied (bytes) */
    uint64_t acked_since_apply;
    uint64_t last_apply_ns;
    uint64_t last_md_ns;    /* 0 = never */
    uint64_t avg_delay_ns;  /* EWMA (1/8) of queueing delay samples */
    uint64_t achieved;      /* bytes acknowledged since the quick-adapt period began */
    uint64_t qa_end_ns;     /* end of the quick-adapt period (0 = not started) */
    uint64_t ignore_bytes;  /* after a quick adapt: ECN marks on what was in flight are old news */
    uint8_t trigger_qa;     /* a trim, NACK or extreme delay was seen this period */
} nw_nscc_t;

#define NW_NSCC_CUT 1   /* multiplicative decrease */
#define NW_NSCC_QA 2    /* quick adapt */
#define NW_NSCC_INC 4   /* window grew */

void nw_nscc_init(nw_nscc_t *n, uint64_t cwnd_bytes);
/* An ACK newly acknowledged `newly` bytes; delay_valid says whether delay_ns
 * (RTT - base RTT) is a fresh sample; ecn: the ACK carried the M flag;
 * in_flight: bytes still in flight. Returns NW_NSCC_* flags of what changed. */
uint32_t nw_nscc_on_ack(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t newly,
                        int delay_valid, uint64_t delay_ns, int ecn, uint64_t in_flight,
                        uint64_t now);
/* A packet of `bytes` was trimmed, NACKed or declared lost: the window loses
 * its bytes at once and quick adapt runs now if its period is over (else at
 * the next check). Returns NW_NSCC_* flags. */
uint32_t nw_nscc_on_loss(nw_nscc_t *n, const nw_nscc_params_t *pr, uint64_t bytes,
                         uint64_t in_flight, uint64_t now);
/* Clamps the window into [min_bytes, max_bytes] (after the parameters changed). */
void nw_nscc_clamp(nw_nscc_t *n, const nw_nscc_params_t *pr);

#endif
