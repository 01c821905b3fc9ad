/* Statements and aggregate values: value switches, header/struct assignment,
 * invalid headers, header equality, stacks with run-time indices, push_front,
 * serializable enums, exit from a table action, return, sub-controls that
 * modify headers, and action parameters bound in the actions list. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Op { COPY = 1, CLEAR = 2, PUSH = 3, EXIT = 4, RET = 5, IDX = 6, AEXIT = 7,
                 SEXIT = 8, OUTH = 9 }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header cmd_t { Op op; bit<8> arg; bit<8> res; bit<8> same; }
header item_t { bit<8> v; }
struct pair_t { bit<8> x; bit<8> y; }
struct headers_t { ethernet_t eth; cmd_t cmd; item_t[4] items; ethernet_t copy; }
struct meta_t { pair_t p; pair_t q; bit<8> bound; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.cmd); transition items; }
    state items {
        pkt.extract(hdr.items.next);
        transition select(hdr.items.last.v) { 0: accept; default: more; }
    }
    state more {
        transition select(hdr.items.lastIndex) { 3: accept; default: items; }
    }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control Bump(inout ethernet_t e, in bit<8> by) {
    apply { e.etherType = e.etherType + (bit<16>) by; }
}

control Stop(inout bit<8> t) {
    apply { t = 0x55; exit; }
}

control Untouched(out ethernet_t e) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Bump() bump;
    Stop() stop;
    Untouched() untouched;
    action leave() { exit; }
    action leave_marked(inout bit<8> t) { t = 0x99; exit; }
    action record(inout bit<8> target, bit<8> v) { target = v; }
    table t {
        key = { hdr.cmd.arg: exact; }
        actions = { leave; record(meta.bound); }
    }
    apply {
        sm.egress_spec = 1;
        meta.p = { 3, 4 };
        meta.q = meta.p;
        meta.q.y = 9;
        switch (hdr.cmd.op) {
            Op.COPY: {
                hdr.copy = hdr.eth;
                hdr.cmd.same = hdr.copy == hdr.eth ? 8w1 : 8w0;
                bump.apply(hdr.copy, hdr.cmd.arg);
                hdr.cmd.res = hdr.copy == hdr.eth ? 8w1 : 8w0;
            }
            Op.CLEAR: {
                hdr.eth = (ethernet_t) {#};
                hdr.cmd.res = hdr.eth.isValid() ? 8w1 : 8w0;
            }
            Op.PUSH: {
                hdr.items.push_front(1);
                hdr.items[0].setValid();
                hdr.items[0].v = 0xEE;
            }
            Op.EXIT:
            Op.RET: {
                hdr.cmd.res = 0x77;
                if (hdr.cmd.op == Op.RET) { return; }
                t.apply();
                hdr.cmd.res = meta.bound;
            }
            Op.AEXIT: {
                leave_marked(hdr.cmd.res);
                hdr.cmd.res = 0;
            }
            Op.SEXIT: {
                stop.apply(hdr.cmd.res);
                hdr.cmd.res = 0;
            }
            Op.OUTH: {
                hdr.copy = hdr.eth;
                untouched.apply(hdr.copy);   /* an out header nobody writes ends invalid */
                hdr.cmd.res = hdr.copy.isValid() ? 8w1 : 8w2;
            }
            Op.IDX: {
                hdr.cmd.res = hdr.items[hdr.cmd.arg].v;
            }
            default: {
                hdr.cmd.res = meta.p.x + meta.q.y;
            }
        }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.cmd); pkt.emit(hdr.copy); pkt.emit(hdr.items); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
