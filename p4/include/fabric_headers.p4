/*
 * netweft fabric program: the headers it reads beyond Ethernet/IP/UDP/TCP,
 * and its metadata (P4-16, needs headers.p4).  docs/fabric.md describes them.
 *
 *   uet_pds_t        the UET PDS prologue (docs/wire.md): type, next header,
 *                    flags; a trimming switch sets NW_PDS_F_TRIMMED in flags.
 *   uet_trim_keep_t  the rest of the first NW_WIRE_TRIM_KEEP (64) bytes of a UET
 *                    datagram's UDP payload: what a trimmed packet keeps.
 *   nw_mcast_t       netweft's reliable-multicast header (UDP port 4795):
 *                    DATA from the sender, ACKs from the receivers, which the
 *                    switches aggregate per (group, sequence).
 */
#ifndef NETWEFT_FABRIC_HEADERS_P4
#define NETWEFT_FABRIC_HEADERS_P4

#include "headers.p4"

/* UDP destination port of netweft's reliable-multicast datagrams. */
const bit<16> NW_MCAST_UDP_PORT = 4795;

/* nw_mcast_t.kind */
const bit<8> NW_MCAST_DATA = 1;
const bit<8> NW_MCAST_ACK  = 2;
/* nw_mcast_t.flags: set by the switch that completed the aggregation. */
const bit<8> NW_MCAST_F_AGGREGATED = 0x01;
/* UDP length of an ACK: 8 (UDP) + 12 (nw_mcast_t), nothing after it. */
const bit<16> NW_MCAST_ACK_UDP_LEN = 20;

/* UET PDS types that carry data and may be trimmed (docs/wire.md). */
const bit<5> UET_PDS_RUD    = 2;
const bit<5> UET_PDS_ROD    = 3;
const bit<5> UET_PDS_UUD    = 6;
const bit<5> UET_PDS_RUD_CC = 13;
const bit<5> UET_PDS_ROD_CC = 14;
/* NW_PDS_F_TRIMMED (nic_offload/include/uet_wire.h), in the 7-bit flags. */
const bit<7> UET_PDS_F_TRIMMED = 0x40;
/* NW_WIRE_TRIM_KEEP: UDP payload bytes a trimmed packet keeps. */
const bit<16> UET_TRIM_KEEP = 64;
/* UDP length of a trimmed packet: 8 + UET_TRIM_KEEP. */
const bit<16> UET_TRIMMED_UDP_LEN = 72;

header uet_pds_t {
    bit<5> pdsType;
    bit<4> nextHdr;
    bit<7> flags;
}

/* Bytes 2..63 of the UDP payload (62 bytes = 496 bits). */
header uet_trim_keep_t {
    bit<496> bytes;
}

header nw_mcast_t {
    bit<8>  kind;       /* NW_MCAST_DATA or NW_MCAST_ACK */
    bit<8>  flags;      /* NW_MCAST_F_AGGREGATED */
    bit<16> group;      /* multicast group id (= the replication group) */
    bit<32> seq;        /* sequence number of the data packet (ACK: acknowledged) */
    bit<32> receivers;  /* ACK: bitmap of the receivers that acknowledged seq */
}

struct fabric_headers_t {
    headers_t       base;
    uet_pds_t       pds;
    uet_trim_keep_t keep;
    nw_mcast_t      mcast;
}

#endif  /* NETWEFT_FABRIC_HEADERS_P4 */
