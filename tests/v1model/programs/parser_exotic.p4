/* Sub-parsers, lookahead of a header, select over tuples with ranges and masks,
 * value sets over several keys, tuples and minSizeInBytes. */
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> kind; bit<8> len; }
header b_t { bit<16> x; bit<16> y; }
struct pair_t { bit<8> p; bit<8> q; }
struct inner_t { @field_list(1) bit<8> deep; }
struct hs { a_t a; b_t b; b_t peeked; }
struct m_t { inner_t in1; bit<8> which; tuple<bit<8>, bit<16>> tup; }

parser Sub(packet_in p, inout hs hdr) {
    state start { p.extract(hdr.b); transition accept; }
}
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    value_set<pair_t>(4) pairs;
    Sub() sub;
    state start {
        p.extract(hdr.a);
        hdr.peeked = p.lookahead<b_t>();
        transition select(hdr.a.kind, hdr.a.len) {
            (1, 0 .. 3): via_sub;
            (2, 8w0xF0 &&& 8w0xF0): two;
            pairs: vs;
            default: accept;
        }
    }
    state via_sub { sub.apply(p, hdr); m.which = 1; transition accept; }
    state two { m.which = 2; transition accept; }
    state vs { m.which = 3; transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.tup = { m.which, 16w7 };
        hdr.a.len = m.tup[0] + (bit<8>) hdr.b.minSizeInBytes();
        if (!hdr.peeked.isValid()) { hdr.a.kind = 0xEE; }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.a); p.emit(hdr.b); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
