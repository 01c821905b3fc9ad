"""P4-16 arithmetic and width rules, checked as properties over random operands.

Each expectation is written from the P4-16 specification's operator
definitions (unsigned ops wrap modulo 2^W, |+| / |-| saturate, shifts by W or
more give 0 (or the sign for signed >>), slices and ++ follow bit positions,
casts truncate or extend, signed values are two's complement).
"""

from __future__ import annotations

import struct

from hypothesis import example, given, settings
from hypothesis import strategies as st

from .harness import BOTH_BACKENDS, switch_factory

make_switch = switch_factory("arithmetic", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b9")
RESULTS = "!12BHBBH4bhBBBBBB"
PAYLOAD = b"after"


def signed8(x: int) -> int:
    return x - 256 if x & 0x80 else x


def expected(a: int, b: int, s: int) -> tuple:
    sa, sb = signed8(a), signed8(b)
    flags = ((a < b) << 0) | ((sa < sb) << 1) | ((a == b) << 2) | ((sa > sb) << 3) \
        | ((a >= b) << 4) | ((a != b and a != 0) << 5)
    return (
        (a + b) % 256,
        (a - b) % 256,
        (a * b) % 256,
        min(a + b, 255),
        max(a - b, 0),
        a & b,
        a | b,
        a ^ b,
        ~a & 0xFF,
        (a << s) & 0xFF if s < 8 else 0,
        a >> s,
        (-a) % 256,
        (a << 8) | b,
        ((a >> 4) << 4) | (a & 0xF),  # hi nibble then lo nibble in one byte
        ((a & 0xF) << 4) | 0,  # narrowed, then 4w15 + 4w1 == 0
        a,
        signed8((sa + sb) & 0xFF),
        max(-128, min(127, sa + sb)),
        max(-128, min(127, sa - sb)),
        sa >> min(s, 7),
        sa,
        flags,
        (b & 0xF0) | (a >> 4),
        44,
        16,
        255,
        max(a, b),
    )


def run(sw, a: int, b: int, s: int) -> tuple:
    pkt = ETH + bytes([a, b, s]) + PAYLOAD
    out = sw.process(0, pkt)
    assert len(out) == 1 and out[0][0] == 1
    data = out[0][1]
    size = struct.calcsize(RESULTS)
    assert data[:17] == pkt[:17]
    assert data[17 + size:] == PAYLOAD
    return struct.unpack(RESULTS, data[17:17 + size])


@settings(max_examples=60, deadline=None)
@given(a=st.integers(0, 255), b=st.integers(0, 255), s=st.integers(0, 12))
@example(a=0, b=0, s=0)
@example(a=255, b=1, s=8)
@example(a=0x80, b=0x7F, s=7)
@example(a=0x7F, b=0x01, s=1)
@example(a=0x80, b=0x80, s=3)
def test_operators_follow_p4_width_rules(make_switch, a, b, s):
    assert run(make_switch(), a, b, s) == expected(a, b, s)
