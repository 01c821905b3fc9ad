/* netweft I/O driver: runs one engine over UDP sockets on its own pthread.
 *
 * The thread receives with recvmmsg (UDP GRO when enabled and offered), feeds
 * nw_input, drains nw_output into batches sent with sendmmsg (UDP GSO when the
 * packets allow it) and runs timers from CLOCK_MONOTONIC. It never touches
 * Python, so callers through cffi run without the GIL.
 *
 * While the driver runs it owns the engine: other threads must use the nw_io_*
 * wrappers below (they take the driver's lock and wake the thread), or bracket
 * direct engine calls with nw_io_lock()/nw_io_unlock() and then nw_io_kick().
 *
 * Completion notification: nw_io_event_fd() is an eventfd that becomes
 * readable when completions are waiting (select/poll/epoll on it, then call
 * nw_io_poll_cq, which also clears it), or block in nw_io_wait_cq.
 *
 * Sockets. rx_fd is a UDP socket the caller created and bound to the engine's
 * listen address (the caller keeps ownership and closes it after nw_io_stop).
 * Transmission:
 *   NW_IO_TX_SOCKET  send from rx_fd: the UDP source port is rx_fd's port, so
 *                    the entropy value is not visible on the wire;
 *   NW_IO_TX_PORTS   one UDP socket per entropy value, bound to local_ip and
 *                    entropy_base+i (the driver opens and closes them;
 *                    if rx_fd itself is bound to one of those ports, e.g.
 *                    an ephemeral port, that value is sent from rx_fd);
 *                    Consecutive packets on one socket share a sendmmsg
 *                    (and GSO): the engine's default entropy_burst of 2 sends
 *                    each pair as one GSO message; larger bursts cost fewer
 *                    system calls still; with entropy_burst 1 every packet
 *                    costs a system call.
 *   NW_IO_TX_RAW     one IPPROTO_RAW socket; the driver writes IPv4+UDP headers
 *                    so every packet carries its own entropy source port
 *                    (needs CAP_NET_RAW; no GSO; the UDP checksum is filled
 *                    in when a source address is known, else left 0).
 *   NW_IO_TX_PACKET  AF_PACKET rings both ways (packet_ring.h) on the interface
 *                    that holds local_ip (or cfg.ifindex): whole frames with
 *                    per-packet source ports go out with one send() per batch
 *                    and no qdisc, and arriving frames are read from a shared
 *                    ring without a system call, kept from the kernel's IP/UDP
 *                    stack by a tcx program (tcx_divert.h). Needs root
 *                    (CAP_NET_RAW, CAP_BPF, CAP_NET_ADMIN) and Linux 6.6+.
 *                    Packets to a peer not heard from yet (its MAC unknown),
 *                    and datagrams that arrive on other interfaces, use rx_fd.
 *                    On lo, frames to the kernel's own sockets (not another
 *                    endpoint on rings) need net.ipv4.conf.lo.route_localnet=1:
 *                    the stack routes them as if they came from a wire.
 */
#ifndef NETWEFT_IO_DRIVER_H
#define NETWEFT_IO_DRIVER_H

#include <stdint.h>

#include "engine.h"

#define NW_IO_TX_SOCKET 0
#define NW_IO_TX_PORTS 1
#define NW_IO_TX_RAW 2
#define NW_IO_TX_PACKET 3

#define NW_IO_GSO 0x1 /* coalesce same-destination, same-size packets with UDP_SEGMENT */
#define NW_IO_GRO 0x2 /* enable UDP_GRO on rx_fd and split coalesced receives */
/* Latency: posts transmit from the caller's thread, and nw_io_wait_cq receives
 * and runs the engine in the waiting thread, so that one message in flight
 * costs no hand-off to or from the driver's thread (which keeps the timers
 * and serves whoever does not wait). */
#define NW_IO_INLINE 0x4
/* Latency: the driver's thread, and nw_io_wait_cq, spin for busy_poll_us
 * after the last activity before they sleep (costs a core while traffic flows). */
#define NW_IO_BUSY_POLL 0x8
#define NW_IO_FLAGS_ALL (NW_IO_GSO | NW_IO_GRO | NW_IO_INLINE | NW_IO_BUSY_POLL)

typedef struct {
    int32_t rx_fd;      /* bound UDP socket (caller-owned) */
    uint32_t tx_mode;   /* NW_IO_TX_* */
    uint32_t flags;     /* NW_IO_GSO | NW_IO_GRO */
    uint32_t batch;     /* packets per recvmmsg/sendmmsg, 1..1024 (default 64) */
    uint32_t local_ip;  /* source address for NW_IO_TX_PORTS/RAW (host order; 0 = kernel picks) */
    uint32_t sndbuf;    /* SO_SNDBUF/SO_RCVBUF bytes (FORCE when root), 0 = leave (default 16 MiB) */
    uint32_t rx_drop_ppm; /* loss injection: drop each received datagram (after GRO splitting)
                             with this probability in parts per million (default 0) */
    uint64_t rx_drop_seed; /* seed of the loss injection: its draws are the one wire
                              model's Bernoulli loss stream for this seed (wire_model.h) */
    uint32_t busy_poll_us; /* NW_IO_BUSY_POLL: spin this long, 1..1000000 (0 = 50) */
    uint32_t ifindex;   /* NW_IO_TX_PACKET: interface (0 = the one holding local_ip) */
} nw_io_config_t;

/* Driver counters, on top of the engine's nw_stats_t. */
typedef struct {
    uint64_t loops, recv_calls, send_calls, recv_pkts, send_pkts;
    uint64_t gso_sends, gro_segments, send_errors, recv_errors, wakeups;
    uint64_t injected_drops; /* datagrams dropped by rx_drop_ppm */
    uint64_t inline_steps;   /* passes run by application threads (NW_IO_INLINE) */
    uint64_t busy_polls;     /* passes the thread spun instead of sleeping */
    uint64_t kicks_elided;   /* kicks that found the thread awake (no eventfd write) */
    /* NW_IO_TX_PACKET (packet_ring.h's counters) */
    uint64_t ring_rx_frames, ring_rx_malformed, ring_rx_bad_csum, ring_rx_truncated;
    uint64_t ring_rx_drops;  /* frames the kernel dropped: receive ring full */
    uint64_t ring_tx_frames, ring_tx_full;
    uint64_t ring_tx_fallback; /* packets sent through rx_fd: the peer's MAC not known yet */
} nw_io_stats_t;

typedef struct nw_io nw_io_t;

void nw_io_config_default(nw_io_config_t *cfg);
/* Starts the thread. On failure returns NULL and stores a NW_E* code in *err
 * (NW_EPERM for raw sockets without privilege, NW_ESYS with errno otherwise). */
nw_io_t *nw_io_start(nw_engine_t *e, const nw_io_config_t *cfg, int32_t *err);
/* Stops and joins the thread; frees the driver (not the engine, not rx_fd).
 * No other thread may be inside an nw_io_* call (e.g. nw_io_wait_cq) then.
 * Afterwards the engine may be used directly again (e.g. to poll the CQ);
 * buffers posted to it must stay valid until it is freed. */
int32_t nw_io_stop(nw_io_t *io);
int32_t nw_io_event_fd(const nw_io_t *io);
/* errno of the last failed system call in the driver thread (0 if none). */
int32_t nw_io_last_errno(const nw_io_t *io);

/* Locked access for arbitrary engine calls; kick wakes the thread to send. */
void nw_io_lock(nw_io_t *io);
void nw_io_unlock(nw_io_t *io);
void nw_io_kick(nw_io_t *io);

/* Thread-safe wrappers of the engine calls (same semantics and return codes). */
int32_t nw_io_mr_register(nw_io_t *io, void *base, uint64_t len, uint32_t access,
                          uint32_t *rkey_out);
int32_t nw_io_mr_deregister(nw_io_t *io, uint32_t rkey);
int32_t nw_io_peer_add(nw_io_t *io, uint32_t ip, uint16_t port, uint8_t mode,
                       uint32_t *peer_out);
int32_t nw_io_peer_close(nw_io_t *io, uint32_t peer);
int32_t nw_io_post_write(nw_io_t *io, uint32_t peer, uint64_t wr_id, const void *local,
                         uint64_t len, uint32_t rkey, uint64_t roffset);
/* n RMA writes of len bytes each, from local + local_offsets[i] to roffsets[i] of
 * rkey, under one lock and one wake-up; returns how many were posted (stops at
 * the first refusal), or that refusal's NW_E* code if none was. */
int32_t nw_io_post_writes(nw_io_t *io, uint32_t peer, uint32_t n, const uint64_t *wr_ids,
                          const uint8_t *local, const uint64_t *local_offsets, uint64_t len,
                          uint32_t rkey, const uint64_t *roffsets);
int32_t nw_io_post_read(nw_io_t *io, uint32_t peer, uint64_t wr_id, void *local, uint64_t len,
                        uint32_t rkey, uint64_t roffset);
int32_t nw_io_post_send(nw_io_t *io, uint32_t peer, uint64_t wr_id, const void *buf,
                        uint64_t len);
int32_t nw_io_post_recv(nw_io_t *io, uint64_t wr_id, void *buf, uint64_t cap);
int32_t nw_io_poll_cq(nw_io_t *io, nw_completion_t *out, uint32_t max);
/* Blocks until at least one completion or timeout_ns passes (<0 = forever);
 * returns the number copied (0 on timeout). Call without the GIL (cffi does). */
int32_t nw_io_wait_cq(nw_io_t *io, nw_completion_t *out, uint32_t max, int64_t timeout_ns);
void nw_io_stats_get(nw_io_t *io, nw_stats_t *engine_out, nw_io_stats_t *io_out);

#endif
