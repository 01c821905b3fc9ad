/* netweft's Ultra Ethernet 1.0 wire codec: PDS and SES headers over UDP.
 *
 * The byte layout is documented once, in docs/wire.md; this header is its one
 * declaration in C. nw_wire_parse() and nw_wire_build() are the only way the
 * engine reads or writes these headers. Both are pure functions over byte
 * buffers with explicit lengths: no allocation, no globals.
 *
 * Conventions
 *  - Every field of a struct is host order and right-aligned; the codec does
 *    the shifting and byte swapping.
 *  - Reserved bits are written as zero and ignored when parsing.
 *  - Fields that do not apply to a packet's type are zero after a parse and
 *    ignored by a build.
 */
#ifndef NETWEFT_UET_WIRE_H
#define NETWEFT_UET_WIRE_H

#include <stdint.h>

#define NW_WIRE_UDP_PORT 4793

/* ---- PDS types (5 bits) ---------------------------------------------- */
#define NW_PDS_RESERVED   0
#define NW_PDS_ENC        1   /* TSS: rejected by this codec */
#define NW_PDS_RUD        2
#define NW_PDS_ROD        3
#define NW_PDS_RUDI_REQ   4
#define NW_PDS_RUDI_RESP  5
#define NW_PDS_UUD        6
#define NW_PDS_ACK        7
#define NW_PDS_ACK_CC     8
#define NW_PDS_ACK_CCX    9
#define NW_PDS_NACK       10
#define NW_PDS_CTRL       11
#define NW_PDS_NACK_CCX   12
#define NW_PDS_RUD_CC     13
#define NW_PDS_ROD_CC     14

/* ---- next header (4 bits; CTRL packets put ctl_type there instead) ----
 * Requests may carry any of these; ACKs and NACKs carry only NONE and the
 * SES responses (RSP, RSP_DATA, RSP_DATA_SMALL): others are ENEXTHDR. */
#define NW_NH_NONE            0
#define NW_NH_REQ_SMALL       1   /* rejected: netweft does not use it */
#define NW_NH_REQ_MEDIUM      2   /* rejected: netweft does not use it */
#define NW_NH_REQ_STD         3
#define NW_NH_RSP             4
#define NW_NH_RSP_DATA        5
#define NW_NH_RSP_DATA_SMALL  6
#define NW_NH_NW_PARITY       15  /* netweft extension: erasure-coding parity */

/* ---- CTRL types (4 bits) --------------------------------------------- */
#define NW_CTRL_NOOP        0
#define NW_CTRL_REQ_ACK     1
#define NW_CTRL_CLEAR       2
#define NW_CTRL_REQ_CLEAR   3
#define NW_CTRL_CLOSE       4
#define NW_CTRL_REQ_CLOSE   5
#define NW_CTRL_PROBE       6
#define NW_CTRL_CREDIT      7
#define NW_CTRL_CREDIT_REQ  8

/* ---- PDS flags (7 bits; meaning depends on the type) ------------------ */
#define NW_PDS_F_TRIMMED   0x40  /* requests: netweft extension, set by a trimming switch */
#define NW_PDS_F_DUP       0x40  /* ACK: netweft extension, the trigger PSN had arrived before
                                     (a duplicate, like TCP's DSACK) */
#define NW_PDS_F_M         0x20  /* ACK/NACK: ECN marked */
#define NW_PDS_F_RETX      0x10  /* retransmission */
#define NW_PDS_F_AR        0x08  /* requests/CTRL: ACK request */
#define NW_PDS_F_P         0x08  /* ACK: probe response */
#define NW_PDS_F_NT        0x08  /* NACK: NACK type */
#define NW_PDS_F_SYN       0x04  /* requests/CTRL: new PDC, no dpdcid yet */
#define NW_PDS_F_EC        0x02  /* RUD requests: netweft extension, a parity block covers it */
#define NW_PDS_F_REQ_MASK  0x06  /* ACK: 2-bit request field */
#define NW_PDS_F_REQ_SHIFT 1
#define NW_ACK_REQ_NONE    0
#define NW_ACK_REQ_CLEAR   1
#define NW_ACK_REQ_CLOSE   2

/* ---- ACK congestion-control state types ------------------------------ */
#define NW_CC_NSCC    0
#define NW_CC_CREDIT  1

/* ---- NACK codes ------------------------------------------------------ */
#define NW_NACK_TRIMMED               0x01
#define NW_NACK_TRIMMED_LASTHOP       0x02
#define NW_NACK_TRIMMED_ACK           0x03
#define NW_NACK_NO_PDC_AVAIL          0x04
#define NW_NACK_NO_CCC_AVAIL          0x05
#define NW_NACK_NO_BITMAP             0x06
#define NW_NACK_NO_PKT_BUFFER         0x07
#define NW_NACK_NO_GTD_DEL_AVAIL      0x08
#define NW_NACK_NO_SES_MSG_AVAIL      0x09
#define NW_NACK_NO_RESOURCE           0x0A
#define NW_NACK_PSN_OOR_WINDOW        0x0B
#define NW_NACK_ROD_OOO               0x0D
#define NW_NACK_INV_DPDCID            0x0E
#define NW_NACK_PDC_HDR_MISMATCH      0x0F
#define NW_NACK_CLOSING               0x10
#define NW_NACK_CLOSING_IN_ERR        0x11
#define NW_NACK_PKT_NOT_RCVD          0x12
#define NW_NACK_GTD_DEL_RESP_UNAVAIL  0x13
#define NW_NACK_ACK_WITH_DATA         0x14
#define NW_NACK_INVALID_SYN           0x15
#define NW_NACK_PDC_MODE_MISMATCH     0x16
#define NW_NACK_NEW_START_PSN         0x17
#define NW_NACK_RCVD_SES_PROCG        0x18
#define NW_NACK_UNEXP_EVENT           0x19
#define NW_NACK_RCVR_INFER_LOSS       0x1A
#define NW_NACK_EXP_NORMAL            0xFD
#define NW_NACK_EXP_ERR               0xFE
#define NW_NACK_EXP_FATAL             0xFF
/* netweft's vendor codes (nack_vendor) under NW_NACK_EXP_FATAL: */
#define NW_NACK_VENDOR_TOO_BIG        0x01  /* packet longer than the receiver's MTU;
                                               nack_payload = that MTU (UDP payload bytes) */

/* ---- SES ------------------------------------------------------------- */
#define NW_SES_VERSION 0          /* UET 1.0 */

#define NW_SES_OP_NO_OP               0x00
#define NW_SES_OP_WRITE               0x01
#define NW_SES_OP_READ                0x02
#define NW_SES_OP_ATOMIC              0x03
#define NW_SES_OP_FETCHING_ATOMIC     0x04
#define NW_SES_OP_SEND                0x05
#define NW_SES_OP_RENDEZVOUS_SEND     0x06
#define NW_SES_OP_DATAGRAM_SEND       0x07
#define NW_SES_OP_DEFERRABLE_SEND     0x08
#define NW_SES_OP_TAGGED_SEND         0x09
#define NW_SES_OP_RENDEZVOUS_TSEND    0x0A
#define NW_SES_OP_DEFERRABLE_TSEND    0x0B
#define NW_SES_OP_DEFERRABLE_RTR      0x0C
#define NW_SES_OP_TSEND_ATOMIC        0x0D
#define NW_SES_OP_TSEND_FETCH_ATOMIC  0x0E
#define NW_SES_OP_MSG_ERROR           0x0F

#define NW_SES_F_DC   0x20  /* delivery complete */
#define NW_SES_F_IE   0x10  /* initiator error */
#define NW_SES_F_REL  0x08  /* relative addressing */
#define NW_SES_F_HD   0x04  /* header data present */
#define NW_SES_F_EOM  0x02  /* end of message */
#define NW_SES_F_SOM  0x01  /* start of message */

#define NW_SES_RSP_DEFAULT    0
#define NW_SES_RSP_RESPONSE   1
#define NW_SES_RSP_WITH_DATA  2
#define NW_SES_RSP_NONE       3

#define NW_SES_RC_NULL             0x00
#define NW_SES_RC_OK               0x01
#define NW_SES_RC_UNSUPPORTED_OP   0x06
#define NW_SES_RC_OP_VIOLATION     0x18
#define NW_SES_RC_BAD_MKEY         0x1C
#define NW_SES_RC_BAD_ADDR         0x1D
#define NW_SES_RC_TOO_LONG         0x22
#define NW_SES_RC_DROPPED          0x24

/* ---- sizes ------------------------------------------------------------ */
#define NW_WIRE_PDS_PROLOGUE_LEN   2
#define NW_WIRE_PDS_REQ_LEN        12  /* RUD, ROD */
#define NW_WIRE_PDS_REQ_CC_LEN     16  /* RUD_CC, ROD_CC */
#define NW_WIRE_PDS_UUD_LEN        4
#define NW_WIRE_PDS_RUDI_LEN       8
#define NW_WIRE_PDS_ACK_LEN        12
#define NW_WIRE_PDS_ACK_CC_LEN     32
#define NW_WIRE_PDS_ACK_CCX_LEN    40
#define NW_WIRE_PDS_NACK_LEN       16
#define NW_WIRE_PDS_NACK_CCX_LEN   32
#define NW_WIRE_PDS_CTRL_LEN       16
#define NW_WIRE_SES_STD_LEN        44
#define NW_WIRE_SES_RSP_LEN        12
#define NW_WIRE_SES_RSP_DATA_LEN   20
#define NW_WIRE_SES_RSP_SMALL_LEN  4
#define NW_WIRE_PARITY_LEN         12
#define NW_WIRE_MAX_HDR            64     /* >= largest PDS + next header (60) */
#define NW_WIRE_MAX_PAYLOAD        16383  /* 14-bit payload_length */
#define NW_WIRE_MAX_PKT            (NW_WIRE_MAX_HDR + NW_WIRE_MAX_PAYLOAD)
#define NW_WIRE_TRIM_KEEP          64     /* UDP payload bytes a trimming switch keeps */

/* ---- errors (negative return values) ---------------------------------- */
#define NW_WIRE_ETRUNC     (-101)  /* shorter than headers or a length field says */
#define NW_WIRE_EOVERSIZE  (-102)  /* longer than NW_WIRE_MAX_PKT or a length field says */
#define NW_WIRE_EVERSION   (-103)  /* SES version is not NW_SES_VERSION */
#define NW_WIRE_ETYPE      (-104)  /* reserved/unsupported PDS type */
#define NW_WIRE_ENEXTHDR   (-105)  /* reserved/unsupported next header or CTRL type */
#define NW_WIRE_EINVAL     (-106)  /* build: a field does not fit its bits */
#define NW_WIRE_ENOSPC     (-107)  /* build: buffer too small */
#define NW_WIRE_ERR_FIRST  (-107)
#define NW_WIRE_ERR_LAST   (-101)

/* PDS header: prologue plus every type's fields (see docs/wire.md). */
typedef struct nw_pds_hdr {
    uint8_t  type;            /* NW_PDS_* (5 bits) */
    uint8_t  next_hdr;        /* NW_NH_* (4 bits); 0 for CTRL */
    uint8_t  ctl_type;        /* CTRL only: NW_CTRL_* (4 bits) */
    uint8_t  flags;           /* NW_PDS_F_* (7 bits) */
    /* RUD/ROD(_CC) requests and CTRL */
    int16_t  clear_psn_off;   /* requests: clear PSN = psn + clear_psn_off */
    uint16_t probe_opaque;    /* CTRL */
    uint32_t psn;             /* requests, CTRL */
    uint16_t spdcid;          /* requests, ACK, NACK, CTRL */
    uint16_t dpdcid;          /* requests without SYN, ACK, NACK, CTRL */
    uint8_t  use_rsv_pdc;     /* requests with SYN: 1 bit */
    uint16_t start_psn_off;   /* requests with SYN: psn - start_psn, 12 bits */
    uint8_t  ccc_id;          /* RUD_CC/ROD_CC */
    uint32_t credit_target;   /* RUD_CC/ROD_CC: 24 bits */
    uint32_t rudi_pkt_id;     /* RUDI request/response */
    uint32_t ctrl_payload;    /* CTRL */
    /* ACK, ACK_CC, ACK_CCX */
    int16_t  ack_psn_off;     /* acked PSN = cack_psn + ack_psn_off */
    uint32_t cack_psn;        /* cumulative ACK PSN (inclusive) */
    uint8_t  cc_type;         /* ACK_CC/CCX: NW_CC_* (4 bits) */
    uint8_t  cc_flags;        /* ACK_CC/CCX: 4 bits */
    uint8_t  mpr;             /* ACK_CC/CCX: maximum PSN range */
    int16_t  sack_psn_off;    /* ACK_CC/CCX: SACK base = cack_psn + sack_psn_off (signed) */
    uint64_t sack_bitmap;     /* ACK_CC/CCX: bit i = PSN base + i received */
    uint16_t service_time;    /* ACK_CC, NSCC */
    uint8_t  restore_cwnd;    /* ACK_CC, NSCC: 1 bit */
    uint8_t  rcv_cwnd_pend;   /* ACK_CC, NSCC: 7 bits */
    uint32_t rcvd_bytes;      /* ACK_CC, NSCC: 24 bits */
    uint32_t credit;          /* ACK_CC, credit CC: 24 bits */
    uint16_t ooo_count;       /* ACK_CC */
    uint8_t  ccx_state[16];   /* ACK_CCX, NACK_CCX: opaque */
    /* NACK, NACK_CCX */
    uint8_t  nack_code;       /* NW_NACK_* */
    uint8_t  nack_vendor;
    uint32_t nack_psn;
    uint32_t nack_payload;
} nw_pds_hdr_t;

/* SES standard request (next_hdr NW_NH_REQ_STD). */
typedef struct nw_ses_std {
    uint8_t  opcode;          /* NW_SES_OP_* (6 bits) */
    uint8_t  version;         /* 2 bits, must be NW_SES_VERSION */
    uint8_t  flags;           /* NW_SES_F_* (6 bits) */
    uint16_t message_id;
    uint8_t  ri_generation;
    uint32_t job_id;          /* 24 bits */
    uint16_t pid_on_fep;      /* 12 bits */
    uint16_t resource_index;  /* 12 bits */
    uint64_t buffer_offset;   /* where the message starts in the target region */
    uint32_t initiator;
    uint64_t mem_key;         /* rkey (RMA) or match bits */
    uint64_t header_data;     /* SOM set only */
    uint16_t payload_length;  /* SOM clear only: 14 bits, bytes after the headers */
    uint32_t message_offset;  /* SOM clear only */
    uint32_t request_length;  /* message length */
} nw_ses_std_t;

/* SES response (NW_NH_RSP), response with data (NW_NH_RSP_DATA) and its small
 * form (NW_NH_RSP_DATA_SMALL). Fields a form lacks are zero. */
typedef struct nw_ses_rsp {
    uint8_t  list;                 /* 2 bits */
    uint8_t  opcode;               /* NW_SES_RSP_* (6 bits) */
    uint8_t  version;              /* 2 bits, must be NW_SES_VERSION */
    uint8_t  return_code;          /* NW_SES_RC_* (6 bits) */
    uint16_t message_id;           /* RSP, RSP_DATA */
    uint8_t  ri_generation;        /* RSP */
    uint32_t job_id;               /* RSP, RSP_DATA: 24 bits */
    uint32_t modified_length;      /* RSP, RSP_DATA */
    uint16_t read_req_message_id;  /* RSP_DATA */
    uint16_t payload_length;       /* RSP_DATA, RSP_DATA_SMALL: 14 bits */
    uint32_t message_offset;       /* RSP_DATA */
} nw_ses_rsp_t;

/* netweft extension (NW_NH_NW_PARITY): erasure-coding parity header. */
typedef struct nw_parity_hdr {
    uint32_t base_psn;   /* first data PSN of the protected group */
    uint8_t  k;          /* data packets in the group */
    uint8_t  m;          /* parity packets in the group */
    uint8_t  index;      /* this parity packet, 0 <= index < m */
    uint16_t shard_len;  /* parity payload bytes after the header */
} nw_parity_hdr_t;

/* A whole packet's headers. Only the part named by pds.next_hdr is valid. */
typedef struct nw_wire_pkt {
    nw_pds_hdr_t    pds;
    nw_ses_std_t    ses;     /* next_hdr == NW_NH_REQ_STD */
    nw_ses_rsp_t    rsp;     /* next_hdr == NW_NH_RSP, _RSP_DATA, _RSP_DATA_SMALL */
    nw_parity_hdr_t parity;  /* next_hdr == NW_NH_NW_PARITY */
    /* Outputs of nw_wire_parse (ignored by nw_wire_build): */
    uint32_t hdr_len;        /* header bytes; the payload starts here */
    uint32_t payload_len;    /* bytes after the headers */
    uint8_t  trimmed;        /* a request carrying NW_PDS_F_TRIMMED */
} nw_wire_pkt_t;

/* Parse one UDP payload. Returns the header length (>= 2; the payload is
 * buf[ret .. len)) or a negative NW_WIRE_E* code. `out` is fully overwritten;
 * on error its contents are unspecified. Never reads outside buf[0 .. len). */
int32_t nw_wire_parse(const uint8_t *buf, uint32_t len, nw_wire_pkt_t *out);

/* Write the headers of `pkt` into buf[0 .. cap). Returns the header length or
 * a negative NW_WIRE_E* code (EINVAL, ETYPE, ENEXTHDR, ENOSPC). The caller
 * appends the payload at buf + ret; length fields (payload_length, shard_len)
 * are written as given in `pkt`. */
int32_t nw_wire_build(const nw_wire_pkt_t *pkt, uint8_t *buf, uint32_t cap);

/* Header length that nw_wire_build would write for `pkt`, or a negative code. */
int32_t nw_wire_hdr_len(const nw_wire_pkt_t *pkt);

/* What a trimming switch does to a datagram (docs/wire.md, "trimmed mark"):
 * cuts the UDP payload buf[0 .. len) to NW_WIRE_TRIM_KEEP bytes (the PDS
 * header and the next header of any request stay whole) and sets
 * NW_PDS_F_TRIMMED in the prologue. Returns the new length, or NW_WIRE_ETYPE
 * if the packet is not a request that may be trimmed (RUD/ROD(_CC), UUD),
 * NW_WIRE_ETRUNC if it is shorter than a PDS prologue. */
int32_t nw_wire_trim(uint8_t *buf, uint32_t len);

/* Human-readable name of an NW_WIRE_E* code ("truncated", ...). */
const char *nw_wire_strerror(int32_t err);

#endif
