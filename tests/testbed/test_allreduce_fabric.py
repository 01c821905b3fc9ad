"""In-network all-reduce on the embedded switch running p4/aggregation.p4, in virtual time:
results within the quantization bound with loss, duplication and reordering injected on
every link, on one switch and on a leaf-spine; the ring baseline on the same sizes; the
bytes each host link carries."""

from __future__ import annotations

import pytest

from netweft.testbed.experiments.allreduce_fabric import FabricSpec, run_in_network, run_ring
from netweft.transport.collectives.aggregation.layer import PACKET_LEN, packet_len
from netweft.transport.sim.wire import Impairments

FRAME = 14 + 20 + 8 + PACKET_LEN  # 314 bytes


def test_clean_star_bytes_per_host_link_are_one_array_plus_headers():
    spec = FabricSpec(workers=4, topology="star", window=8)
    run = run_in_network(spec, 64 * 1024)
    assert run.correct and run.retransmits == 0
    chunks = 64 * 1024 // 4 // 64
    assert run.tx_bytes_per_host == run.rx_bytes_per_host == (chunks + 8) * FRAME
    ring = run_ring(spec, 64 * 1024)
    assert ring.correct
    # ring: 2 (n - 1) / n of the array each way, plus headers
    assert ring.tx_bytes_per_host > 1.5 * 64 * 1024


@pytest.mark.parametrize("lanes", [128, 512])
def test_wider_packets_carry_the_array_in_fewer_frames(lanes, monkeypatch):
    """aggregation.p4 compiled with -D AGG_LANES=lanes, workers told the job's lanes.
    512 lanes run on the Python back end: the C compiler needs a minute or more for
    that program, which the bench, not this test, is for."""
    if lanes > 256:
        monkeypatch.setenv("NETWEFT_SWITCH_BACKEND", "python")
    spec = FabricSpec(workers=4, topology="star", window=4, lanes=lanes)
    run = run_in_network(spec, 64 * 1024)
    assert run.correct and run.retransmits == 0
    chunks = 64 * 1024 // 4 // lanes
    frame = 14 + 20 + 8 + packet_len(lanes)
    assert run.tx_bytes_per_host == run.rx_bytes_per_host == (chunks + 4) * frame


def test_wider_packets_under_loss_and_duplicates():
    spec = FabricSpec(workers=3, topology="star", window=4, lanes=256, timeout_ns=100_000)
    imp = Impairments(loss=0.05, duplicate=0.1, reorder=0.1, reorder_delay_ns=200_000)
    run = run_in_network(spec, 20 * 1024, seed=4, impairments=imp)
    assert run.correct and run.retransmits > 0


@pytest.mark.parametrize("impairments", [
    Impairments(loss=0.05),
    Impairments(duplicate=0.1),
    Impairments(reorder=0.2, reorder_delay_ns=20_000),
    Impairments(loss=0.03, duplicate=0.05, reorder=0.1, reorder_delay_ns=300_000,
                corrupt=0.01, jitter_ns=2_000),
], ids=["loss", "duplication", "reordering", "mix"])
def test_faults_on_every_link_star(impairments):
    spec = FabricSpec(workers=4, topology="star", window=16, timeout_ns=100_000)
    run = run_in_network(spec, 24 * 1024, seed=7, impairments=impairments)
    assert run.correct
    if impairments.loss:
        assert run.retransmits > 0


def test_faults_leaf_spine_eight_workers():
    spec = FabricSpec(workers=8, topology="leaf-spine", window=8, timeout_ns=200_000)
    imp = Impairments(loss=0.02, duplicate=0.05, reorder=0.1, reorder_delay_ns=500_000)
    run = run_in_network(spec, 16 * 1024, seed=3, impairments=imp)
    assert run.correct and run.retransmits > 0
    assert run.switch_events["resent"] > 0  # a lost result answered from the shadow pool
    assert run.switch_events["duplicate"] + run.switch_events["stale"] > 0


def test_stale_copies_are_dropped_by_the_switch():
    # duplicates delayed by far more than a round: the switch must drop them as stale
    spec = FabricSpec(workers=3, topology="star", window=4, timeout_ns=50_000)
    imp = Impairments(duplicate=0.2, reorder=0.2, reorder_delay_ns=400_000)
    run = run_in_network(spec, 8 * 1024, seed=5, impairments=imp)
    assert run.correct
    assert run.switch_events["stale"] > 0


def test_two_jobs_at_once_on_the_embedded_switch():
    """Two jobs on one switch from one plan: hosts 1-2 (slots 0..7), hosts 3-4 (8..15)."""
    import numpy as np

    from netweft.testbed.control.aggregation.placement import job_on_fabric
    from netweft.testbed.control.aggregation.plan import plan_aggregation
    from netweft.testbed.experiments.allreduce_fabric import (
        SERVICE_IP,
        fabric_graph,
        fabric_network,
        install_plan,
    )
    from netweft.transport.collectives.aggregation.layer import AGG_LANES, AGG_UDP_PORT
    from netweft.transport.collectives.aggregation.worker import (
        AggregationJob,
        AggregationWorker,
    )

    spec = FabricSpec(workers=4, topology="star")
    graph = fabric_graph(spec)
    net = fabric_network(spec, graph, seed=9, impairments=Impairments(loss=0.05,
                                                                      duplicate=0.05))
    jobs = [job_on_fabric(graph, "s1", 1, SERVICE_IP, 0, 8, ["h1", "h2"], AGG_UDP_PORT),
            job_on_fabric(graph, "s1", 2, SERVICE_IP, 8, 8, ["h3", "h4"], AGG_UDP_PORT)]
    install_plan(net, plan_aggregation(graph, {"s1": jobs}))
    rng = np.random.default_rng(9)
    arrays = [rng.normal(0, 1, 3000).astype(np.float32) for _ in range(4)]
    workers = {f"h{w + 1}": AggregationWorker(arrays[w], AggregationJob(
        1 + w // 2, w % 2, 2, AGG_LANES, 8, timeout_ns=100_000)) for w in range(4)}
    net.run(workers)
    for job, members in ((1, (0, 1)), (2, (2, 3))):
        exact = arrays[members[0]].astype(np.float64) + arrays[members[1]]
        for w in members:
            worker = workers[f"h{w + 1}"]
            bound = worker.quantizer.error_bound(worker.exponents, exact)
            assert np.all(np.abs(worker.result - exact) <= bound), job
    assert sum(w.stats["retransmits"] for w in workers.values()) > 0
