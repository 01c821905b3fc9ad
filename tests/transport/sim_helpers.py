"""Shared helpers of the transport's simulation tests."""

from __future__ import annotations

import numpy as np

from netweft.transport import Impairments, Simulation

IMPAIRMENTS = {
    "none": Impairments(),
    "loss": Impairments(loss=0.05),
    "duplication": Impairments(duplicate=0.05),
    "reordering": Impairments(reorder=0.1, reorder_delay_ns=40_000),
    "corruption": Impairments(corrupt=0.05),
    "delay": Impairments(delay_ns=500_000, jitter_ns=200_000),
    "mix": Impairments.mix(0.03),
}


def pattern(size: int, seed: int) -> np.ndarray:
    """``size`` reproducible random bytes."""
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)


def pair(impairment: str, seed: int = 1, **settings):
    """A simulation with two endpoints under the named impairment."""
    sim = Simulation(seed=seed, impairments=IMPAIRMENTS[impairment], **settings)
    return sim, sim.endpoint(), sim.endpoint()


_EVIDENCE = {"loss": "lost", "duplication": "duplicated", "reordering": "reordered",
             "corruption": "corrupted", "mix": "lost"}


def assert_impaired(sim, impairment: str) -> None:
    """The named impairment really acted on this run's packets."""
    counters = sim.path_counters()
    key = _EVIDENCE.get(impairment)
    if key:
        assert counters[key] > 0, f"{impairment}: no packet was {key}"
    if impairment in ("corruption", "mix"):
        assert sim.counters["checksum_drops"] > 0
    if impairment == "mix":
        assert all(counters[k] > 0 for k in ("duplicated", "reordered", "corrupted", "junk"))
