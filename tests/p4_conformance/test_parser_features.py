"""Parser features: lookahead, advance, select masks/ranges/tuples, value sets,
header unions and header stacks (P4-16 spec sections on parsers and stacks)."""

from __future__ import annotations

import pytest

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("parser_features", BOTH_BACKENDS)

DST = bytes.fromhex("0a0000000001")
SRC = bytes.fromhex("0a0000000002")


def frame(ethertype: int, body: bytes, src: bytes = SRC) -> bytes:
    return DST + src + ethertype.to_bytes(2, "big") + body


def run(make_switch, ethertype: int, body: bytes) -> list[tuple[int, bytes]]:
    return make_switch().process(0, frame(ethertype, body))


@pytest.mark.parametrize("first, arm", [
    (0x15, 1),  # low nibble 5: mask arm
    (0x25, 1),  # in the range too, but the mask arm comes first
    (0x20, 2),  # range bounds are inclusive
    (0x2A, 2),
    (0x2F, 2),
    (0x30, 3),  # default
    (0x1F, 3),
])
def test_lookahead_select_with_mask_and_range(make_switch, first, arm):
    body = bytes([first]) + b"rest"
    result = (first << 8) | arm
    assert_outputs(run(make_switch, 0x9100, body),
                   [(1, frame(0x9100, body, result.to_bytes(6, "big")))])


def test_advance_skips_and_drops_bytes(make_switch):
    out = run(make_switch, 0x9101, b"\xaa\xbb\xcc rest")
    assert_outputs(out, [(1, frame(0x9101, b"\xcc rest", (0xCC).to_bytes(6, "big")))])


def test_union_short_member(make_switch):
    out = run(make_switch, 0x9102, b"\x04\x10tail")
    assert_outputs(out, [(1, frame(0x9102, b"\x04\x11tail", (4).to_bytes(6, "big")))])


def test_union_set_valid_replaces_other_member(make_switch):
    out = run(make_switch, 0x9102, b"\x06\x01\x02\x03tail")
    assert_outputs(out, [(1, frame(0x9102, b"\x04\x03tail", (6).to_bytes(6, "big")))])


def test_union_neither_member(make_switch):
    out = run(make_switch, 0x9102, b"\x09\x01")
    assert_outputs(out, [(1, frame(0x9102, b"\x09\x01", bytes(6)))])


def hops(*ids_bos: tuple[int, int]) -> bytes:
    return b"".join(bytes([i, b]) for i, b in ids_bos)


@pytest.mark.parametrize("name, body, last_index, expected_body", [
    ("push_front",
     hops((0xA0, 0), (0x11, 0), (0x22, 1)) + b"p", 2,
     hops((0xEE, 0), (0xA0, 0), (0x11, 0), (0x22, 1)) + b"p"),
    ("push_front on a full stack drops the last element",
     hops((0xA0, 0), (0x11, 0), (0x22, 0), (0x33, 1)) + b"p", 3,
     hops((0xEE, 0), (0xA0, 0), (0x11, 0), (0x22, 0)) + b"p"),
    ("pop_front",
     hops((0xB0, 0), (0x11, 1)) + b"p", 1,
     hops((0x11, 1)) + b"p"),
    ("invalid element is not emitted",
     hops((0xC0, 0), (0x11, 0), (0x22, 1)) + b"p", 2,
     hops((0xC0, 0), (0x22, 1)) + b"p"),
    ("single element",
     hops((0x05, 1)) + b"p", 0,
     hops((0x05, 1)) + b"p"),
])
def test_header_stack(make_switch, name, body, last_index, expected_body):
    out = run(make_switch, 0x9103, body)
    assert_outputs(out, [(1, frame(0x9103, expected_body, last_index.to_bytes(6, "big")))])


@pytest.mark.parametrize("pair, arm", [
    (0x11, 1),
    (0x20, 2),
    (0x2F, 2),  # (2, _) comes before (_, 0xF)
    (0x3F, 3),
    (0x12, 0),
])
def test_tuple_select_with_dont_care(make_switch, pair, arm):
    body = bytes([pair, 0x99])
    assert_outputs(run(make_switch, 0x9104, body),
                   [(1, frame(0x9104, body, arm.to_bytes(6, "big")))])


def test_empty_value_set_matches_nothing(make_switch):
    body = b"\x01\x02"
    assert_outputs(run(make_switch, 0x88CC, body), [(1, frame(0x88CC, body, bytes(6)))])
