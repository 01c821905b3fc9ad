"""Operands around a call with ``inout`` arguments (P4-16 8.1): evaluated left to
right, the call's copy-out happening when it returns, so ``x + f(x)`` reads the old
``x`` on the left and ``f(x) + x`` the new one."""

from __future__ import annotations

import pytest

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
struct pair_t { bit<8> a; bit<8> b; }
header h_t { bit<8> op; bit<8> x; bit<8> y; bit<8> z; }
struct hs { h_t h; }
struct m_t { }
bit<8> bump(inout bit<8> i) { i = i + 1; return i; }
pair_t swap(inout pair_t p) { bit<8> t = p.a; p.a = p.b; p.b = t; return p; }
bit<8> first(in bit<8> u, in bit<8> v) { return u; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        pair_t e = { hdr.h.x, hdr.h.y };
        if (hdr.h.op == 1) { hdr.h.z = hdr.h.x + bump(hdr.h.x); }
        else if (hdr.h.op == 2) { hdr.h.z = bump(hdr.h.x) + hdr.h.x; }
        else if (hdr.h.op == 3) { hdr.h.z = hdr.h.x == bump(hdr.h.x) ? 8w1 : 8w0; }
        else if (hdr.h.op == 4) { hdr.h.z = e == swap(e) ? 8w1 : 8w0; hdr.h.y = e.a; }
        else if (hdr.h.op == 5) { hdr.h.z = hdr.h.x ++ bump(hdr.h.x) == 16w0x0506 ? 8w1 : 8w0; }
        else if (hdr.h.op == 6) { pair_t q = { hdr.h.x, bump(hdr.h.x) }; hdr.h.y = q.a; hdr.h.z = q.b; }
        else if (hdr.h.op == 7) { hdr.h.z = first(hdr.h.x, bump(hdr.h.x)); }
        else if (hdr.h.op == 8) { hdr.h.z = hdr.h.x - bump(hdr.h.x) - bump(hdr.h.x); }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def program():
    return compile_p4_source(PROGRAM, "inout_call_order.p4")


@pytest.mark.parametrize("op,x,y,want", [
    (1, 5, 0, (6, 0, 5 + 6)),            # x + bump(x): old x on the left
    (2, 5, 0, (6, 0, 6 + 6)),            # bump(x) + x: x after copy-out
    (3, 5, 0, (6, 0, 0)),                # x == bump(x): 5 == 6
    (4, 3, 3, (3, 3, 1)),                # e == swap(e) with a == b: equal
    (4, 3, 4, (3, 4, 0)),                # {3,4} == {4,3}: not equal; e is swapped
    (5, 5, 0, (6, 0, 1)),                # x ++ bump(x) == 0x0506
    (6, 5, 0, (6, 5, 6)),                # { x, bump(x) }
    (7, 5, 0, (6, 0, 5)),                # first(x, bump(x)): in argument read first
    (8, 10, 0, (12, 0, (10 - 11 - 12) & 0xFF)),
])
def test_operands_are_read_left_to_right_around_inout_calls(program, op, x, y, want):
    out = SoftSwitch(program).process(0, bytes([op, x, y, 0]))
    assert out == [(1, bytes([op, *want]))]
