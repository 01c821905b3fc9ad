/* `netweft bench ec`: coding through the engine, timed (see src/ec/ec_bench.c). */
#ifndef NETWEFT_EC_BENCH_H
#define NETWEFT_EC_BENCH_H

#include <stdint.h>

#define NW_EC_BENCH_HOLD 32 /* data packets of one block held on the bench's wire */

typedef struct {
    uint64_t tx_ns;          /* time in the sender's nw_output */
    uint64_t rx_ns;          /* time in the receiver's nw_input for the sender's packets */
    uint64_t payload_bytes;  /* message bytes moved */
    uint64_t parity_bytes;   /* parity packet bytes sent */
    uint64_t recovered_pkts; /* data packets the receiver decoded */
    uint64_t retransmits;
} nw_ec_bench_t;

/* One write of `bytes` from engine A to engine B with code (k, m) (0, 0: no
 * coding), losing the first `drop` (<= m) data packets of every block.
 * NW_OK if the bytes arrived intact. */
int32_t nw_ec_bench_engine(uint32_t k, uint32_t m, uint32_t drop, uint32_t mtu, uint64_t bytes,
                           nw_ec_bench_t *out);

#endif
