"""Property tests: P4 arithmetic and width rules at run time against a reference model."""

import struct

from hypothesis import given, settings
from hypothesis import strategies as st
from p4_switch import switch

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b8")
RES = "!" + "B" * 12 + "HB" + "b" * 8 + "BhHBB"
SW = switch("arith")


def u8(x: int) -> int:
    return x & 0xFF


def s8(x: int) -> int:
    x &= 0xFF
    return x - 256 if x & 0x80 else x


def reference(a, b, sa, sb, sh):
    f = 0
    f |= 1 if a < b else 0
    f |= 2 if a >= b else 0
    f |= 4 if sa < sb else 0
    f |= 8 if sa >= sb else 0
    f |= 16 if a == b else 0
    f |= 32 if sa != sb else 0
    f |= 64 if a > b and sa < 0 else 0
    f |= 128 if not a < b or sb > 0 else 0
    return (
        u8(a + b), u8(a - b), u8(a * b), min(a + b, 255), max(a - b, 0),
        u8(a << sh) if sh < 8 else 0, a >> sh, a & b, a | b, a ^ b, u8(~a), u8(-a),
        (a << 8) | b, (a >> 4) << 4 | (a & 0xF),
        s8(sa + sb), s8(sa - sb), s8(sa * sb), max(min(sa + sb, 127), -128),
        max(min(sa - sb, 127), -128), sa >> sh, s8(sa << sh) if sh < 8 else 0, s8(-sa),
        f, sa, a, max(a, b), (a & ~0x3C) | ((b & 0xF) << 2),
    )


def run(a, b, sa, sb, sh):
    data = ETH + struct.pack("!BBbbB", a, b, sa, sb, sh)
    (_port, out), = SW.process(0, data)
    return struct.unpack(RES, out[19:])  # the 4-bit hi and lo fields share one byte


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 255), st.integers(0, 255), st.integers(-128, 127),
       st.integers(-128, 127), st.integers(0, 12))
def test_arithmetic_matches_the_reference(a, b, sa, sb, sh):
    assert run(a, b, sa, sb, sh) == reference(a, b, sa, sb, sh)


def test_edge_values():
    for a, b, sa, sb, sh in [(0, 0, -128, -1, 0), (255, 255, 127, 127, 7), (1, 255, -128, 1, 8),
                             (128, 1, -1, -128, 12)]:
        assert run(a, b, sa, sb, sh) == reference(a, b, sa, sb, sh)
