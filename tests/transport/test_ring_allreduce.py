"""Ring all-reduce over the transport in virtual time: exact float32 sums (each element is
added in the same order numpy would not, so the check is against float64 within float32
rounding), under loss, duplication and reordering."""

from __future__ import annotations

import numpy as np
import pytest

from netweft.transport import Impairments, InvalidArgumentError, Simulation
from netweft.transport.collectives.ring_allreduce import RingAllreduce, RingGroup, run_ring


def ring_sum(n: int, length: int, impairments: Impairments | None = None, seed: int = 1):
    sim = Simulation(seed=seed, impairments=impairments)
    eps = [sim.endpoint() for _ in range(n)]
    addresses = [ep.address for ep in eps]
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(0, 1, length).astype(np.float32) for _ in range(n)]
    jobs = [RingAllreduce(a, RingGroup(ep, r, addresses)) for r, (a, ep) in
            enumerate(zip(arrays, eps, strict=True))]
    run_ring(jobs, sim)
    return sim, arrays, [job.result for job in jobs]


def check(arrays, results):
    exact = np.sum([a.astype(np.float64) for a in arrays], axis=0)
    n = len(arrays)
    # n - 1 float32 additions, each within half an ulp of its partial sum
    bound = (n - 1) * 2.0**-24 * np.sum([np.abs(a).astype(np.float64) for a in arrays], axis=0)
    for r in results:
        assert r.dtype == np.float32 and r.shape == arrays[0].shape
        assert np.all(np.abs(r - exact) <= bound + 1e-45)
    for r in results[1:]:  # every worker holds the same bits
        assert np.array_equal(r, results[0])


@pytest.mark.parametrize("n,length", [(1, 10), (2, 1000), (3, 7), (4, 50_000), (5, 3)])
def test_ring_sums(n, length):
    _sim, arrays, results = ring_sum(n, length)
    check(arrays, results)


@pytest.mark.parametrize("impairments", [
    Impairments(loss=0.05), Impairments(duplicate=0.1),
    Impairments(reorder=0.2, reorder_delay_ns=40_000), Impairments.mix(0.03)],
    ids=["loss", "duplication", "reordering", "mix"])
def test_ring_under_impairments(impairments):
    sim, arrays, results = ring_sum(4, 100_000, impairments, seed=5)
    check(arrays, results)
    counters = sim.path_counters()
    assert counters["lost"] + counters["duplicated"] + counters["reordered"] > 0


def test_bad_group_and_dtype():
    sim = Simulation(seed=1)
    ep = sim.endpoint()
    with pytest.raises(InvalidArgumentError, match="rank"):
        RingGroup(ep, 2, [ep.address, ("10.0.0.9", 4793)])
    with pytest.raises(InvalidArgumentError, match="float32"):
        RingAllreduce(np.ones(4), RingGroup(ep, 0, [ep.address]))
