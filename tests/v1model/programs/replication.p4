// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern clone3
// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern resubmit
/* Multicast through the PRE, clones preserving a field list, resubmit,
 * recirculate, truncate, checksums over the payload, random and log_msg.
 * A control header (ethertype 0x88B7) says what to do; ingress and egress
 * write what they saw back into it. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ctl_t {
    bit<8>  op;
    bit<8>  passes;      /* ingress passes so far (kept across resubmit/recirculate) */
    bit<16> rid;         /* egress_rid seen in egress */
    bit<8>  ig_type;     /* instance_type seen in ingress */
    bit<8>  eg_type;     /* instance_type seen in egress */
    bit<8>  kept;        /* a @field_list(1) metadata field seen in egress */
    bit<8>  rnd;         /* random value in [10, 20] */
    bit<16> csum;        /* csum16 over {op} and the payload */
}
struct headers_t { ethernet_t eth; ctl_t ctl; }
struct meta_t {
    @field_list(1) bit<8> kept;
    @field_list(1) bit<8> passes;
    bit<8> lost;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum_with_payload(hdr.ctl.op == 12, { hdr.ctl.op }, hdr.ctl.csum,
                                     HashAlgorithm.csum16);
    }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.passes = meta.passes + 1;
        hdr.ctl.passes = meta.passes;
        hdr.ctl.ig_type = (bit<8>) sm.instance_type;
        meta.kept = 0x5A;
        sm.egress_spec = 2;
        if (hdr.ctl.op == 1) {
            sm.mcast_grp = 7;
        } else if (hdr.ctl.op == 2) {
            clone_preserving_field_list(CloneType.I2E, 3, 1);
        } else if (hdr.ctl.op == 3 && meta.passes < 3) {
            resubmit_preserving_field_list(1);
        } else if (hdr.ctl.op == 5) {
            truncate(16);
        } else if (hdr.ctl.op == 9) {
            meta.lost = 0x33;
            clone3(CloneType.I2E, 32w3, { meta.kept, sm.ingress_port });
        } else if (hdr.ctl.op == 10 && meta.passes < 2) {
            resubmit({ meta.passes });
        } else if (hdr.ctl.op == 12) {
            hdr.ctl.rnd = (bit<8>) sm.checksum_error;
        } else if (hdr.ctl.op == 13) {
            sm.priority = 5;
        } else if (hdr.ctl.op == 6) {
            random(hdr.ctl.rnd, 8w10, 8w20);
            log_msg("random gave {}", { hdr.ctl.rnd });
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.ctl.rid = sm.egress_rid;
        if (hdr.ctl.op == 9) { hdr.ctl.rid = (bit<16>) sm.ingress_port; }
        if (hdr.ctl.op == 13) {
            hdr.ctl.rid = (bit<16>) sm.enq_qdepth;
            hdr.ctl.csum = (bit<16>) sm.deq_timedelta;
        }
        hdr.ctl.eg_type = (bit<8>) sm.instance_type;
        hdr.ctl.kept = meta.kept;
        if (hdr.ctl.op == 4 && meta.passes < 2) {
            recirculate_preserving_field_list(1);
        }
        if (hdr.ctl.op == 7 && sm.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 3, 1);
        }
    }
}

control C(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum_with_payload(hdr.ctl.op == 8, { hdr.ctl.op }, hdr.ctl.csum,
                                     HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ctl); }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
