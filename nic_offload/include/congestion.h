/* Congestion control of a PDC: the mode chosen per engine (nw_config_t.cc_mode)
 * and the state of each scheme. The schemes live one per module: nscc.c (the
 * sender window), rccc.c (receiver credits), dcqcn.c (the rate baseline);
 * congestion.c joins them to the PDC (what may be sent now, what an ACK,
 * a loss or a sent packet changes). docs/congestion.md explains the modes. */
#ifndef NETWEFT_CONGESTION_H
#define NETWEFT_CONGESTION_H

#include <stdint.h>

#include "dcqcn.h"
#include "nscc.h"
#include "rccc.h"

typedef struct {
    uint8_t mode;          /* NW_CC_MODE_* */
    uint8_t nscc_on, rccc_on, dcqcn_on;
    uint64_t min_rtt;      /* lowest RTT sample seen (0 = none yet) */
    uint64_t pipe_bytes;   /* bytes of the packets in flight (INFLIGHT slots) */
    nw_nscc_params_t np;
    uint8_t np_sized;      /* np from a known base RTT */
    nw_nscc_t nscc;
    nw_credit_tx_t cr_tx;
    nw_credit_rx_t cr_rx;
    nw_dcqcn_t dcqcn;
    uint8_t ce_pending;    /* receiver: a CE-marked packet awaits its echo in an ACK */
} nw_cc_t;

#endif
