/*
 * Every v1model packet-flow extern in one program, for the differential test of
 * the two switch back ends: clone (I2E, E2E, to a port or a multicast group),
 * clone3, resubmit and recirculate (with field lists, in chains that reach the
 * pass limit), digests of three shapes, log_msg with and without values, a
 * register and a counter.  A control header after Ethernet (type 0x88F0).
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ctl_t {
    bit<8>  op;
    bit<8>  arg;
    bit<8>  ig_instance;
    bit<8>  eg_instance;
    bit<16> eg_rid;
    bit<8>  kept;
    bit<8>  lost;
    bit<32> seen;
}

struct headers {
    ethernet_t ethernet;
    ctl_t      ctl;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct metadata {
    @field_list(1, 2)
    bit<8> kept;
    bit<8> lost;
    @field_list(2)
    bit<8> loops;
    learn_t learn;
}

parser FParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88F0: parse_ctl;
            default: accept;
        }
    }
    state parse_ctl {
        packet.extract(hdr.ctl);
        transition accept;
    }
}

control FVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control FIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    register<bit<32>>(8) passes;
    counter(8, CounterType.packets_and_bytes) by_instance;

    apply {
        by_instance.count((bit<32>)standard_metadata.instance_type);
        bit<32> n;
        passes.read(n, (bit<32>)standard_metadata.instance_type);
        passes.write((bit<32>)standard_metadata.instance_type, n + 1);
        log_msg("ingress");
        standard_metadata.egress_spec = (bit<9>)(standard_metadata.ingress_port + 1);
        if (!hdr.ctl.isValid()) {
            log_msg("no ctl from port {}", {standard_metadata.ingress_port});
            exit;
        }
        hdr.ctl.ig_instance = (bit<8>)standard_metadata.instance_type;
        log_msg("op {} arg {} kept {}", {hdr.ctl.op, hdr.ctl.arg, meta.kept});
        if (standard_metadata.instance_type == 0) {
            meta.kept = hdr.ctl.arg;
            meta.lost = 0x77;
        }
        bit<8> op = hdr.ctl.op & 15;
        if (op == 1) {
            clone_preserving_field_list(CloneType.I2E, (bit<32>)hdr.ctl.arg & 7, 1);
        } else if (op == 2) {
            clone3(CloneType.I2E, 32w5, { meta.kept, standard_metadata.ingress_port });
            mark_to_drop(standard_metadata);
        } else if (op == 3 && meta.loops < hdr.ctl.arg) {
            meta.loops = meta.loops + 1;
            resubmit_preserving_field_list(2);
        } else if (op == 4 && standard_metadata.instance_type == 0) {
            resubmit({ meta.lost });
            clone(CloneType.I2E, 5);
        } else if (op == 5) {
            standard_metadata.mcast_grp = (bit<16>)(hdr.ctl.arg & 3);
        } else if (op == 6) {
            digest<learn_t>(1, { hdr.ethernet.srcAddr, standard_metadata.ingress_port });
            meta.learn.src = hdr.ethernet.dstAddr;
            meta.learn.port = 3;
            digest<learn_t>(2, meta.learn);
        } else if (op == 7) {
            digest<bit<8>>(3, hdr.ctl.arg);
            truncate((bit<32>)hdr.ctl.arg);
        } else if (op == 8) {
            standard_metadata.egress_spec = 511;
        }
    }
}

control FEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.ctl.isValid()) {
            exit;
        }
        hdr.ctl.eg_instance = (bit<8>)standard_metadata.instance_type;
        hdr.ctl.eg_rid = standard_metadata.egress_rid;
        hdr.ctl.kept = meta.kept;
        hdr.ctl.lost = meta.lost;
        hdr.ctl.seen = hdr.ctl.seen + 1;
        bit<8> op = hdr.ctl.op >> 4;
        log_msg("egress {} on {}", {standard_metadata.instance_type,
                                    standard_metadata.egress_port});
        if (op == 1 && standard_metadata.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 5, 1);
        } else if (op == 1 && hdr.ctl.arg == 255) {
            /* every clone clones again (one copy each), up to the pass limit */
            clone_preserving_field_list(CloneType.E2E, 1, 1);
        } else if (op == 2 && standard_metadata.instance_type != 2) {
            clone(CloneType.E2E, 6);
            mark_to_drop(standard_metadata);
        } else if (op == 3 && standard_metadata.instance_type == 0 && meta.loops < hdr.ctl.arg) {
            meta.loops = meta.loops + 1;
            hdr.ctl.seen = hdr.ctl.seen + 0x100;
            recirculate_preserving_field_list(2);
        } else if (op == 4 && hdr.ctl.ig_instance == 0) {
            recirculate({ meta.kept });
            truncate(20);
        } else if (op == 5 && standard_metadata.instance_type != 2) {
            clone(CloneType.E2E, 7);   /* a session to a multicast group */
        } else if (op == 6) {
            truncate((bit<32>)hdr.ctl.arg);
        }
    }
}

control FComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control FDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ctl);
    }
}

V1Switch(FParser(), FVerifyChecksum(), FIngress(), FEgress(),
         FComputeChecksum(), FDeparser()) main;
