"""Header validity through assignments, setInvalid and header unions (P4-16
'Assignment statement': headers are copied with their validity bit)."""

from __future__ import annotations

import pytest

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("header_ops", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88c8")
A = b"\xa1\xa2"


def op_byte(op: int, has_a: bool) -> bytes:
    return bytes([(op << 1) | int(has_a)])


@pytest.mark.parametrize("has_a, emitted", [
    (True, A + A),   # b becomes a copy of the valid a
    (False, b""),    # a is invalid, so b becomes invalid too (its setValid is undone)
])
def test_header_assignment_copies_validity(make_switch, has_a, emitted):
    frame = ETH + op_byte(1, has_a) + (A if has_a else b"") + b"pl"
    expected = ETH + op_byte(1, has_a) + emitted + b"\x00" + b"pl"
    assert_outputs(make_switch().process(0, frame), [(1, expected)])


@pytest.mark.parametrize("has_a, emitted", [
    (True, b"\x22\x22" + A),   # a := saved.second (valid), b := saved.first (= old a)
    (False, b"\x22\x22"),      # saved.first was copied from an invalid a: b stays invalid
])
def test_struct_assignment_copies_nested_validity(make_switch, has_a, emitted):
    frame = ETH + op_byte(2, has_a) + (A if has_a else b"") + b"pl"
    expected = ETH + op_byte(2, has_a) + emitted + b"\x00" + b"pl"
    assert_outputs(make_switch().process(0, frame), [(1, expected)])


def test_set_invalid_removes_the_header(make_switch):
    frame = ETH + op_byte(3, True) + A + b"pl"
    assert_outputs(make_switch().process(0, frame), [(1, ETH + op_byte(3, True) + b"\x00pl")])


def test_union_validity(make_switch):
    frame = ETH + op_byte(4, False) + b"pl"
    expected = ETH + op_byte(4, False) + b"\x77" + b"\x03" + b"pl"
    assert_outputs(make_switch().process(0, frame), [(1, expected)])
