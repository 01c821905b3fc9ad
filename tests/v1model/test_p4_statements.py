"""Statements and aggregate values run by the generated code, packet in -> packet out."""

import pytest
from p4_switch import switch

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b9")


def pkt(op: int, arg: int = 0, res: int = 0, same: int = 0, items: bytes = b"\x05\x00") -> bytes:
    return ETH + bytes([op, arg, res, same]) + items


@pytest.fixture
def sw():
    return switch("statements")


def test_value_switch_default_and_struct_assignment(sw):
    # meta.q = meta.p copies; changing q.y leaves p alone: 3 + 9
    assert sw.process(0, pkt(0, 2)) == [(1, pkt(0, 2, 12))]


def test_header_assignment_equality_and_sub_control_by_reference(sw):
    copy = ETH[:12] + b"\x88\xbb"  # Bump added arg=2 to the copy's etherType
    assert sw.process(0, pkt(1, 2)) == [(1, ETH + bytes([1, 2, 0, 1]) + copy + b"\x05\x00")]


def test_invalid_header_assignment(sw):
    assert sw.process(0, pkt(2, 2)) == [(1, bytes([2, 2, 0, 0]) + b"\x05\x00")]


def test_push_front_shifts_the_stack(sw):
    assert sw.process(0, pkt(3)) == [(1, pkt(3, items=b"\xee\x05\x00"))]


def test_return_leaves_the_control(sw):
    assert sw.process(0, pkt(5, 2)) == [(1, pkt(5, 2, 0x77))]


def test_exit_from_a_table_action_and_bound_action_parameters(sw):
    sw.table_add("t", {"arg": 7}, "record", {"v": 0x42})
    sw.table_add("t", {"arg": 8}, "leave", {})
    assert sw.process(0, pkt(4, 7)) == [(1, pkt(4, 7, 0x42))]
    assert sw.process(0, pkt(4, 8)) == [(1, pkt(4, 8, 0x77))]
    assert sw.process(0, pkt(4, 9)) == [(1, pkt(4, 9, 0))]


def test_stack_element_at_a_run_time_index(sw):
    items = b"\x05\x06\x07\x00"
    assert sw.process(0, pkt(6, 1, items=items)) == [(1, pkt(6, 1, 6, items=items))]
    assert sw.process(0, pkt(6, 3, items=items)) == [(1, pkt(6, 3, 0, items=items))]
    assert sw.process(0, pkt(6, 200, items=items)) == [(1, pkt(6, 200, 0, items=items))]


def test_exit_still_copies_out_inout_parameters(sw):
    # P4-16 "exit": the copy-out of the exiting action / control still happens
    assert sw.process(0, pkt(7)) == [(1, pkt(7, 0, 0x99))]
    assert sw.process(0, pkt(8)) == [(1, pkt(8, 0, 0x55))]


def test_an_out_header_parameter_starts_invalid(sw):
    assert sw.process(0, pkt(9)) == [(1, pkt(9, 0, 2))]


def test_struct_and_header_values_from_lists_casts_and_equality():
    # pr = (y, x); a = (pr.p, pr.q + 1); z == {5, 6} and pr != z adds 100 to a.x
    assert switch("struct_values").process(0, b"\x01\x02") == [(1, b"\x66\x02")]
    assert switch("struct_values").process(0, b"\x06\x05") == [(1, b"\x05\x07")]
