/*
 * P4-16 language features beyond plain headers: serializable and plain enums,
 * typedef and type, constants, functions, controls with
 * constructor parameters instantiated twice, a sub-parser, struct
 * initialisation from a list expression, header assignment (copies validity),
 * ?: and method calls on validity.  Frame type 0x88BB; output on port 1.
 */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind {
    PING  = 1,
    PONG  = 2,
    OTHER = 0xFF
}

enum Mode {
    FAST,
    SLOW
}

typedef bit<16> word_t;
type bit<32> tenant_t;

const Kind DEFAULT_KIND = Kind.OTHER;
const bit<8> SLOW_ABOVE = 100;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header lang_t {
    Kind    kind;
    bit<8>  x;
    word_t  y;
    bit<32> tenant;
    bit<8>  maximum;
    bit<8>  added;
    bit<8>  mode;
    bit<8>  picked;
}

header tail_t {
    bit<8> v;
}

struct headers {
    ethernet_t ethernet;
    lang_t     l;
    tail_t     t1;
    tail_t     t2;
}

struct pair_t {
    bit<8> first;
    bit<8> second;
}

struct metadata { }

bit<8> max8(in bit<8> a, in bit<8> b) {
    if (a > b) {
        return a;
    }
    return b;
}

word_t swap_bytes(in word_t v) {
    return v[7:0] ++ v[15:8];
}

control Adder(inout bit<8> value)(bit<8> amount) {
    apply {
        value = value + amount;
    }
}

parser LangSubParser(packet_in packet, out lang_t l, out tail_t t) {
    state start {
        packet.extract(l);
        packet.extract(t);
        transition accept;
    }
}

parser LParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    LangSubParser() sub;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88BB: parse_lang;
            default: accept;
        }
    }
    state parse_lang {
        sub.apply(packet, hdr.l, hdr.t1);
        transition accept;
    }
}

control LVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control LIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    Adder(8w10) add_ten;
    Adder(3) add_three;

    apply {
        standard_metadata.egress_spec = 1;
        if (!hdr.l.isValid()) {
            return;
        }
        if (hdr.l.kind == Kind.PING) {
            hdr.l.kind = Kind.PONG;
        } else if (hdr.l.kind == Kind.PONG) {
            hdr.l.kind = Kind.PING;
        } else {
            hdr.l.kind = DEFAULT_KIND;
        }

        Mode mode = Mode.FAST;
        if (hdr.l.x > SLOW_ABOVE) {
            mode = Mode.SLOW;
        }
        hdr.l.mode = mode == Mode.SLOW ? 8w2 : 8w1;

        hdr.l.maximum = max8(hdr.l.x, 50);
        hdr.l.y = swap_bytes(hdr.l.y);

        hdr.l.added = hdr.l.x;
        add_ten.apply(hdr.l.added);
        add_three.apply(hdr.l.added);

        tenant_t tenant = (tenant_t)hdr.l.tenant;
        hdr.l.tenant = (bit<32>)tenant + 1;

        hdr.l.picked = hdr.l.x < 10 ? 8w0xAA : 8w0xBB;

        pair_t p = { hdr.l.x, 8w7 };
        hdr.l.x = p.first ^ p.second;

        hdr.t2 = hdr.t1;
        hdr.t2.v = hdr.t2.v + 1;
    }
}

control LEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control LComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control LDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.l);
        packet.emit(hdr.t1);
        packet.emit(hdr.t2);
    }
}

V1Switch(LParser(), LVerifyChecksum(), LIngress(), LEgress(),
         LComputeChecksum(), LDeparser()) main;
