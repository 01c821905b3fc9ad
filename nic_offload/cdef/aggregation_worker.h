/* cffi view of include/aggregation_quantization.h, include/aggregation_worker.h and
 * include/aggregation_socket.h (constants' values come from the compiler). */
#define NW_AGG_VERSION ...
#define NW_AGG_HEADER_LEN ...
#define NW_AGG_FLAG_RESULT ...
#define NW_AGG_FLAG_RETRANSMIT ...
#define NW_AGG_EXPONENT_MIN ...
#define NW_AGG_EXPONENT_MAX ...
#define NW_AGG_MAX_LANES ...
#define NW_AGG_MAX_WINDOW ...
#define NW_AGG_RUNNING ...
#define NW_AGG_DONE ...
#define NW_AGG_STALLED ...
#define NW_AGG_IO_BATCH ...

int32_t nw_agg_local_exponents(const float *data, uint32_t chunks, uint32_t lanes,
                               int16_t *out);
int32_t nw_agg_quantize_block(const float *x, uint32_t lanes, int32_t exponent, uint32_t bits,
                              uint8_t *out);
void nw_agg_dequantize(const int32_t *sums, const int16_t *exponents, uint32_t chunks,
                       uint32_t lanes, uint32_t bits, uint64_t length, float *out);

typedef struct {
    uint64_t first_block;
    int64_t timeout_ns;
    int64_t max_timeout_ns;
    int64_t stall_timeout_ns;
    uint32_t job_id;
    uint32_t worker_id;
    uint32_t workers;
    uint32_t lanes;
    uint32_t window;
    uint32_t value_bits;
} nw_agg_job_t;

typedef struct {
    uint64_t sent;
    uint64_t retransmits;
    uint64_t results;
    uint64_t ignored;
    uint64_t malformed;
} nw_agg_stats_t;

typedef struct nw_agg_worker nw_agg_worker_t;

int32_t nw_agg_worker_new(const nw_agg_job_t *job, const float *data, const int16_t *local_exp,
                          int32_t *sums, int16_t *exponents, uint32_t chunks,
                          nw_agg_worker_t **out);
void nw_agg_worker_free(nw_agg_worker_t *w);
int32_t nw_agg_start(nw_agg_worker_t *w, int64_t now_ns);
int32_t nw_agg_on_payload(nw_agg_worker_t *w, const uint8_t *payload, uint32_t len,
                          int64_t now_ns);
int32_t nw_agg_on_time(nw_agg_worker_t *w, int64_t now_ns);
int64_t nw_agg_next_deadline(const nw_agg_worker_t *w);
int32_t nw_agg_state(const nw_agg_worker_t *w);
int32_t nw_agg_started(const nw_agg_worker_t *w);
uint32_t nw_agg_packet_len(const nw_agg_worker_t *w);
uint32_t nw_agg_tx_count(const nw_agg_worker_t *w);
const uint8_t *nw_agg_tx_packet(const nw_agg_worker_t *w, uint32_t i);
void nw_agg_tx_clear(nw_agg_worker_t *w);
void nw_agg_stats_get(const nw_agg_worker_t *w, nw_agg_stats_t *out);
int64_t nw_agg_rto_ns(const nw_agg_worker_t *w);

typedef struct {
    uint64_t send_calls, recv_calls, waits;
    uint64_t sent, received;
    uint64_t send_retries;
} nw_agg_io_stats_t;

#define NW_AGG_INTERRUPTED ...
int64_t nw_agg_monotonic_ns(void);
int32_t nw_agg_run_socket(nw_agg_worker_t *w, int32_t fd, uint32_t dst_ip, uint16_t dst_port,
                          int64_t t0_ns, int64_t deadline_ns, nw_agg_io_stats_t *stats);
