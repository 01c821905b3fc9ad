/* netweft's Ultra Ethernet 1.0 wire codec: parse and build PDS/SES headers.
 * Layout: docs/wire.md. Every read is preceded by a length check against the
 * caller's buffer length; nothing here allocates or keeps state. */
#include "uet_wire.h"

#include <stddef.h>
#include <string.h>

/* ---- big-endian byte access ------------------------------------------ */

static inline uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

static inline uint32_t get24(const uint8_t *p)
{
    return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static inline uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t get64(const uint8_t *p)
{
    return ((uint64_t)get32(p) << 32) | get32(p + 4);
}

static inline void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void put24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

/* ---- header lengths ---------------------------------------------------- */

/* Length of the PDS header (with prologue) for `type`, or NW_WIRE_ETYPE. */
static int32_t pds_len(uint8_t type)
{
    switch (type) {
    case NW_PDS_RUD:
    case NW_PDS_ROD:
        return NW_WIRE_PDS_REQ_LEN;
    case NW_PDS_RUD_CC:
    case NW_PDS_ROD_CC:
        return NW_WIRE_PDS_REQ_CC_LEN;
    case NW_PDS_RUDI_REQ:
    case NW_PDS_RUDI_RESP:
        return NW_WIRE_PDS_RUDI_LEN;
    case NW_PDS_UUD:
        return NW_WIRE_PDS_UUD_LEN;
    case NW_PDS_ACK:
        return NW_WIRE_PDS_ACK_LEN;
    case NW_PDS_ACK_CC:
        return NW_WIRE_PDS_ACK_CC_LEN;
    case NW_PDS_ACK_CCX:
        return NW_WIRE_PDS_ACK_CCX_LEN;
    case NW_PDS_NACK:
        return NW_WIRE_PDS_NACK_LEN;
    case NW_PDS_NACK_CCX:
        return NW_WIRE_PDS_NACK_CCX_LEN;
    case NW_PDS_CTRL:
        return NW_WIRE_PDS_CTRL_LEN;
    default:
        return NW_WIRE_ETYPE;
    }
}

static int is_reliable_request(uint8_t type)
{
    return type == NW_PDS_RUD || type == NW_PDS_ROD || type == NW_PDS_RUD_CC ||
           type == NW_PDS_ROD_CC;
}

/* Types on which the netweft trimmed mark (NW_PDS_F_TRIMMED) is meaningful. */
static int is_trimmable(uint8_t type)
{
    return is_reliable_request(type) || type == NW_PDS_UUD;
}

static int is_ack(uint8_t type)
{
    return type == NW_PDS_ACK || type == NW_PDS_ACK_CC || type == NW_PDS_ACK_CCX;
}

static int is_nack(uint8_t type)
{
    return type == NW_PDS_NACK || type == NW_PDS_NACK_CCX;
}

/* Length of the header that `next_hdr` puts after a PDS header of `type`, or
 * ENEXTHDR. ACKs and NACKs carry SES responses only; requests carry any. */
static int32_t next_len(uint8_t type, uint8_t next_hdr)
{
    int response_only = is_ack(type) || is_nack(type);
    switch (next_hdr) {
    case NW_NH_NONE:
        return 0;
    case NW_NH_RSP:
        return NW_WIRE_SES_RSP_LEN;
    case NW_NH_RSP_DATA:
        return NW_WIRE_SES_RSP_DATA_LEN;
    case NW_NH_RSP_DATA_SMALL:
        return NW_WIRE_SES_RSP_SMALL_LEN;
    case NW_NH_REQ_STD:
        return response_only ? NW_WIRE_ENEXTHDR : NW_WIRE_SES_STD_LEN;
    case NW_NH_NW_PARITY:
        return response_only ? NW_WIRE_ENEXTHDR : NW_WIRE_PARITY_LEN;
    default:
        return NW_WIRE_ENEXTHDR;
    }
}

/* ---- PDS parse (the caller has checked len >= pds_len(type)) ------------ */

static void parse_request(const uint8_t *b, nw_pds_hdr_t *h)
{
    h->clear_psn_off = (int16_t)get16(b + 2);
    h->psn = get32(b + 4);
    h->spdcid = get16(b + 8);
    if (h->flags & NW_PDS_F_SYN) {
        uint16_t info = get16(b + 10);
        h->use_rsv_pdc = (uint8_t)(info >> 15);
        h->start_psn_off = info & 0x0fff;
    } else {
        h->dpdcid = get16(b + 10);
    }
    if (h->type == NW_PDS_RUD_CC || h->type == NW_PDS_ROD_CC) {
        h->ccc_id = b[12];
        h->credit_target = get24(b + 13);
    }
}

static void parse_cc_state(const uint8_t *s, nw_pds_hdr_t *h)
{
    if (h->cc_type == NW_CC_CREDIT) {
        h->credit = get24(s);
    } else {
        h->service_time = get16(s);
        h->restore_cwnd = (uint8_t)(s[2] >> 7);
        h->rcv_cwnd_pend = s[2] & 0x7f;
        h->rcvd_bytes = get24(s + 3);
    }
    h->ooo_count = get16(s + 6);
}

static void parse_ack(const uint8_t *b, nw_pds_hdr_t *h)
{
    h->ack_psn_off = (int16_t)get16(b + 2);
    h->cack_psn = get32(b + 4);
    h->spdcid = get16(b + 8);
    h->dpdcid = get16(b + 10);
    if (h->type == NW_PDS_ACK)
        return;
    h->cc_type = (uint8_t)(b[12] >> 4);
    h->cc_flags = b[12] & 0x0f;
    h->mpr = b[13];
    h->sack_psn_off = (int16_t)get16(b + 14);
    h->sack_bitmap = get64(b + 16);
    if (h->type == NW_PDS_ACK_CC)
        parse_cc_state(b + 24, h);
    else
        memcpy(h->ccx_state, b + 24, sizeof h->ccx_state);
}

static void parse_nack(const uint8_t *b, nw_pds_hdr_t *h)
{
    h->nack_code = b[2];
    h->nack_vendor = b[3];
    h->nack_psn = get32(b + 4);
    h->spdcid = get16(b + 8);
    h->dpdcid = get16(b + 10);
    h->nack_payload = get32(b + 12);
    if (h->type == NW_PDS_NACK_CCX)
        memcpy(h->ccx_state, b + 16, sizeof h->ccx_state);
}

static void parse_ctrl(const uint8_t *b, nw_pds_hdr_t *h)
{
    h->probe_opaque = get16(b + 2);
    h->psn = get32(b + 4);
    h->spdcid = get16(b + 8);
    h->dpdcid = get16(b + 10);
    h->ctrl_payload = get32(b + 12);
}

static void parse_pds_body(const uint8_t *b, nw_pds_hdr_t *h)
{
    if (is_reliable_request(h->type))
        parse_request(b, h);
    else if (is_ack(h->type))
        parse_ack(b, h);
    else if (is_nack(h->type))
        parse_nack(b, h);
    else if (h->type == NW_PDS_CTRL)
        parse_ctrl(b, h);
    else if (h->type == NW_PDS_RUDI_REQ || h->type == NW_PDS_RUDI_RESP)
        h->rudi_pkt_id = get32(b + 4);
    /* UUD: two reserved bytes, nothing to read */
}

/* ---- SES / parity parse (the caller has checked the length) -------------- */

static int32_t parse_ses_std(const uint8_t *b, nw_ses_std_t *s)
{
    s->opcode = b[0] & 0x3f;
    s->version = (uint8_t)(b[1] >> 6);
    s->flags = b[1] & 0x3f;
    if (s->version != NW_SES_VERSION)
        return NW_WIRE_EVERSION;
    s->message_id = get16(b + 2);
    s->ri_generation = b[4];
    s->job_id = get24(b + 5);
    s->pid_on_fep = get16(b + 8) & 0x0fff;
    s->resource_index = get16(b + 10) & 0x0fff;
    s->buffer_offset = get64(b + 12);
    s->initiator = get32(b + 20);
    s->mem_key = get64(b + 24);
    if (s->flags & NW_SES_F_SOM) {
        s->header_data = get64(b + 32);
    } else {
        s->payload_length = (uint16_t)(get32(b + 32) & 0x3fff);
        s->message_offset = get32(b + 36);
    }
    s->request_length = get32(b + 40);
    return 0;
}

/* Common first two bytes of every SES response form. */
static int32_t parse_rsp_prefix(const uint8_t *b, nw_ses_rsp_t *r)
{
    r->list = (uint8_t)(b[0] >> 6);
    r->opcode = b[0] & 0x3f;
    r->version = (uint8_t)(b[1] >> 6);
    r->return_code = b[1] & 0x3f;
    return r->version == NW_SES_VERSION ? 0 : NW_WIRE_EVERSION;
}

static int32_t parse_rsp(const uint8_t *b, uint8_t next_hdr, nw_ses_rsp_t *r)
{
    int32_t rc = parse_rsp_prefix(b, r);
    if (rc < 0)
        return rc;
    if (next_hdr == NW_NH_RSP_DATA_SMALL) {
        r->payload_length = get16(b + 2) & 0x3fff;
        return 0;
    }
    r->message_id = get16(b + 2);
    r->job_id = get24(b + 5);
    if (next_hdr == NW_NH_RSP) {
        r->ri_generation = b[4];
        r->modified_length = get32(b + 8);
        return 0;
    }
    r->read_req_message_id = get16(b + 8);
    r->payload_length = get16(b + 10) & 0x3fff;
    r->modified_length = get32(b + 12);
    r->message_offset = get32(b + 16);
    return 0;
}

static void parse_parity(const uint8_t *b, nw_parity_hdr_t *p)
{
    p->base_psn = get32(b);
    p->k = b[4];
    p->m = b[5];
    p->index = b[6];
    p->shard_len = get16(b + 8);
}

/* Parses the header after the PDS header; returns 0 or a negative code. */
static int32_t parse_next(const uint8_t *b, nw_wire_pkt_t *out)
{
    switch (out->pds.next_hdr) {
    case NW_NH_REQ_STD:
        return parse_ses_std(b, &out->ses);
    case NW_NH_RSP:
    case NW_NH_RSP_DATA:
    case NW_NH_RSP_DATA_SMALL:
        return parse_rsp(b, out->pds.next_hdr, &out->rsp);
    case NW_NH_NW_PARITY:
        parse_parity(b, &out->parity);
        return 0;
    default:
        return 0;
    }
}

/* Payload length a header field announces, or -1 when none does. */
static int64_t declared_payload(const nw_wire_pkt_t *pkt)
{
    switch (pkt->pds.next_hdr) {
    case NW_NH_REQ_STD:
        return (pkt->ses.flags & NW_SES_F_SOM) ? -1 : (int64_t)pkt->ses.payload_length;
    case NW_NH_RSP_DATA:
    case NW_NH_RSP_DATA_SMALL:
        return pkt->rsp.payload_length;
    case NW_NH_NW_PARITY:
        return pkt->parity.shard_len;
    default:
        return -1;
    }
}

int32_t nw_wire_parse(const uint8_t *buf, uint32_t len, nw_wire_pkt_t *out)
{
    if (out == NULL)
        return NW_WIRE_EINVAL;
    memset(out, 0, sizeof *out);
    if (buf == NULL && len > 0)
        return NW_WIRE_EINVAL;
    if (len > NW_WIRE_MAX_PKT)
        return NW_WIRE_EOVERSIZE;
    if (len < NW_WIRE_PDS_PROLOGUE_LEN)
        return NW_WIRE_ETRUNC;

    uint16_t word = get16(buf);
    nw_pds_hdr_t *h = &out->pds;
    h->type = (uint8_t)(word >> 11);
    h->flags = (uint8_t)(word & 0x7f);
    uint8_t nibble = (uint8_t)((word >> 7) & 0x0f);

    int32_t plen = pds_len(h->type);
    if (plen < 0)
        return plen;
    int32_t nlen = 0;
    if (h->type == NW_PDS_CTRL) {
        if (nibble > NW_CTRL_CREDIT_REQ)
            return NW_WIRE_ENEXTHDR;
        h->ctl_type = nibble;
    } else {
        h->next_hdr = nibble;
        nlen = next_len(h->type, nibble);
        if (nlen < 0)
            return nlen;
    }
    uint32_t hdr = (uint32_t)plen + (uint32_t)nlen;
    if (len < hdr)
        return NW_WIRE_ETRUNC;

    parse_pds_body(buf, h);
    int32_t rc = parse_next(buf + plen, out);
    if (rc < 0)
        return rc;

    out->hdr_len = hdr;
    out->payload_len = len - hdr;
    out->trimmed = (uint8_t)(is_trimmable(h->type) && (h->flags & NW_PDS_F_TRIMMED));
    int64_t want = declared_payload(out);
    if (want >= 0 && !out->trimmed) {
        if ((int64_t)out->payload_len < want)
            return NW_WIRE_ETRUNC;
        if ((int64_t)out->payload_len > want)
            return NW_WIRE_EOVERSIZE;
    }
    return (int32_t)hdr;
}

/* ---- build ------------------------------------------------------------- */

/* NW_WIRE_EINVAL when any PDS field exceeds its bit width. */
static int32_t check_pds(const nw_pds_hdr_t *h)
{
    if (h->flags > 0x7f)
        return NW_WIRE_EINVAL;
    if (is_reliable_request(h->type) && (h->flags & NW_PDS_F_SYN) &&
        (h->use_rsv_pdc > 1 || h->start_psn_off > 0x0fff))
        return NW_WIRE_EINVAL;
    if ((h->type == NW_PDS_RUD_CC || h->type == NW_PDS_ROD_CC) && h->credit_target > 0xffffff)
        return NW_WIRE_EINVAL;
    if (h->type == NW_PDS_ACK_CC || h->type == NW_PDS_ACK_CCX) {
        if (h->cc_type > 0x0f || h->cc_flags > 0x0f)
            return NW_WIRE_EINVAL;
    }
    if (h->type == NW_PDS_ACK_CC) {
        if (h->cc_type == NW_CC_CREDIT && h->credit > 0xffffff)
            return NW_WIRE_EINVAL;
        if (h->cc_type != NW_CC_CREDIT &&
            (h->restore_cwnd > 1 || h->rcv_cwnd_pend > 0x7f || h->rcvd_bytes > 0xffffff))
            return NW_WIRE_EINVAL;
    }
    return 0;
}

static int32_t check_next(const nw_wire_pkt_t *pkt)
{
    const nw_ses_std_t *s = &pkt->ses;
    const nw_ses_rsp_t *r = &pkt->rsp;
    switch (pkt->pds.next_hdr) {
    case NW_NH_REQ_STD:
        if (s->opcode > 0x3f || s->version > 3 || s->flags > 0x3f || s->job_id > 0xffffff ||
            s->pid_on_fep > 0x0fff || s->resource_index > 0x0fff)
            return NW_WIRE_EINVAL;
        if (!(s->flags & NW_SES_F_SOM) && s->payload_length > NW_WIRE_MAX_PAYLOAD)
            return NW_WIRE_EINVAL;
        return 0;
    case NW_NH_RSP:
    case NW_NH_RSP_DATA:
    case NW_NH_RSP_DATA_SMALL:
        if (r->list > 3 || r->opcode > 0x3f || r->version > 3 || r->return_code > 0x3f ||
            r->job_id > 0xffffff || r->payload_length > NW_WIRE_MAX_PAYLOAD)
            return NW_WIRE_EINVAL;
        return 0;
    default:
        return 0;
    }
}

int32_t nw_wire_hdr_len(const nw_wire_pkt_t *pkt)
{
    if (pkt == NULL)
        return NW_WIRE_EINVAL;
    int32_t plen = pds_len(pkt->pds.type);
    if (plen < 0)
        return plen;
    if (pkt->pds.type == NW_PDS_CTRL)
        return pkt->pds.ctl_type > NW_CTRL_CREDIT_REQ ? NW_WIRE_ENEXTHDR : plen;
    int32_t nlen = next_len(pkt->pds.type, pkt->pds.next_hdr);
    if (nlen < 0)
        return nlen;
    return plen + nlen;
}

static void build_request(const nw_pds_hdr_t *h, uint8_t *b)
{
    put16(b + 2, (uint16_t)h->clear_psn_off);
    put32(b + 4, h->psn);
    put16(b + 8, h->spdcid);
    if (h->flags & NW_PDS_F_SYN)
        put16(b + 10, (uint16_t)(((uint16_t)h->use_rsv_pdc << 15) | h->start_psn_off));
    else
        put16(b + 10, h->dpdcid);
    if (h->type == NW_PDS_RUD_CC || h->type == NW_PDS_ROD_CC) {
        b[12] = h->ccc_id;
        put24(b + 13, h->credit_target);
    }
}

static void build_cc_state(const nw_pds_hdr_t *h, uint8_t *s)
{
    if (h->cc_type == NW_CC_CREDIT) {
        put24(s, h->credit);
    } else {
        put16(s, h->service_time);
        s[2] = (uint8_t)((h->restore_cwnd << 7) | h->rcv_cwnd_pend);
        put24(s + 3, h->rcvd_bytes);
    }
    put16(s + 6, h->ooo_count);
}

static void build_ack(const nw_pds_hdr_t *h, uint8_t *b)
{
    put16(b + 2, (uint16_t)h->ack_psn_off);
    put32(b + 4, h->cack_psn);
    put16(b + 8, h->spdcid);
    put16(b + 10, h->dpdcid);
    if (h->type == NW_PDS_ACK)
        return;
    b[12] = (uint8_t)((h->cc_type << 4) | h->cc_flags);
    b[13] = h->mpr;
    put16(b + 14, (uint16_t)h->sack_psn_off);
    put64(b + 16, h->sack_bitmap);
    if (h->type == NW_PDS_ACK_CC)
        build_cc_state(h, b + 24);
    else
        memcpy(b + 24, h->ccx_state, sizeof h->ccx_state);
}

static void build_nack(const nw_pds_hdr_t *h, uint8_t *b)
{
    b[2] = h->nack_code;
    b[3] = h->nack_vendor;
    put32(b + 4, h->nack_psn);
    put16(b + 8, h->spdcid);
    put16(b + 10, h->dpdcid);
    put32(b + 12, h->nack_payload);
    if (h->type == NW_PDS_NACK_CCX)
        memcpy(b + 16, h->ccx_state, sizeof h->ccx_state);
}

static void build_ctrl(const nw_pds_hdr_t *h, uint8_t *b)
{
    put16(b + 2, h->probe_opaque);
    put32(b + 4, h->psn);
    put16(b + 8, h->spdcid);
    put16(b + 10, h->dpdcid);
    put32(b + 12, h->ctrl_payload);
}

static void build_pds(const nw_pds_hdr_t *h, uint8_t *b)
{
    uint8_t nibble = h->type == NW_PDS_CTRL ? h->ctl_type : h->next_hdr;
    put16(b, (uint16_t)(((uint16_t)h->type << 11) | ((uint16_t)nibble << 7) | h->flags));
    if (is_reliable_request(h->type))
        build_request(h, b);
    else if (is_ack(h->type))
        build_ack(h, b);
    else if (is_nack(h->type))
        build_nack(h, b);
    else if (h->type == NW_PDS_CTRL)
        build_ctrl(h, b);
    else if (h->type == NW_PDS_RUDI_REQ || h->type == NW_PDS_RUDI_RESP)
        put32(b + 4, h->rudi_pkt_id);
}

static void build_ses_std(const nw_ses_std_t *s, uint8_t *b)
{
    b[0] = s->opcode;
    b[1] = (uint8_t)((s->version << 6) | s->flags);
    put16(b + 2, s->message_id);
    b[4] = s->ri_generation;
    put24(b + 5, s->job_id);
    put16(b + 8, s->pid_on_fep);
    put16(b + 10, s->resource_index);
    put64(b + 12, s->buffer_offset);
    put32(b + 20, s->initiator);
    put64(b + 24, s->mem_key);
    if (s->flags & NW_SES_F_SOM) {
        put64(b + 32, s->header_data);
    } else {
        put32(b + 32, s->payload_length);
        put32(b + 36, s->message_offset);
    }
    put32(b + 40, s->request_length);
}

static void build_rsp(const nw_ses_rsp_t *r, uint8_t next_hdr, uint8_t *b)
{
    b[0] = (uint8_t)((r->list << 6) | r->opcode);
    b[1] = (uint8_t)((r->version << 6) | r->return_code);
    if (next_hdr == NW_NH_RSP_DATA_SMALL) {
        put16(b + 2, r->payload_length);
        return;
    }
    put16(b + 2, r->message_id);
    put24(b + 5, r->job_id);
    if (next_hdr == NW_NH_RSP) {
        b[4] = r->ri_generation;
        put32(b + 8, r->modified_length);
        return;
    }
    put16(b + 8, r->read_req_message_id);
    put16(b + 10, r->payload_length);
    put32(b + 12, r->modified_length);
    put32(b + 16, r->message_offset);
}

static void build_parity(const nw_parity_hdr_t *p, uint8_t *b)
{
    put32(b, p->base_psn);
    b[4] = p->k;
    b[5] = p->m;
    b[6] = p->index;
    put16(b + 8, p->shard_len);
}

int32_t nw_wire_build(const nw_wire_pkt_t *pkt, uint8_t *buf, uint32_t cap)
{
    int32_t total = nw_wire_hdr_len(pkt);
    if (total < 0)
        return total;
    int32_t rc = check_pds(&pkt->pds);
    if (rc == 0 && pkt->pds.type != NW_PDS_CTRL)
        rc = check_next(pkt);
    if (rc < 0)
        return rc;
    if (buf == NULL || cap < (uint32_t)total)
        return NW_WIRE_ENOSPC;

    memset(buf, 0, (size_t)total);
    build_pds(&pkt->pds, buf);
    uint8_t *next = buf + pds_len(pkt->pds.type);
    switch (pkt->pds.type == NW_PDS_CTRL ? NW_NH_NONE : pkt->pds.next_hdr) {
    case NW_NH_REQ_STD:
        build_ses_std(&pkt->ses, next);
        break;
    case NW_NH_RSP:
    case NW_NH_RSP_DATA:
    case NW_NH_RSP_DATA_SMALL:
        build_rsp(&pkt->rsp, pkt->pds.next_hdr, next);
        break;
    case NW_NH_NW_PARITY:
        build_parity(&pkt->parity, next);
        break;
    default:
        break;
    }
    return total;
}

int32_t nw_wire_trim(uint8_t *buf, uint32_t len)
{
    if (buf == NULL || len < NW_WIRE_PDS_PROLOGUE_LEN)
        return NW_WIRE_ETRUNC;
    if (!is_trimmable((uint8_t)(buf[0] >> 3)))
        return NW_WIRE_ETYPE;
    buf[1] |= NW_PDS_F_TRIMMED; /* flags are the prologue's low 7 bits */
    return (int32_t)(len < NW_WIRE_TRIM_KEEP ? len : NW_WIRE_TRIM_KEEP);
}

const char *nw_wire_strerror(int32_t err)
{
    switch (err) {
    case NW_WIRE_ETRUNC:
        return "truncated packet";
    case NW_WIRE_EOVERSIZE:
        return "oversized packet";
    case NW_WIRE_EVERSION:
        return "unsupported SES version";
    case NW_WIRE_ETYPE:
        return "reserved or unsupported PDS type";
    case NW_WIRE_ENEXTHDR:
        return "reserved or unsupported next header or control type";
    case NW_WIRE_EINVAL:
        return "header field does not fit its bits";
    case NW_WIRE_ENOSPC:
        return "buffer too small for the headers";
    default:
        return err >= 0 ? "success" : "unknown wire error";
    }
}
