/* Header stacks, header unions, varbit, lookahead and parser value sets.
 * Every packet goes out of port 1 with a result header (ethertype 0x88B5)
 * inserted after Ethernet; its fields report what the parser and ingress saw. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header opt_t { bit<8> len; varbit<64> data; }
header tag_a_t { bit<8> kind; bit<8> a; }
header tag_b_t { bit<8> kind; bit<16> b; }
header_union tag_t { tag_a_t a; tag_b_t b; }
header result_t {
    bit<8> depth;        /* mpls.lastIndex + 1, taken in the parser */
    bit<8> which;        /* 1: tag.a valid, 2: tag.b valid, 0: none */
    bit<8> optlen;       /* opt.len when opt is valid */
    bit<8> special;      /* 1 when the ethertype hit the value set */
    bit<32> top_label;   /* label of mpls[0] after pop_front(1) */
    bit<16> etherType;   /* the original ethertype */
}

struct headers_t {
    ethernet_t eth;
    result_t   res;
    mpls_t[3]  mpls;
    tag_t      tag;
    opt_t      opt;
}
struct meta_t { bit<8> special; bit<8> depth; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    value_set<bit<16>>(4) special_types;

    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x8847: parse_mpls;
            special_types: mark_special;
            default: accept;
        }
    }
    state mark_special {
        meta.special = 1;
        transition accept;
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: after_mpls;
        }
    }
    state after_mpls {
        meta.depth = (bit<8>) (hdr.mpls.lastIndex + 1);
        transition select(pkt.lookahead<bit<8>>()) {
            0x0A: parse_a;
            0x0B: parse_b;
            0x0C: parse_opt;
            default: accept;
        }
    }
    state parse_a { pkt.extract(hdr.tag.a); transition accept; }
    state parse_b { pkt.extract(hdr.tag.b); transition accept; }
    state parse_opt {
        pkt.advance(8);
        bit<8> n = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.opt, ((bit<32>) n) << 3);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.etherType = hdr.eth.etherType;
        hdr.eth.etherType = 0x88B5;
        hdr.res.special = meta.special;
        if (hdr.mpls[0].isValid()) {
            hdr.res.depth = meta.depth;
            hdr.mpls.pop_front(1);
            hdr.res.top_label = (bit<32>) hdr.mpls[0].label;
        }
        if (hdr.tag.a.isValid()) {
            hdr.res.which = 1;
        } else if (hdr.tag.b.isValid()) {
            hdr.res.which = 2;
        }
        if (hdr.opt.isValid()) {
            hdr.res.optlen = hdr.opt.len;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.res);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.tag);
        pkt.emit(hdr.opt);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
