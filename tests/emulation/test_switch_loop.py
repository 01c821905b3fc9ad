"""The switch process's loop keeps memory bounded: log_msg texts and digests are drained."""

from __future__ import annotations

import io
from collections import Counter

from netweft.emulation.process.switch_process import SwitchLoop


class _Chatty:
    """A stand-in switch whose program keeps calling log_msg and digest."""

    def __init__(self) -> None:
        self.logs: list[str] = []
        self.digests: list[tuple[int, object]] = []

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        self.logs.append(f"saw {len(frame)} bytes")
        self.digests.append((1, frame[:2]))
        return []


def _loop(switch: object, trace: io.StringIO | None, sink: list | None) -> SwitchLoop:
    return SwitchLoop(switch, io=None, stats=Counter(), captures=None, trace_out=trace,
                 on_digests=sink.extend if sink is not None else None)


def test_digests_and_log_messages_are_drained_and_counted_every_pass():
    sw, delivered, trace = _Chatty(), [], io.StringIO()
    loop = _loop(sw, trace, delivered)
    for _pass in range(3):
        for _ in range(100):
            sw.process(1, b"\x00\x01frame")
        loop.housekeeping()
        assert sw.logs == [] and sw.digests == []
    assert loop.stats["log_msgs"] == 300 and loop.stats["digests"] == 300
    assert len(delivered) == 300 and delivered[0] == (1, b"\x00\x01")
    assert trace.getvalue().count("log_msg: saw 7 bytes") == 300


def test_without_a_consumer_digests_and_logs_are_counted_as_discarded():
    sw = _Chatty()
    loop = _loop(sw, None, None)
    for _ in range(50):
        sw.process(1, b"abc")
    loop.housekeeping()
    assert (sw.logs, sw.digests) == ([], [])
    assert loop.stats["digests_discarded"] == 50 and loop.stats["log_msgs_discarded"] == 50
