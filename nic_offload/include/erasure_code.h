/* Reed-Solomon coding of packets (Intel ISA-L), per PDC, sans-IO.
 *
 * Why: on long or lossy paths a lost packet costs a round trip to repair;
 * parity sent up front repairs it without one. The sender groups the first
 * transmissions of consecutive data packets of a RUD PDC into blocks of up to
 * k packets (across messages when several are queued) and follows each block
 * with m parity packets (next header 15, docs/wire.md). A shard is a data
 * packet's bytes after its PDS header (SES header and payload) behind a 2-byte
 * length, zero-padded to the block's shard length. The receiver keeps the
 * shards of packets marked NW_PDS_F_EC; once k of a block's k+m shards are in,
 * it decodes the missing data packets and feeds them to the normal receive
 * path (which places them exactly once; a late original is then a duplicate).
 * A completed block also counts its parity PSNs as received, so parity is
 * acknowledged but never delivered. Losses beyond m are repaired by selective
 * repeat: the sender's loss detection holds a coded packet until the block's
 * verdict (an ACK of the block's first parity or of a later packet) is in.
 * Coding applies to RUD PDCs only (ROD holds packets after a gap; UUD has no
 * repair). */
#ifndef NETWEFT_ERASURE_CODE_H
#define NETWEFT_ERASURE_CODE_H

#include <stdint.h>

#include "uet_wire.h"

#define NW_EC_MAX_K 32u
#define NW_EC_MAX_M 8u
#define NW_EC_RX_BLOCKS 64u  /* blocks a receiver tracks per PDC */
#define NW_EC_RX_RING_MAX 1024u /* shards a receiver keeps per PDC (<= window) */
#define NW_EC_LEN_PREFIX 4u  /* a shard starts with [next header, PDS flags, 16-bit length] */
/* Bytes a coded data packet must leave free below the MTU so that its parity
 * (PDS + parity header + length prefix + shard) fits one datagram. */
#define NW_EC_SHARD_RESERVE (NW_WIRE_PARITY_LEN + NW_EC_LEN_PREFIX)

/* nw_tx_slot_t.ec_kind */
#define NW_EC_SLOT_NONE 0
#define NW_EC_SLOT_DATA 1   /* a data packet inside a block */
#define NW_EC_SLOT_PARITY 2 /* a parity packet (resent as an empty parity header) */

/* A code's generator (Cauchy) matrix and ISA-L tables, cached per (k, m). */
typedef struct {
    uint8_t k, m;
    uint8_t matrix[(NW_EC_MAX_K + NW_EC_MAX_M) * NW_EC_MAX_K];
    uint8_t tables[32 * NW_EC_MAX_K * NW_EC_MAX_M];
} nw_ec_code_t;

/* Sender state of one PDC. */
typedef struct nw_ec_tx {
    uint8_t k, m;            /* code for the next block (k = 0: selective repeat only) */
    uint8_t bm;              /* parity count of the open block */
    uint8_t count;           /* data shards in the open block */
    uint8_t parity_left;     /* closed block: parity packets still to send */
    uint32_t base_psn;       /* first data PSN of the open/closing block */
    uint32_t shard_len;      /* longest shard of the block (prefix included) */
    uint32_t cap;            /* bytes per shard buffer */
    uint8_t *data;           /* NW_EC_MAX_K * cap: the block's data shards */
    uint8_t *parity;         /* NW_EC_MAX_M * cap: its parity */
    nw_ec_code_t code;
} nw_ec_tx_t;

/* One block the receiver learnt of from a parity packet. */
typedef struct {
    uint32_t base;
    uint16_t shard_len;
    uint8_t k, m, in_use, done;
} nw_ec_block_t;

/* Receiver state of one PDC (allocated on its first coded packet). */
typedef struct nw_ec_rx {
    uint32_t ring;           /* shard slots, power of two */
    uint32_t cap;            /* bytes per slot */
    uint8_t *buf;            /* ring * cap */
    uint32_t *psn;           /* slot tag */
    uint16_t *len;           /* shard bytes in the slot, 0 = empty */
    uint8_t *retx;           /* the shard came from a retransmission */
    uint8_t *out;            /* NW_EC_MAX_M * cap: decoded shards */
    uint8_t *pkt;            /* a rebuilt packet */
    uint32_t next_block;     /* round robin for replacing blocks */
    nw_ec_block_t blocks[NW_EC_RX_BLOCKS];
    nw_ec_code_t code;
    uint8_t inv[NW_EC_MAX_K * NW_EC_MAX_K], sub[NW_EC_MAX_K * NW_EC_MAX_K];
    uint8_t dec[NW_EC_MAX_M * NW_EC_MAX_K];
    uint8_t dec_tables[32 * NW_EC_MAX_K * NW_EC_MAX_M];
} nw_ec_rx_t;

#endif
