/* The dataplane loop: every port's rings, one thread, Python off the packet path.
 *
 * One poll loop over all ports: each pass takes up to `batch` frames from
 * every port's RX ring, runs them through the pipeline (ingress, the
 * replication engine, the traffic manager, egress) and fills the egress ports'
 * TX rings, flushed once per pass; frames the traffic manager holds leave when
 * their departure time comes (the loop sleeps in ppoll until the earliest
 * deadline, or until a frame or a stop request wakes it).  Events run in time
 * order, as SoftSwitch.advance runs them: a pass first lets out what was due
 * before it began (departures, frames leaving a wire or an ingress link), then
 * takes the frames received, so a late wake-up does not find queues fuller
 * than they were.  Time is CLOCK_MONOTONIC nanoseconds since the loop was made.
 *
 * The link model (delay, jitter, loss) is not here: nw_dp_wire_t is the hook
 * through which the one C wire model (nic_offload/src/link/) plugs in.  With no
 * wire, links are ideal; a port's rate is the traffic manager's transmitter.
 */
#ifndef NW_DATAPLANE_LOOP_H
#define NW_DATAPLANE_LOOP_H

#include <stdint.h>

#include "dataplane_pipeline.h"
#include "dataplane_replication.h"
#include "dataplane_tm.h"

#define NW_DP_MAX_LOOP_PORTS 64u
#define NW_DP_MAX_PASSES 64u /* as the Python driver's max_passes: no program loops forever */

typedef struct nw_dp_loop nw_dp_loop_t;

typedef struct nw_dp_loop_config {
    uint32_t rx_frames;      /* RX ring slots per port (0: 1024) */
    uint32_t tx_frames;      /* TX ring slots per port (0: 1024) */
    uint32_t batch;          /* frames taken from one port per pass (0: 64) */
    uint32_t pool_packets;   /* packet buffers for packets in flight (0: 4096) */
    uint32_t idle_wakeup_us; /* longest sleep without a deadline (0: 200 ms) */
    uint32_t tapped;         /* 1: captures on the ports see frames sent (slower) */
} nw_dp_loop_config_t;

/* What the loop did; every field a uint64_t (read as an array by Python). */
typedef struct nw_dp_counters {
    uint64_t rx, rx_bytes, tx, tx_bytes;
    uint64_t drop_malformed;        /* the pipeline could not parse the frame */
    uint64_t drop_program;          /* the pipeline dropped it */
    uint64_t drop_rx_truncated;     /* longer than the port's ring slots */
    uint64_t drop_no_port;          /* sent to a port the loop does not serve */
    uint64_t drop_no_buffer;        /* no packet buffer free */
    uint64_t drop_queue_full, drop_priority; /* the traffic manager's */
    uint64_t drop_tx_ring_full, drop_tx_too_long;
    uint64_t drop_wire_lost;        /* the wire hook lost it */
    uint64_t drop_clone_no_session; /* a clone to a session that is not configured */
    uint64_t copies_multicast, copies_clone;
    uint64_t rx_kernel_drops;       /* the kernel found an RX ring full */
    uint64_t tx_errors;
    uint64_t passes, sleeps;
    uint64_t drop_pass_limit;       /* a chain of clones longer than NW_DP_MAX_PASSES */
    uint64_t drop_wire_in;          /* the ingress link lost it (or its waiting room was full) */
    uint64_t resubmitted, recirculated; /* passes the program asked for */
    uint64_t drop_tx_runt;          /* cut below an Ethernet header (14 bytes): no port sends it */
} nw_dp_counters_t;

typedef struct nw_dp_port_counters {
    uint64_t rx, tx, rx_kernel_drops, tx_ring_full;
} nw_dp_port_counters_t;

/* The link hook: a frame's last bit left `port` at now_ns.  Return 1 and its arrival
 * time at the far end (>= now_ns, never before the previous frame's on that port),
 * or 0 if the wire lost it; it may flip bits in frame. */
typedef struct nw_dp_wire {
    void *self;
    int32_t (*propagate)(void *self, uint32_t port, uint64_t now_ns, uint8_t *frame,
                         uint32_t len, uint64_t *arrival_ns);
} nw_dp_wire_t;

/* A loop running `pipeline` with `tm` and `replication` (both the caller's, and
 * needed while the loop lives; tm and replication may be NULL for a DIRECT pipeline). */
nw_dp_loop_t *nw_dp_loop_new(const nw_dp_pipeline_t *pipeline, nw_tm_t *tm,
                             const nw_dp_replication_t *replication,
                             const nw_dp_loop_config_t *config, int32_t *err);
/* Closes every port, drops the packets still queued, frees the loop. */
void nw_dp_loop_free(nw_dp_loop_t *loop);
/* Serve interface `ifname` as switch port `number` (0..510); 0 or -errno. */
int32_t nw_dp_loop_add_port(nw_dp_loop_t *loop, uint32_t number, const char *ifname);
/* The wire hook (NULL: ideal wires); set before nw_dp_loop_run. */
void nw_dp_loop_set_wire(nw_dp_loop_t *loop, const nw_dp_wire_t *wire);
/* The ingress links (called as a frame is received, with the time it reached the
 * link; the frame waits until the arrival time, then ingress runs); NULL: ideal. */
void nw_dp_loop_set_ingress_wire(nw_dp_loop_t *loop, const nw_dp_wire_t *wire);

/* A lock held around every pass (the generated pipeline's nw_pipeline_lock), so a
 * control-plane thread that takes it changes tables, queues and links between passes. */
typedef struct nw_dp_guard {
    void *self;
    void (*lock)(void *self);
    void (*unlock)(void *self);
} nw_dp_guard_t;
void nw_dp_loop_set_guard(nw_dp_loop_t *loop, const nw_dp_guard_t *guard);
/* The CPU port's channel to the host (dataplane_host.h; NULL: none); frames sent to its
 * port go to the host, frames it injects are received on that port. Set before running. */
struct nw_dp_host;
void nw_dp_loop_set_host(nw_dp_loop_t *loop, struct nw_dp_host *host);
/* Per-port captures (dataplane_pcap.h; NULL: none); set before running. */
struct nw_dp_pcap;
void nw_dp_loop_set_pcap(nw_dp_loop_t *loop, struct nw_dp_pcap *pcap);
/* Wake a sleeping loop so it looks at its queues again (any thread). */
void nw_dp_loop_wake(nw_dp_loop_t *loop);
/* Run on the calling thread until nw_dp_loop_stop; 0, or -errno if it could not run. */
int32_t nw_dp_loop_run(nw_dp_loop_t *loop);
/* Ask a running loop to return (any thread, async-signal-safe). */
void nw_dp_loop_stop(nw_dp_loop_t *loop);
/* Counters as of the loop's last pass (any thread). */
void nw_dp_loop_counters(const nw_dp_loop_t *loop, nw_dp_counters_t *out);
/* One port's counters (index in the order ports were added); -1 if none. */
int32_t nw_dp_loop_port_counters(const nw_dp_loop_t *loop, uint32_t index,
                                 nw_dp_port_counters_t *out);
/* Nanoseconds on the loop's clock. */
uint64_t nw_dp_loop_now(const nw_dp_loop_t *loop);

#endif
