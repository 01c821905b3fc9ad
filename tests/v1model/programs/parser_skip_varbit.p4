// Skipping a header with extract<T>(_), and varbit extracts whose header would
// not be whole bytes (BMv2: error.ParserInvalidArgument, nothing consumed).
#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; bit<8> vbits; bit<8> verdict; }
header skipped_t { bit<16> junk; }
header opt_t { bit<4> kind; varbit<20> v; }
header tail_t { bit<8> t; }
struct headers_t { ctl_t ctl; opt_t opt; tail_t tail; }
struct meta_t { }

parser SParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
               inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl);
        transition select(hdr.ctl.op) { 0: skip; 1: variable; default: accept; }
    }
    state skip {
        pkt.extract<skipped_t>(_);
        pkt.extract(hdr.tail);
        transition accept;
    }
    state variable {
        pkt.extract(hdr.opt, (bit<32>)hdr.ctl.vbits);
        pkt.extract(hdr.tail);
        transition accept;
    }
}
control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control SIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.NoError) { hdr.ctl.verdict = 0; }
        else if (sm.parser_error == error.ParserInvalidArgument) { hdr.ctl.verdict = 1; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.ctl.verdict = 2; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.ctl.verdict = 3; }
        else { hdr.ctl.verdict = 9; }
    }
}
control NoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control SDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ctl); pkt.emit(hdr.opt); pkt.emit(hdr.tail); }
}
V1Switch(SParser(), NoVerify(), SIngress(), NoEgress(), NoCompute(), SDeparser()) main;
