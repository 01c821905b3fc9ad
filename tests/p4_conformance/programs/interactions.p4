/*
 * Interactions between the v1model packet paths: recirculating a packet that
 * egress made longer, an E2E clone of a packet egress then drops, a resubmit
 * loop carrying a preserved counter, an I2E clone together with a resubmit,
 * E2E clones of multicast copies, and truncate() beyond the packet's length.
 * Control header after Ethernet (type 0x88BD); clone session 5.
 */
#include <core.p4>
#include <v1model.p4>

const bit<8> OP_RECIRCULATE_GROWN = 1;
const bit<8> OP_E2E_THEN_DROP = 2;
const bit<8> OP_RESUBMIT_LOOP = 3;
const bit<8> OP_TRUNCATE_LONG = 4;
const bit<8> OP_I2E_AND_RESUBMIT = 5;
const bit<8> OP_MULTICAST_E2E = 6;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ctl_t {
    bit<8>  op;
    bit<8>  passes;
    bit<16> ig_length;
    bit<8>  ig_instance;
    bit<8>  eg_instance;
    bit<8>  eg_port;
    bit<8>  eg_rid;
}

header extra_t {
    bit<32> word;
}

struct headers {
    ethernet_t ethernet;
    ctl_t      ctl;
    extra_t    extra;
}

struct metadata {
    @field_list(1)
    bit<8> passes;
}

parser IxParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.ctl);
        transition accept;
    }
}

control IxVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control IxIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.ctl.ig_length = (bit<16>)standard_metadata.packet_length;
        hdr.ctl.ig_instance = (bit<8>)standard_metadata.instance_type;
        standard_metadata.egress_spec = 2;
        bit<8> op = hdr.ctl.op;
        if (op == OP_RESUBMIT_LOOP) {
            if (meta.passes < 3) {
                meta.passes = meta.passes + 1;
                resubmit_preserving_field_list(1);
            } else {
                hdr.ctl.passes = meta.passes;
            }
        } else if (op == OP_I2E_AND_RESUBMIT && standard_metadata.instance_type == 0) {
            clone(CloneType.I2E, 5);
            resubmit_preserving_field_list(1);
        } else if (op == OP_MULTICAST_E2E) {
            standard_metadata.mcast_grp = 1;
        }
    }
}

control IxEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.ctl.eg_instance = (bit<8>)standard_metadata.instance_type;
        hdr.ctl.eg_port = (bit<8>)standard_metadata.egress_port;
        hdr.ctl.eg_rid = (bit<8>)standard_metadata.egress_rid;
        bit<8> op = hdr.ctl.op;
        if (op == OP_RECIRCULATE_GROWN && hdr.ctl.passes == 0) {
            hdr.ctl.passes = 1;
            hdr.extra.setValid();
            hdr.extra.word = 0xCAFEF00D;
            recirculate_preserving_field_list(1);
        } else if (op == OP_E2E_THEN_DROP && standard_metadata.instance_type == 0) {
            clone(CloneType.E2E, 5);
            mark_to_drop(standard_metadata);
        } else if (op == OP_TRUNCATE_LONG) {
            truncate(1000);
        } else if (op == OP_MULTICAST_E2E && standard_metadata.instance_type == 5) {
            clone(CloneType.E2E, 5);
        }
    }
}

control IxComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control IxDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ctl);
        packet.emit(hdr.extra);
    }
}

V1Switch(IxParser(), IxVerifyChecksum(), IxIngress(), IxEgress(),
         IxComputeChecksum(), IxDeparser()) main;
