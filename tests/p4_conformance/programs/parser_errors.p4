/*
 * Parser errors in v1model: the parser stops, standard_metadata.parser_error
 * records the error, and the packet still goes through ingress.  Ingress
 * reports the error as a code in the Ethernet source address and forwards to
 * port 1; headers extracted before the error are emitted, the rest of the
 * packet follows as payload.
 */
#include <core.p4>
#include <v1model.p4>

error { BadMagic }

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header fixed20_t {
    bit<32> w0;
    bit<32> w1;
    bit<32> w2;
    bit<32> w3;
    bit<32> w4;
}

header magic_t {
    bit<8> value;
}

header tag_t {
    bit<7> data;
    bit<1> bos;
}

header len_t {
    bit<8> len;
}

header opt_t {
    varbit<32> data;
}

header selector_t {
    bit<8> value;
}

struct headers {
    ethernet_t ethernet;
    fixed20_t  fixed;
    magic_t    magic;
    tag_t[3]   tags;
    len_t      len;
    opt_t      opt;
    selector_t sel;
}

struct metadata { }

parser ErrParser(packet_in packet, out headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x9000: parse_fixed;
            0x9001: parse_magic;
            0x9002: parse_tags;
            0x9003: parse_len;
            0x9004: parse_sel;
            0x9005: peek_word;
            0x9006: skip_word;
            default: accept;
        }
    }
    state parse_fixed {
        packet.extract(hdr.fixed);
        transition accept;
    }
    state parse_magic {
        packet.extract(hdr.magic);
        verify(hdr.magic.value == 0x5A, error.BadMagic);
        transition accept;
    }
    state parse_tags {
        packet.extract(hdr.tags.next);
        transition select(hdr.tags.last.bos) {
            1: accept;
            default: parse_tags;
        }
    }
    state parse_len {
        packet.extract(hdr.len);
        packet.extract(hdr.opt, (bit<32>)hdr.len.len * 8);
        transition accept;
    }
    state peek_word {
        bit<32> word = packet.lookahead<bit<32>>();
        transition select(word[31:24]) {
            0xAA: parse_magic;
            default: accept;
        }
    }
    state skip_word {
        packet.advance(32);
        transition parse_magic;
    }
    state parse_sel {
        packet.extract(hdr.sel);
        transition select(hdr.sel.value) {
            1: accept;
            2: accept;
        }
    }
}

control ErrVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ErrIngress(inout headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        bit<8> code = 0xFF;
        if (standard_metadata.parser_error == error.NoError) {
            code = 0;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            code = 1;
        } else if (standard_metadata.parser_error == error.NoMatch) {
            code = 2;
        } else if (standard_metadata.parser_error == error.StackOutOfBounds) {
            code = 3;
        } else if (standard_metadata.parser_error == error.HeaderTooShort) {
            code = 4;
        } else if (standard_metadata.parser_error == error.BadMagic) {
            code = 0x10;
        }
        hdr.ethernet.srcAddr = (bit<48>)code;
        standard_metadata.egress_spec = 1;
    }
}

control ErrEgress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control ErrComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ErrDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr);
    }
}

V1Switch(ErrParser(), ErrVerifyChecksum(), ErrIngress(), ErrEgress(),
         ErrComputeChecksum(), ErrDeparser()) main;
