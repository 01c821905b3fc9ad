/*
 * Externs with no packet-visible effect must not disturb forwarding: digest,
 * log_msg (with and without arguments), assert / assume that hold, random
 * within [lo, hi] when lo == hi, and tables implemented by an action_profile
 * or an action_selector (empty: they miss).  Output on port 2.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers {
    ethernet_t ethernet;
}

struct learn_t {
    bit<48> srcAddr;
    bit<9>  ingress_port;
}

struct metadata {
    bit<8> fixed;
}

parser MParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    table profiled {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_port; NoAction; }
        implementation = action_profile(32w8);
    }

    table selected {
        key = {
            hdr.ethernet.dstAddr: exact;
            hdr.ethernet.srcAddr: selector;
            hdr.ethernet.etherType: selector;
        }
        actions = { set_port; NoAction; }
        implementation = action_selector(HashAlgorithm.crc16, 32w16, 32w14);
    }

    apply {
        standard_metadata.egress_spec = 2;
        digest<learn_t>(1, { hdr.ethernet.srcAddr, standard_metadata.ingress_port });
        log_msg("plain message");
        log_msg("ethertype {} from port {}",
                { hdr.ethernet.etherType, standard_metadata.ingress_port });
        assert(hdr.ethernet.isValid());
        assume(standard_metadata.ingress_port != 511);
        random(meta.fixed, 8w42, 8w42);
        hdr.ethernet.srcAddr[7:0] = meta.fixed;
        if (!profiled.apply().hit) {
            hdr.ethernet.srcAddr[15:8] = 0x01;
        }
        if (!selected.apply().hit) {
            hdr.ethernet.srcAddr[23:16] = 0x02;
        }
    }
}

control MEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control MComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MParser(), MVerifyChecksum(), MIngress(), MEgress(),
         MComputeChecksum(), MDeparser()) main;
