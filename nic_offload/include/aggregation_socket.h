/* The socket loop of the in-network all-reduce worker: one all-reduce of a
 * nw_agg_worker_t (aggregation_worker.h) over a UDP socket, in one call.
 *
 * SwitchGroup (transport/collectives/aggregation/udp.py) calls it once per
 * all-reduce, through cffi and without the GIL: the loop sends the core's packets
 * to the job's service address in sendmmsg batches, waits in ppoll until a result
 * arrives or the core's next deadline, reads results in recvmmsg batches and feeds
 * them to the core, and runs the core's timers from CLOCK_MONOTONIC. It is the
 * same loop as udp.py's Python driver (the reference), with a system call per
 * batch instead of one per packet.
 *
 * fd is the caller's UDP socket, bound to the address the switch sends this
 * worker's results to; the caller keeps it. Addresses are host byte order.
 */
#ifndef NETWEFT_AGGREGATION_SOCKET_H
#define NETWEFT_AGGREGATION_SOCKET_H

#include <stdint.h>

#include "aggregation_worker.h"

#define NW_AGG_IO_BATCH 64u /* datagrams per sendmmsg / recvmmsg */

typedef struct {
    uint64_t send_calls, recv_calls, waits;
    uint64_t sent, received;   /* datagrams */
    uint64_t send_retries;     /* a full socket buffer: waited for room, sent again */
} nw_agg_io_stats_t;

#define NW_AGG_INTERRUPTED 3 /* a signal arrived: call again to go on */

/* CLOCK_MONOTONIC in nanoseconds (Python's time.monotonic_ns on Linux). */
int64_t nw_agg_monotonic_ns(void);

/* Runs w (started here if it was not) until it ends: NW_AGG_DONE, NW_AGG_STALLED;
 * NW_AGG_INTERRUPTED when a signal cut a wait short (the caller handles it, then calls
 * again: nothing is lost); NW_ETIMEDOUT once CLOCK_MONOTONIC passes deadline_ns (0:
 * none); NW_ERANGE from the core (an exponent the data does not fit); NW_ESYS (errno
 * set) if a system call failed. The core's clock is CLOCK_MONOTONIC - t0_ns (keep t0_ns
 * across the calls of one all-reduce); stats add up across calls. */
int32_t nw_agg_run_socket(nw_agg_worker_t *w, int32_t fd, uint32_t dst_ip, uint16_t dst_port,
                          int64_t t0_ns, int64_t deadline_ns, nw_agg_io_stats_t *stats);

#endif
