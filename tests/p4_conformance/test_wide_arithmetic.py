"""Width rules on 64- and 128-bit values and on int<32>, as property tests
(expectations written from the P4-16 operator definitions)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from .harness import BOTH_BACKENDS, switch_factory

make_switch = switch_factory("wide_arithmetic", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88be")
M64 = (1 << 64) - 1
M128 = (1 << 128) - 1
# (name, width in bits, signed) of every output field, in order
OUT_FIELDS = [
    ("add", 64, False), ("sub", 64, False), ("mul", 64, False), ("sat_add", 64, False),
    ("shl", 128, False), ("shr", 128, False), ("cat", 128, False), ("w_plus_x", 128, False),
    ("xor48", 48, False), ("smul", 32, True), ("ssat_sub", 32, True), ("sext", 64, True),
    ("sslice", 16, False), ("sneg", 32, True), ("zext", 64, False), ("top", 8, False),
    ("flags", 8, False),
]


def to_signed(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def expected(x: int, y: int, w: int) -> dict[str, int]:
    amount = y & 0x7F
    sx, sy = to_signed(x, 32), to_signed(y, 32)
    cat = (x << 64) | y
    flags = (sx < sy) | ((x < y) << 1) | ((w > cat) << 2) | ((sx <= 0) << 3)
    return {
        "add": (x + y) & M64,
        "sub": (x - y) & M64,
        "mul": (x * y) & M64,
        "sat_add": min(x + y, M64),
        "shl": (w << amount) & M128,
        "shr": w >> amount,
        "cat": cat,
        "w_plus_x": (w + x) & M128,
        "xor48": (x ^ y) & ((1 << 48) - 1),
        "smul": to_signed(sx * sy, 32),
        "ssat_sub": max(-(1 << 31), min((1 << 31) - 1, sx - sy)),
        "sext": sx,
        "sslice": (x >> 16) & 0xFFFF,
        "sneg": to_signed(-sx, 32),
        "zext": x & 0xFFFFFFFF,
        "top": x >> 56,
        "flags": flags,
    }


def run(sw, x: int, y: int, w: int) -> dict[str, int]:
    body = x.to_bytes(8, "big") + y.to_bytes(8, "big") + w.to_bytes(16, "big")
    out = sw.process(0, ETH + body)
    assert len(out) == 1 and out[0][0] == 1
    data = out[0][1]
    assert data[:14 + 32] == ETH + body
    values = int.from_bytes(data[14 + 32:], "big")
    total = sum(width for _, width, _ in OUT_FIELDS)
    assert len(data) - 14 - 32 == total // 8
    result = {}
    shift = total
    for name, width, signed in OUT_FIELDS:
        shift -= width
        raw = (values >> shift) & ((1 << width) - 1)
        result[name] = to_signed(raw, width) if signed else raw
    return result


@settings(max_examples=40, deadline=None)
@given(x=st.integers(0, M64), y=st.integers(0, M64), w=st.integers(0, M128))
@example(x=M64, y=1, w=M128)
@example(x=0x80000000, y=1, w=1)           # negating int<32>'s most negative value
@example(x=0x7FFFFFFF, y=0xFFFFFFFF, w=0)  # saturating subtraction at the top
@example(x=0x80000000, y=0x7FFFFFFF, w=0)  # and at the bottom
@example(x=0, y=127, w=M128)               # the widest shift
def test_wide_and_signed_width_rules(make_switch, x, y, w):
    assert run(make_switch(), x, y, w) == expected(x, y, w)
