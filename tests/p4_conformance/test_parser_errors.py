"""Parser errors land in standard_metadata.parser_error and the packet goes on.

BMv2 semantics: on an error the parser stops; headers extracted so far stay
valid, the header being extracted stays invalid and its bytes remain payload.
"""

from __future__ import annotations

import pytest

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("parser_errors", BOTH_BACKENDS)

DST = bytes.fromhex("0a0000000001")
SRC = bytes.fromhex("0a0000000002")


def frame(ethertype: int, body: bytes) -> bytes:
    return DST + SRC + ethertype.to_bytes(2, "big") + body


def reported(ethertype: int, body: bytes, code: int) -> list[tuple[int, bytes]]:
    """The same frame out of port 1 with the error code in the source MAC."""
    return [(1, DST + code.to_bytes(6, "big") + ethertype.to_bytes(2, "big") + body)]


CASES = {
    # name: (ethertype, body, code)
    "fixed header complete": (0x9000, bytes(range(20)) + b"tail", 0),
    "fixed header too short": (0x9000, bytes(range(12)), 1),
    "empty after ethernet": (0x9000, b"", 1),
    "verify passes": (0x9001, b"\x5a rest", 0),
    "verify fails with user error": (0x9001, b"\x5b rest", 0x10),
    "stack fits": (0x9002, bytes([0x02, 0x04, 0x07]) + b"xy", 0),
    "stack overflows": (0x9002, bytes([0x02, 0x04, 0x06, 0x08, 0x0a]), 3),
    "stack packet too short": (0x9002, bytes([0x02]), 1),
    "varbit within max": (0x9003, bytes([3]) + b"abc" + b"zz", 0),
    "varbit zero length": (0x9003, bytes([0]) + b"zz", 0),
    "varbit longer than max": (0x9003, bytes([5]) + b"abcdefgh", 4),
    "varbit packet too short": (0x9003, bytes([4]) + b"ab", 1),
    "select matches": (0x9004, b"\x02body", 0),
    "select without default misses": (0x9004, b"\x03body", 2),
    "unknown ethertype accepted": (0x1234, b"whatever", 0),
    "lookahead with enough bytes": (0x9005, b"\x11\x22\x33\x44", 0),
    "lookahead then verify fails": (0x9005, b"\xaa\x22\x33\x44", 0x10),
    "lookahead past the end": (0x9005, b"\xaa\x22\x33", 1),
    "advance past the end": (0x9006, b"\x01\x02\x03", 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_parser_error_code_and_bytes(make_switch, case):
    ethertype, body, code = CASES[case]
    out = make_switch().process(0, frame(ethertype, body))
    assert_outputs(out, reported(ethertype, body, code))


def test_advance_consumes_the_skipped_bytes(make_switch):
    """advance() removes the skipped bytes: they are neither a header nor payload."""
    out = make_switch().process(0, frame(0x9006, b"\x01\x02\x03\x04\x5a!"))
    assert_outputs(out, [(1, DST + bytes(6) + b"\x90\x06" + b"\x5a!")])


def test_runt_frame_shorter_than_ethernet(make_switch):
    """Even the first extract failing leaves the packet alive: ethernet is invalid,
    so nothing is rewritten and the bytes come out unchanged."""
    out = make_switch().process(0, b"\x01\x02\x03\x04")
    assert_outputs(out, [(1, b"\x01\x02\x03\x04")])
