/* Struct and header values built from lists and named fields, casts to struct types,
 * struct equality. */
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; bit<8> y; }
struct pair_t { bit<8> p; bit<8> q; }
struct hs { a_t a; }
struct m_t { pair_t pr; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.a); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.pr = (pair_t) { hdr.a.y, hdr.a.x };
        hdr.a = (a_t) { m.pr.p, m.pr.q + 1 };
        pair_t z = { p = 5, q = 6 };
        if (z == (pair_t) { 5, 6 } && m.pr != z) { hdr.a.x = hdr.a.x + 100; }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
