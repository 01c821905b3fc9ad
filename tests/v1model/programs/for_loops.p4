// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): for-in loop
// for loops (P4-16 1.2.5) run by the generated code: every form, break/continue,
// nesting, and loops in actions, functions and apply blocks.
#include <core.p4>
#include <v1model.p4>

header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> res; }
header item_t { bit<8> v; }
struct headers_t { op_t op; item_t[4] items; }
struct meta_t { bit<8> scratch; }

parser LoopParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        transition select(hdr.op.op) { 3: items; default: accept; }
    }
    state items {
        pkt.extract(hdr.items.next);
        transition select(hdr.items.last.v) { 0: accept; default: items; }
    }
}

control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

// returns the first i in 1..limit with i * i >= target (0 if none)
bit<8> first_square_at_least(in bit<8> target, in bit<8> limit) {
    for (bit<8> i = 1; i <= limit; i = i + 1) {
        if (i * i >= target) { return i; }
    }
    return 0;
}

control LoopIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    // counts a down to 1, skipping 2 (continue) and stopping at b (break)
    action count_down() {
        bit<8> n = 0;
        for (bit<8> i = hdr.op.a; i > 0; i = i - 1) {
            if (i == 2) { continue; }
            if (i == hdr.op.b) { break; }
            n = n + 1;
        }
        hdr.op.res = n;
    }
    // sum of lo .. hi inclusive (wraps at 8 bits)
    action range_sum() {
        bit<8> s = 0;
        for (bit<8> i in hdr.op.a .. hdr.op.b) { s = s + i; }
        hdr.op.res = s;
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.op.op == 0) {
            count_down();
        } else if (hdr.op.op == 1) {
            range_sum();
        } else if (hdr.op.op == 2) {
            // nested loops: break leaves only the inner loop; counts pairs j < i < a
            bit<8> pairs = 0;
            for (bit<8> i = 0; i < hdr.op.a; i = i + 1) {
                for (bit<8> j = 0; ; j = j + 1) {
                    if (j >= i) { break; }
                    pairs = pairs + 1;
                }
            }
            hdr.op.res = pairs;
        } else if (hdr.op.op == 3) {
            // a stack: the loop variable is a copy of each element
            bit<8> s = 0;
            for (item_t it in hdr.items) {
                if (it.isValid()) { s = s + it.v; }
                it.v = 0xee;
            }
            hdr.op.res = s;
        } else if (hdr.op.op == 4) {
            // a list of values evaluated once before the loop
            bit<8> s = 0;
            for (bit<8> v in {hdr.op.a, hdr.op.b, 8w100}) {
                hdr.op.a = 0;
                s = s + v;
            }
            hdr.op.res = s;
        } else if (hdr.op.op == 5) {
            hdr.op.res = first_square_at_least(hdr.op.a, hdr.op.b);
        } else if (hdr.op.op == 6) {
            // return from inside a loop in an apply block leaves the control
            for (bit<8> i = 0; i < 10; i = i + 1) {
                hdr.op.res = i;
                if (i == hdr.op.a) { return; }
            }
            hdr.op.res = 0xff;
        } else if (hdr.op.op == 7) {
            // a tuple variable: its values as they are when the loop starts
            tuple<bit<8>, bit<8>> t = {hdr.op.a, hdr.op.b};
            bit<8> s = 0;
            for (bit<8> v in t) { t[0] = 0; s = s + v; }
            hdr.op.res = s;
        }
    }
}

control NoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control LoopDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.op); pkt.emit(hdr.items); }
}

V1Switch(LoopParser(), NoVerify(), LoopIngress(), NoEgress(), NoCompute(),
         LoopDeparser()) main;
