/* DCQCN-like rate control (sans-IO), a baseline beside NSCC and RCCC.
 *
 * After DCQCN (Zhu et al., SIGCOMM 2015): the receiver echoes CE marks (here
 * the ACK's M flag stands for the CNP; at most one echo per 50 us counts), the
 * sender cuts its rate Rc by alpha/2 and remembers the rate before the cut as
 * its target Rt; alpha follows the marked fraction (gain g = 1/256, decaying
 * every 55 us without a CNP). Without CNPs the rate recovers in stages every
 * 55 us or every 150 KB sent: five fast-recovery steps (Rc = (Rt + Rc) / 2),
 * then additive increase of Rt (line rate / 500 per step), then hyper increase
 * (line rate / 50 per step). Timers are evaluated lazily from the time
 * arguments, so the module needs no deadline of its own; the PDC paces its
 * packets at Rc. */
#ifndef NETWEFT_DCQCN_H
#define NETWEFT_DCQCN_H

#include <stdint.h>

typedef struct {
    uint64_t rc_kbps, rt_kbps;  /* current and target rate */
    uint64_t line_kbps;
    uint32_t alpha;             /* fixed point, 1 << 16 = 1.0 */
    uint64_t last_cnp_ns;       /* 0 = none yet */
    uint64_t alpha_ns;          /* last alpha decay step */
    uint64_t timer_ns;          /* last timer-driven increase step */
    uint64_t bytes;             /* bytes sent since the last byte-counter step */
    uint32_t t_stage, b_stage;  /* increase steps by timer and by byte counter since the cut */
    uint64_t next_send_ns;      /* pacing: earliest time of the next packet */
} nw_dcqcn_t;

void nw_dcqcn_init(nw_dcqcn_t *d, uint64_t line_kbps, uint64_t now);
/* An ACK with the ECN echo: returns 1 if the rate was cut. */
int nw_dcqcn_on_cnp(nw_dcqcn_t *d, uint64_t now);
/* A packet of `bytes` left at now: advances pacing and the byte counter. */
void nw_dcqcn_on_sent(nw_dcqcn_t *d, uint32_t bytes, uint64_t now);
/* Runs the alpha and rate-increase timers up to now. */
void nw_dcqcn_advance(nw_dcqcn_t *d, uint64_t now);

#endif
