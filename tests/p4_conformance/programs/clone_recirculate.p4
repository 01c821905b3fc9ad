/*
 * Clones (I2E, E2E), resubmit, recirculate and truncate in v1model, with user
 * metadata preserved through @field_list(1).  A control header after Ethernet
 * (type 0x88B6) selects the operation; the pipeline writes what it saw back.
 */
#include <core.p4>
#include <v1model.p4>

const bit<8> OP_I2E = 1;
const bit<8> OP_E2E = 2;
const bit<8> OP_RESUBMIT = 3;
const bit<8> OP_RECIRCULATE = 4;
const bit<8> OP_TRUNCATE = 5;
const bit<8> OP_I2E_AND_DROP = 6;

const bit<32> SESSION = 5;
const bit<9> OUT_PORT = 2;
const bit<9> SECOND_PASS_PORT = 3;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ctl_t {
    bit<8>  op;
    bit<8>  ig_instance;
    bit<8>  eg_instance;
    bit<8>  preserved;
    bit<8>  not_preserved;
    bit<8>  mark;
    bit<16> ig_length;
    bit<16> eg_length;
    bit<16> eg_port;
}

struct headers {
    ethernet_t ethernet;
    ctl_t      ctl;
}

struct metadata {
    @field_list(1)
    bit<8> preserved;
    bit<8> not_preserved;
}

parser CrParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88B6: parse_ctl;
            default: accept;
        }
    }
    state parse_ctl {
        packet.extract(hdr.ctl);
        transition accept;
    }
}

control CrVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control CrIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.ctl.isValid()) {
            mark_to_drop(standard_metadata);
            exit;
        }
        hdr.ctl.ig_instance = (bit<8>)standard_metadata.instance_type;
        hdr.ctl.ig_length = (bit<16>)standard_metadata.packet_length;
        standard_metadata.egress_spec = OUT_PORT;
        if (standard_metadata.instance_type == 0) {
            meta.preserved = 0xAB;
            meta.not_preserved = 0xCD;
            if (hdr.ctl.op == OP_I2E || hdr.ctl.op == OP_I2E_AND_DROP) {
                hdr.ctl.mark = 0x11;
                clone_preserving_field_list(CloneType.I2E, SESSION, 1);
                if (hdr.ctl.op == OP_I2E_AND_DROP) {
                    mark_to_drop(standard_metadata);
                }
            } else if (hdr.ctl.op == OP_RESUBMIT) {
                hdr.ctl.mark = 0x33;
                resubmit_preserving_field_list(1);
            }
        } else {
            /* second pass of a resubmitted or recirculated packet */
            standard_metadata.egress_spec = SECOND_PASS_PORT;
        }
    }
}

control CrEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.ctl.eg_instance = (bit<8>)standard_metadata.instance_type;
        hdr.ctl.eg_length = (bit<16>)standard_metadata.packet_length;
        hdr.ctl.eg_port = (bit<16>)standard_metadata.egress_port;
        hdr.ctl.preserved = meta.preserved;
        hdr.ctl.not_preserved = meta.not_preserved;
        if (standard_metadata.instance_type == 0 && hdr.ctl.ig_instance == 0) {
            if (hdr.ctl.op == OP_E2E) {
                hdr.ctl.mark = 0x22;
                clone_preserving_field_list(CloneType.E2E, SESSION, 1);
            } else if (hdr.ctl.op == OP_RECIRCULATE) {
                hdr.ctl.mark = 0x44;
                recirculate_preserving_field_list(1);
            } else if (hdr.ctl.op == OP_TRUNCATE) {
                truncate(18);
            }
        }
    }
}

control CrComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control CrDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ctl);
    }
}

V1Switch(CrParser(), CrVerifyChecksum(), CrIngress(), CrEgress(),
         CrComputeChecksum(), CrDeparser()) main;
