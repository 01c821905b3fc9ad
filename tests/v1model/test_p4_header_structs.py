"""Structs nested inside headers (P4-16 7.2.2): their fields sit on the wire in
declaration order, are read and written as fields, and serve as table keys."""

from __future__ import annotations

import pytest

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
struct flags_t { bit<4> hi; bit<4> lo; }
struct inner_t { bit<8> a; flags_t f; int<8> s; bool b; bit<7> pad; }
header h_t { bit<8> op; inner_t inner; bit<8> result; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    action set_out(bit<8> v) { hdr.h.result = v; }
    table t {
        key = { hdr.h.inner.a : exact; hdr.h.inner.f.lo : ternary; }
        actions = { set_out; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.op == 1) { t.apply(); }
        else if (hdr.h.op == 2) {
            hdr.h.inner.f = { hdr.h.inner.f.lo, hdr.h.inner.f.hi };
            hdr.h.inner.s = hdr.h.inner.s - 1;
            hdr.h.inner.b = !hdr.h.inner.b;
        }
        else if (hdr.h.op == 3) { inner_t c = hdr.h.inner; c.a = c.a + 1; hdr.h.inner = c; }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def program():
    return compile_p4_source(PROGRAM, "header_structs.p4")


def packet(op: int, a: int, hi: int, lo: int, s: int, b: bool, out: int = 0) -> bytes:
    return bytes([op, a, hi << 4 | lo, s & 0xFF, 0x80 if b else 0, out])


@pytest.mark.parametrize("a,lo,want", [(7, 3, 0x42), (7, 4, 0), (8, 3, 0)])
def test_struct_fields_inside_a_header_are_table_keys(program, a, lo, want):
    sw = SoftSwitch(program)
    sw.tables["I.t"].add({"hdr.h.inner.a": 7,
                          "hdr.h.inner.f.lo": (3, 0xF)}, "I.set_out", [0x42], priority=1)
    out = sw.process(0, packet(1, a, 9, lo, 0, False))
    assert out == [(1, packet(1, a, 9, lo, 0, False, want))]


def test_struct_fields_inside_a_header_are_parsed_written_and_emitted(program):
    out = SoftSwitch(program).process(0, packet(2, 1, 0xA, 0x5, -128, True))
    assert out == [(1, packet(2, 1, 0x5, 0xA, 127, False))]


def test_a_struct_inside_a_header_is_copied_as_a_value(program):
    out = SoftSwitch(program).process(0, packet(3, 0xFF, 1, 2, 5, True))
    assert out == [(1, packet(3, 0, 1, 2, 5, True))]
