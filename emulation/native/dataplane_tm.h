/* The traffic manager in C: per egress port up to eight strict-priority queues.
 *
 * The semantics of emulation/traffic_manager.py (BMv2 simple_switch's egress
 * buffers with --priority-queues N), sans-IO: every call takes the time in
 * nanoseconds; queued packets are opaque 64-bit handles the caller owns.
 *
 * - priority N-1 is served first, 0 last; a priority >= N is dropped;
 * - each queue holds at most depth_packets packets and, optionally,
 *   depth_bytes bytes (tail drop, counted as queue_full);
 * - a queue may have a service rate (rate_pps and/or rate_bps): departures from
 *   it are spaced by each packet's service time;
 * - the port's transmitter (its link rate) sends one frame at a time.
 * Queue metadata is filled as BMv2 fills it, in microseconds.
 */
#ifndef NW_DATAPLANE_TM_H
#define NW_DATAPLANE_TM_H

#include <stdint.h>

#define NW_TM_MAX_PORTS 512u
#define NW_TM_MAX_PRIORITIES 8u
#define NW_TM_DEFAULT_DEPTH 64u

/* what nw_tm_configure changes (a mask of these) */
#define NW_TM_SET_DEPTH_PACKETS 1u
#define NW_TM_SET_DEPTH_BYTES 2u
#define NW_TM_SET_RATE_PPS 4u
#define NW_TM_SET_RATE_BPS 8u

/* nw_tm_enqueue's results */
#define NW_TM_QUEUED 0
#define NW_TM_DROP_QUEUE_FULL 1
#define NW_TM_DROP_PRIORITY 2
#define NW_TM_DROP_PORT 3     /* port outside 0..NW_TM_MAX_PORTS-1 */
#define NW_TM_DROP_NOMEM 4

typedef struct nw_tm nw_tm_t;

typedef struct nw_tm_queue_config {
    uint32_t depth_packets;
    uint32_t has_depth_bytes; /* 0: no byte limit */
    uint64_t depth_bytes;
    double rate_pps;          /* 0: no packet rate */
    double rate_bps;          /* 0: no bit rate */
} nw_tm_queue_config_t;

typedef struct nw_tm_queue_meta {
    uint64_t enq_timestamp;   /* microseconds */
    uint32_t enq_qdepth;      /* the port's packets (all priorities) before this one */
    uint64_t deq_timedelta;   /* microseconds waited */
    uint32_t deq_qdepth;      /* the port's packets left behind it */
    uint32_t qid;             /* N - 1 - priority */
} nw_tm_queue_meta_t;

typedef struct nw_tm_departure {
    uint64_t time_ns;
    uint64_t handle;
    uint32_t port;
    uint32_t priority;
    uint32_t length;
    nw_tm_queue_meta_t meta;
} nw_tm_departure_t;

typedef struct nw_tm_stats {
    uint64_t drop_queue_full, drop_priority, drop_port, drop_nomem;
    uint64_t queued;          /* packets in all queues now */
} nw_tm_stats_t;

/* A traffic manager with `priority_queues` (1..8) queues per port; NULL if out of range. */
nw_tm_t *nw_tm_new(uint32_t priority_queues, const nw_tm_queue_config_t *default_queue);
void nw_tm_free(nw_tm_t *tm);
uint32_t nw_tm_priority_queues(const nw_tm_t *tm);

/* Change the fields named by `mask` for every port (port < 0), every queue of one
 * port (priority < 0) or one queue; queued packets stay.  0 ok, -1 bad arguments. */
int32_t nw_tm_configure(nw_tm_t *tm, int32_t port, int32_t priority, uint32_t mask,
                        const nw_tm_queue_config_t *values);
/* The limits in force for one queue. */
int32_t nw_tm_queue_config(const nw_tm_t *tm, uint32_t port, uint32_t priority,
                           nw_tm_queue_config_t *out);
/* The port's transmitter rate in bits/s (0: infinitely fast); -1 bad port. */
int32_t nw_tm_set_port_rate(nw_tm_t *tm, uint32_t port, double rate_bps);

/* Queue a packet at now_ns: NW_TM_QUEUED or a drop reason. */
int32_t nw_tm_enqueue(nw_tm_t *tm, uint64_t now_ns, uint32_t port, uint32_t priority,
                      uint32_t length, uint64_t handle);
/* 1 and the metadata if the packet may leave at once (then do not enqueue it), else 0. */
int32_t nw_tm_pass_through(nw_tm_t *tm, uint64_t now_ns, uint32_t port, uint32_t priority,
                           uint32_t length, nw_tm_queue_meta_t *meta);
/* 1 and the earliest time a queued packet may leave, or 0 when all queues are empty. */
int32_t nw_tm_next_departure(nw_tm_t *tm, uint64_t *when_ns);
/* 1 and the next packet whose time has come by now_ns, else 0. */
int32_t nw_tm_dequeue(nw_tm_t *tm, uint64_t now_ns, nw_tm_departure_t *out);
/* A `length`-byte frame starts on `port` at now_ns; returns when its last bit has left. */
uint64_t nw_tm_transmitted(nw_tm_t *tm, uint32_t port, uint64_t now_ns, uint32_t length);

/* Packets queued on a port (priority < 0: all its queues). */
uint32_t nw_tm_depth(const nw_tm_t *tm, uint32_t port, int32_t priority);
void nw_tm_stats(const nw_tm_t *tm, nw_tm_stats_t *out);

#endif
