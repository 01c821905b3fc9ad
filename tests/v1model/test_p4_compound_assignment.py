"""Compound assignments (``+=`` ... ``|-|=``, P4-16 1.2.5): lexed, parsed, type checked
and run; each is ``a = a op b`` with ``a``'s width rules."""

from __future__ import annotations

import pytest

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import P4Error, compile_p4_source

OPS = ["+=", "-=", "*=", "&=", "|=", "^=", "<<=", ">>=", "|+|=", "|-|="]

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; int<8> s; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> x = hdr.h.a;
        %s
        else if (hdr.h.op == 100) { hdr.h.s >>= 1; hdr.h.s |-|= 127; }
        else if (hdr.h.op == 101) { for (bit<8> i = 0; i < hdr.h.b; i += 1) { x += 2; } }
        hdr.h.a = x;
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _branches() -> str:
    return "\n        else ".join(f"if (hdr.h.op == {i}) {{ x {op} hdr.h.b; }}"
                                 for i, op in enumerate(OPS))


def expected(op: str, a: int, b: int) -> int:
    """``a op b`` on bit<8>, computed independently of the back end."""
    value = {"+=": a + b, "-=": a - b, "*=": a * b, "&=": a & b, "|=": a | b, "^=": a ^ b,
             "<<=": a << b, ">>=": a >> b, "|+|=": min(a + b, 255),
             "|-|=": max(a - b, 0)}[op]
    return value & 0xFF


@pytest.fixture(scope="module")
def switch_program():
    return compile_p4_source(PROGRAM % _branches(), "compound.p4")


@pytest.mark.parametrize("a,b", [(200, 3), (250, 10), (3, 10), (0x81, 7)])
@pytest.mark.parametrize("op", OPS)
def test_compound_assignment_on_packets(switch_program, op, a, b):
    out = SoftSwitch(switch_program).process(0, bytes([OPS.index(op), a, b, 0]))
    assert out == [(1, bytes([OPS.index(op), expected(op, a, b), b, 0]))]


def test_signed_shift_and_saturation_and_for_loop_update(switch_program):
    # -16 >> 1 == -8 (arithmetic shift); -8 |-| 127 saturates at -128
    out = SoftSwitch(switch_program).process(0, bytes([100, 0, 0, 0xF0]))
    assert out == [(1, bytes([100, 0, 0, 0x80]))]
    out = SoftSwitch(switch_program).process(0, bytes([101, 10, 4, 0]))
    assert out == [(1, bytes([101, 18, 4, 0]))]


def _ingress_error(body: str) -> str:
    src = PROGRAM % f"if (hdr.h.op == 0) {{ {body} }}"
    with pytest.raises(P4Error) as err:
        compile_p4_source(src, "bad.p4")
    return str(err.value)


def test_compound_assignment_keeps_width_rules():
    msg = _ingress_error("x += 16w1;")
    assert msg.startswith("bad.p4:15:") and "bit<8>" in msg and "bit<16>" in msg


CALL_IN_LVALUE = """
#include <core.p4>
#include <v1model.p4>
header i_t { bit<8> i; bit<8> v; }
header e_t { bit<8> x; }
struct hs { i_t k; e_t[4] s; }
struct m_t { }
bit<8> postincr(inout bit<8> x) { bit<8> old = x; x += 1; return old; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.k); p.extract(hdr.s.next); p.extract(hdr.s.next);
                  p.extract(hdr.s.next); p.extract(hdr.s.next); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.s[postincr(hdr.k.i) & 3].x |= hdr.k.v;
        hdr.s[postincr(hdr.k.i) & 3].x += hdr.k.v;
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.k); p.emit(hdr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_an_lvalue_with_a_call_is_evaluated_once():
    prog = compile_p4_source(CALL_IN_LVALUE, "call_lvalue.p4")
    out = SoftSwitch(prog).process(0, bytes([1, 0x0F, 0x10, 0x20, 0x30, 0x40]))
    # index 1 |= 0x0f, then index 2 += 0x0f; i counts the two calls
    assert out == [(1, bytes([3, 0x0F, 0x10, 0x2F, 0x3F, 0x40]))]


def test_compound_operator_is_not_an_expression():
    msg = _ingress_error("x = (x += 1);")
    assert msg.startswith("bad.p4:15:")
