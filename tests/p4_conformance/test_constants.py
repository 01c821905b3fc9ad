"""Compile-time constant evaluation (P4-16 'Compile-time known values' and the
operator definitions), observed through the values a program writes."""

from __future__ import annotations

import struct

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("constants", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88c3")


def test_constants_written_by_the_program(make_switch):
    expected_fields = [
        17 // 5,            # 8w17 / 8w5
        17 % 5,             # 8w17 % 8w5
        (-7 >> 1) % 256,    # arbitrary-precision -7 >> 1 == -4, cast to bit<8>
        0xAB,
        0xF1,
        128,
        0xF0,
        255,
        0,
        4,
        1,
        1,
        9,
    ]
    body = bytes(expected_fields) + struct.pack("!HI", 0xFF80, ((1 << 40) // 3) % 1000000)
    out = make_switch().process(0, ETH + b"rest")
    assert_outputs(out, [(1, ETH + body + b"rest")])
