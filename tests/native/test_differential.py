"""Differential tests: every ``p4/`` program on the Python and the native back end,
the same entries, thousands of valid, mutated and junk frames; the output ports and
bytes, the switch counters, and every counter and register cell must be identical."""

from __future__ import annotations

import zlib

import pytest

from netweft.emulation.native.build import compiler

from .differential import compare_frame_by_frame, state_of
from .programs import SPECS, frames, switch

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

FRAMES = 2500


@pytest.mark.parametrize("name", sorted(SPECS))
def test_both_back_ends_agree_frame_by_frame(name: str) -> None:
    py, c = switch(name, "python"), switch(name, "c")
    compared, sent = compare_frame_by_frame(
        py, c, frames(name, FRAMES, seed=zlib.crc32(name.encode())))
    assert compared == FRAMES
    assert sent > FRAMES // 40        # the frames exercise forwarding, not only drops


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
