/* cffi view of include/engine.h (constants' values come from the compiler). */
#define NW_OK ...
#define NW_EINVAL ...
#define NW_ENOMEM ...
#define NW_EAGAIN ...
#define NW_ENOPEER ...
#define NW_ENOKEY ...
#define NW_ERANGE ...
#define NW_EACCES ...
#define NW_ETOOLONG ...
#define NW_ETIMEDOUT ...
#define NW_ELOST ...
#define NW_EREMOTE_ACCESS ...
#define NW_ECLOSED ...
#define NW_EBUSY ...
#define NW_ETOOBIG ...
#define NW_ESYS ...
#define NW_EPERM ...
#define NW_ECANCELED ...
#define NW_EMTU ...

#define NW_MODE_RUD ...
#define NW_MODE_ROD ...
#define NW_MODE_UUD ...
#define NW_HALF_OPEN_PER_SOURCE ...

#define NW_ACCESS_LOCAL ...
#define NW_ACCESS_REMOTE_WRITE ...
#define NW_ACCESS_REMOTE_READ ...

#define NW_OP_WRITE ...
#define NW_OP_READ ...
#define NW_OP_SEND ...
#define NW_OP_RECV ...

typedef struct {
    uint32_t local_ip;
    uint16_t local_port;
    uint16_t dst_port;
    uint32_t mtu;
    uint16_t entropy_base;
    uint16_t entropy_count;
    uint32_t entropy_burst;
    uint32_t window_pkts;
    uint64_t rto_init_ns;
    uint64_t rto_max_ns;
    uint32_t max_retries;
    uint32_t reorder_pkts;
    uint32_t ack_every_pkts;
    uint64_t ack_delay_ns;
    uint32_t ooo_ack_every_pkts;
    uint64_t uud_timeout_ns;
    uint32_t max_peers;
    uint32_t max_mrs;
    uint32_t max_wrs;
    uint32_t max_recvs;
    uint64_t seed;
    uint64_t cc_target_ns;
    uint32_t cc_min_pkts;
    uint32_t cc_mode;
    uint32_t link_rate_mbps;
    uint64_t cc_base_rtt_ns;
    uint32_t cc_spec_bytes;
    uint32_t cc_pull_bytes;
    uint32_t rto_per_packet;
} nw_config_t;

#define NW_CC_MODE_NONE ...
#define NW_CC_MODE_NSCC ...
#define NW_CC_MODE_RCCC ...
#define NW_CC_MODE_NSCC_RCCC ...
#define NW_CC_MODE_DCQCN ...
#define NW_CC_MODE_COUNT ...
#define NW_ECN_NOT_ECT ...
#define NW_ECN_ECT1 ...
#define NW_ECN_ECT0 ...
#define NW_ECN_CE ...

typedef struct {
    uint32_t ip;
    uint16_t port;
    uint16_t src_port;
    uint8_t ecn;
    uint8_t reserved[3];
} nw_dest_t;

typedef struct {
    uint64_t wr_id;
    uint64_t bytes;
    int32_t status;
    uint32_t peer;
    uint8_t opcode;
    uint8_t mode;
    uint8_t reserved[6];
} nw_completion_t;

typedef struct {
    uint64_t pkts_in, pkts_out, bytes_in, bytes_out;
    uint64_t data_pkts_out;
    uint64_t retransmits;
    uint64_t fast_retransmits;
    uint64_t rto_fired;
    uint64_t acks_in, acks_out, nacks_in, nacks_out;
    uint64_t dup_pkts;
    uint64_t placed_bytes;
    uint64_t drop_truncated;
    uint64_t drop_oversized;
    uint64_t drop_bad_version;
    uint64_t drop_malformed;
    uint64_t drop_unknown_pdc;
    uint64_t drop_spoofed_pdc;
    uint64_t drop_out_of_window;
    uint64_t drop_no_peer_slot;
    uint64_t drop_rnr;
    uint64_t drop_unordered;
    uint64_t remote_access_errors;
    uint64_t pdc_opened, pdc_failed;
    uint64_t spurious_loss_marks;
    uint64_t cwnd_cuts;
    uint64_t rsp_probes;
    uint64_t spurious_rtos;
    uint64_t rod_held;
    uint64_t rod_nacks_deferred;
    uint64_t drop_syn_half_open;
    uint64_t pdc_reclaimed;
    uint64_t pdc_closed;
    uint64_t ec_blocks_sent;
    uint64_t ec_parity_pkts_out;
    uint64_t ec_parity_bytes_out;
    uint64_t ec_retransmits;
    uint64_t ec_parity_pkts_in;
    uint64_t ec_parity_late;
    uint64_t ec_pkts_recovered;
    uint64_t ec_blocks_recovered;
    uint64_t ec_blocks_repaired;
    uint64_t ce_pkts_in;
    uint64_t ecn_echoes_in;
    uint64_t trimmed_pkts_in;
    uint64_t trim_nacks_in;
    uint64_t credit_pkts_out;
    uint64_t credit_bytes_granted;
    uint64_t credit_reqs_out;
    uint64_t credit_bytes_in;
    uint64_t spec_bytes_out;
    uint64_t quick_adapts;
    uint64_t rate_cuts;
} nw_stats_t;

typedef struct nw_engine nw_engine_t;

void nw_config_default(nw_config_t *cfg);

const char *nw_config_check(const nw_config_t *cfg);

nw_engine_t *nw_engine_new(const nw_config_t *cfg);
void nw_engine_free(nw_engine_t *e);

uint32_t nw_max_payload(const nw_engine_t *e);

int32_t nw_mr_register(nw_engine_t *e, void *base, uint64_t len, uint32_t access,
                       uint32_t *rkey_out);

int32_t nw_mr_deregister(nw_engine_t *e, uint32_t rkey);

int32_t nw_peer_add(nw_engine_t *e, uint32_t ip, uint16_t port, uint8_t mode,
                    uint32_t *peer_out);

int32_t nw_peer_close(nw_engine_t *e, uint32_t peer);
int32_t nw_peer_info(const nw_engine_t *e, uint32_t peer, uint32_t *ip, uint16_t *port,
                     uint8_t *mode);

int32_t nw_peer_set_coding(nw_engine_t *e, uint32_t peer, uint32_t k, uint32_t m);

typedef struct {
    uint64_t srtt_ns, rttvar_ns, min_rtt_ns;
    uint64_t tx_bytes;
    uint64_t rx_bytes;
    uint64_t data_pkts;
    uint64_t retransmits;
    uint32_t k, m;
    uint64_t rto_ns;
    uint64_t rack_wait_ns;
    uint32_t cc_mode;
    uint64_t cwnd_bytes;
    uint64_t rate_mbps;
    uint64_t credit_bytes;
} nw_path_stats_t;
int32_t nw_peer_path(const nw_engine_t *e, uint32_t peer, nw_path_stats_t *out);

int32_t nw_post_write(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *local,
                      uint64_t len, uint32_t rkey, uint64_t roffset);
int32_t nw_post_read(nw_engine_t *e, uint32_t peer, uint64_t wr_id, void *local, uint64_t len,
                     uint32_t rkey, uint64_t roffset);
int32_t nw_post_send(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *buf,
                     uint64_t len);

int32_t nw_post_recv(nw_engine_t *e, uint64_t wr_id, void *buf, uint64_t cap);

int32_t nw_input(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                 uint16_t src_port, uint64_t now_ns);
int32_t nw_input_ecn(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                     uint16_t src_port, uint8_t ecn, uint64_t now_ns);

int32_t nw_output(nw_engine_t *e, uint8_t *buf, uint32_t cap, nw_dest_t *dst, uint64_t now_ns);

uint64_t nw_next_deadline(const nw_engine_t *e);
void nw_on_time(nw_engine_t *e, uint64_t now_ns);

int32_t nw_has_output(const nw_engine_t *e);

int32_t nw_poll_cq(nw_engine_t *e, nw_completion_t *out, uint32_t max);
void nw_stats_get(const nw_engine_t *e, nw_stats_t *out);

#define NW_TR_SENT ...
#define NW_TR_ACKED ...
#define NW_TR_LOST ...
#define NW_TR_TRIMMED_RX ...
#define NW_TR_TRIM_NACK ...
#define NW_TR_CREDIT_GRANT ...
#define NW_TR_CREDIT_IN ...
#define NW_TR_CREDIT_REQ ...
#define NW_TR_CWND ...
#define NW_TR_RATE ...
#define NW_TR_ECN_ECHO ...
#define NW_TRF_RETX ...
#define NW_TRF_FAST ...
#define NW_TRF_RTO ...
typedef struct {
    uint64_t t_ns;
    uint64_t value;
    uint32_t psn;
    uint16_t pdc;
    uint8_t type;
    uint8_t flags;
} nw_trace_event_t;
int32_t nw_trace_start(nw_engine_t *e, uint32_t capacity);
int32_t nw_trace_drain(nw_engine_t *e, nw_trace_event_t *out, uint32_t max);
uint64_t nw_trace_lost(const nw_engine_t *e);
const char *nw_strerror(int32_t err);
