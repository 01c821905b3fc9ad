"""The engine's event trace: off by default, bounded, and complete enough to follow a
transfer (sends, ACKs, trims and their repair, credits, window changes)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from netweft.transport import InvalidArgumentError, Simulation
from netweft.transport.sim.wire import Link
from netweft.transport.trace import read_jsonl, write_jsonl


def _incast(mode: str, n: int = 4, trace: int = 1 << 16, queue: int = 16):
    link = Link(rate_bps=100e9, delay_ns=1_000, queue_pkts=queue, trim=True, ecn_threshold_pkts=8)
    sim = Simulation(seed=4, link=link, mtu=4096, cc_mode=mode, link_rate_mbps=100_000,
                     cc_base_rtt_ns=8_000)
    dst = sim.endpoint()
    senders = [sim.endpoint() for _ in range(n)]
    for ep in [dst, *senders]:
        if trace:
            ep.trace_start(trace)
    size = 200_000
    region = dst.register(np.zeros(size * n, np.uint8))
    for i, ep in enumerate(senders):
        ep.connect(dst.address).write(ep.register(np.full(size, i, np.uint8)), region.remote(),
                                      remote_offset=i * size)
    for ep in senders:
        ep.cq.wait(timeout=1).check()
    return sim, dst, senders


def test_trace_is_off_by_default():
    _, dst, senders = _incast("none", trace=0)
    assert dst.trace_events() == [] and senders[0].trace_events() == []


def test_trace_follows_sends_trims_and_their_repair():
    sim, dst, senders = _incast("none")
    events = senders[0].trace_events()
    kinds = {e.event for e in events}
    assert {"sent", "acked", "trim_nack", "lost"} <= kinds
    assert all(a.t_ns <= b.t_ns for a, b in zip(events, events[1:], strict=False))
    resent = {e.psn for e in events if e.event == "sent" and "retx" in e.flags}
    nacked = {e.psn for e in events if e.event == "trim_nack"}
    assert nacked and nacked <= resent  # every trimmed PSN was resent
    first = {e.psn: e.t_ns for e in reversed(events) if e.event == "sent"}
    assert len(first) == senders[0].stats()["data_pkts_out"]
    rx = [e for e in dst.trace_events() if e.event == "trimmed_rx"]
    assert len(rx) == dst.stats()["trimmed_pkts_in"] > 0


def test_trace_shows_credits_and_windows():
    _, dst, senders = _incast("nscc+rccc")
    granted = [e for e in dst.trace_events() if e.event == "credit_granted"]
    assert granted and all(a.value < b.value for a, b in zip(granted, granted[1:], strict=False)
                           if a.pdc == b.pdc)
    sender = senders[1].trace_events()
    assert any(e.event == "credit_received" for e in sender)
    assert any(e.event == "cwnd" for e in sender)


def test_the_ring_is_bounded_and_keeps_the_latest():
    _, _, senders = _incast("none", n=2, trace=64)
    events = senders[0].trace_events()
    assert len(events) == 64
    assert senders[0].trace_events() == []  # drained


def test_jsonl_round_trip_and_bad_capacity():
    _, _, senders = _incast("rccc", n=2)
    events = senders[0].trace_events()
    buf = io.StringIO()
    assert write_jsonl(events, buf) == len(events)
    first = json.loads(buf.getvalue().splitlines()[0])
    assert set(first) == {"t_ns", "host", "pdc", "event", "psn", "value", "flags"}
    with pytest.raises(InvalidArgumentError):
        senders[0].trace_start(-1)
    with pytest.raises(InvalidArgumentError):
        senders[0].trace_start(1 << 25)


def test_read_jsonl(tmp_path):
    _, _, senders = _incast("none", n=2)
    events = senders[0].trace_events()
    path = tmp_path / "t.jsonl"
    write_jsonl(events, path)
    assert read_jsonl(path) == events


def test_udp_endpoints_trace_through_the_io_driver_lock():
    import os
    import random

    from netweft.transport import udp_endpoint

    r = random.Random(os.getpid() + 7)
    base = f"127.{r.randrange(1, 250)}.{r.randrange(1, 250)}"
    a, b = udp_endpoint((f"{base}.1", 0)), udp_endpoint((f"{base}.2", 0))
    try:
        a.trace_start(1024)
        region = b.register(np.zeros(50_000, np.uint8))
        peer = a.connect(b.address)
        b.connect(a.address)  # replies to a's port
        wr = peer.write(a.register(np.ones(50_000, np.uint8)), region.remote())
        a.cq.wait_for(wr, timeout=10).check()
        events = a.trace_events()
        assert any(e.event == "sent" for e in events)
        assert any(e.event == "acked" for e in events)
        assert all(e.host == f"{base}.1:{a.address[1]}" for e in events)
    finally:
        a.close()
        b.close()
