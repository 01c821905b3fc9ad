"""The veth bench's bookkeeping: saturation, per-CPU rates and the summary's ratios."""

from __future__ import annotations

import struct

import pytest

from netweft.testbed.bench.switch_veth import (
    BenchResult,
    Point,
    SwitchUnderTest,
    summary,
    udp_frame,
)


def _point(switch: str, size: int, offered, generated, delivered, cpu) -> Point:
    return Point(switch, size, offered, 1000, generated, 900, delivered, 0.1, 10.0, 20.0, cpu)


def test_a_point_knows_when_the_switch_or_the_generator_ran_out():
    kept_up = _point("s", 64, 100e3, 99e3, 98e3, 0.5)
    assert not kept_up.saturated and not kept_up.generator_limited
    assert kept_up.pps_per_cpu == pytest.approx(196e3)
    assert _point("s", 64, 100e3, 99e3, 50e3, 0.5).saturated           # the switch lost half
    slow_generator = _point("s", 64, 100e3, 40e3, 40e3, 0.5)
    assert slow_generator.generator_limited and slow_generator.saturated
    assert not _point("s", 64, None, 40e3, 40e3, 0.5).generator_limited  # unpaced
    assert _point("s", 64, 1e3, 1e3, 1e3, 0.0).pps_per_cpu is None     # no CPU reading


def test_the_summary_gives_each_switchs_best_and_its_ratios():
    switches = [SwitchUnderTest(name, lambda *_: []) for name in ("fwd", "native", "Python sw")]
    result = BenchResult([
        _point("fwd", 64, 100e3, 100e3, 100e3, 0.1), _point("fwd", 64, None, 200e3, 200e3, 0.4),
        _point("native", 64, None, 150e3, 150e3, 0.3),
        _point("Python sw", 64, None, 150e3, 20e3, 0.5)])
    lines = summary(result, switches, [64])
    assert len(lines) == 3
    assert "best     200k pps" in lines[0] and "100.0% of forwarder" in lines[0]
    assert " 75.0% of forwarder" in lines[1] and "  7.5x Python" in lines[1]
    # per CPU second: fwd 1000k (its best point), native 500k, Python 40k
    assert "per CPU-s    500k   50.0% of forwarder   12.5x Python" in lines[1]


def test_generated_frames_carry_a_valid_ipv4_header_and_room_for_the_stamp():
    frame = udp_frame(64)
    assert len(frame) == 64 and frame[12:14] == b"\x08\x00"
    words = struct.unpack(">10H", frame[14:34])
    total = sum(words)
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    assert total == 0xFFFF
    assert len(udp_frame(1500)) == 1500
    with pytest.raises(ValueError, match="at least 62"):
        udp_frame(60)
