/* Internal state of the engine, shared by its modules (pdc.c, work_request.c,
 * transmit.c, retransmit.c, rx_message.c, engine.c, cc/, ec/, io/). Not part of
 * the public API. */
#ifndef NETWEFT_ENGINE_STATE_H
#define NETWEFT_ENGINE_STATE_H

#include <stdint.h>

#include "completion_queue.h"
#include "congestion.h"
#include "engine.h"
#include "entropy.h"
#include "erasure_code.h"
#include "memory_region.h"
#include "recv_queue.h"
#include "sack.h"
#include "trace.h"
#include "uet_wire.h"

#define NW_NIL 0xffffffffu
#define NW_MAX_WINDOW 4096u /* SYN packets carry a 12-bit start-PSN offset */

/* ---- work requests ---- */
#define NW_WR_WRITE 1
#define NW_WR_READ 2      /* the READ request; completes when the data arrived */
#define NW_WR_SEND 3
#define NW_WR_READ_RESP 4 /* target side: read data going back; no completion */

typedef struct {
    uint64_t wr_id;
    const uint8_t *src;     /* WRITE/SEND/READ_RESP: bytes to send */
    uint8_t *dst;           /* READ: local buffer */
    uint64_t len;           /* message (READ: bytes to read) */
    uint64_t roffset;
    uint64_t read_done;     /* READ: bytes placed */
    uint32_t rkey;          /* WRITE/READ: remote key; READ_RESP: local region (holds a ref) */
    uint32_t pdc;
    uint32_t next;          /* PDC send queue link */
    uint32_t seg_off;       /* bytes segmented so far */
    uint32_t pkts_total, pkts_sent, pkts_acked;
    int32_t status;
    uint16_t msg_id;
    uint16_t read_req_msg_id; /* READ_RESP */
    uint8_t kind;           /* NW_WR_* */
    uint8_t in_use;
    uint8_t started;        /* msg_id assigned */
    uint8_t rsp_code;       /* READ_RESP: SES return code */
    uint8_t read_acked;     /* READ: request packet acknowledged */
    uint8_t read_answered;  /* READ: all data (or an error) arrived */
    uint8_t rsp_seen;       /* WRITE/SEND: the target's SES response arrived */
    uint8_t awaiting_rsp;   /* WRITE/SEND: all packets acknowledged, response missing */
    uint8_t ready;          /* ROD: done, waiting for earlier work requests to complete */
    uint32_t seq;           /* posting order on its PDC */
    uint32_t seg_max;       /* payload bytes per packet (smaller on coded PDCs) */
} nw_wr_t;

/* ---- transmit slots, one per PSN in flight ---- */
#define NW_TX_FREE 0
#define NW_TX_INFLIGHT 1
#define NW_TX_LOST 2   /* queued for retransmission */
#define NW_TX_ACKED 3

typedef struct {
    uint64_t tx_seq;     /* transmission order of the latest (re)transmission */
    uint64_t sent_ns;    /* time of the latest (re)transmission */
    uint32_t psn;
    uint32_t wr;
    uint32_t msg_off;
    uint32_t len;
    uint32_t prev, next; /* in-flight list in transmission order (slot indices) */
    uint8_t state;
    uint8_t eom;
    uint8_t fast;        /* marked lost by SACK/order evidence (not by the RTO) */
    uint8_t rto_retx;    /* RTO (re)sends of this PSN awaiting a verdict: an ACK before the
                            resend left, an ACK sooner than the lowest RTT after it, or a
                            duplicate report (NW_PDS_F_DUP) from the receiver proves one
                            spurious; cleared when the slot is reused */
    uint16_t retx;
    uint8_t ec_kind;     /* NW_EC_SLOT_*: data in a coded block, or parity */
    uint8_t ec_k, ec_m, ec_index; /* parity: its block's shape and its index */
    uint32_t ec_base;    /* first data PSN of its block */
    uint64_t ec_end_seq; /* coded data: tx_seq of its block's first parity (0 = not sent) */
    uint32_t wire_len;   /* UDP payload bytes of its latest transmission */
} nw_tx_slot_t;

/* ---- receive-side message reassembly (sends, UUD) ---- */
typedef struct {
    uint64_t wr_id;
    uint8_t *buf;
    uint64_t cap;
    uint64_t deadline;   /* UUD: give up at this time */
    uint64_t pkt_mask;   /* UUD: packets seen */
    uint32_t total, placed;
    int32_t status;
    uint16_t msg_id;
    uint16_t done_id;    /* UUD: last message completed in this slot */
    uint8_t in_use;
    uint8_t done;
} nw_rx_msg_t;

#define NW_MAX_PENDING_RSP 64
#define NW_ERR_MEMORY 16
#define NW_DUP_REPORTS 8 /* duplicate reports a PDC holds until its next output */
#define NW_TRIM_NACKS 32 /* trimmed PSNs a PDC holds for NACKs until its next output */
#define NW_RSP_REPEAT 4 /* an error response rides on this many ACKs (ACKs may be lost) */

/* ---- packet delivery context: one per (peer address, mode) ---- */
typedef struct {
    uint32_t ip;
    uint16_t port;
    uint16_t local_id, remote_id;
    uint8_t in_use, mode, failed;
    int32_t fail_status;    /* why it failed (NW_ETIMEDOUT, NW_EMTU): new work gets it too */
    uint8_t remote_known;   /* remote_id learnt */
    uint8_t tx_synced;      /* the peer acknowledged us: stop sending SYN */
    uint8_t rx_started;     /* we know the peer's start PSN */
    uint8_t in_active;      /* queued in the engine's active list */
    /* Half-open: opened by a remote SYN (or a UUD packet from a new source),
     * the remote has not yet used our PDC id, nothing was delivered and the
     * application never named it. Such a PDC can be forgotten without loss:
     * it is what a spoofed SYN flood creates, so it is bounded per source and
     * reclaimed when the table is full or it stays idle. */
    uint8_t passive;        /* opened by the remote */
    uint8_t established;    /* the remote used our PDC id, or the application added it */
    uint8_t delivered;      /* something was placed, received or read through it */
    uint8_t named;          /* returned by nw_peer_add: a remote CLOSE resets, never frees it */
    uint64_t last_rx_ns;    /* latest request that arrived on it */

    /* transmit half */
    uint32_t start_psn, una, nxt;
    nw_tx_slot_t *slots;            /* window entries, index psn & (W-1) */
    uint32_t list_head, list_tail;  /* in flight, oldest transmission first */
    uint32_t *lost;                 /* ring of PSNs to retransmit */
    uint32_t lost_head, lost_count;
    uint64_t tx_seq, max_acked_seq;
    uint32_t sq_head, sq_tail;      /* work requests not fully segmented */
    uint16_t next_msg_id;
    uint32_t *wr_by_msg;            /* msg_id & (W-1) -> wr index or NW_NIL */
    uint64_t rto_deadline, rto_cur; /* 0 = RTO disarmed */
    uint64_t srtt, rttvar;          /* smoothed RTT (0 = no sample yet) and the variation the
                                       RTO uses (decays at most once per round trip) */
    uint64_t mdev, mdev_max;        /* per-sample RTT variation; its maximum this round trip */
    uint32_t rtt_round_psn;         /* the round trip ends once una passes this PSN */
    uint64_t progress_ns;           /* when the RTO was last restarted (new data acknowledged) */
    uint64_t rto_gap_ns;            /* ACK silence that ended the latest RTO episode */
    uint64_t rto_undo_cur;          /* rto_cur before the episode's first backoff */
    uint64_t rto_floor_ns;          /* when rto_floor was last raised or decayed */
    uint8_t rto_episode;            /* an RTO fired since the last progress */
    uint8_t rto_resend_due;         /* an RTO declared a packet lost: one resend goes out
                                       whatever the congestion window (TCP's cwnd of one
                                       segment after an RTO) */
    uint8_t dup_count;              /* receiver: duplicates to report, each in an ACK flagged
                                       NW_PDS_F_DUP (more than NW_DUP_REPORTS at once: the
                                       rest go unreported) */
    uint32_t dup_psn[NW_DUP_REPORTS];
    uint64_t rack_deadline;         /* re-run loss detection then, 0 = none */
    uint64_t reo_extra_ns;          /* learnt reordering window (grows on spurious marks) */
    uint64_t rto_floor;             /* learnt RTO minimum (grows on spurious RTOs), 0 = none */
    uint32_t reo_decay_psn;         /* shrink reo_extra_ns once una passes this PSN */
    uint32_t retries;
    uint32_t pipe;                  /* packets in the network (INFLIGHT): what cwnd limits */
    nw_cc_t cc;
    nw_entropy_t entropy;

    /* receive half */
    nw_rx_window_t rxw;
    uint32_t ack_pending;           /* packets received since the last ACK */
    uint8_t ack_now;
    uint64_t ack_deadline;          /* 0 = no delayed ACK armed */
    uint32_t ack_trigger;           /* PSN the next coalesced ACK reports */
    uint32_t *ack_ring;             /* out of order: one ACK per packet, by trigger PSN */
    uint32_t ack_ring_head, ack_ring_count;
    uint32_t last_rx_psn;           /* previous new PSN accepted */
    uint32_t rod_nacked;            /* ROD: next-expected PSN already NACKed */
    uint8_t rod_nack_valid;
    uint8_t nack_pending, nack_code, nack_vendor;
    uint32_t trim_psn[NW_TRIM_NACKS];      /* trimmed PSNs to NACK, oldest first */
    uint32_t trim_count;
    uint32_t nack_psn, nack_payload;
    uint16_t rsp_msg[NW_MAX_PENDING_RSP];
    uint8_t rsp_code[NW_MAX_PENDING_RSP];
    uint8_t rsp_left[NW_MAX_PENDING_RSP]; /* ACKs that will still carry it */
    uint32_t rsp_count, rsp_next;
    uint16_t err_msg[NW_ERR_MEMORY];        /* recent refused messages, for repeats */
    uint8_t err_rc[NW_ERR_MEMORY];
    uint32_t err_next;
    uint16_t probe_msg[NW_MAX_PENDING_RSP]; /* REQ_ACK probes for missing responses */
    uint32_t probe_count;
    uint32_t awaiting_rsp;                  /* work requests waiting for a response */
    uint64_t rsp_deadline;                  /* probe for missing responses then (0 = none);
                                               unlike the RTO, not postponed by other progress */
    uint32_t post_seq, done_seq;            /* ROD: completions in posting order */
    uint32_t held;                          /* ROD: finished, waiting for predecessors */
    /* ROD receiver: reorder buffer of whole packets ahead of the next expected
     * PSN, one slot per window entry (psn & (W-1)); held packets are neither
     * acknowledged nor placed until the gap before them fills. */
    uint8_t *rod_buf;               /* W * mtu bytes (ROD PDCs only, else NULL) */
    uint32_t *rod_len;              /* bytes held in a slot, 0 = empty */
    uint32_t *rod_psn;
    uint32_t rod_held_count;
    /* ROD sender: an OOO NACK for a PSN sent less than an RTT ago is checked
     * again at rod_recheck_deadline (one resend per RTT, not one per arrival). */
    uint64_t rod_recheck_deadline;  /* 0 = none */
    uint32_t rod_recheck_psn;
    nw_rx_msg_t *rx_msgs;           /* msg_id & (W-1) */
    /* erasure coding (erasure_code.c) and what the reliability policy measures */
    nw_ec_tx_t *ec_tx;              /* sender: code and open block (NULL = never coded) */
    nw_ec_rx_t *ec_rx;              /* receiver: shards and blocks (NULL = none seen) */
    uint64_t tx_req_bytes;          /* data request bytes sent (first transmissions, resends) */
    uint64_t rx_req_bytes;          /* data request bytes that arrived (reported in ACKs) */
    uint64_t peer_rx_bytes;         /* of tx_req_bytes, what the peer reported receiving */
    uint32_t peer_rx_last;          /* last 24-bit count the peer reported */
    uint64_t pdc_data_pkts, pdc_retransmits; /* first transmissions and resends */
    uint64_t uud_deadline;          /* earliest UUD reassembly deadline, 0 = none */
} nw_pdc_t;

/* A CTRL CLOSE still to be sent for a PDC that is already freed. */
typedef struct {
    uint32_t ip;
    uint16_t port, local_id, remote_id;
} nw_close_notice_t;

struct nw_engine {
    nw_config_t cfg;
    uint32_t max_payload, wmask;
    nw_pdc_t *pdcs;
    uint32_t *active;               /* ring of PDC indices with output to give */
    uint32_t active_head, active_count;
    nw_close_notice_t *closes;      /* ring of CTRL CLOSE packets to send (max_peers) */
    uint32_t close_head, close_count;
    nw_wr_t *wrs;
    uint32_t nwrs, wr_free;         /* free list through nw_wr_t.next */
    uint32_t wr_credits, recv_credits;
    uint32_t read_resp_in_use;      /* bounded by max_wrs */
    nw_mr_table_t mrs;
    nw_recv_queue_t rq;
    nw_cq_t cq;
    nw_stats_t st;
    uint64_t rng;
    uint64_t now;                   /* latest time a driver passed in (nw_input/output/on_time) */
    nw_pull_pacer_t pull;           /* RCCC: credit grants to the senders of this receiver */
    nw_trace_t trace;               /* event trace (off: cap 0) */
};

/* congestion.c: the PDC's congestion control (congestion.h) */
void nw_cc_init(nw_engine_t *e, nw_pdc_t *p);
uint32_t nw_cc_spec_bytes(const nw_engine_t *e);
/* 1 if the NSCC window admits a new packet (always without NSCC): the pipe is
 * empty, or the pipe plus half an MTU fits in the window (the window rounded to
 * whole packets: 1.1 MTU sends one packet at a time, not two). */
int nw_cc_window_open(const nw_engine_t *e, const nw_pdc_t *p);
/* 1 if the new data packet about to leave is the last the NSCC window admits
 * (at the one-packet floor: every packet): the packet asks for an ACK at once
 * (AR), as htsim's sender does, so that a window of fewer packets than
 * ack_every_pkts is acknowledged within an RTT, not after the receiver's
 * ack_delay_ns (docs/congestion.md, "Feedback every RTT"). */
int nw_cc_ack_wanted(const nw_engine_t *e, const nw_pdc_t *p);
/* 1 if credit (RCCC) and rate (DCQCN) admit a data packet now (e->now). */
int nw_cc_tx_allowed(const nw_engine_t *e, const nw_pdc_t *p);
void nw_cc_on_enqueue(nw_engine_t *e, nw_pdc_t *p, uint64_t wire_bytes);
void nw_cc_on_sent(nw_engine_t *e, nw_pdc_t *p, uint32_t len, uint64_t now);
void nw_cc_on_loss(nw_engine_t *e, nw_pdc_t *p, const nw_tx_slot_t *s);
/* An ACK: `rtt` from its trigger packet (0: none); NSCC's delay sample is the
 * RTT less the base RTT. */
void nw_cc_on_ack(nw_engine_t *e, nw_pdc_t *p, uint64_t newly_bytes, uint64_t rtt, int ecn,
                  uint64_t now);
uint64_t nw_cc_deadline(const nw_engine_t *e, const nw_pdc_t *p);
void nw_cc_on_time(nw_engine_t *e, nw_pdc_t *p, uint64_t now);

/* rccc.c: receiver credits (rccc.h) */
int nw_rccc_tx_allowed(const nw_pdc_t *p);
uint64_t nw_rccc_demand(const nw_engine_t *e, const nw_pdc_t *p);
/* The credit target for a request about to leave (records it as announced). */
uint32_t nw_rccc_target(const nw_engine_t *e, nw_pdc_t *p);
/* 1 if the sender is blocked on credit and must (re)send a CREDIT_REQ. */
int nw_rccc_req_due(const nw_engine_t *e, const nw_pdc_t *p);
void nw_rccc_on_req_sent(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
/* Arms the timer that repeats a blocked sender's CREDIT_REQ. */
void nw_rccc_arm_repeat(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
void nw_rccc_on_backlog(nw_engine_t *e, nw_pdc_t *p, uint64_t bytes);
void nw_rccc_on_sent(nw_engine_t *e, nw_pdc_t *p, uint32_t len);
void nw_rccc_on_ack(nw_engine_t *e, nw_pdc_t *p);
void nw_rccc_on_credit(nw_engine_t *e, nw_pdc_t *p, uint32_t wire, uint64_t now);
void nw_rccc_on_time(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
/* Receiver: a request's credit target or a CREDIT_REQ's payload arrived. */
void nw_rccc_on_demand(nw_engine_t *e, nw_pdc_t *p, uint32_t wire24, uint64_t now);
void nw_rccc_on_request(nw_engine_t *e, nw_pdc_t *p, uint32_t wire24, uint64_t now);
uint32_t nw_rccc_pull_bytes(const nw_engine_t *e);
void nw_rccc_pacer_run(nw_engine_t *e, uint64_t now);
uint64_t nw_rccc_pacer_deadline(const nw_engine_t *e);

/* pdc.c */
int32_t nw_pdc_table_init(nw_engine_t *e);
void nw_pdc_table_destroy(nw_engine_t *e);
nw_pdc_t *nw_pdc_create(nw_engine_t *e, uint32_t ip, uint16_t port, uint8_t mode);
nw_pdc_t *nw_pdc_by_id(nw_engine_t *e, uint16_t local_id);
int nw_pdc_is_half_open(const nw_pdc_t *p);
/* A passive PDC for a new remote (SYN or UUD): refused (NULL, counted) when its
 * source has too many half-open PDCs; when the table is full, the least
 * recently active half-open PDC is reclaimed for it. */
nw_pdc_t *nw_pdc_open_passive(nw_engine_t *e, uint32_t ip, uint8_t mode, uint64_t now);
/* Frees a PDC's state and its slot (its work requests must be gone). */
void nw_pdc_free(nw_engine_t *e, nw_pdc_t *p);
/* Closes a PDC: cancels its work and partial receives, queues a CTRL CLOSE to
 * the remote if notify (and the remote is known), frees it. */
void nw_pdc_close(nw_engine_t *e, nw_pdc_t *p, int notify);
/* Frees half-open PDCs idle since before now - 2 * rto_max_ns. */
void nw_pdc_expire_half_open(nw_engine_t *e, uint64_t now);
/* When nw_pdc_expire_half_open must run next (0 = none). */
uint64_t nw_pdc_half_open_deadline(const nw_engine_t *e, const nw_pdc_t *p);
nw_pdc_t *nw_pdc_find(nw_engine_t *e, uint32_t ip, uint8_t mode, int32_t port);
nw_pdc_t *nw_pdc_find_syn(nw_engine_t *e, uint32_t ip, uint8_t mode, uint16_t spdcid);
uint32_t nw_pdc_index(const nw_engine_t *e, const nw_pdc_t *p);
void nw_pdc_activate(nw_engine_t *e, nw_pdc_t *p);
int32_t nw_pdc_has_output(const nw_engine_t *e, const nw_pdc_t *p);
/* 1 if the PDC has data packets to send (resends, parity, queued work), window aside. */
int nw_pdc_has_data(const nw_engine_t *e, const nw_pdc_t *p);
/* 1 if a resend fits the congestion window (or, on ROD, repairs the oldest
 * unacknowledged PSN). */
int nw_pdc_resend_open(const nw_engine_t *e, const nw_pdc_t *p);
/* 1 if new data is queued and fits the PSN window and the congestion window. */
int nw_pdc_new_data_open(const nw_engine_t *e, const nw_pdc_t *p);
uint64_t nw_random(nw_engine_t *e);
/* Queues an SES response (return code) to ride on the PDC's next ACK(s);
 * a refusal is also remembered so that repeats of the message get it again. */
void nw_pdc_queue_rsp(nw_engine_t *e, nw_pdc_t *p, uint16_t msg_id, uint8_t rc);
/* Queues the response for a finished (or repeated) message: its refusal, or OK. */
void nw_pdc_respond(nw_engine_t *e, nw_pdc_t *p, uint16_t msg_id);

/* work_request.c */
int32_t nw_wr_init(nw_engine_t *e);
void nw_wr_destroy(nw_engine_t *e);
nw_wr_t *nw_wr_alloc(nw_engine_t *e);
void nw_wr_enqueue(nw_engine_t *e, nw_pdc_t *p, nw_wr_t *w);
/* Completes (CQ entry unless READ_RESP) and frees the work request. */
void nw_wr_complete(nw_engine_t *e, nw_wr_t *w, int32_t status);
/* Completes a finished initiator work request; on ROD PDCs only in posting order. */
void nw_wr_finish(nw_engine_t *e, nw_wr_t *w);
nw_wr_t *nw_wr_by_msg(nw_engine_t *e, nw_pdc_t *p, uint16_t msg_id);
void nw_wr_fail_pdc(nw_engine_t *e, nw_pdc_t *p, int32_t status);
void nw_cq_post(nw_engine_t *e, uint64_t wr_id, uint64_t bytes, int32_t status, uint32_t pdc,
                uint8_t opcode, uint8_t mode);

/* retransmit.c */
void nw_tx_reset(nw_engine_t *e, nw_pdc_t *p);
nw_tx_slot_t *nw_tx_slot(const nw_engine_t *e, const nw_pdc_t *p, uint32_t psn);
uint32_t nw_tx_in_flight(const nw_pdc_t *p);
/* Records a (re)transmission of slot s, len UDP payload bytes, at now. */
void nw_tx_sent(nw_engine_t *e, nw_pdc_t *p, nw_tx_slot_t *s, uint32_t len, uint64_t now);
/* Processes an ACK; returns NW_OK or NW_ERANGE if it acknowledges unsent PSNs. */
int32_t nw_tx_on_ack(nw_engine_t *e, nw_pdc_t *p, uint32_t cack, uint32_t trigger,
                     uint32_t sack_base, uint64_t sack_bits, int ecn, uint64_t now);
/* The receiver reports a duplicate of psn (ACK with NW_PDS_F_DUP): if psn was
 * resent by the RTO, that resend was spurious; undo the RTO's backoff. */
void nw_tx_on_dup_report(nw_engine_t *e, nw_pdc_t *p, uint32_t psn, uint64_t now);
void nw_tx_mark_lost(nw_engine_t *e, nw_pdc_t *p, uint32_t psn);
/* A trim NACK for `psn`: marked lost (resent with the next output, no timeout) and
 * the PDC's retransmission timer restarted from `now`. */
void nw_tx_on_trim_nack(nw_engine_t *e, nw_pdc_t *p, uint32_t psn, uint64_t now);
void nw_tx_go_back_n(nw_engine_t *e, nw_pdc_t *p, uint32_t from_psn);
/* ROD: the receiver misses from_psn (OOO NACK); resends it unless it was sent
 * less than an RTT ago, in which case it is checked again then. */
void nw_tx_on_rod_nack(nw_engine_t *e, nw_pdc_t *p, uint32_t from_psn, uint64_t now);
void nw_tx_on_rod_recheck(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
/* The next slot queued for retransmission, or NULL. */
nw_tx_slot_t *nw_tx_next_lost(nw_engine_t *e, nw_pdc_t *p);
void nw_tx_on_rto(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
/* Fails the PDC: its work completes with status, nothing more is sent on it. */
void nw_tx_fail(nw_engine_t *e, nw_pdc_t *p, int32_t status);
/* A fully acknowledged message still lacks its SES response (its ACK was lost):
 * probe for it now instead of waiting for the whole PDC to go idle. */
void nw_tx_on_rsp_timeout(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
/* Loss detection by transmission order and time; arms rack_deadline. */
void nw_tx_detect_losses(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
/* Completes a READ once its request was acknowledged and its answer arrived. */
void nw_wr_read_progress(nw_engine_t *e, nw_wr_t *w);
/* Completes a WRITE/SEND once all its packets are acknowledged and the
 * target's response arrived; otherwise marks it as awaiting the response. */
void nw_wr_write_progress(nw_engine_t *e, nw_wr_t *w);

/* transmit.c */
/* The PDC's fields of the PDS header of a request (data or parity) with PSN
 * psn: psn, spdcid, clear_psn_off (una - psn, clamped to int16), and the SYN
 * flag with start_psn_off until the PDC is synchronized, dpdcid after. The
 * caller sets type, next_hdr and its other flags. */
void nw_fill_request_pds(const nw_pdc_t *p, uint32_t psn, nw_pds_hdr_t *h);

/* erasure_code.c */
/* Sets the code for the PDC's next blocks (k = m = 0: selective repeat only). */
int32_t nw_ec_set(nw_engine_t *e, nw_pdc_t *p, uint32_t k, uint32_t m);
void nw_ec_free(nw_pdc_t *p);
/* Payload bytes per packet for a message posted now on p. */
uint32_t nw_ec_seg_payload(const nw_engine_t *e, const nw_pdc_t *p);
void nw_ec_mark_packet(uint8_t *pkt);
int nw_ec_tx_parity_due(const nw_pdc_t *p);
/* Before a new data packet whose bytes after the PDS header are body_len:
 * 1 if the open block had to close first (its parity is now due). */
int nw_ec_tx_close_before(nw_engine_t *e, nw_pdc_t *p, uint32_t body_len);
/* After a first transmission (slot s, packet pkt of n bytes): adds it to the
 * open block when coding is on (marks the packet NW_PDS_F_EC). */
void nw_ec_tx_on_data(nw_engine_t *e, nw_pdc_t *p, nw_tx_slot_t *s, uint8_t *pkt, uint32_t n);
int32_t nw_ec_tx_output_parity(nw_engine_t *e, nw_pdc_t *p, uint8_t *buf, uint32_t cap,
                               uint64_t now);
int32_t nw_ec_tx_resend_parity(nw_engine_t *e, nw_pdc_t *p, nw_tx_slot_t *s, uint8_t *buf,
                               uint32_t cap);
/* 1 if loss detection must wait for the verdict of s's block. */
int nw_ec_tx_hold(const nw_pdc_t *p, const nw_tx_slot_t *s);
/* 1 if s's block has its verdict: s, still unacknowledged, is lost once the
 * RACK wait passed (the block's parity is the reordering evidence). */
int nw_ec_tx_verdict(const nw_pdc_t *p, const nw_tx_slot_t *s);
/* A new RUD request was accepted: keep its shard, learn blocks, decode. */
void nw_ec_rx_on_packet(nw_engine_t *e, nw_pdc_t *p, const nw_wire_pkt_t *pk,
                        const uint8_t *raw, uint32_t raw_len, uint64_t now);

/* receive.c: a data packet rebuilt by the decoder enters the receive path. */
int32_t nw_rx_recovered(nw_engine_t *e, nw_pdc_t *p, const uint8_t *pkt, uint32_t len,
                        uint64_t now);

/* rx_message.c */
void nw_rxm_on_send_pkt(nw_engine_t *e, nw_pdc_t *p, const uint8_t *payload, uint32_t len,
                        uint16_t msg_id, uint32_t msg_off, uint32_t total, uint64_t now,
                        int32_t *rnr, int32_t *bad);
void nw_rxm_on_time(nw_engine_t *e, nw_pdc_t *p, uint64_t now);
/* Completes the PDC's partly received messages with NW_ECANCELED. */
void nw_rxm_cancel(nw_engine_t *e, nw_pdc_t *p);

#endif
