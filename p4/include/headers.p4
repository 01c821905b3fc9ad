/*
 * netweft shared protocol headers (P4-16).
 *
 * One declaration per wire header, used by every netweft v1model program.
 * Guarded so that several programs' includes can be combined.
 */
#ifndef NETWEFT_HEADERS_P4
#define NETWEFT_HEADERS_P4

typedef bit<9>   egressSpec_t;
typedef bit<48>  macAddr_t;
typedef bit<32>  ip4Addr_t;
typedef bit<128> ip6Addr_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_IPV6 = 0x86DD;
const bit<16> ETHERTYPE_VLAN = 0x8100;

const bit<8> IPPROTO_TCP  = 6;
const bit<8> IPPROTO_UDP  = 17;

/* UDP destination port of Ultra Ethernet transport (UET) traffic. */
const bit<16> UET_UDP_PORT = 4793;

/* ECN codepoints (RFC 3168) in the two low bits of the IPv4 TOS byte. */
const bit<2> ECN_NOT_ECT = 0;
const bit<2> ECN_ECT1    = 1;
const bit<2> ECN_ECT0    = 2;
const bit<2> ECN_CE      = 3;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

header vlan_t {
    bit<3>  pcp;
    bit<1>  dei;
    bit<12> vid;
    bit<16> etherType;
}

/* IPv4 with the TOS byte split into DSCP and ECN (RFC 2474, RFC 3168). */
header ipv4_t {
    bit<4>    version;
    bit<4>    ihl;
    bit<6>    dscp;
    bit<2>    ecn;
    bit<16>   totalLen;
    bit<16>   identification;
    bit<3>    flags;
    bit<13>   fragOffset;
    bit<8>    ttl;
    bit<8>    protocol;
    bit<16>   hdrChecksum;
    ip4Addr_t srcAddr;
    ip4Addr_t dstAddr;
}

/* IPv4 options, 0 to 40 bytes, sized by ihl. */
header ipv4_options_t {
    varbit<320> options;
}

header ipv6_t {
    bit<4>    version;
    bit<6>    dscp;
    bit<2>    ecn;
    bit<20>   flowLabel;
    bit<16>   payloadLen;
    bit<8>    nextHdr;
    bit<8>    hopLimit;
    ip6Addr_t srcAddr;
    ip6Addr_t dstAddr;
}

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

header tcp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<32> seqNo;
    bit<32> ackNo;
    bit<4>  dataOffset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgentPtr;
}

/* The IPv4/IPv6 5-tuple's transport ports, whichever of TCP or UDP carried them. */
struct l4_ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

struct headers_t {
    ethernet_t     ethernet;
    vlan_t         vlan;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    ipv6_t         ipv6;
    udp_t          udp;
    tcp_t          tcp;
}

#endif  /* NETWEFT_HEADERS_P4 */
