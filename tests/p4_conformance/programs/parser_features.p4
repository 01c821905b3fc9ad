/*
 * Parser features: lookahead, advance, select with masks / ranges / tuples /
 * default / value sets, header unions, header stacks (next, last, lastIndex in
 * the parser; push_front / pop_front and indexing in a control).
 * Ingress writes a result word into the Ethernet source address, forwards to
 * port 1.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header byte_t {
    bit<8> v;
}

header short_opt_t {
    bit<8> kind;
    bit<8> value;
}

header long_opt_t {
    bit<8>  kind;
    bit<24> value;
}

header_union opt_u {
    short_opt_t short;
    long_opt_t  long;
}

header hop_t {
    bit<8> id;
    bit<7> pad;
    bit<1> bos;
}

header pair_t {
    bit<4> hi;
    bit<4> lo;
    bit<8> op;
}

struct headers {
    ethernet_t ethernet;
    byte_t     masked;
    byte_t     ranged;
    byte_t     other;
    byte_t     after;
    opt_u      opt;
    hop_t[4]   hops;
    pair_t     pair;
    byte_t     in_set;
}

struct metadata {
    bit<32> hop_last_index;
    bit<8>  peeked;
    bit<8>  tuple_arm;
}

parser FeatParser(packet_in packet, out headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) special_types;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x9100: peek;
            0x9101: skip;
            0x9102: parse_opt;
            0x9103: parse_hops;
            0x9104: parse_pair;
            special_types: parse_in_set;
            default: accept;
        }
    }

    state peek {
        meta.peeked = packet.lookahead<bit<8>>();
        transition select(packet.lookahead<bit<8>>()) {
            0x05 &&& 0x0F: parse_masked;
            0x20 .. 0x2F: parse_ranged;
            default: parse_other;
        }
    }
    state parse_masked {
        packet.extract(hdr.masked);
        transition accept;
    }
    state parse_ranged {
        packet.extract(hdr.ranged);
        transition accept;
    }
    state parse_other {
        packet.extract(hdr.other);
        transition accept;
    }

    state skip {
        packet.advance(16);
        packet.extract(hdr.after);
        transition accept;
    }

    state parse_opt {
        transition select(packet.lookahead<bit<8>>()) {
            4: parse_short;
            6: parse_long;
            default: accept;
        }
    }
    state parse_short {
        packet.extract(hdr.opt.short);
        transition accept;
    }
    state parse_long {
        packet.extract(hdr.opt.long);
        transition accept;
    }

    state parse_hops {
        packet.extract(hdr.hops.next);
        meta.hop_last_index = hdr.hops.lastIndex;
        transition select(hdr.hops.last.bos) {
            1: accept;
            default: parse_hops;
        }
    }

    state parse_pair {
        packet.extract(hdr.pair);
        transition select(hdr.pair.hi, hdr.pair.lo) {
            (1, 1): arm_one;
            (2, _): arm_two;
            (_, 0xF): arm_three;
            default: accept;
        }
    }
    state arm_one {
        meta.tuple_arm = 1;
        transition accept;
    }
    state arm_two {
        meta.tuple_arm = 2;
        transition accept;
    }
    state arm_three {
        meta.tuple_arm = 3;
        transition accept;
    }

    state parse_in_set {
        packet.extract(hdr.in_set);
        transition accept;
    }
}

control FeatVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control FeatIngress(inout headers hdr, inout metadata meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        bit<48> result = 0;
        if (hdr.ethernet.etherType == 0x9100) {
            /* which arm, and the peeked byte */
            if (hdr.masked.isValid()) {
                result = 1;
            } else if (hdr.ranged.isValid()) {
                result = 2;
            } else if (hdr.other.isValid()) {
                result = 3;
            }
            result = result | ((bit<48>)meta.peeked << 8);
        } else if (hdr.ethernet.etherType == 0x9101) {
            result = (bit<48>)hdr.after.v;
        } else if (hdr.ethernet.etherType == 0x9102) {
            if (hdr.opt.short.isValid()) {
                result = 4;
                hdr.opt.short.value = hdr.opt.short.value + 1;
            } else if (hdr.opt.long.isValid()) {
                result = 6;
                /* Making one member valid invalidates the other. */
                hdr.opt.short.setValid();
                hdr.opt.short.kind = 4;
                hdr.opt.short.value = hdr.opt.long.value[7:0];
            }
        } else if (hdr.ethernet.etherType == 0x9103) {
            result = (bit<48>)meta.hop_last_index;
            if (hdr.hops[0].id == 0xA0) {
                /* push a new first hop */
                hdr.hops.push_front(1);
                hdr.hops[0].setValid();
                hdr.hops[0].id = 0xEE;
                hdr.hops[0].pad = 0;
                hdr.hops[0].bos = 0;
            } else if (hdr.hops[0].id == 0xB0) {
                /* consume the first hop */
                hdr.hops.pop_front(1);
            } else if (hdr.hops[0].id == 0xC0) {
                hdr.hops[1].setInvalid();
            }
        } else if (hdr.ethernet.etherType == 0x9104) {
            result = (bit<48>)meta.tuple_arm;
        } else if (hdr.in_set.isValid()) {
            result = 0x77;
        }
        hdr.ethernet.srcAddr = result;
    }
}

control FeatEgress(inout headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    apply { }
}

control FeatComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control FeatDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.masked);
        packet.emit(hdr.ranged);
        packet.emit(hdr.other);
        packet.emit(hdr.after);
        packet.emit(hdr.opt);
        packet.emit(hdr.hops);
        packet.emit(hdr.pair);
        packet.emit(hdr.in_set);
    }
}

V1Switch(FeatParser(), FeatVerifyChecksum(), FeatIngress(), FeatEgress(),
         FeatComputeChecksum(), FeatDeparser()) main;
