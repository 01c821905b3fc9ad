/* Stateful externs, hashes, selectors, sub-controls, functions and digests.
 * A control header (ethertype 0x88B6) selects what ingress does; results
 * are written back into it. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ctl_t {
    bit<8>  op;
    bit<8>  idx;
    bit<32> value;
    bit<32> out1;
    bit<16> out2;
    bit<8>  out3;
    int<8>  sval;
}
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
struct headers_t { ethernet_t eth; ctl_t ctl; ipv4_t ipv4; }
struct learn_t { bit<48> src; bit<9> port; }
struct meta_t { bit<8> color; bit<16> hashed; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x88B6: parse_ctl;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ctl { pkt.extract(hdr.ctl); transition accept; }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

/* A function with an out parameter and a return value. */
bit<8> clamp_add(in bit<8> a, in bit<8> b, out bit<1> saturated) {
    saturated = (a |+| b == 255) ? 1w1 : 1w0;
    return a |+| b;
}

/* A sub-control with a constructor parameter. */
control AddConst(inout bit<32> x)(bit<32> k) {
    apply { x = x + k; }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) regs;
    counter(4, CounterType.packets_and_bytes) ctr;
    meter(2, MeterType.packets) mtr;
    direct_counter(CounterType.packets_and_bytes) dctr;
    action_selector(HashAlgorithm.crc16, 16, 16) sel;
    direct_meter<bit<8>>(MeterType.packets) dmtr;
    AddConst(100) add100;
    Checksum16() ck16;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action counted(bit<9> port) { sm.egress_spec = port; dctr.count(); }

    table ecmp {
        key = {
            hdr.ipv4.dstAddr: exact;
            hdr.ipv4.srcAddr: selector;
            hdr.ipv4.protocol: selector;
        }
        actions = { set_port; }
        implementation = sel;
    }

    action metered() { dmtr.read(hdr.ctl.out3); }

    table by_meter {
        key = { hdr.ctl.idx: exact; }
        actions = { metered; NoAction; }
        meters = dmtr;
        default_action = NoAction();
    }

    table by_op {
        key = { hdr.ctl.op: exact; }
        actions = { counted; NoAction; }
        counters = dctr;
        default_action = NoAction();
    }

    apply {
        sm.egress_spec = 1;
        if (hdr.ipv4.isValid()) {
            ecmp.apply();
            exit;
        }
        if (!hdr.ctl.isValid()) {
            mark_to_drop(sm);
            exit;
        }
        by_op.apply();
        if (hdr.ctl.op == 1) {          /* register write then read back */
            regs.write((bit<32>) hdr.ctl.idx, hdr.ctl.value);
            regs.read(hdr.ctl.out1, (bit<32>) hdr.ctl.idx);
        } else if (hdr.ctl.op == 2) {   /* counter */
            ctr.count((bit<32>) hdr.ctl.idx);
        } else if (hdr.ctl.op == 3) {   /* meter colour */
            mtr.execute_meter((bit<32>) hdr.ctl.idx, meta.color);
            hdr.ctl.out3 = meta.color;
        } else if (hdr.ctl.op == 4) {   /* hash of (src, value) */
            hash(meta.hashed, HashAlgorithm.crc16, 16w0, { hdr.eth.src, hdr.ctl.value }, 32w65536);
            hdr.ctl.out2 = meta.hashed;
            hash(hdr.ctl.out1, HashAlgorithm.crc32, 32w10, { hdr.ctl.value }, 32w1000);
        } else if (hdr.ctl.op == 5) {   /* function with out param, sub-control */
            bit<1> sat;
            hdr.ctl.out3 = clamp_add(hdr.ctl.idx, 8w200, sat);
            hdr.ctl.out2 = (bit<16>) sat;
            bit<32> v = hdr.ctl.value;
            add100.apply(v);
            hdr.ctl.out1 = v;
        } else if (hdr.ctl.op == 6) {   /* digest */
            digest<learn_t>(1, { hdr.eth.src, sm.ingress_port });
        } else if (hdr.ctl.op == 7) {   /* signed arithmetic */
            hdr.ctl.sval = hdr.ctl.sval - 8s100;
            hdr.ctl.out3 = (bit<8>) (hdr.ctl.sval >> 1);
            hdr.ctl.out2 = hdr.ctl.value[7:0] ++ hdr.ctl.value[15:8];
        } else if (hdr.ctl.op == 9) {   /* direct meter */
            by_meter.apply();
        } else if (hdr.ctl.op == 10) {  /* configurable CRC */
            hash(hdr.ctl.out2, HashAlgorithm.crc16_custom, 16w0, { hdr.ctl.value }, 32w65536);
        } else if (hdr.ctl.op == 11) {  /* two digests in one pass: the last one is sent */
            digest<learn_t>(1, { hdr.eth.src, sm.ingress_port });
            digest<learn_t>(2, { hdr.eth.dst, sm.ingress_port });
        } else if (hdr.ctl.op == 12) {  /* the deprecated Checksum16 extern */
            hdr.ctl.out2 = ck16.get({ hdr.ctl.value });
        } else if (hdr.ctl.op == 8) {   /* assert */
            assert(hdr.ctl.value == 0);
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ctl); pkt.emit(hdr.ipv4); }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
