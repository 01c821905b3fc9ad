"""Registers whose cells the native back end interleaves (one control's registers of
the same size share a block, cell by cell: aggregation.p4's lanes) on both back ends:
data-plane reads and writes, out-of-range indexes, control-plane reads, writes and
resets of one register leaving its block's others alone; every output and cell
identical to the Python back end's."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from netweft.emulation.native.build import compiler
from netweft.emulation.native.c_program import generate
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

PROGRAM = Path(__file__).resolve().parent / "p4" / "interleaved_registers.p4"
ETH = bytes.fromhex("0a00000000010a0000000002" "88b5")
NAMES = [f"RIngress.{n}" for n in "abcde"] + ["REgress.f"]


def _frame(op: int, index: int, value: int) -> bytes:
    return ETH + bytes([op, index]) + value.to_bytes(4, "big") + bytes(22)


def _cells(sw: SoftSwitch) -> dict[str, list[int]]:
    return {n: [sw.register_read(n, i) for i in range(sw.registers[n].size)] for n in NAMES}


def test_layout_interleaves_one_controls_registers_of_one_size() -> None:
    gen = generate(compile_p4(str(PROGRAM)))
    strides = dict(zip((r[0] for r in gen.registers), gen.register_strides, strict=True))
    assert strides == {"RIngress.a": 4, "RIngress.b": 4, "RIngress.c": 4, "RIngress.d": 4,
                       "RIngress.e": 1, "REgress.f": 1}


def test_interleaved_registers_agree() -> None:
    program = compile_p4(str(PROGRAM))
    py, c = SoftSwitch(program, backend="python"), SoftSwitch(program, backend="c")
    rng = random.Random(7)
    for i in range(600):   # indexes past 16 (and past e's 8) are out of range
        frame = _frame(rng.randint(1, 2), rng.randint(0, 20), rng.getrandbits(32))
        assert c.process(0, frame) == py.process(0, frame), f"frame {i}"
    assert _cells(c) == _cells(py)
    assert any(v for v in _cells(c)["RIngress.b"])


def test_control_plane_touches_one_register_of_a_block() -> None:
    c = SoftSwitch(compile_p4(str(PROGRAM)), backend="c")
    c.process(0, _frame(1, 5, 100))
    c.process(0, _frame(1, 6, 200))
    before = _cells(c)
    assert [before[n][5] for n in NAMES] == [100, 101, 102, 103, 104, 104]
    c.register_write("RIngress.b", 5, 7)
    c.register_write("RIngress.d", 15, 0xFFFF)
    after = _cells(c)
    assert after["RIngress.b"][5] == 7 and after["RIngress.d"][15] == 0xFFFF
    assert after["RIngress.a"] == before["RIngress.a"]
    assert after["RIngress.c"] == before["RIngress.c"]
    out = c.process(0, _frame(2, 5, 0))[0][1]
    assert int.from_bytes(out[20:24], "big") == 100 and int.from_bytes(out[24:28], "big") == 7
    c.register_reset("RIngress.c")
    reset = _cells(c)
    assert reset["RIngress.c"] == [0] * 16
    assert reset["RIngress.a"] == before["RIngress.a"]
    assert reset["RIngress.b"][5] == 7 and reset["RIngress.d"][5] == 103
    assert list(c.registers["RIngress.a"].cells)[5:7] == [100, 200]
