"""The in-network all-reduce worker core in virtual time against a model of the switch:
results within the quantization bound under loss, duplication and reordering, with
retransmissions across the shadow pools."""

from __future__ import annotations

import numpy as np
import pytest

from netweft.transport.collectives.aggregation.codec import FrameTemplate
from netweft.transport.collectives.aggregation.sim import AggregationNetwork
from netweft.transport.collectives.aggregation.worker import AggregationJob, AggregationWorker
from netweft.transport.sim.wire import Impairments, Link

from .aggregation_model import ModelSwitch


def run(n: int, length: int, impairments: Impairments | None = None, seed: int = 3,
        window: int = 8, job_id: int = 1):
    net = AggregationNetwork(seed=seed)
    switch = ModelSwitch({job_id: n})
    net.add_switch("s1", switch)
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(0, 1, length).astype(np.float32) for _ in range(n)]
    workers = {}
    for w in range(n):
        name = f"h{w + 1}"
        net.add_host(name, FrameTemplate(f"02:00:00:00:00:{w + 1:02x}", "02:00:00:00:00:fe",
                                         f"10.0.0.{w + 1}", "10.0.0.254"))
        net.link(name, 0, "s1", w + 1, Link(rate_bps=10e9, delay_ns=5_000), impairments)
        workers[name] = AggregationWorker(arrays[w], AggregationJob(
            job_id, w, n, 64, window, timeout_ns=200_000))
    times = net.run(workers)
    return net, switch, arrays, workers, times


def check(arrays, workers):
    exact = np.sum([a.astype(np.float64) for a in arrays], axis=0)
    first = None
    for worker in workers.values():
        assert worker.done
        r = worker.result
        bound = worker.quantizer.error_bound(worker.exponents, exact)
        assert np.all(np.abs(r.astype(np.float64) - exact) <= bound)
        if first is None:
            first = r
        assert np.array_equal(r, first)


def test_allreduce_clean():
    net, switch, arrays, workers, _ = run(4, 5000)
    check(arrays, workers)
    assert all(w.stats["retransmits"] == 0 for w in workers.values())
    chunks = -(-5000 // 64)
    assert switch.counters["results"] == chunks + 8  # one exponent-only round per slot
    for host in net.hosts.values():  # S out and S in, plus headers and the first round
        assert host.counters["tx_frames"] == chunks + 8 == host.counters["rx_frames"]


@pytest.mark.parametrize("impairments,evidence", [
    (Impairments(loss=0.05), "retransmits"),
    (Impairments(duplicate=0.2), "duplicates"),
    (Impairments(reorder=0.3, reorder_delay_ns=30_000), None),
    (Impairments(loss=0.03, duplicate=0.03, reorder=0.1, corrupt=0.02, jitter_ns=3_000), "stale"),
], ids=["loss", "duplication", "reordering", "mix"])
def test_allreduce_under_faults(impairments, evidence):
    net, switch, arrays, workers, _ = run(4, 6000, impairments, seed=11)
    check(arrays, workers)
    if evidence == "retransmits":
        assert sum(w.stats["retransmits"] for w in workers.values()) > 0
        assert switch.counters["resent"] > 0  # a lost result came back from the shadow pool
    elif evidence:
        assert switch.counters[evidence] > 0


def test_single_worker_and_tiny_arrays():
    for n, length in ((1, 100), (3, 1), (2, 64)):
        _net, _switch, arrays, workers, _ = run(n, length)
        check(arrays, workers)


def test_exponents_agree_across_workers_with_different_scales():
    net = AggregationNetwork(seed=1)
    net.add_switch("s1", ModelSwitch({7: 2}))
    arrays = [np.full(300, 1e-6, np.float32), np.linspace(-1e4, 1e4, 300, dtype=np.float32)]
    workers = {}
    for w in range(2):
        net.add_host(f"h{w}", FrameTemplate("02:00:00:00:00:01", "02:00:00:00:00:fe",
                                            f"10.0.0.{w + 1}", "10.0.0.254"))
        net.link(f"h{w}", 0, "s1", w + 1)
        workers[f"h{w}"] = AggregationWorker(arrays[w], AggregationJob(7, w, 2, 64, 2))
    net.run(workers)
    check(arrays, workers)
    assert np.array_equal(workers["h0"].exponents, workers["h1"].exponents)


def test_two_jobs_at_once_and_a_second_allreduce_per_job():
    net = AggregationNetwork(seed=4)
    switch = ModelSwitch({1: 2, 2: 2})
    net.add_switch("s1", switch)
    rng = np.random.default_rng(4)
    arrays = {name: rng.normal(0, 1, 700).astype(np.float32) for name in ("a0", "a1", "b0", "b1")}
    for i, name in enumerate(arrays):
        net.add_host(name, FrameTemplate("02:00:00:00:00:01", "02:00:00:00:00:fe",
                                         f"10.0.0.{i + 1}", "10.0.0.254"))
        net.link(name, 0, "s1", i + 1, impairments=Impairments(loss=0.05))
    # the model sends job 2's results to ports 1..2 by worker id; use separate ports per job
    switch.port_of = {(1, 0): 1, (1, 1): 2, (2, 0): 3, (2, 1): 4}
    first = 0
    for _round in range(2):
        workers = {name: AggregationWorker(arrays[name], AggregationJob(
            1 if name[0] == "a" else 2, int(name[1]), 2, 64, 4, first_block=first,
            timeout_ns=100_000)) for name in arrays}
        net.run(workers)
        check([arrays["a0"], arrays["a1"]], {k: workers[k] for k in ("a0", "a1")})
        check([arrays["b0"], arrays["b1"]], {k: workers[k] for k in ("b0", "b1")})
        first = workers["a0"].end_block
        arrays = {k: v * 3 for k, v in arrays.items()}


def test_a_slow_switch_does_not_cause_a_retransmission_per_round():
    # A software switch that takes 50 ms to answer, against a 1 ms minimum timeout:
    # once a result of a packet sent once gives an RTT sample, new rounds wait for it.
    job = AggregationJob(3, 0, 1, 64, 4, timeout_ns=1_000_000, max_timeout_ns=200_000_000)
    array = np.arange(64 * 40, dtype=np.float32)  # 10 rounds on each of the 4 slots
    worker = AggregationWorker(array, job)
    delay, now = 50_000_000, 0
    in_flight = [(now + delay, p) for p in worker.start(now)]
    while not worker.done:
        deadline = worker.next_deadline()
        arrival = min(t for t, _ in in_flight)
        if deadline is not None and deadline < arrival:
            now = deadline
            in_flight += [(now + delay, p) for p in worker.on_time(now)]
            continue
        now = arrival
        ready = [p for t, p in in_flight if t == arrival]
        in_flight = [(t, p) for t, p in in_flight if t != arrival]
        for packet in ready:  # one worker: the switch's result is the contribution itself
            in_flight += [(now + delay, p) for p in worker.on_packet(packet, now)]
    assert np.array_equal(worker.result, array)
    assert worker.srtt_ns is not None and worker.rto_ns > delay
    # the first rounds back off before any sample (Karn); later rounds never time out
    assert worker.stats["retransmits"] <= 8 * job.window


@pytest.mark.parametrize("kind", ["python", "c"])
def test_calls_shorter_than_the_window_keep_every_slots_pools_alternating(kind):
    """Two all-reduces of fewer chunks than the window, then a longer one, on one job:
    each call sends on every slot, so no switch slot meets a pool it left complete two
    laps before (before: the third call stalled against the model switch, and the P4
    switch answered with that pool's old result under the new block)."""
    from netweft.transport.collectives.aggregation.native_worker import (
        NativeAggregationWorker,
        native_available,
    )

    if kind == "c" and not native_available():
        pytest.skip("C engine without the aggregation worker")
    cls = AggregationWorker if kind == "python" else NativeAggregationWorker
    n, window = 2, 64
    net = AggregationNetwork(seed=5)
    net.add_switch("s1", ModelSwitch({1: n}))
    for w in range(n):
        net.add_host(f"h{w}", FrameTemplate("02:00:00:00:00:01", "02:00:00:00:00:fe",
                                            f"10.0.0.{w + 1}", "10.0.0.254"))
        net.link(f"h{w}", 0, "s1", w + 1, Link(rate_bps=10e9, delay_ns=5_000))
    first = 0
    for length in (16 * 64, 16 * 64, 64 * 64):
        arrays = [np.random.default_rng(w + length).normal(0, 1, length).astype(np.float32)
                  for w in range(n)]
        workers = {f"h{w}": cls(arrays[w], AggregationJob(1, w, n, 64, window,
                                                          first_block=first))
                   for w in range(n)}
        net.run(workers, limit_ns=1_000_000_000)
        check(arrays, workers)
        assert all(wk.stats["sent"] == length // 64 + window for wk in workers.values())
        first = workers["h0"].end_block
        assert first == workers["h1"].end_block
