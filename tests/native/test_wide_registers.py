"""Registers of 65 to 128 bits on both back ends: data-plane writes and reads,
control-plane reads and writes, wrap-around at the cell width, out-of-range
indexes; every output and cell identical. And the deprecated Checksum16."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from netweft.emulation.native.build import compiler
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

PROGRAM = Path(__file__).resolve().parent / "p4" / "wide_registers.p4"
ETH = bytes.fromhex("0a00000000010a0000000002" "88b5")


def _frame(op: int, index: int, value: int) -> bytes:
    return ETH + bytes([op, index]) + value.to_bytes(16, "big") + bytes(16)


def test_wide_registers_agree() -> None:
    program = compile_p4(str(PROGRAM))
    py, c = SoftSwitch(program, backend="python"), SoftSwitch(program, backend="c")
    assert c.registers["WIngress.full"].width == 128
    rng = random.Random(5)
    for sw in (py, c):
        sw.register_write("WIngress.full", 7, (1 << 128) - 1)
        sw.register_write("WIngress.part", 7, (1 << 100) - 1)
    for i in range(400):
        frame = _frame(rng.randint(1, 3), rng.randint(0, 9), rng.getrandbits(128))
        assert c.process(0, frame) == py.process(0, frame), f"frame {i}"
    for name in ("WIngress.full", "WIngress.part"):
        assert ([c.register_read(name, i) for i in range(8)]
                == [py.register_read(name, i) for i in range(8)])
    value = 0x0123456789ABCDEF_FEDCBA9876543210
    c.process(0, _frame(1, 3, value))
    assert c.register_read("WIngress.full", 3) == value
    assert c.register_read("WIngress.part", 3) == value & ((1 << 100) - 1)
    out = c.process(0, _frame(2, 3, 0))[0][1]
    assert int.from_bytes(out[16:32], "big") == value
    assert int.from_bytes(out[32:48], "big") == (value & ((1 << 100) - 1)) + 1
    c.register_reset("WIngress.full")
    assert c.register_read("WIngress.full", 3) == 0


def test_checksum16_get() -> None:
    from netweft.emulation.v1model.hash_algorithms import csum16, pack_fields

    c = SoftSwitch(compile_p4(str(PROGRAM)), backend="c")
    value, index = 0x0123456789ABCDEF_FEDCBA9876543210, 0x25
    out = c.process(0, _frame(3, index, value))[0][1]
    expected = (csum16(pack_fields([(value, 128), (index & 0x1F, 5)]))
                + csum16(bytes([index])))
    assert int.from_bytes(out[32:48], "big") == expected
