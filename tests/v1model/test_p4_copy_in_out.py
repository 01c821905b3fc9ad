"""Copy-in/copy-out of header arguments (P4-16 6.8) where aliasing is observable.

Each case gives a different packet if header arguments were passed by reference.
"""

import re

import pytest
from p4_switch import compiled, switch

from netweft.emulation.pipeline.compiled import lower_program
from netweft.p4.compiler import compile_p4
from netweft.p4.programs import source_dir


def run(sw, op: int, a: int, b: int, g: int = 0) -> tuple[int, int, int]:
    [(port, out)] = sw.process(0, bytes([op, a, b, g]))
    assert port == 1 and out[0] == op
    return out[1], out[2], out[3]


@pytest.fixture(scope="module")
def sw():
    return switch("copy_in_out")


def test_same_header_for_two_inout_parameters_of_an_action(sw):
    # x and y are copies of h (a = 5); copy-out of y (a = 15) comes last
    # (by reference: 1 + 10 = 11)
    assert run(sw, 0, 5, 9) == (15, 9, 0)


def test_same_header_for_two_inout_parameters_of_a_function(sw):
    assert run(sw, 6, 5, 9) == (15, 9, 0)


def test_same_header_for_two_inout_parameters_of_a_sub_control(sw):
    # x.b = 2, y.b = 9 + 20 from the original; y is copied out last
    assert run(sw, 7, 5, 9) == (5, 29, 0)


def test_copy_out_overwrites_a_write_through_the_global_name(sw):
    # hdr.h.b = 0x77 inside the action, then hdr.h = x (b = 9)
    assert run(sw, 1, 5, 9) == (1, 9, 0)


def test_a_read_through_the_global_name_sees_the_value_before_the_call(sw):
    assert run(sw, 2, 5, 9) == (7, 9, 5)


def test_copy_out_runs_left_to_right(sw):
    # hdr.h.a = v (3) first, then hdr.h = x (a = 4)
    assert run(sw, 3, 5, 9) == (4, 9, 0)


def test_in_argument_is_read_before_the_out_header_starts_invalid(sw):
    assert run(sw, 4, 5, 9) == (5, 6, 0)


def test_exit_still_copies_out_and_loses_the_global_write(sw):
    assert run(sw, 5, 5, 9) == (0x55, 9, 0)


def test_action_bound_in_a_table_with_a_directional_argument(sw):
    sw.table_add("bound", {"hdr.op.op": 8}, "write_global", {})
    assert run(sw, 8, 5, 9) == (1, 9, 0)


def test_common_case_without_aliasing(sw):
    assert run(sw, 9, 5, 9) == (7, 9, 0)


def test_only_the_calls_that_could_observe_aliasing_copy():
    # an argument copy shows as "_locN = <argument location>" in the generated code:
    # the aliased calls above need them, the forwarders of p4/ (no aliasing) do not
    copied = re.compile(r"\b_loc\d+ = ")
    aliased = lower_program(compiled("copy_in_out")).source
    # 2 (twice) + 2 (function) + 2 (sub-control) + 1 each for write_global,
    # read_global, scalar_then_header, make, leave and the table's bound action;
    # none for the two calls of plain()
    assert len(copied.findall(aliased)) == 12
    for name in ("basic_forward.p4", "ecmp_spray.p4"):
        path = source_dir() / name
        assert not copied.findall(lower_program(compile_p4(str(path))).source)
