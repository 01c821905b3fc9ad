/* Receiver PSN window and SACK bitmap generation. */
#include "sack.h"

#include <stdlib.h>

#include "engine.h"

static inline void bit_set(uint64_t *bits, uint32_t i) { bits[i >> 6] |= 1ull << (i & 63); }
static inline void bit_clear(uint64_t *bits, uint32_t i) { bits[i >> 6] &= ~(1ull << (i & 63)); }
static inline int bit_get(const uint64_t *bits, uint32_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }

int32_t nw_rxw_init(nw_rx_window_t *w, uint32_t size)
{
    if (size < 64 || (size & (size - 1)))
        return NW_EINVAL;
    w->bits = calloc(size / 64, sizeof(uint64_t));
    w->size = size;
    w->cum = w->highest = 0;
    w->count = 0;
    return w->bits ? NW_OK : NW_ENOMEM;
}

void nw_rxw_destroy(nw_rx_window_t *w)
{
    free(w->bits);
    w->bits = NULL;
}

void nw_rxw_reset(nw_rx_window_t *w, uint32_t first_psn)
{
    for (uint32_t i = 0; i < w->size / 64; i++)
        w->bits[i] = 0;
    w->cum = first_psn - 1;
    w->highest = w->cum;
    w->count = 0;
}

int32_t nw_rxw_classify(const nw_rx_window_t *w, uint32_t psn)
{
    int32_t d = nw_psn_diff(psn, w->cum);
    if (d <= 0)
        return NW_PSN_DUP;
    if ((uint32_t)d > w->size)
        return NW_PSN_OUT_OF_WINDOW;
    return bit_get(w->bits, psn & (w->size - 1)) ? NW_PSN_DUP : NW_PSN_NEW;
}

void nw_rxw_mark(nw_rx_window_t *w, uint32_t psn)
{
    uint32_t mask = w->size - 1;
    bit_set(w->bits, psn & mask);
    w->count++;
    if (nw_psn_diff(psn, w->highest) > 0)
        w->highest = psn;
    while (w->count > 0 && bit_get(w->bits, (w->cum + 1) & mask)) {
        w->cum++;
        bit_clear(w->bits, w->cum & mask);
        w->count--;
    }
}

void nw_rxw_slide_to(nw_rx_window_t *w, uint32_t psn)
{
    uint32_t mask = w->size - 1;
    while (nw_psn_diff(psn, w->cum) > (int32_t)w->size) {
        w->cum++;
        if (bit_get(w->bits, w->cum & mask)) {
            bit_clear(w->bits, w->cum & mask);
            w->count--;
        }
    }
    if (nw_psn_diff(w->highest, w->cum) < 0)
        w->highest = w->cum;
}

int32_t nw_rxw_received(const nw_rx_window_t *w, uint32_t psn)
{
    return nw_rxw_classify(w, psn) == NW_PSN_DUP;
}

uint64_t nw_rxw_sack(const nw_rx_window_t *w, uint32_t base)
{
    uint64_t out = 0;
    for (uint32_t i = 0; i < 64; i++)
        if (nw_rxw_received(w, base + i))
            out |= 1ull << i;
    return out;
}
