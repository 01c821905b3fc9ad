/*
 * Header and struct assignment copy validity (P4-16 'Assignment statement':
 * all components of headers are copied, including validity bits): assigning
 * an invalid header invalidates the destination; struct assignment copies
 * nested headers; setInvalid removes a header from the output; a header
 * union is valid when one member is.  Frame type 0x88C8: op byte, then an
 * optional 2-byte `a` header selected by the op's low bit.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header op_t {
    bit<7> op;
    bit<1> has_a;
}

header two_t {
    bit<16> v;
}

header one_t {
    bit<8> v;
}

header_union either_t {
    one_t one;
    two_t two;
}

struct pair_t {
    two_t first;
    two_t second;
}

struct headers {
    ethernet_t ethernet;
    op_t       op;
    two_t      a;
    two_t      b;
    either_t   u;
    one_t      report;
}

struct metadata { }

parser HParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.op);
        transition select(hdr.op.has_a) {
            1: parse_a;
            default: accept;
        }
    }
    state parse_a {
        packet.extract(hdr.a);
        transition accept;
    }
}

control HVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control HIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        hdr.report.setValid();
        hdr.report.v = 0;
        if (hdr.op.op == 1) {
            /* b := a, whatever a's validity */
            hdr.b.setValid();
            hdr.b.v = 0xBBBB;
            hdr.b = hdr.a;
        } else if (hdr.op.op == 2) {
            /* struct assignment carries the nested headers' validity */
            pair_t saved;
            saved.first = hdr.a;
            saved.second.setValid();
            saved.second.v = 0x2222;
            pair_t copy = saved;
            hdr.a = copy.second;
            hdr.b = copy.first;
        } else if (hdr.op.op == 3) {
            hdr.a.setInvalid();
        } else if (hdr.op.op == 4) {
            if (!hdr.u.isValid()) {
                hdr.report.v = hdr.report.v | 1;
            }
            hdr.u.one.setValid();
            hdr.u.one.v = 0x77;
            if (hdr.u.isValid() && hdr.u.one.isValid() && !hdr.u.two.isValid()) {
                hdr.report.v = hdr.report.v | 2;
            }
        }
    }
}

control HEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control HComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control HDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.op);
        packet.emit(hdr.a);
        packet.emit(hdr.b);
        packet.emit(hdr.u);
        packet.emit(hdr.report);
    }
}

V1Switch(HParser(), HVerifyChecksum(), HIngress(), HEgress(),
         HComputeChecksum(), HDeparser()) main;
