"""Header stacks whose elements are header unions: extract, emit, push_front, validity."""

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header b_t { bit<8> v; }
header w_t { bit<16> v; }
header_union u_t { b_t b; w_t w; }
header k_t { bit<8> kind; bit<8> valid0; }
struct hs { k_t k; u_t[3] u; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start {
        p.extract(hdr.k);
        transition select(hdr.k.kind) {
            3: by_next;
            default: by_index;
        }
    }
    state by_index {
        p.extract(hdr.u[0].b);
        p.extract(hdr.u[1].w);
        transition accept;
    }
    state by_next {
        p.extract(hdr.u.next.b);    /* u[0].b */
        p.extract(hdr.u.next.w);    /* u[1].w */
        transition accept;
    }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.k.kind == 1) {
            hdr.u.push_front(1);
            hdr.u[0].w.setValid();
            hdr.u[0].w.v = 0x1234;
        } else if (hdr.k.kind == 2) {
            hdr.u[0].w.setValid();      /* replaces the b member of the same union */
            hdr.u[0].w.v = 0x5678;
        }
        hdr.k.valid0 = hdr.u[0].isValid() ? 8w1 : 8w0;
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

SW = SoftSwitch(compile_p4_source(PROGRAM, "union_stack.p4"))


def test_union_stack_is_emitted_member_by_member():
    assert SW.process(0, bytes.fromhex("0000" "11" "abcd" "99")) == \
        [(1, bytes.fromhex("0001" "11" "abcd" "99"))]


def test_push_front_on_a_union_stack():
    assert SW.process(0, bytes.fromhex("0100" "11" "abcd" "99")) == \
        [(1, bytes.fromhex("0101" "1234" "11" "abcd" "99"))]


def test_set_valid_replaces_the_other_member_in_a_stack_element():
    assert SW.process(0, bytes.fromhex("0200" "11" "abcd" "99")) == \
        [(1, bytes.fromhex("0201" "5678" "abcd" "99"))]
    assert SW.stats["internal_error"] == 0


def test_extract_into_a_member_of_stack_next_advances_the_stack():
    assert SW.process(0, bytes.fromhex("0300" "11" "abcd" "99")) == \
        [(1, bytes.fromhex("0301" "11" "abcd" "99"))]
