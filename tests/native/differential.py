"""The comparison the differential tests make: one switch per back end, the same
frames through both, every output and every piece of state compared exactly."""

from __future__ import annotations

from collections.abc import Iterable


def state_of(sw) -> dict:
    """Every counter and register cell and the switch's packet counters."""
    out: dict = {"stats": sw.stats}
    for name, c in sw.counters.items():
        out[f"counter {name}"] = [c.read(i) for i in range(c.size)]
    for name, r in sw.registers.items():
        out[f"register {name}"] = [r.read(i) for i in range(r.size)]
    return out


def compare_frame_by_frame(py, c, frames: Iterable[tuple[int, bytes]]) -> tuple[int, int]:
    """Send each ``(port, frame)`` through the Python switch ``py`` and the native one
    ``c``; assert the same outputs frame by frame, then the same state.  Returns
    ``(frames compared, packets sent)``."""
    assert (py.backend, c.backend) == ("python", "c")
    compared = sent = 0
    for i, (port, frame) in enumerate(frames):
        expected = py.process(port, frame)
        assert c.process(port, frame) == expected, f"frame {i} on port {port}: {frame.hex()}"
        compared += 1
        sent += len(expected)
    assert state_of(c) == state_of(py)
    return compared, sent
