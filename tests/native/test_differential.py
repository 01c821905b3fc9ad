"""Differential tests: every ``p4/`` program on the Python and the native back end,
the same entries, thousands of valid, mutated and junk frames; the output ports and
bytes, the switch counters, and every counter and register cell must be identical."""

from __future__ import annotations

import zlib

import pytest

from netweft.emulation.native.build import compiler

from .programs import SPECS, frames, switch

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

FRAMES = 2500


def state_of(sw) -> dict:
    """Every counter and register cell and the switch's packet counters."""
    out: dict = {"stats": sw.stats}
    for name, c in sw.counters.items():
        out[f"counter {name}"] = [c.read(i) for i in range(c.size)]
    for name, r in sw.registers.items():
        out[f"register {name}"] = [r.read(i) for i in range(r.size)]
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
def test_both_back_ends_agree_frame_by_frame(name: str) -> None:
    py, c = switch(name, "python"), switch(name, "c")
    assert (py.backend, c.backend) == ("python", "c")
    sent = 0
    for i, (port, frame) in enumerate(frames(name, FRAMES, seed=zlib.crc32(name.encode()))):
        expected = py.process(port, frame)
        assert c.process(port, frame) == expected, f"frame {i}: {frame.hex()}"
        sent += len(expected)
    assert sent > FRAMES // 40        # the frames exercise forwarding, not only drops
    assert state_of(c) == state_of(py)


@pytest.mark.parametrize("name", ["ecmp_spray", "fabric", "fabric_aggregation"])
def test_both_back_ends_agree_through_queues(name: str) -> None:
    """Ingress and egress apart, with the traffic manager's queue metadata between."""
    py, c = (switch(name, backend, priority_queues=2) for backend in ("python", "c"))
    for sw in (py, c):
        sw.set_queue_rate(20000.0)
        sw.set_queue_depth(16)
    now = 0
    for port, frame in frames(name, 1500, seed=7):
        now += 20_000                                       # 50 kpps offered to 20 kpps
        assert c.receive(port, frame, now) == py.receive(port, frame, now)
    assert c.advance(now + 10**9) == py.advance(now + 10**9)
    assert state_of(c) == state_of(py)
