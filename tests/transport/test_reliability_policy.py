"""The expected-completion-time model and the adaptive policy, without an engine."""

from __future__ import annotations

import pytest

from netweft.transport.errors import InvalidArgumentError
from netweft.transport.reliability_policy import (
    SR,
    AdaptivePolicy,
    PathEstimate,
    Reliability,
    best_choice,
    expected_completion,
    parse_reliability,
)

MIB = 1 << 20


def _path(rtt_s: float, loss: float) -> PathEstimate:
    return PathEstimate(rtt_s=rtt_s, rate_bps=25e9, loss=loss, rto_s=max(1e-3, 2 * rtt_s))


def test_parse():
    assert parse_reliability("sr") == Reliability("sr")
    assert parse_reliability(" EC:10,4 ") == Reliability("ec", 10, 4)
    assert str(parse_reliability("adaptive")) == "adaptive"
    for bad in ("ec:10", "ec:a,b", "ec:0,1", "ec:4,0", "rs", "", "ec:40,4"):
        with pytest.raises(InvalidArgumentError):
            parse_reliability(bad)


def test_short_clean_path_prefers_selective_repeat():
    for size in (64 << 10, MIB, 64 * MIB):
        assert best_choice(size, _path(10e-6, 1e-4)) == SR


def test_long_lossy_path_prefers_coding_and_more_parity_with_more_loss():
    path = _path(3.5e-3, 1e-2)
    code = best_choice(MIB, path)
    assert code != SR
    assert expected_completion(MIB, path, code) < 0.5 * expected_completion(MIB, path, SR)
    worse = best_choice(MIB, _path(3.5e-3, 1e-1))
    assert worse[1] / worse[0] > code[1] / code[0]


def test_no_loss_costs_coding_its_overhead():
    path = _path(100e-6, 0.0)
    assert expected_completion(64 * MIB, path, (16, 4)) > expected_completion(64 * MIB, path, SR)


def _feed(policy: AdaptivePolicy, tx: int, rx: int, srtt_ns: int = 3_500_000) -> None:
    policy.observe_path({"srtt_ns": srtt_ns, "rttvar_ns": 10_000, "tx_bytes": tx,
                         "rx_bytes": rx})


def test_adaptive_policy_follows_the_measured_loss():
    policy = AdaptivePolicy(rate_bps=25e9, loss_half_life_bytes=4 * MIB)
    assert policy.choose(MIB) == (32, 4)  # nothing measured yet: the hedge
    tx = rx = 0
    for _ in range(8):  # 10 % of the bytes never arrive
        tx, rx = tx + MIB, rx + int(0.9 * MIB)
        _feed(policy, tx, rx)
    assert policy.loss == pytest.approx(0.1, rel=0.05)
    assert policy.choose(MIB) != SR
    for _ in range(40):  # then the path heals
        tx, rx = tx + MIB, rx + MIB
        _feed(policy, tx, rx, srtt_ns=10_000)
    assert policy.loss < 1e-3
    assert policy.choose(MIB) == SR
