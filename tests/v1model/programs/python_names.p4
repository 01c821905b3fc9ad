/* P4 names that are Python keywords or look like the generated members. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> class; bit<8> from; bit<8> None; bit<8> _v; bit<8> _copy; bit<8> lambda; }
header_union u_t { h_t def; h_t pass; }
struct hs { h_t yield; u_t import; }
struct m_t { @field_list(1) bit<8> global; }

parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.yield); p.extract(hdr.import.pass); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    action try(bit<8> except) { hdr.yield.class = except; }
    table while { key = { hdr.yield.from: exact; } actions = { try; NoAction; } }
    apply {
        sm.egress_spec = 1;
        m.global = hdr.yield._v + hdr.yield._copy;
        hdr.yield.None = m.global;
        hdr.import.pass.lambda = hdr.yield.lambda + 1;
        while.apply();
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.yield); p.emit(hdr.import); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
