"""Evaluation order of lvalues (P4-16 8.1, 6.8): an assignment's left-hand
location and each out/inout argument's location are fixed, run-time stack
index included, before later side effects run; arguments are read left to right."""

import pytest

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header k_t { bit<8> op; bit<8> i; }
header b_t { bit<8> v; }
struct hs { k_t k; b_t[3] s; }
struct m_t { }
bit<8> take(inout bit<8> i) { i = 0; return 7; }
bit<8> bump(inout bit<8> i) { i = i + 1; return i; }
bit<8> first(in bit<8> x, in bit<8> y) { return x; }
void both(inout bit<8> i, inout bit<8> v) { i = 0; v = 5; }
control Z(inout bit<8> i, inout bit<8> v) { apply { i = 0; v = 6; } }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.k); p.extract(hdr.s.next); p.extract(hdr.s.next);
                  p.extract(hdr.s.next); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    Z() z;
    action act(inout bit<8> i, inout bit<8> v) { i = 0; v = 8; }
    apply {
        sm.egress_spec = 1;
        if (hdr.k.op == 1) { hdr.s[hdr.k.i].v = take(hdr.k.i); }
        else if (hdr.k.op == 2) { hdr.s[hdr.k.i] = { take(hdr.k.i) }; }
        else if (hdr.k.op == 3) { both(hdr.k.i, hdr.s[hdr.k.i].v); }
        else if (hdr.k.op == 4) { hdr.k.op = first(hdr.s[hdr.k.i].v, take(hdr.k.i)); }
        else if (hdr.k.op == 5) { hdr.s[bump(hdr.k.i)].v[3:0] = 4w0xf; }
        else if (hdr.k.op == 6) { z.apply(hdr.k.i, hdr.s[hdr.k.i].v); }
        else if (hdr.k.op == 7) { act(hdr.k.i, hdr.s[hdr.k.i].v); }
        else if (hdr.k.op == 8) { hdr.s[hdr.k.i].v[7:4] = take(hdr.k.i)[3:0]; }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.k); p.emit(hdr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def program():
    return compile_p4_source(PROGRAM, "evaluation_order.p4")


def run(program, op: int, index: int, stack: tuple[int, int, int]) -> bytes:
    out = SoftSwitch(program).process(0, bytes([op, index, *stack]))
    assert [port for port, _ in out] == [1]
    return out[0][1]


@pytest.mark.parametrize("index", [1, 2])
def test_assignment_writes_the_element_indexed_before_the_call(program, index):
    stack = [0x10, 0x20, 0x30]
    stack[index] = 7
    assert run(program, 1, index, (0x10, 0x20, 0x30)) == bytes([1, 0, *stack])


def test_aggregate_assignment_writes_the_element_indexed_before_the_call(program):
    assert run(program, 2, 2, (0x10, 0x20, 0x30)) == bytes([2, 0, 0x10, 0x20, 7])


def test_inout_argument_location_is_fixed_before_earlier_copy_out(program):
    # both() copies out i = 0 first; v still goes to the element i named on entry
    assert run(program, 3, 2, (0x10, 0x20, 0x30)) == bytes([3, 0, 0x10, 0x20, 5])


def test_in_argument_is_read_before_a_later_argument_changes_it(program):
    assert run(program, 4, 1, (0x10, 0x20, 0x30)) == bytes([0x20, 0, 0x10, 0x20, 0x30])


def test_side_effecting_index_of_a_slice_is_evaluated_once(program):
    assert run(program, 5, 0, (0x10, 0x20, 0x30)) == bytes([5, 1, 0x10, 0x2F, 0x30])


def test_sub_control_inout_argument_location_is_fixed_on_entry(program):
    assert run(program, 6, 1, (0x10, 0x20, 0x30)) == bytes([6, 0, 0x10, 6, 0x30])


def test_action_inout_argument_location_is_fixed_on_entry(program):
    assert run(program, 7, 2, (0x10, 0x20, 0x30)) == bytes([7, 0, 0x10, 0x20, 8])


def test_slice_assignment_location_is_fixed_before_the_call(program):
    assert run(program, 8, 1, (0x10, 0x20, 0x30)) == bytes([8, 0, 0x10, 0x70, 0x30])
