/* Receiver PSN tracking: cumulative PSN plus a bitmap of PSNs received beyond
 * it. It decides new / duplicate / out-of-window for every arriving PSN (the
 * basis of exactly-once placement) and produces the 64-bit SACK bitmaps that
 * ACKs carry. PSNs are 32-bit and compared in serial-number arithmetic. */
#ifndef NETWEFT_SACK_H
#define NETWEFT_SACK_H

#include <stdint.h>

#define NW_PSN_NEW 0
#define NW_PSN_DUP 1
#define NW_PSN_OUT_OF_WINDOW 2

typedef struct {
    uint32_t cum;      /* every PSN <= cum (serially) was received */
    uint32_t size;     /* window in PSNs beyond cum, power of two */
    uint32_t count;    /* PSNs received beyond cum */
    uint32_t highest;  /* highest PSN received (== cum when count is 0) */
    uint64_t *bits;    /* bit (psn & (size-1)) set = received, for psn in (cum, cum+size] */
} nw_rx_window_t;

/* a - b as a signed serial distance. */
static inline int32_t nw_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

int32_t nw_rxw_init(nw_rx_window_t *w, uint32_t size);
void nw_rxw_destroy(nw_rx_window_t *w);
/* Starts the window so that `first_psn` is the next expected PSN. */
void nw_rxw_reset(nw_rx_window_t *w, uint32_t first_psn);
int32_t nw_rxw_classify(const nw_rx_window_t *w, uint32_t psn);
/* Records a NEW psn and advances cum over any now-contiguous PSNs. */
void nw_rxw_mark(nw_rx_window_t *w, uint32_t psn);
/* Slides the window so that psn fits (unreliable mode: gaps are given up). */
void nw_rxw_slide_to(nw_rx_window_t *w, uint32_t psn);
int32_t nw_rxw_received(const nw_rx_window_t *w, uint32_t psn);
/* Bit i set = base+i received (PSNs at or below cum count as received). */
uint64_t nw_rxw_sack(const nw_rx_window_t *w, uint32_t base);

#endif
