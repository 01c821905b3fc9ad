/*
 * basic_forward.p4 — netweft's basic IPv4 LPM forwarder (v1model).
 *
 * Control plane: MyIngress.ipv4_lpm on hdr.ipv4.dstAddr (lpm) selects
 *   MyIngress.ipv4_forward(dstAddr, port): set the next hop's MAC, use the
 *   switch port's old destination MAC as the new source MAC, decrement TTL;
 *   MyIngress.drop; NoAction.  The default action is drop.
 * Packets that are not IPv4, carry IPv4 options, or arrive with TTL <= 1 are
 * dropped.  The IPv4 header checksum is verified (bad ones are dropped) and
 * recomputed on the way out.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/parsers.p4"

struct metadata_t {
    bit<1> unused;
}

error { IPv4OptionsNotSupported }

parser BasicParser(packet_in packet,
                   out headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl == 5, error.IPv4OptionsNotSupported);
        transition accept;
    }
}

control BasicVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control MyIngress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action ipv4_forward(macAddr_t dstAddr, egressSpec_t port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = {
            hdr.ipv4.dstAddr: lpm;
        }
        actions = {
            ipv4_forward;
            drop;
            NoAction;
        }
        size = 1024;
        default_action = drop();
    }

    apply {
        if (standard_metadata.parser_error != error.NoError
                || standard_metadata.checksum_error == 1
                || !hdr.ipv4.isValid()
                || hdr.ipv4.ttl <= 1) {
            drop();
            return;
        }
        ipv4_lpm.apply();
    }
}

control MyEgress(inout headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control BasicComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

V1Switch(
    BasicParser(),
    BasicVerifyChecksum(),
    MyIngress(),
    MyEgress(),
    BasicComputeChecksum(),
    HeadersDeparser()
) main;
