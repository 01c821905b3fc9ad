"""In-network all-reduce on the embedded switch running p4/aggregation.p4, in virtual time:
results within the quantization bound with loss, duplication and reordering injected on
every link, on one switch and on a leaf-spine; the ring baseline on the same sizes; the
bytes each host link carries."""

from __future__ import annotations

import pytest

from netweft.testbed.experiments.allreduce_fabric import FabricSpec, run_in_network, run_ring
from netweft.transport.aggregation_layer import PACKET_LEN
from netweft.transport.impairments import Impairments

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
    import numpy as np

    from netweft.emulation.switch import SoftSwitch
    from netweft.testbed.experiments.allreduce_fabric import (
        SERVICE_IP,
        SERVICE_MAC,
        _configure_job,
        aggregation_program,
        host_ip,
        host_mac,
    )
    from netweft.transport.aggregation_codec import FrameTemplate
    from netweft.transport.aggregation_layer import AGG_LANES
    from netweft.transport.aggregation_sim import AggregationNetwork
    from netweft.transport.aggregation_worker import AggregationJob, AggregationWorker
    from netweft.transport.impairments import Link

    net = AggregationNetwork(seed=9)
    sw = SoftSwitch(aggregation_program())
    net.add_switch("s1", sw)
    for w in range(4):
        net.add_host(f"h{w + 1}", FrameTemplate(host_mac(w), SERVICE_MAC, host_ip(w), SERVICE_IP))
        net.link(f"h{w + 1}", 0, "s1", w + 1, Link(rate_bps=10e9, delay_ns=1000),
                 Impairments(loss=0.05, duplicate=0.05))
    # job 1: hosts 1-2 (workers 0, 1), slots 0..7; job 2: hosts 3-4, slots 8..15
    _configure_job(sw, 1, 8, [(0, 1), (1, 2)], base=0, group=1)
    sw.table_add("MyIngress.aggregation.agg_jobs", {"ipv4.dstAddr": SERVICE_IP, "agg.job_id": 2},
                 "MyIngress.aggregation.set_job",
                 {"base": 8, "size": 8, "workers": 2, "mcast_grp": 2})
    sw.mc_group_set(2, [(3, 0), (4, 1)])
    for wid, w in ((0, 2), (1, 3)):
        sw.table_add("MyEgress.aggregation.agg_workers",
                     {"agg.job_id": 2, "standard_metadata.egress_rid": wid},
                     "MyEgress.aggregation.to_worker",
                     {"mac": host_mac(w), "addr": host_ip(w), "udp_port": 61440})
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
