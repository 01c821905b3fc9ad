"""Evaluation order: short-circuit && / || and ?: skip the side effects of what they skip;
slices of slices are assignable; a single value on a range key in const entries."""

import pytest

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; }
struct hs { h_t h; }
struct m_t { }
bool bump(inout bit<8> v) { v = v + 1; return true; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    action set_b(bit<8> v) { hdr.h.b = v; }
    table by_op {
        key = { hdr.h.op: range; }
        actions = { set_b; NoAction; }
        const entries = { 7 : set_b(0x77); 8 .. 9 : set_b(0x89); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        bool x;
        if (hdr.h.op == 1) { x = hdr.h.b == 0 || bump(hdr.h.a); }
        else if (hdr.h.op == 2) { x = hdr.h.b != 0 && bump(hdr.h.a); }
        else if (hdr.h.op == 3) { x = hdr.h.b == 0 ? bump(hdr.h.a) : false; }
        else if (hdr.h.op == 4) { hdr.h.a[7:4][1:0] = 2w3; }
        else { by_op.apply(); }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

SW = SoftSwitch(compile_p4_source(PROGRAM, "side_effects.p4"))


@pytest.mark.parametrize("packet, expected", [
    (b"\x01\x05\x00", b"\x01\x05\x00"),   # b == 0: || stops, a untouched
    (b"\x01\x05\x01", b"\x01\x06\x01"),   # b != 0: bump runs
    (b"\x02\x05\x00", b"\x02\x05\x00"),   # b == 0: && stops
    (b"\x02\x05\x01", b"\x02\x06\x01"),
    (b"\x03\x05\x00", b"\x03\x06\x00"),   # ?: runs only the chosen side
    (b"\x03\x05\x01", b"\x03\x05\x01"),
    (b"\x04\x00\x00", b"\x04\x30\x00"),   # a[7:4][1:0] is a[5:4]
    (b"\x04\xff\x00", b"\x04\xff\x00"),
    (b"\x07\x00\x00", b"\x07\x00\x77"),   # const entry 7 on a range key means 7..7
    (b"\x09\x00\x00", b"\x09\x00\x89"),
    (b"\x0a\x00\x00", b"\x0a\x00\x00"),
])
def test_evaluation_order_and_slices(packet, expected):
    assert SW.process(0, packet) == [(1, expected)]
