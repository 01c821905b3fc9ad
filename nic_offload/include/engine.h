/* netweft transport engine: the sans-IO API of the C "NIC".
 *
 * The engine is a pure state machine. It never reads a clock, never touches a
 * socket and never allocates per packet (only per new PDC). Drivers feed it packets and the
 * current time, and drain packets, deadlines and completions:
 *
 *     nw_input(e, pkt, len, src_ip, src_port, now)   a UDP payload arrived
 *     nw_output(e, buf, cap, &dst, now) -> n         next UDP payload to send (0 = none now)
 *     nw_next_deadline(e)                            when nw_on_time() must run next
 *     nw_on_time(e, now)                             timers (RTO, delayed ACK, UUD reassembly)
 *     nw_poll_cq(e, out, max)                        completed work requests
 *
 * Time is any monotonic nanosecond count chosen by the driver (virtual time in
 * the simulator, CLOCK_MONOTONIC in the I/O driver).
 *
 * Addressing. A peer is a remote engine at (IPv4 address, UDP port it listens
 * on) plus a delivery mode; each peer has one packet delivery context (PDC)
 * with its own PSN space in each direction. Addresses are host byte order.
 * Packets go to the peer's listen port; their UDP *source* port is the
 * per-packet entropy value chosen from entropy_base .. entropy_base +
 * entropy_count - 1, so a receiver never learns a reply port from the source
 * port. A SYN from a remote initiator joins a local PDC of the same IP and
 * mode that was added with nw_peer_add and has not met its remote side yet
 * (both sides opening at once end up with one PDC pair), else opens a new
 * passive PDC answered at (src_ip, cfg.dst_port). So engines sharing an IP
 * should either all listen on dst_port or add each other explicitly; tests on
 * one host use distinct loopback addresses (127.0.0.x). Opening a PDC
 * allocates its tables once (window-sized); packets never allocate.
 *
 * Ownership and lifetime of buffers (zero copy: the engine keeps pointers):
 *  - nw_mr_register(base, len): memory stays owned by the caller and must stay
 *    valid until nw_mr_deregister() returns (or the engine is freed). Remote
 *    writes and read responses land there directly.
 *  - nw_post_write/nw_post_send(local): read again on every (re)transmission;
 *    must stay valid and unchanged until the work request's completion has
 *    been polled.
 *  - nw_post_read(local), nw_post_recv(buf): written by the engine until the
 *    completion has been polled.
 *  - Buffers passed to nw_input/nw_output are only used during the call.
 *
 * Thread safety: an engine is NOT thread-safe; one thread at a time. The I/O
 * driver (io_driver.h) owns the engine while it runs and offers locked
 * wrappers for use from other threads.
 *
 * Python (cffi) sees the same declarations through cdef/engine.h and
 * cdef/io_driver.h.
 *
 * Integrity: the engine relies on the UDP checksum (the kernel drops corrupted
 * datagrams); a simulator that corrupts packets must model that check.
 *
 * Errors: functions returning int32_t return >= 0 on success and a negative
 * NW_E* code on failure; nw_strerror() gives a stable human message.
 * Completions carry NW_OK or a negative NW_E* code in `status`.
 */
#ifndef NETWEFT_ENGINE_H
#define NETWEFT_ENGINE_H

#include <stdint.h>

/* ---- error codes (negative int32_t) ---- */
#define NW_OK 0
#define NW_EINVAL -1          /* invalid argument or configuration */
#define NW_ENOMEM -2          /* allocation failed at setup time */
#define NW_EAGAIN -3          /* a queue/table is full; retry after polling completions */
#define NW_ENOPEER -4         /* unknown peer handle */
#define NW_ENOKEY -5          /* unknown memory key (rkey) */
#define NW_ERANGE -6          /* offset/length outside a memory region or buffer */
#define NW_EACCES -7          /* memory region lacks the requested access right */
#define NW_ETOOLONG -8        /* message longer than the posted receive buffer */
#define NW_ETIMEDOUT -9       /* retransmission limit reached; the PDC is failed */
#define NW_ELOST -10          /* UUD: part of the message never arrived */
#define NW_EREMOTE_ACCESS -11 /* the target refused an RMA (bad rkey, range or access) */
#define NW_ECLOSED -12        /* engine/peer/I-O driver closed */
#define NW_EBUSY -13          /* memory region still referenced by pending work */
#define NW_ETOOBIG -14        /* packet does not fit in the caller's buffer */
#define NW_ESYS -15           /* a system call failed (I/O driver; see errno) */
#define NW_EPERM -16          /* operation not permitted (e.g. raw socket without CAP_NET_RAW) */
#define NW_ECANCELED -17      /* work request flushed because the engine/peer closed */
#define NW_EMTU -18           /* the peer refused a packet larger than its MTU (the endpoints'
                                 mtu settings differ); the PDC is failed */

/* ---- delivery modes (Ultra Ethernet PDS) ---- */
#define NW_MODE_RUD 0 /* reliable, unordered delivery (default) */
#define NW_MODE_ROD 1 /* reliable, ordered delivery */
#define NW_MODE_UUD 2 /* unreliable, unordered delivery */

/* ---- memory access rights (bit mask for nw_mr_register) ---- */
#define NW_ACCESS_LOCAL 0x1        /* usable as a local buffer */
#define NW_ACCESS_REMOTE_WRITE 0x2 /* peers may RMA-write into it */
#define NW_ACCESS_REMOTE_READ 0x4  /* peers may RMA-read from it */

/* Most half-open PDCs (opened by a remote SYN, nothing delivered yet, our PDC
 * id not yet used by the remote) one source address may hold; further SYNs
 * from it are dropped (drop_syn_half_open). */
#define NW_HALF_OPEN_PER_SOURCE 4

/* ---- completion opcodes ---- */
#define NW_OP_WRITE 1 /* our RMA write finished (target placed all bytes) */
#define NW_OP_READ 2  /* our RMA read finished (all bytes placed in local buffer) */
#define NW_OP_SEND 3  /* our send finished (target placed all bytes) */
#define NW_OP_RECV 4  /* a posted receive buffer got a message */

/* Engine configuration; start from nw_config_default() and override. */
typedef struct {
    uint32_t local_ip;        /* our IPv4 address (informational; 0 = any) */
    uint16_t local_port;      /* UDP port we listen on (default 4793) */
    uint16_t dst_port;        /* default UDP port of peers (default 4793) */
    uint32_t mtu;             /* max UDP payload bytes per packet, headers included (default 1472;
                                 8972 for a 9000-byte IP MTU); larger datagrams are
                                 dropped as oversized, so peers must agree */
    uint16_t entropy_base;    /* first UDP source port used as entropy (default 49152) */
    uint16_t entropy_count;   /* number of entropy values, >= 1 (default 64) */
    uint32_t entropy_burst;   /* consecutive packets per entropy value (default 2: each pair
                                 leaves as one UDP GSO send, which halves the per-packet
                                 system calls of the per-port sockets and lets GRO merge
                                 the pair; 1 = a new value every packet, 0 counts as 1) */
    uint32_t window_pkts;     /* max unacknowledged packets per PDC, power of two, <= 65536 (default 512) */
    uint64_t rto_init_ns;     /* initial and minimum retransmission timeout (default 1 ms) */
    uint64_t rto_max_ns;      /* backoff cap (default 200 ms) */
    uint32_t max_retries;     /* consecutive RTOs without progress before failing the PDC (default 12) */
    uint32_t reorder_pkts;    /* fast retransmit: a packet is lost once a packet sent this many
                                 transmissions later is acknowledged (default 8) */
    uint32_t ack_every_pkts;  /* receiver ACKs at least every N in-order packets (default 4) */
    uint64_t ack_delay_ns;    /* ... or after this delay (default 20 us) */
    uint32_t ooo_ack_every_pkts; /* while a hole is open: ACK every N packets, 1..32
                                    (each ACK's SACK bitmap covers 64 PSNs; default 16) */
    uint64_t uud_timeout_ns;  /* UUD: a partial message completes as NW_ELOST after this (default 5 ms) */
    uint32_t max_peers;       /* peer/PDC table size (default 64) */
    uint32_t max_mrs;         /* memory region table size (default 256) */
    uint32_t max_wrs;         /* outstanding initiator work requests, all peers (default 4096) */
    uint32_t max_recvs;       /* posted receive buffers (default 4096) */
    uint64_t seed;            /* seeds initial PSNs and PDC ids (determinism in simulation) */
    uint64_t cc_target_ns;    /* NSCC: target queueing delay (RTT above the base RTT);
                                 0 = 3/4 of the base RTT, as UEC's htsim model with trimming */
    uint32_t cc_min_pkts;     /* NSCC: smallest window in packets (default 1) */
    uint32_t cc_mode;         /* NW_CC_MODE_*: congestion control of the PDCs this engine
                                 sends on and the credits it grants as a receiver (default
                                 NW_CC_MODE_NONE; docs/congestion.md) */
    uint32_t link_rate_mbps;  /* this endpoint's link rate in Mbit/s: the RCCC pacer grants
                                 credit at 0.99 of it, NSCC and DCQCN size their window/rate
                                 from it (default 10000) */
    uint64_t cc_base_rtt_ns;  /* unloaded RTT of the fabric (NSCC delay baseline, BDP); 0 = the
                                 lowest RTT measured on the PDC (default 0) */
    uint32_t cc_spec_bytes;   /* RCCC: speculative bytes a sender may send before its first
                                 credit arrives, per backlog episode; 0 = one BDP (default 0) */
    uint32_t cc_pull_bytes;   /* RCCC: credit granted per pull; 0 = 4 x mtu (default 0) */
    uint32_t rto_per_packet;  /* 1: a timeout declares lost, besides the oldest, every RUD
                                 packet out for a whole timeout, as each packet's own timer
                                 does in UEC's htsim model; sound only where rto_init_ns
                                 exceeds the longest queueing a delivered packet can meet
                                 (htsim's is 15 us + 6 buffer drains). 0: the oldest alone,
                                 a probe that a stall or a short RTO cannot turn into a
                                 window of spurious resends (default 0) */
} nw_config_t;

/* ---- congestion control modes (nw_config_t.cc_mode; docs/congestion.md) ----
 * Each engine picks one; a sender's mode governs what it sends, a receiver's
 * mode says whether it paces credit grants (RCCC modes) for senders that ask. */
#define NW_CC_MODE_NONE 0      /* window only: window_pkts in flight per PDC */
#define NW_CC_MODE_NSCC 1      /* sender window from ECN marks and queueing delay */
#define NW_CC_MODE_RCCC 2      /* receiver credits: send only credited bytes after a
                                  speculative first window */
#define NW_CC_MODE_NSCC_RCCC 3 /* both: a packet needs window and credit */
#define NW_CC_MODE_DCQCN 4     /* DCQCN-like rate control from ECN echoes (CNP-style) */
#define NW_CC_MODE_COUNT 5

/* ECN codepoints (the low two bits of the IP TOS byte), for nw_input_ecn and
 * nw_dest_t.ecn. */
#define NW_ECN_NOT_ECT 0
#define NW_ECN_ECT1 1
#define NW_ECN_ECT0 2
#define NW_ECN_CE 3

/* Where nw_output's packet goes: UDP to ip:port from source port src_port. */
typedef struct {
    uint32_t ip;       /* destination IPv4, host order */
    uint16_t port;     /* destination UDP port */
    uint16_t src_port; /* UDP source port = the UET entropy value for this packet */
    uint8_t ecn;       /* NW_ECN_*: codepoint for the IP header (ECT(0) on data packets of
                          ECN-using modes, else NOT_ECT) */
    uint8_t reserved[3];
} nw_dest_t;

/* One completed work request. */
typedef struct {
    uint64_t wr_id;   /* caller's id from nw_post_* */
    uint64_t bytes;   /* bytes placed (RECV: message length; on NW_ELOST bytes that arrived) */
    int32_t status;   /* NW_OK or negative NW_E* */
    uint32_t peer;    /* peer handle (RECV: the sender's peer handle) */
    uint8_t opcode;   /* NW_OP_* */
    uint8_t mode;     /* NW_MODE_* of the PDC */
    uint8_t reserved[6];
} nw_completion_t;

/* Counters; monotonically increasing. drop_* are packets counted and dropped. */
typedef struct {
    uint64_t pkts_in, pkts_out, bytes_in, bytes_out;
    uint64_t data_pkts_out;     /* request packets sent (first transmissions) */
    uint64_t retransmits;       /* all retransmissions */
    uint64_t fast_retransmits;  /* of which triggered by SACK/ACK evidence (not the RTO) */
    uint64_t rto_fired;         /* retransmission timeouts */
    uint64_t acks_in, acks_out, nacks_in, nacks_out;
    uint64_t dup_pkts;          /* duplicate PSNs suppressed (data not placed again) */
    uint64_t placed_bytes;      /* payload bytes placed into memory/receive buffers */
    uint64_t drop_truncated;    /* shorter than its headers claim */
    uint64_t drop_oversized;    /* larger than the configured MTU */
    uint64_t drop_bad_version;  /* wrong UET version / unknown PDS type */
    uint64_t drop_malformed;    /* other header errors reported by the codec */
    uint64_t drop_unknown_pdc;  /* destination PDC id does not exist */
    uint64_t drop_spoofed_pdc;  /* PDC exists but belongs to another source address/mode */
    uint64_t drop_out_of_window;/* PSN outside the receive window */
    uint64_t drop_no_peer_slot; /* new PDC refused: peer table full */
    uint64_t drop_rnr;          /* receiver not ready: no posted receive buffer */
    uint64_t drop_unordered;    /* ROD: packet ahead of the next expected PSN */
    uint64_t remote_access_errors; /* RMA requests refused (bad rkey/range/access) */
    uint64_t pdc_opened, pdc_failed;
    uint64_t spurious_loss_marks; /* packets marked lost, then acknowledged before resending
                                     (each widens the PDC's reordering window) */
    uint64_t cwnd_cuts;         /* congestion window decreases (queueing delay above target) */
    uint64_t rsp_probes;        /* REQ_ACK probe rounds for SES responses whose ACK was lost */
    uint64_t spurious_rtos;     /* RTO resends proven unneeded (the receiver reported the PSN as
                                   a duplicate, or the original's ACK came back before or
                                   sooner than an RTT after the resend) and undone: each raises
                                   the PDC's RTO floor above the ACK silence, e.g. when the host
                                   starves the I/O thread */
    uint64_t rod_held;          /* ROD: packets ahead of the next expected PSN held in the
                                   receiver's reorder buffer (delivered once the gap fills) */
    uint64_t rod_nacks_deferred;/* ROD: OOO NACKs for a PSN sent less than an RTT ago, answered
                                   only if the PSN is still unacknowledged an RTT after sending */
    uint64_t drop_syn_half_open;/* SYN (or new UUD source) refused: its source already has
                                   NW_HALF_OPEN_PER_SOURCE half-open PDCs */
    uint64_t pdc_reclaimed;     /* half-open PDCs freed (evicted for a new PDC when the table
                                   was full, or idle for 2 * rto_max_ns) */
    uint64_t pdc_closed;        /* PDCs closed with nw_peer_close */
    /* erasure coding (nw_peer_set_coding) */
    uint64_t ec_blocks_sent;    /* coded blocks closed (their parity computed) */
    uint64_t ec_parity_pkts_out;/* parity packets sent (first transmissions) */
    uint64_t ec_parity_bytes_out;/* bytes of parity packets, resent empty ones included:
                                   the overhead of coding */
    uint64_t ec_retransmits;    /* coded data packets resent: losses coding did not repair */
    uint64_t ec_parity_pkts_in; /* parity packets received */
    uint64_t ec_parity_late;    /* parity packets that arrived after their block completed */
    uint64_t ec_pkts_recovered; /* data packets rebuilt from parity */
    uint64_t ec_blocks_recovered; /* blocks completed by decoding */
    uint64_t ec_blocks_repaired;/* blocks completed by retransmission (more losses than parity) */
    /* congestion control (docs/congestion.md) */
    uint64_t ce_pkts_in;        /* data packets that arrived CE-marked (echoed with ACK flag M) */
    uint64_t ecn_echoes_in;     /* ACKs flagged M (the peer saw CE on the packet they name) */
    uint64_t trimmed_pkts_in;   /* trimmed data packets that arrived (each NACKed at once) */
    uint64_t trim_nacks_in;     /* NACKs with a trimmed code (each resends the PSN at once) */
    uint64_t credit_pkts_out;   /* RCCC receiver: CTRL CREDIT packets sent */
    uint64_t credit_bytes_granted; /* RCCC receiver: bytes of credit granted by the pacer */
    uint64_t credit_reqs_out;   /* RCCC sender: CTRL CREDIT_REQ packets sent */
    uint64_t credit_bytes_in;   /* RCCC sender: bytes of credit received */
    uint64_t spec_bytes_out;    /* RCCC sender: bytes sent on speculative credit */
    uint64_t quick_adapts;      /* NSCC: windows cut to the bytes delivered (trim/NACK, delay) */
    uint64_t rate_cuts;         /* DCQCN: rate decreases */
} nw_stats_t;

typedef struct nw_engine nw_engine_t;

/* ---- lifecycle ---- */
void nw_config_default(nw_config_t *cfg);
/* NULL if cfg is usable, else a static message naming the first bad field. */
const char *nw_config_check(const nw_config_t *cfg);
/* NULL if cfg is invalid or memory is short. All tables are allocated here. */
nw_engine_t *nw_engine_new(const nw_config_t *cfg);
void nw_engine_free(nw_engine_t *e);
/* Largest payload bytes one packet carries for a given operation (mtu minus headers). */
uint32_t nw_max_payload(const nw_engine_t *e);

/* ---- memory regions ---- */
/* Registers [base, base+len) with NW_ACCESS_* rights; *rkey_out names it to peers. */
int32_t nw_mr_register(nw_engine_t *e, void *base, uint64_t len, uint32_t access,
                       uint32_t *rkey_out);
/* NW_ENOKEY if unknown. After return no packet touches the memory again. */
int32_t nw_mr_deregister(nw_engine_t *e, uint32_t rkey);

/* ---- peers ---- */
/* Adds (or finds) the peer at ip:port (port 0 = cfg.dst_port) with a delivery mode. */
int32_t nw_peer_add(nw_engine_t *e, uint32_t ip, uint16_t port, uint8_t mode,
                    uint32_t *peer_out);
/* Closes a peer's PDC: its outstanding work requests and partly received
 * messages complete with NW_ECANCELED, a CTRL CLOSE tells the remote (best
 * effort: sent once, not retransmitted), and the PDC's state and table slot
 * are freed; the handle then gives NW_ENOPEER until a later PDC reuses it.
 * A CTRL CLOSE from the remote closes the local PDC in the same way.
 * Close once the work on the peer has completed: a late duplicate of an early
 * (SYN) packet that arrives after the close opens a new PDC at the receiver. */
int32_t nw_peer_close(nw_engine_t *e, uint32_t peer);
/* Address and mode of a peer handle (also for peers created by incoming PDCs). */
int32_t nw_peer_info(const nw_engine_t *e, uint32_t peer, uint32_t *ip, uint16_t *port,
                     uint8_t *mode);

/* Erasure coding of the peer's future blocks: k data packets plus m parity
 * (1 <= k <= 32, 1 <= m <= 8), or k = m = 0 for selective repeat only (the
 * default). RUD peers only (NW_EINVAL otherwise). Messages posted while
 * coding is on use packets NW_EC_SHARD_RESERVE bytes shorter (their parity
 * must fit the MTU). */
int32_t nw_peer_set_coding(nw_engine_t *e, uint32_t peer, uint32_t k, uint32_t m);

/* What a reliability policy measures on a peer's PDC. */
typedef struct {
    uint64_t srtt_ns, rttvar_ns, min_rtt_ns; /* 0 = no sample yet */
    uint64_t tx_bytes;        /* data request bytes sent: first transmissions and resends */
    uint64_t rx_bytes;        /* of those, bytes the peer reported receiving (ACK_CC rcvd_bytes;
                                 parity and decoded packets count on neither side) */
    uint64_t data_pkts;       /* data packets sent (first transmissions) */
    uint64_t retransmits;     /* data packets resent */
    uint32_t k, m;            /* current code (0, 0 = selective repeat) */
    uint64_t rto_ns;          /* the PDC's retransmission timeout now (learnt floor and
                                 backoff included): what a repair by timeout costs */
    uint64_t rack_wait_ns;    /* how long after sending a packet loss detection may declare
                                 it lost (5/4 srtt + the learnt reordering window) */
    uint32_t cc_mode;         /* NW_CC_MODE_* of the PDC */
    uint64_t cwnd_bytes;      /* NSCC window now (0 = no window: NONE, RCCC, DCQCN) */
    uint64_t rate_mbps;       /* DCQCN current rate (0 = not rate controlled) */
    uint64_t credit_bytes;    /* RCCC: credit (granted plus speculative) not yet used */
} nw_path_stats_t;
int32_t nw_peer_path(const nw_engine_t *e, uint32_t peer, nw_path_stats_t *out);

/* ---- work requests (initiator) ----
 * All return NW_OK or: NW_ENOPEER, NW_EINVAL (len > UINT32_MAX, NULL buffer with len > 0;
 * on UUD peers: reads, or messages of more than 64 packets), NW_EAGAIN (max_wrs
 * outstanding), or the status the peer's PDC failed with (NW_ETIMEDOUT, NW_EMTU).
 * Completion semantics: a WRITE/SEND completes once every packet is acknowledged and
 * the target's SES response for the message arrived (OK or a refusal: then
 * NW_EREMOTE_ACCESS or NW_ETOOLONG; a missing response is fetched with a CTRL
 * REQ_ACK probe). A READ completes when all its data arrived. On ROD peers
 * completions come in posting order. UUD sends complete once transmitted. */
int32_t nw_post_write(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *local,
                      uint64_t len, uint32_t rkey, uint64_t roffset);
int32_t nw_post_read(nw_engine_t *e, uint32_t peer, uint64_t wr_id, void *local, uint64_t len,
                     uint32_t rkey, uint64_t roffset);
int32_t nw_post_send(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *buf,
                     uint64_t len);
/* Posts a receive buffer to the shared receive queue (any peer); FIFO matching. */
int32_t nw_post_recv(nw_engine_t *e, uint64_t wr_id, void *buf, uint64_t cap);

/* ---- sans-IO packet and time interface ---- */
/* One received UDP payload. Returns NW_OK, or a negative code if the packet was
 * dropped (already counted in the stats; callers may ignore the value). */
int32_t nw_input(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                 uint16_t src_port, uint64_t now_ns);
/* nw_input with the packet's IP ECN codepoint (NW_ECN_*; the I/O driver reads it
 * from the IP_TOS control message, the simulator from its queue model): a CE
 * mark on a data packet is echoed to the sender (ACK flag M) for NSCC/DCQCN. */
int32_t nw_input_ecn(nw_engine_t *e, const uint8_t *pkt, uint32_t len, uint32_t src_ip,
                     uint16_t src_port, uint8_t ecn, uint64_t now_ns);
/* Writes the next UDP payload into buf; returns its length, 0 if nothing is due
 * now, NW_ETOOBIG if cap < mtu. */
int32_t nw_output(nw_engine_t *e, uint8_t *buf, uint32_t cap, nw_dest_t *dst, uint64_t now_ns);
/* Earliest time nw_on_time must be called; UINT64_MAX if no timer is armed.
 * (Pending output is signalled by nw_output, not by this deadline.) */
uint64_t nw_next_deadline(const nw_engine_t *e);
void nw_on_time(nw_engine_t *e, uint64_t now_ns);
/* 1 if nw_output has something to send now (packets queued and window open). */
int32_t nw_has_output(const nw_engine_t *e);

/* ---- event trace (docs/congestion.md, "Event trace") ----
 * Per-PDC events with the driver's timestamps in a bounded ring; off until
 * nw_trace_start. `pdc` is the peer handle; `psn` and `value` by type: */
#define NW_TR_SENT 1         /* psn sent, value = bytes; flags NW_TRF_RETX on a resend */
#define NW_TR_ACKED 2        /* psn = cumulative ACK (last in-order PSN), value = newly
                                acknowledged bytes (cumulative and selective) */
#define NW_TR_LOST 3         /* psn declared lost; flags NW_TRF_FAST (SACK evidence),
                                NW_TRF_RTO (timeout), neither = NACK (trim) */
#define NW_TR_TRIMMED_RX 4   /* receiver: a trimmed psn arrived (NACKed at once) */
#define NW_TR_TRIM_NACK 5    /* sender: a NACK with a trimmed code for psn */
#define NW_TR_CREDIT_GRANT 6 /* receiver: value = credit granted so far (bytes) */
#define NW_TR_CREDIT_IN 7    /* sender: value = credit received so far (bytes) */
#define NW_TR_CREDIT_REQ 8   /* sender: value = demand announced (bytes) */
#define NW_TR_CWND 9         /* NSCC window changed: value = bytes */
#define NW_TR_RATE 10        /* DCQCN rate changed: value = kbit/s */
#define NW_TR_ECN_ECHO 11    /* sender: an ACK echoed a CE mark, psn = its cumulative ACK */
#define NW_TRF_RETX 0x1
#define NW_TRF_FAST 0x2
#define NW_TRF_RTO 0x4

typedef struct {
    uint64_t t_ns;
    uint64_t value;
    uint32_t psn;
    uint16_t pdc;
    uint8_t type;   /* NW_TR_* */
    uint8_t flags;  /* NW_TRF_* */
} nw_trace_event_t;

/* Starts tracing into a ring of `capacity` events (allocated here; a running
 * trace is restarted empty); capacity 0 stops and frees it. NW_EINVAL above
 * 2^24 events, NW_ENOMEM if the ring cannot be allocated. */
int32_t nw_trace_start(nw_engine_t *e, uint32_t capacity);
/* Moves up to max events, oldest first, into out; returns how many. */
int32_t nw_trace_drain(nw_engine_t *e, nw_trace_event_t *out, uint32_t max);
/* Events overwritten before they were drained (the ring was full). */
uint64_t nw_trace_lost(const nw_engine_t *e);

/* ---- completions and counters ---- */
/* Copies up to max completions in completion order; returns how many.
 * The CQ holds max_wrs + max_recvs entries and a work request's slot is only
 * reusable once its completion was polled, so the CQ never overflows: posts
 * return NW_EAGAIN instead when completions are left unpolled. */
int32_t nw_poll_cq(nw_engine_t *e, nw_completion_t *out, uint32_t max);
void nw_stats_get(const nw_engine_t *e, nw_stats_t *out);
const char *nw_strerror(int32_t err);

#endif
