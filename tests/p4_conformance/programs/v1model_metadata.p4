/*
 * Probes v1model standard_metadata semantics.  An Ethernet frame of type
 * 0x88B5 carries a probe header: `command` tells ingress what to do, and the
 * pipeline writes what it saw into the probe's other fields.
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_PROBE = 0x88B5;

const bit<8> CMD_FORWARD        = 1;  // egress_spec = arg
const bit<8> CMD_DROP_PORT      = 2;  // egress_spec = 511
const bit<8> CMD_MARK_TO_DROP   = 3;  // egress_spec = arg; mark_to_drop()
const bit<8> CMD_MULTICAST      = 4;  // mcast_grp = arg
const bit<8> CMD_NOTHING        = 5;  // leave egress_spec untouched
const bit<8> CMD_MCAST_OVER_DROP = 6; // egress_spec = 511; mcast_grp = arg
const bit<8> CMD_EGRESS_DROP    = 7;  // egress_spec = arg; egress calls mark_to_drop()
const bit<8> CMD_EXIT           = 8;  // egress_spec = arg; exit before a later drop
const bit<8> CMD_DROP_THEN_FWD  = 9;  // mark_to_drop(); then egress_spec = arg

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header probe_t {
    bit<8>  command;
    bit<8>  arg;
    bit<16> ig_port;
    bit<32> ig_length;
    bit<32> ig_instance;
    bit<32> eg_instance;
    bit<16> eg_port;
    bit<16> eg_rid;
    bit<32> eg_length;
}

struct headers {
    ethernet_t ethernet;
    probe_t    probe;
}

struct metadata {
    bit<8> command;
}

parser ProbeParser(packet_in packet, out headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_PROBE: parse_probe;
            default: accept;
        }
    }
    state parse_probe {
        packet.extract(hdr.probe);
        meta.command = hdr.probe.command;
        transition accept;
    }
}

control ProbeVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ProbeIngress(inout headers hdr, inout metadata meta,
                     inout standard_metadata_t standard_metadata) {
    action leave() {
        exit;
    }

    apply {
        if (!hdr.probe.isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        hdr.probe.ig_port = (bit<16>)standard_metadata.ingress_port;
        hdr.probe.ig_length = standard_metadata.packet_length;
        hdr.probe.ig_instance = standard_metadata.instance_type;
        bit<9> arg_port = (bit<9>)hdr.probe.arg;
        if (meta.command == CMD_FORWARD || meta.command == CMD_EGRESS_DROP) {
            standard_metadata.egress_spec = arg_port;
        } else if (meta.command == CMD_DROP_PORT) {
            standard_metadata.egress_spec = 511;
        } else if (meta.command == CMD_MARK_TO_DROP) {
            standard_metadata.egress_spec = arg_port;
            mark_to_drop(standard_metadata);
        } else if (meta.command == CMD_MULTICAST) {
            standard_metadata.mcast_grp = (bit<16>)hdr.probe.arg;
        } else if (meta.command == CMD_MCAST_OVER_DROP) {
            standard_metadata.egress_spec = 511;
            standard_metadata.mcast_grp = (bit<16>)hdr.probe.arg;
        } else if (meta.command == CMD_EXIT) {
            standard_metadata.egress_spec = arg_port;
            leave();
            standard_metadata.egress_spec = 511;
        } else if (meta.command == CMD_DROP_THEN_FWD) {
            mark_to_drop(standard_metadata);
            standard_metadata.egress_spec = arg_port;
        }
    }
}

control ProbeEgress(inout headers hdr, inout metadata meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        hdr.probe.eg_instance = standard_metadata.instance_type;
        hdr.probe.eg_port = (bit<16>)standard_metadata.egress_port;
        hdr.probe.eg_rid = standard_metadata.egress_rid;
        hdr.probe.eg_length = standard_metadata.packet_length;
        if (meta.command == CMD_EGRESS_DROP) {
            mark_to_drop(standard_metadata);
        }
    }
}

control ProbeComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ProbeDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.probe);
    }
}

V1Switch(ProbeParser(), ProbeVerifyChecksum(), ProbeIngress(), ProbeEgress(),
         ProbeComputeChecksum(), ProbeDeparser()) main;
