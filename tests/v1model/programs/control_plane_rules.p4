// Tables with every kind of key, for the control-plane priority rules.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> pad; }
struct headers_t { h_t h; }
struct meta_t { }

parser RParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
               inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control RIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action to(bit<9> p) { sm.egress_spec = p; }
    table tern {
        key = { hdr.h.k : ternary; }
        actions = { to; }
        default_action = to(9);
    }
    table ranged {
        key = { hdr.h.k : range; }
        actions = { to; }
    }
    table optional_key {
        key = { hdr.h.k : optional; }
        actions = { to; }
    }
    table exact_only {
        key = { hdr.h.k : exact; }
        actions = { to; }
    }
    apply {
        if (hdr.h.pad == 0) { tern.apply(); }
        if (hdr.h.pad == 1) { ranged.apply(); }
        if (hdr.h.pad == 2) { optional_key.apply(); }
        if (hdr.h.pad == 0) { exact_only.apply(); }
    }
}
control NoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control RDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(RParser(), NoVerify(), RIngress(), NoEgress(), NoCompute(), RDeparser()) main;
