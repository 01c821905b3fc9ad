// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): table applied more than once
/*
 * Controls instantiated inside controls: two instances of one control with
 * different constructor arguments get their own tables and registers
 * (control-plane names MyIngress.outer.classify, MyIngress.inner.classify),
 * exit inside a sub-control ends the whole ingress, return only the
 * sub-control; copy-in/copy-out of aliased arguments; short-circuit || over
 * table applications.  Frame type 0x88BF; output on port 1.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header sub_t {
    bit<8>  op;
    bit<16> k1;
    bit<16> k2;
    bit<8>  cls_a;
    bit<8>  cls_b;
    bit<8>  trace;
    bit<8>  alias;
}

struct headers {
    ethernet_t ethernet;
    sub_t      s;
}

struct metadata { }

control Classifier(inout bit<8> cls, in bit<16> k)(bit<8> bias) {
    register<bit<32>>(4) hits;

    action set_class(bit<8> c) {
        cls = c + bias;
        bit<32> n;
        hits.read(n, 0);
        hits.write(0, n + 1);
    }

    table classify {
        key = { k: exact; }
        actions = { set_class; NoAction; }
        default_action = NoAction();
    }

    apply {
        classify.apply();
    }
}

control Stopper(inout bit<8> trace, in bit<8> op) {
    apply {
        trace = trace | 0x01;
        if (op == 2) {
            return;
        }
        if (op == 3) {
            exit;
        }
        trace = trace | 0x02;
    }
}

parser SubParser(packet_in packet, out headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.s);
        transition accept;
    }
}

control SubVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    Classifier(8w0) outer;
    Classifier(8w100) inner;
    Stopper() stopper;

    action bump_both(inout bit<8> a, inout bit<8> b) {
        a = a + 1;
        b = b + 10;
    }

    action leave_marked(inout bit<8> t) {
        t = t | 0x08;
        exit;
    }

    action mark_first() {
        hdr.s.trace = hdr.s.trace | 0x10;
    }

    action mark_second() {
        hdr.s.trace = hdr.s.trace | 0x20;
    }

    action stop_here() {
        hdr.s.trace = hdr.s.trace | 0x04;
        exit;
    }

    table exiting {
        key = { hdr.s.k1: exact; }
        actions = { stop_here; NoAction; }
        default_action = NoAction();
    }

    table first {
        key = { hdr.s.k1: exact; }
        actions = { mark_first; NoAction; }
        default_action = NoAction();
    }

    table second {
        key = { hdr.s.k2: exact; }
        actions = { mark_second; NoAction; }
        default_action = NoAction();
    }

    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.s.op == 1) {
            outer.apply(hdr.s.cls_a, hdr.s.k1);
            inner.apply(hdr.s.cls_b, hdr.s.k2);
        } else if (hdr.s.op == 2 || hdr.s.op == 3 || hdr.s.op == 4) {
            stopper.apply(hdr.s.trace, hdr.s.op);
            hdr.s.trace = hdr.s.trace | 0x04;
        } else if (hdr.s.op == 5) {
            bump_both(hdr.s.alias, hdr.s.alias);
        } else if (hdr.s.op == 7) {
            leave_marked(hdr.s.trace);
            hdr.s.trace = 0;
        } else if (hdr.s.op == 8) {
            if (exiting.apply().hit) {
                hdr.s.trace = hdr.s.trace | 0x40;
            } else {
                hdr.s.trace = hdr.s.trace | 0x20;
            }
        } else if (hdr.s.op == 9) {
            switch (exiting.apply().action_run) {
                stop_here: {
                    hdr.s.trace = hdr.s.trace | 0x40;
                }
                default: {
                    hdr.s.trace = hdr.s.trace | 0x20;
                }
            }
        } else if (hdr.s.op == 6) {
            if (first.apply().hit || second.apply().hit) {
                hdr.s.trace = hdr.s.trace | 0x40;
            }
        }
    }
}

control SubEgress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.s.trace = hdr.s.trace | 0x80;
    }
}

control SubComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control SubDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.s);
    }
}

V1Switch(SubParser(), SubVerifyChecksum(), MyIngress(), SubEgress(),
         SubComputeChecksum(), SubDeparser()) main;
