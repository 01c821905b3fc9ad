/*
 * netweft shared parsing and deparsing pieces (P4-16, needs headers.p4).
 *
 * EthernetIpParser is a sub-parser: a program's top-level parser applies it
 * with `EthernetIpParser() l3; ... l3.apply(packet, hdr, l4);` so that every
 * program reads Ethernet / VLAN / IPv4 / IPv6 / UDP / TCP the same way.
 * HeadersDeparser emits every valid header of headers_t in wire order and can
 * serve directly as a V1Switch deparser.
 */
#ifndef NETWEFT_PARSERS_P4
#define NETWEFT_PARSERS_P4

#include "headers.p4"

/* Raised when an IPv4 header's ihl is below 5 (a malformed header). */
error { IPv4HeaderTooShort }

parser EthernetIpParser(packet_in packet, out headers_t hdr, out l4_ports_t l4) {
    state start {
        l4.srcPort = 0;
        l4.dstPort = 0;
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_VLAN: parse_vlan;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_vlan {
        packet.extract(hdr.vlan);
        transition select(hdr.vlan.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.IPv4HeaderTooShort);
        transition select(hdr.ipv4.ihl) {
            5: parse_ipv4_payload;
            default: parse_ipv4_options;
        }
    }

    state parse_ipv4_options {
        /* (ihl - 5) 32-bit words of options. */
        packet.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition parse_ipv4_payload;
    }

    state parse_ipv4_payload {
        transition select(hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (0, IPPROTO_UDP): parse_udp;
            (0, IPPROTO_TCP): parse_tcp;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        transition select(hdr.ipv6.nextHdr) {
            IPPROTO_UDP: parse_udp;
            IPPROTO_TCP: parse_tcp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        l4.srcPort = hdr.udp.srcPort;
        l4.dstPort = hdr.udp.dstPort;
        transition accept;
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        l4.srcPort = hdr.tcp.srcPort;
        l4.dstPort = hdr.tcp.dstPort;
        transition accept;
    }
}

control HeadersDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.vlan);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv4_options);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.tcp);
    }
}

/* Recomputes the IPv4 header checksum (options included) when IPv4 is valid. */
control Ipv4ChecksumUpdate(inout headers_t hdr) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4_options.options },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

#endif  /* NETWEFT_PARSERS_P4 */
