/*
 * Tutorial-style multicast: a destination-MAC table either forwards to a port
 * or sends to multicast group 1; egress prunes the copy going back to the
 * ingress port and stamps the replication id into the source MAC's low bytes.
 */
#include <core.p4>
#include <v1model.p4>

typedef bit<9>  egressSpec_t;
typedef bit<48> macAddr_t;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action multicast() {
        standard_metadata.mcast_grp = 1;
    }
    action mac_forward(egressSpec_t port) {
        standard_metadata.egress_spec = port;
    }
    table mac_lookup {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { multicast; mac_forward; drop; }
        size = 1024;
        default_action = multicast();
    }
    apply {
        if (hdr.ethernet.isValid()) {
            mac_lookup.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    apply {
        if (standard_metadata.egress_port == standard_metadata.ingress_port) {
            drop();
        } else if (standard_metadata.instance_type == 5) {
            hdr.ethernet.srcAddr[15:0] = standard_metadata.egress_rid;
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
