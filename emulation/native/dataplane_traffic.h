/* The traffic generator and sink of the veth bench, in C over the same rings.
 *
 * A Python sender tops out near 120 kpps, far below what the native switch
 * forwards; this generator fills a TX ring from a frame template at a paced
 * rate (or as fast as the ring drains), writing a sequence number and the
 * CLOCK_REALTIME send time into every frame.  The sink reads its RX ring and
 * takes the latency of each stamped frame as the kernel's receive time
 * (the ring slot's timestamp) minus the stamp.
 */
#ifndef NW_DATAPLANE_TRAFFIC_H
#define NW_DATAPLANE_TRAFFIC_H

#include <stdint.h>

#define NW_DP_STAMP_MAGIC 0x4e57u /* "NW" */
#define NW_DP_STAMP_LEN 20u       /* magic(2) run(2) seq(8) time(8), big-endian: fits a 64 B frame */

typedef struct nw_dp_gen_config {
    uint64_t count;          /* frames to send */
    double rate_pps;         /* 0: as fast as the ring takes them */
    uint32_t stamp_offset;   /* where the stamp goes in the frame */
    uint32_t run_id;         /* (16 bits) in every stamp; the sink counts only its run */
    uint32_t batch;          /* frames per flush (0: 32) */
    uint32_t templates;      /* frames of `len` bytes back to back in `frame`, sent in
                                turn (0: 1), e.g. blocks cycling through a job's slots */
    uint32_t seq32_offset;   /* > 0: the sequence number (low 32 bits, big-endian) also
                                goes there, e.g. an aggregation packet's block number */
} nw_dp_gen_config_t;

typedef struct nw_dp_gen_result {
    uint64_t sent;
    uint64_t ring_full;      /* times the TX ring had no free slot */
    uint64_t start_ns, end_ns; /* CLOCK_REALTIME */
} nw_dp_gen_result_t;

typedef struct nw_dp_sink nw_dp_sink_t;

typedef struct nw_dp_sink_result {
    uint64_t frames;         /* all frames seen */
    uint64_t matched;        /* stamped frames of this run */
    uint64_t reordered;      /* matched frames with a lower sequence than one before */
    uint64_t first_ns, last_ns; /* receive times of the first and last matched frame */
    uint64_t max_seq;
    uint64_t latencies;      /* samples written */
    uint64_t kernel_drops;   /* the sink's own RX ring overflowed */
} nw_dp_sink_result_t;

/* Send from interface `ifname` (`frame`: config->templates frames of `len` bytes each);
 * 0 or -errno.  Stops early when *stop becomes non-zero. */
int32_t nw_dp_gen_run(const char *ifname, const uint8_t *frame, uint32_t len,
                      const nw_dp_gen_config_t *config, const int32_t *stop,
                      nw_dp_gen_result_t *out);

/* A sink on `ifname` (open it before the generator starts); NULL with *err = -errno. */
nw_dp_sink_t *nw_dp_sink_open(const char *ifname, uint32_t rx_frames, int32_t *err);
void nw_dp_sink_close(nw_dp_sink_t *s);
/* Receive until *stop becomes non-zero; latencies (ns) of up to `cap` frames of run
 * `run_id` go to latency_ns in arrival order. */
int32_t nw_dp_sink_run(nw_dp_sink_t *s, uint32_t stamp_offset, uint32_t run_id,
                       const int32_t *stop, int64_t *latency_ns, uint64_t cap,
                       nw_dp_sink_result_t *out);

#endif
