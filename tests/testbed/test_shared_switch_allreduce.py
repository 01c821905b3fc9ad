"""Jobs that share one switch, in virtual time: each admitted into its own slot range
(first fit), a job that finds no room all-reduces by ring over the transport, and a
switch restart mid-call sends the jobs in flight to the ring; every result is the
exact sum within the documented bound, under loss and duplicates."""

from __future__ import annotations

from netweft.testbed.experiments.allreduce_fabric import FabricSpec, run_shared_switch
from netweft.transport.sim.wire import Impairments


def test_concurrent_jobs_admission_and_refusal_under_loss():
    spec = FabricSpec(workers=6, topology="star", window=400, timeout_ns=100_000)
    runs = run_shared_switch(spec, [[0, 1], [2, 3], [4, 5]], 8 * 1024, seed=3,
                             impairments=Impairments(loss=0.03, duplicate=0.05))
    assert [(r.base, r.method) for r in runs] == [
        (0, "in-network"), (400, "in-network"), (None, "ring (refused)")]
    assert all(r.correct for r in runs)
    assert sum(r.retransmits for r in runs) > 0


def test_a_switch_restart_sends_the_jobs_in_flight_to_the_ring():
    spec = FabricSpec(workers=4, topology="star", window=8, timeout_ns=100_000)
    runs = run_shared_switch(spec, [[0, 1], [2, 3]], 64 * 1024, seed=5,
                             impairments=Impairments(loss=0.02),
                             restart_at_ns=20_000, stall_timeout_ns=1_000_000)
    assert [r.method for r in runs] == ["ring (switch stopped answering)"] * 2
    assert all(r.correct for r in runs)


def test_without_a_restart_the_same_jobs_stay_in_the_switch():
    spec = FabricSpec(workers=4, topology="star", window=8, timeout_ns=100_000)
    runs = run_shared_switch(spec, [[0, 1], [2, 3]], 64 * 1024, seed=5,
                             impairments=Impairments(loss=0.02), stall_timeout_ns=1_000_000)
    assert [r.method for r in runs] == ["in-network"] * 2
    assert all(r.correct for r in runs)
