// Copy-in/copy-out of header arguments (P4-16 6.8): the cases where passing by
// reference would be observable, next to the common case where it is not.
#include <core.p4>
#include <v1model.p4>

header op_t { bit<8> op; }
header h_t { bit<8> a; bit<8> b; }
header g_t { bit<8> a; }
struct headers_t { op_t op; h_t h; g_t g; }
struct meta_t { bit<8> unused; }

parser CopyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.op); pkt.extract(hdr.h); pkt.extract(hdr.g); transition accept; }
}

control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

void twice_in_a_function(inout h_t x, inout h_t y) {
    x.a = 1;
    y.a = y.a + 10;
}

// a sub-control whose two parameters are bound to the same header
control Pair(inout h_t x, inout h_t y) {
    apply { x.b = 2; y.b = y.b + 20; }
}

control CopyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Pair() pair;
    // the same header for both parameters: copy-out of y (last) wins
    action twice(inout h_t x, inout h_t y) {
        x.a = 1;
        y.a = y.a + 10;
    }
    // writes hdr.h through the control's name, then copy-out of x overwrites it
    action write_global(inout h_t x) {
        x.a = 1;
        hdr.h.b = 0x77;
    }
    // reads hdr.h through the control's name: it still holds the value before the call
    action read_global(inout h_t x) {
        x.a = 7;
        hdr.g.a = hdr.h.a;
    }
    // a scalar before a header that contains it: the header's copy-out comes last
    action scalar_then_header(inout bit<8> v, inout h_t x) {
        v = 3;
        x.a = 4;
    }
    // an out header and an in value read from it: the in value is read first
    action make(out h_t x, in bit<8> v) {
        x.setValid();
        x.a = v;
        x.b = v + 1;
    }
    // exit after changing the copy: copy-out still happens, the global write is lost
    action leave(inout h_t x) {
        x.a = 0x55;
        hdr.h.b = 0x66;
        exit;
    }
    // the common case: no aliasing possible, by reference or not the same result
    action plain(inout h_t x) {
        x.a = x.a + 1;
    }
    table bound {
        key = { hdr.op.op : exact; }
        actions = { write_global(hdr.h); NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.op.op == 0) {
            twice(hdr.h, hdr.h);
        } else if (hdr.op.op == 1) {
            write_global(hdr.h);
        } else if (hdr.op.op == 2) {
            read_global(hdr.h);
        } else if (hdr.op.op == 3) {
            scalar_then_header(hdr.h.a, hdr.h);
        } else if (hdr.op.op == 4) {
            make(hdr.h, hdr.h.a);
        } else if (hdr.op.op == 5) {
            leave(hdr.h);
        } else if (hdr.op.op == 6) {
            twice_in_a_function(hdr.h, hdr.h);
        } else if (hdr.op.op == 7) {
            pair.apply(hdr.h, hdr.h);
        } else if (hdr.op.op == 8) {
            bound.apply();
        } else if (hdr.op.op == 9) {
            plain(hdr.h);
            plain(hdr.h);
        }
    }
}

control NoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control CopyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.op); pkt.emit(hdr.h); pkt.emit(hdr.g); }
}

V1Switch(CopyParser(), NoVerify(), CopyIngress(), NoEgress(), NoCompute(),
         CopyDeparser()) main;
