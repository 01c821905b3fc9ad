"""Coded transfers (ec:K,M and adaptive) through the Python API in the simulator:
exactly-once and byte-exact under seeded loss, Gilbert-Elliott burst loss,
reordering, duplication and corruption; the reliability API's errors."""

from __future__ import annotations

import numpy as np
import pytest

from netweft.transport import Impairments, InvalidArgumentError, Link, Simulation

from .sim_helpers import pattern

CASES = {
    "loss": Impairments(loss=0.05),
    "burst": Impairments(burst_enter=0.01, burst_exit=0.4),
    "reordering": Impairments(loss=0.02, reorder=0.1, reorder_delay_ns=40_000),
    "duplication": Impairments(loss=0.02, duplicate=0.05),
    "corruption": Impairments(corrupt=0.05),
    "mix": Impairments.mix(0.03),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("reliability", ["ec:8,2", "adaptive"])
def test_coded_writes_exactly_once_and_intact(case, reliability):
    sim = Simulation(seed=21, impairments=CASES[case])
    a, b = sim.endpoint(), sim.endpoint()
    peer = a.connect(b.address)
    peer.set_reliability(reliability)
    sizes = [1, 1000, 100_003, 1 << 20, 5000, 300_001]
    total = sum(sizes)
    src = a.register(pattern(total, 3))
    dst_buf = np.zeros(total, dtype=np.uint8)
    dst = b.register(dst_buf)
    ids, offset = [], 0
    for size in sizes:
        ids.append(peer.write(src, dst.remote(), local_offset=offset, remote_offset=offset,
                              length=size))
        offset += size
    done = a.cq.wait_all(ids, timeout=60)
    assert [c.status for c in done] == [0] * len(sizes)
    assert np.array_equal(dst_buf, src.buffer)
    dst_buf[:] = 0xA5  # a late original, duplicate or decoded copy placed again would show
    sim.run_until_idle(max_seconds=30)
    assert (dst_buf == 0xA5).all()
    assert b.stats()["placed_bytes"] == total
    if reliability.startswith("ec"):
        assert a.stats()["ec_parity_pkts_out"] > 0
        if case in ("loss", "burst", "mix", "corruption"):
            assert b.stats()["ec_pkts_recovered"] > 0
    if case == "burst":
        assert sim.path_counters()["burst_lost"] > 0


def test_coded_sends_and_burst_longer_than_parity():
    """Bursts of ~5 losses against m = 2: blocks fail and selective repeat repairs them."""
    sim = Simulation(seed=4, impairments=Impairments(burst_enter=0.02, burst_exit=0.2))
    a, b = sim.endpoint(), sim.endpoint()
    peer = a.connect(b.address)
    peer.set_reliability("ec:8,2")
    msgs = [pattern(n, n).tobytes() for n in (10, 7000, 60_000, 250_000, 3, 120_000)]
    bufs = [bytearray(len(m)) for m in msgs]
    recv_ids = [b.post_recv(buf) for buf in bufs]
    send_ids = [peer.send(m) for m in msgs]
    assert all(c.ok for c in a.cq.wait_all(send_ids, timeout=60))
    got = b.cq.wait_all(recv_ids, timeout=60)
    assert [bytes(c.data) for c in got] == msgs
    assert a.stats()["ec_retransmits"] > 0
    assert b.stats()["ec_pkts_recovered"] > 0


def test_reliability_api_errors_and_state():
    sim = Simulation(seed=1)
    a, b = sim.endpoint(), sim.endpoint()
    peer = a.connect(b.address)
    assert str(peer.reliability) == "sr" and peer.code == (0, 0)
    peer.set_reliability("ec:10,4")
    assert peer.code == (10, 4) and peer.path()["k"] == 10
    peer.set_reliability("sr")
    assert peer.code == (0, 0) and peer.path()["k"] == 0
    for bad in ("ec:0,2", "ec:33,1", "ec:4,9", "ec:4", "fec", 3):
        with pytest.raises(InvalidArgumentError):
            peer.set_reliability(bad)
    with pytest.raises(InvalidArgumentError, match="RUD"):
        a.connect(b.address, mode="ROD").set_reliability("ec:4,2")


def test_adaptive_switches_to_coding_on_a_long_lossy_path_and_back():
    """3.5 ms RTT, 2 % loss: 1 MiB writes keep a code once the loss is measured."""
    imp = Impairments(loss=0.02)
    sim = Simulation(seed=8, impairments=imp, link=Link(rate_bps=25e9, delay_ns=1_750_000))
    a, b = sim.endpoint(), sim.endpoint()
    peer = a.connect(b.address)
    peer.set_reliability("adaptive")
    size = 1 << 20
    src = a.register(pattern(size, 5))
    dst = b.register(np.zeros(size, dtype=np.uint8))
    codes = []
    for _ in range(6):
        wid = peer.write(src, dst.remote())
        assert a.cq.wait_all([wid], timeout=60)[0].ok
        codes.append(peer.code)
    assert codes[0] == (32, 4)  # no measurement before the first message: the hedge
    assert codes[-1] != (0, 0)
    assert 0.005 < peer.policy.loss < 0.08
    assert a.stats()["ec_parity_pkts_out"] > 0


def test_adaptive_returns_to_selective_repeat_on_a_clean_short_path():
    sim = Simulation(seed=9, link=Link(rate_bps=25e9, delay_ns=5_000))
    a, b = sim.endpoint(), sim.endpoint()
    peer = a.connect(b.address)
    peer.set_reliability("adaptive")
    size = 1 << 20
    src = a.register(pattern(size, 6))
    dst = b.register(np.zeros(size, dtype=np.uint8))
    codes = []
    for _ in range(40):  # the pessimistic prior washes out over a few half-lives
        assert a.cq.wait_all([peer.write(src, dst.remote())], timeout=60)[0].ok
        codes.append(peer.code)
    assert codes[0] == (32, 4) and codes[-1] == (0, 0)
    assert peer.policy.loss < 1e-3
