/* cffi view of include/io_driver.h (constants' values come from the compiler). */
#define NW_IO_TX_SOCKET ...
#define NW_IO_TX_PORTS ...
#define NW_IO_TX_RAW ...
#define NW_IO_TX_PACKET ...

#define NW_IO_GSO ...
#define NW_IO_GRO ...
#define NW_IO_INLINE ...
#define NW_IO_BUSY_POLL ...

typedef struct {
    int32_t rx_fd;
    uint32_t tx_mode;
    uint32_t flags;
    uint32_t batch;
    uint32_t local_ip;
    uint32_t sndbuf;
    uint32_t rx_drop_ppm;
    uint64_t rx_drop_seed;
    uint32_t busy_poll_us;
    uint32_t ifindex;
} nw_io_config_t;

typedef struct {
    uint64_t loops, recv_calls, send_calls, recv_pkts, send_pkts;
    uint64_t gso_sends, gro_segments, send_errors, recv_errors, wakeups;
    uint64_t injected_drops;
    uint64_t inline_steps, busy_polls, kicks_elided;
    uint64_t ring_rx_frames, ring_rx_malformed, ring_rx_bad_csum, ring_rx_truncated;
    uint64_t ring_rx_drops;
    uint64_t ring_tx_frames, ring_tx_full;
    uint64_t ring_tx_fallback;
} nw_io_stats_t;

typedef struct nw_io nw_io_t;

void nw_io_config_default(nw_io_config_t *cfg);

nw_io_t *nw_io_start(nw_engine_t *e, const nw_io_config_t *cfg, int32_t *err);

int32_t nw_io_stop(nw_io_t *io);
int32_t nw_io_event_fd(const nw_io_t *io);

int32_t nw_io_last_errno(const nw_io_t *io);

void nw_io_lock(nw_io_t *io);
void nw_io_unlock(nw_io_t *io);
void nw_io_kick(nw_io_t *io);

int32_t nw_io_mr_register(nw_io_t *io, void *base, uint64_t len, uint32_t access,
                          uint32_t *rkey_out);
int32_t nw_io_mr_deregister(nw_io_t *io, uint32_t rkey);
int32_t nw_io_peer_add(nw_io_t *io, uint32_t ip, uint16_t port, uint8_t mode,
                       uint32_t *peer_out);
int32_t nw_io_peer_close(nw_io_t *io, uint32_t peer);
int32_t nw_io_post_write(nw_io_t *io, uint32_t peer, uint64_t wr_id, const void *local,
                         uint64_t len, uint32_t rkey, uint64_t roffset);
int32_t nw_io_post_writes(nw_io_t *io, uint32_t peer, uint32_t n, const uint64_t *wr_ids,
                          const uint8_t *local, const uint64_t *local_offsets, uint64_t len,
                          uint32_t rkey, const uint64_t *roffsets);
int32_t nw_io_post_read(nw_io_t *io, uint32_t peer, uint64_t wr_id, void *local, uint64_t len,
                        uint32_t rkey, uint64_t roffset);
int32_t nw_io_post_send(nw_io_t *io, uint32_t peer, uint64_t wr_id, const void *buf,
                        uint64_t len);
int32_t nw_io_post_recv(nw_io_t *io, uint64_t wr_id, void *buf, uint64_t cap);
int32_t nw_io_poll_cq(nw_io_t *io, nw_completion_t *out, uint32_t max);

int32_t nw_io_wait_cq(nw_io_t *io, nw_completion_t *out, uint32_t max, int64_t timeout_ns);
void nw_io_stats_get(nw_io_t *io, nw_stats_t *engine_out, nw_io_stats_t *io_out);
