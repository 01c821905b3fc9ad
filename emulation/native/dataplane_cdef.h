/* The declarations Python sees (cffi cdef: no preprocessor lines). */

/* traffic manager (dataplane_tm.h) */
typedef struct nw_tm nw_tm_t;
typedef struct nw_tm_queue_config {
    uint32_t depth_packets;
    uint32_t has_depth_bytes;
    uint64_t depth_bytes;
    double rate_pps;
    double rate_bps;
} nw_tm_queue_config_t;
typedef struct nw_tm_queue_meta {
    uint64_t enq_timestamp;
    uint32_t enq_qdepth;
    uint64_t deq_timedelta;
    uint32_t deq_qdepth;
    uint32_t qid;
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
    uint64_t queued;
} nw_tm_stats_t;
nw_tm_t *nw_tm_new(uint32_t priority_queues, const nw_tm_queue_config_t *default_queue);
void nw_tm_free(nw_tm_t *tm);
uint32_t nw_tm_priority_queues(const nw_tm_t *tm);
int32_t nw_tm_configure(nw_tm_t *tm, int32_t port, int32_t priority, uint32_t mask,
                        const nw_tm_queue_config_t *values);
int32_t nw_tm_queue_config(const nw_tm_t *tm, uint32_t port, uint32_t priority,
                           nw_tm_queue_config_t *out);
int32_t nw_tm_set_port_rate(nw_tm_t *tm, uint32_t port, double rate_bps);
int32_t nw_tm_enqueue(nw_tm_t *tm, uint64_t now_ns, uint32_t port, uint32_t priority,
                      uint32_t length, uint64_t handle);
int32_t nw_tm_pass_through(nw_tm_t *tm, uint64_t now_ns, uint32_t port, uint32_t priority,
                           uint32_t length, nw_tm_queue_meta_t *meta);
int32_t nw_tm_next_departure(nw_tm_t *tm, uint64_t *when_ns);
int32_t nw_tm_dequeue(nw_tm_t *tm, uint64_t now_ns, nw_tm_departure_t *out);
uint64_t nw_tm_transmitted(nw_tm_t *tm, uint32_t port, uint64_t now_ns, uint32_t length);
uint32_t nw_tm_depth(const nw_tm_t *tm, uint32_t port, int32_t priority);
void nw_tm_stats(const nw_tm_t *tm, nw_tm_stats_t *out);

/* replication (dataplane_replication.h) */
typedef struct nw_dp_replication nw_dp_replication_t;
typedef struct nw_dp_copy {
    uint32_t port;
    uint32_t rid;
} nw_dp_copy_t;
nw_dp_replication_t *nw_dp_replication_new(void);
void nw_dp_replication_free(nw_dp_replication_t *r);
int32_t nw_dp_group_set(nw_dp_replication_t *r, uint32_t id, const nw_dp_copy_t *copies,
                        uint32_t n);
int32_t nw_dp_session_set(nw_dp_replication_t *r, uint32_t id, uint32_t port,
                          uint32_t mc_group, uint32_t truncate);

/* pipelines (dataplane_pipeline.h): opaque to Python, passed by pointer */
typedef struct nw_dp_pipeline nw_dp_pipeline_t;
typedef struct nw_dp_forwarder nw_dp_forwarder_t;
nw_dp_forwarder_t *nw_dp_forwarder_new(void);
void nw_dp_forwarder_free(nw_dp_forwarder_t *f);
int32_t nw_dp_forwarder_map(nw_dp_forwarder_t *f, uint32_t in_port, uint32_t out_port);
const nw_dp_pipeline_t *nw_dp_forwarder_pipeline(nw_dp_forwarder_t *f);
typedef struct nw_dp_standin nw_dp_standin_t;
nw_dp_standin_t *nw_dp_standin_new(void);
void nw_dp_standin_free(nw_dp_standin_t *s);
int32_t nw_dp_standin_add_route(nw_dp_standin_t *s, uint32_t prefix, uint32_t plen,
                                const uint8_t *dmac, uint32_t port);
void nw_dp_standin_set_priority(nw_dp_standin_t *s, uint32_t priority);
const nw_dp_pipeline_t *nw_dp_standin_pipeline(nw_dp_standin_t *s);

/* a generated P4 pipeline (dataplane_p4.h) */
typedef struct nw_dp_p4 nw_dp_p4_t;
nw_dp_p4_t *nw_dp_p4_from_addresses(void *pipeline, uintptr_t ingress, uintptr_t egress,
                                    size_t state_size);
void nw_dp_p4_set_clone_i2e(nw_dp_p4_t *p, uintptr_t clone_i2e);
void nw_dp_p4_free(nw_dp_p4_t *p);
const nw_dp_pipeline_t *nw_dp_p4_pipeline(nw_dp_p4_t *p);
#define NW_DP_P4_ERROR_CODES 8
uint64_t nw_dp_p4_errors(const nw_dp_p4_t *p, uint32_t code);

/* the loop (dataplane_loop.h) */
typedef struct nw_dp_loop nw_dp_loop_t;
typedef struct nw_dp_loop_config {
    uint32_t rx_frames;
    uint32_t tx_frames;
    uint32_t batch;
    uint32_t pool_packets;
    uint32_t idle_wakeup_us;
    uint32_t tapped;
} nw_dp_loop_config_t;
typedef struct nw_dp_counters {
    uint64_t rx, rx_bytes, tx, tx_bytes;
    uint64_t drop_malformed;
    uint64_t drop_program;
    uint64_t drop_rx_truncated;
    uint64_t drop_no_port;
    uint64_t drop_no_buffer;
    uint64_t drop_queue_full, drop_priority;
    uint64_t drop_tx_ring_full, drop_tx_too_long;
    uint64_t drop_wire_lost;
    uint64_t drop_clone_no_session;
    uint64_t copies_multicast, copies_clone;
    uint64_t rx_kernel_drops;
    uint64_t tx_errors;
    uint64_t passes, sleeps;
    uint64_t drop_pass_limit;
    uint64_t drop_wire_in;
    uint64_t resubmitted, recirculated;
    uint64_t drop_tx_runt;
} nw_dp_counters_t;
typedef struct nw_dp_port_counters {
    uint64_t rx, tx, rx_kernel_drops, tx_ring_full;
} nw_dp_port_counters_t;
nw_dp_loop_t *nw_dp_loop_new(const nw_dp_pipeline_t *pipeline, nw_tm_t *tm,
                             const nw_dp_replication_t *replication,
                             const nw_dp_loop_config_t *config, int32_t *err);
void nw_dp_loop_free(nw_dp_loop_t *loop);
int32_t nw_dp_loop_add_port(nw_dp_loop_t *loop, uint32_t number, const char *ifname);
int32_t nw_dp_loop_run(nw_dp_loop_t *loop);
void nw_dp_loop_stop(nw_dp_loop_t *loop);
void nw_dp_loop_counters(const nw_dp_loop_t *loop, nw_dp_counters_t *out);
int32_t nw_dp_loop_port_counters(const nw_dp_loop_t *loop, uint32_t index,
                                 nw_dp_port_counters_t *out);
uint64_t nw_dp_loop_now(const nw_dp_loop_t *loop);
typedef struct nw_dp_wire {
    void *self;
    int32_t (*propagate)(void *self, uint32_t port, uint64_t now_ns, uint8_t *frame,
                         uint32_t len, uint64_t *arrival_ns);
} nw_dp_wire_t;
void nw_dp_loop_set_wire(nw_dp_loop_t *loop, const nw_dp_wire_t *wire);
void nw_dp_loop_set_ingress_wire(nw_dp_loop_t *loop, const nw_dp_wire_t *wire);
typedef struct nw_dp_guard {
    void *self;
    void (*lock)(void *self);
    void (*unlock)(void *self);
} nw_dp_guard_t;
void nw_dp_loop_set_guard(nw_dp_loop_t *loop, const nw_dp_guard_t *guard);
void nw_dp_loop_wake(nw_dp_loop_t *loop);

/* the links (dataplane_wire.h over nic_offload's wire_model.h) */
typedef struct nw_link_config {
    uint64_t rate_bps;
    uint32_t limit;
    uint32_t gemodel;
    uint64_t delay_ns;
    uint64_t jitter_ns;
    double loss;
    double ge_p;
    double ge_r;
    double ge_loss_good;
    double ge_loss_bad;
    double corrupt;
} nw_link_config_t;
typedef struct nw_link_stats {
    uint64_t delivered;
    uint64_t dropped_limit;
    uint64_t lost;
    uint64_t burst_lost;
    uint64_t corrupted;
} nw_link_stats_t;
typedef struct nw_dp_wires nw_dp_wires_t;
nw_dp_wires_t *nw_dp_wires_new(void);
void nw_dp_wires_free(nw_dp_wires_t *w);
int32_t nw_dp_wires_set(nw_dp_wires_t *w, uint32_t port, uint32_t direction,
                        const nw_link_config_t *cfg, uint64_t seed);
void nw_dp_wires_egress_hook(nw_dp_wires_t *w, nw_dp_wire_t *out);
void nw_dp_wires_ingress_hook(nw_dp_wires_t *w, nw_dp_wire_t *out);
void nw_dp_wires_stats(const nw_dp_wires_t *w, uint32_t direction, nw_link_stats_t *out);

/* the CPU port's channel (dataplane_host.h) */
typedef struct nw_dp_host nw_dp_host_t;
typedef struct nw_dp_host_stats {
    uint64_t punted, punt_drops;
    uint64_t injected, inject_drops;
} nw_dp_host_stats_t;
nw_dp_host_t *nw_dp_host_new(uint32_t cpu_port, uint32_t slots, uint32_t frame_max);
void nw_dp_host_free(nw_dp_host_t *h);
int32_t nw_dp_host_fd(const nw_dp_host_t *h);
int32_t nw_dp_host_take(nw_dp_host_t *h, uint8_t *buf, uint32_t cap);
int32_t nw_dp_host_inject(nw_dp_host_t *h, const uint8_t *frame, uint32_t len);
void nw_dp_host_stats(const nw_dp_host_t *h, nw_dp_host_stats_t *out);
void nw_dp_loop_set_host(nw_dp_loop_t *loop, nw_dp_host_t *host);

/* per-port captures (dataplane_pcap.h) */
typedef struct nw_dp_pcap nw_dp_pcap_t;
nw_dp_pcap_t *nw_dp_pcap_new(void);
int32_t nw_dp_pcap_open(nw_dp_pcap_t *p, uint32_t port, const char *in_path,
                        const char *out_path);
uint64_t nw_dp_pcap_errors(const nw_dp_pcap_t *p);
void nw_dp_pcap_free(nw_dp_pcap_t *p);
void nw_dp_loop_set_pcap(nw_dp_loop_t *loop, nw_dp_pcap_t *pcap);

/* the bench's generator and sink (dataplane_traffic.h) */
typedef struct nw_dp_gen_config {
    uint64_t count;
    double rate_pps;
    uint32_t stamp_offset;
    uint32_t run_id;
    uint32_t batch;
    uint32_t templates;
    uint32_t seq32_offset;
} nw_dp_gen_config_t;
typedef struct nw_dp_gen_result {
    uint64_t sent;
    uint64_t ring_full;
    uint64_t start_ns, end_ns;
} nw_dp_gen_result_t;
typedef struct nw_dp_sink nw_dp_sink_t;
typedef struct nw_dp_sink_result {
    uint64_t frames;
    uint64_t matched;
    uint64_t reordered;
    uint64_t first_ns, last_ns;
    uint64_t max_seq;
    uint64_t latencies;
    uint64_t kernel_drops;
} nw_dp_sink_result_t;
int32_t nw_dp_gen_run(const char *ifname, const uint8_t *frame, uint32_t len,
                      const nw_dp_gen_config_t *config, const int32_t *stop,
                      nw_dp_gen_result_t *out);
nw_dp_sink_t *nw_dp_sink_open(const char *ifname, uint32_t rx_frames, int32_t *err);
void nw_dp_sink_close(nw_dp_sink_t *s);
int32_t nw_dp_sink_run(nw_dp_sink_t *s, uint32_t stamp_offset, uint32_t run_id,
                       const int32_t *stop, int64_t *latency_ns, uint64_t cap,
                       nw_dp_sink_result_t *out);
