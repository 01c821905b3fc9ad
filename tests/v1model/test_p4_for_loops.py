"""For loops (P4-16 1.2.5) lowered into Python loops, packet in -> packet out."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from p4_switch import switch


def pkt(op: int, a: int = 0, b: int = 0, res: int = 0, items: bytes = b"") -> bytes:
    return bytes([op, a, b, res]) + items


def result(sw, op: int, a: int = 0, b: int = 0, items: bytes = b"") -> int:
    [(port, out)] = sw.process(0, pkt(op, a, b, items=items))
    assert port == 1
    return out[3]


@pytest.fixture(scope="module")
def sw():
    return switch("for_loops")


@pytest.mark.parametrize("a, b, expected", [
    (4, 0, 3),    # 4, 3, (2 skipped by continue), 1
    (0, 0, 0),    # the condition is false at once
    (6, 4, 2),    # 6, 5, then break at 4
    (1, 1, 0),    # break on the first iteration
    (3, 0, 2),    # 3, (2 skipped), 1: the update still runs after continue
])
def test_three_part_loop_with_break_and_continue(sw, a, b, expected):
    assert result(sw, 0, a, b) == expected


@pytest.mark.parametrize("lo, hi, expected", [
    (1, 4, 10),
    (5, 5, 5),
    (6, 2, 0),                      # an empty range runs the body zero times
    (250, 255, sum(range(250, 256)) & 0xff),  # up to the type's maximum, no wrap-around loop
])
def test_range_loop_is_inclusive(sw, lo, hi, expected):
    assert result(sw, 1, lo, hi) == expected


@pytest.mark.parametrize("a", [0, 1, 2, 5, 9])
def test_break_leaves_only_the_inner_loop(sw, a):
    assert result(sw, 2, a) == a * (a - 1) // 2


def test_stack_loop_visits_each_element_by_copy(sw):
    items = bytes([7, 20, 0])  # three valid elements, the fourth invalid
    out = sw.process(0, pkt(3, items=items))
    # 7 + 20 + 0; writing the loop variable leaves the stack unchanged
    assert out == [(1, pkt(3, res=27, items=items))]


def test_list_loop_evaluates_its_values_before_the_loop(sw):
    # the body zeroes hdr.op.a, but the list already holds its value
    assert sw.process(0, pkt(4, 3, 5)) == [(1, pkt(4, 0, 5, 108))]


@pytest.mark.parametrize("target, limit, expected", [(10, 9, 4), (16, 9, 4), (50, 5, 0)])
def test_return_from_a_loop_in_a_function(sw, target, limit, expected):
    assert result(sw, 5, target, limit) == expected


def test_return_from_a_loop_in_an_apply_block(sw):
    assert result(sw, 6, 3) == 3
    assert result(sw, 6, 20) == 0xff


def test_tuple_variable_loop_sees_the_values_before_the_loop(sw):
    assert result(sw, 7, 5, 9) == 14


def count_down_model(a: int, b: int) -> int:
    """Python model of the count_down action (continue at 2, break at b)."""
    n = 0
    i = a
    while i > 0:
        if i != 2:
            if i == b:
                break
            n = (n + 1) & 0xFF
        i -= 1
    return n


@settings(max_examples=60, deadline=None)
@given(a=st.integers(0, 255), b=st.integers(0, 255))
def test_loops_agree_with_a_python_model(sw, a, b):
    assert result(sw, 0, a, b) == count_down_model(a, b)
    assert result(sw, 1, a, b) == sum(range(a, b + 1)) & 0xFF
