/* RCCC: receiver credits (in the lineage of NDP and EQDS; UEC's receiver-
 * credit congestion control). State of both halves of a PDC and of the
 * receiving engine's pull pacer; the logic is in rccc.c.
 *
 * All counts are cumulative bytes since the PDC opened, so that a lost
 * credit or request is repaired by the next one:
 *  - the sender's demand D = bytes sent on credit + bytes still to send
 *    (unsent data and queued resends); it rides, capped at 4 MiB beyond the
 *    credit received and modulo 2^24, in the credit_target field of every
 *    RUD_CC/ROD_CC request and in CTRL CREDIT_REQ packets (sent when a blocked
 *    sender's demand changed, or repeated after max(2 srtt, rto_init / 4)
 *    without credit, doubling per unanswered repeat);
 *  - the receiver's grant G (cumulative credit) rides in CTRL CREDIT packets
 *    (ctrl_payload, modulo 2^32). The receiver's pacer hands out pull_bytes
 *    at a time, round robin over senders whose demand exceeds their grant, at
 *    0.99 x its link rate;
 *  - a sender may send while its bytes sent on credit stay below G; before any
 *    credit arrives, a backlog episode that starts from idle may spend
 *    cc_spec_bytes of speculative credit (cancelled by the first credit).
 * A resend (after a trim, NACK, RTO or SACK loss) adds its bytes to the
 * backlog: trimmed bytes re-enter the credit queue. */
#ifndef NETWEFT_RCCC_H
#define NETWEFT_RCCC_H

#include <stdint.h>

typedef struct {
    uint64_t granted;      /* credit received (cumulative bytes) */
    uint32_t granted_wire; /* last CTRL CREDIT value (mod 2^32) */
    uint64_t spec_used;    /* bytes sent on speculative credit (cumulative) */
    uint64_t sent;         /* bytes sent (cumulative; speculative ones included) */
    uint64_t backlog;      /* bytes still to send (estimate) */
    uint64_t announced;    /* demand last announced */
    uint32_t spec_left;    /* speculative credit still usable */
    uint8_t idle;          /* no backlog and nothing in flight: next backlog is speculative */
    uint8_t credited;      /* some credit has arrived since the episode began */
    uint64_t req_deadline; /* blocked: repeat the CREDIT_REQ then (0 = not armed) */
    uint8_t req_repeat;    /* the repeat timer fired while blocked */
    uint8_t req_backoff;   /* CREDIT_REQs sent without an answer (the wait doubles) */
} nw_credit_tx_t;

typedef struct {
    uint64_t demand;       /* the sender's demand (cumulative bytes) */
    uint32_t demand_wire;  /* last 24-bit value seen */
    uint64_t granted;      /* credit granted (cumulative bytes) */
    uint8_t queued;        /* in the engine's pull queue */
    uint8_t grant_due;     /* a CTRL CREDIT is to be sent */
} nw_credit_rx_t;

/* The receiving engine's pull pacer. */
typedef struct {
    uint32_t *ring;        /* PDC indices waiting for credit (max_peers) */
    uint32_t head, count;
    uint64_t next_ns;      /* when the next pull may be granted */
} nw_pull_pacer_t;

#define NW_CREDIT_TARGET_CAP (1ull << 22) /* demand announced beyond the credit received */
#define NW_CREDIT_TARGET_MASK 0xffffffu

#endif
