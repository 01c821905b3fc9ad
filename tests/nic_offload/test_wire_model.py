"""The one wire model (nic_offload/src/link/wire_model.c): what each parameter means,
its random streams, and its refusals."""

from __future__ import annotations

import pytest

from netweft.nic_offload import ffi, lib
from netweft.nic_offload.wire_model import (
    DELIVER,
    DROP_BURST,
    DROP_LIMIT,
    DROP_LOSS,
    WireConfig,
    WireModel,
    flip_bit,
    seed64,
    serialization_ns,
)


def _binomial_bounds(n: int, p: float, sigmas: float = 4.5) -> tuple[float, float]:
    mean, sd = n * p, (n * p * (1 - p)) ** 0.5
    return mean - sigmas * sd, mean + sigmas * sd


def _run(config: WireConfig, seed: int = 1, n: int = 5000, gap_ns: int = 10_000,
         size: int = 100) -> list:
    wire = WireModel(config, seed)
    return [wire.send(k * gap_ns, size) for k in range(n)]


def test_rate_serializes_frames_one_after_another():
    wire = WireModel(WireConfig(rate_bps=8_000_000_000, delay_ns=500))
    first, second = wire.send(0, 1000), wire.send(0, 1000)   # 1000 B at 8 Gbit/s: 1 us
    assert (first.depart_ns, first.arrive_ns) == (1000, 1500)
    assert (second.depart_ns, second.arrive_ns) == (2000, 2500)   # waited behind the first
    assert wire.busy_until_ns == 2000
    assert wire.send(5000, 1).depart_ns == 5001                     # idle again; at least 1 ns
    assert serialization_ns(3, 1) == 2_666_666_667                  # rounded to nearest
    assert serialization_ns(0, 1000) == 0 and wire.transmit_ns(10) == 10


def test_the_limit_counts_waiting_frames_and_drops_beyond_it_without_a_draw():
    config = WireConfig(rate_bps=8_000_000, limit=3, loss=0.5)      # 1000 B: 1 ms
    wire = WireModel(config, 9)
    verdicts = [wire.send(0, 1000).verdict for _ in range(5)]
    assert verdicts[3:] == [DROP_LIMIT, DROP_LIMIT]
    assert wire.send(1_000_000, 1000).verdict != DROP_LIMIT         # the first has left
    # the dropped frames took no draw: the next losses are those of a wire that never saw them
    twin = WireModel(config, 9)
    assert [twin.send(0, 1000).verdict for _ in range(3)] == verdicts[:3]
    assert wire.stats()["dropped_limit"] == 2


def test_jitter_is_uniform_in_plus_minus_j():
    j, delay, n = 40_000, 100_000, 8000
    # frames further apart than 2j: keeping the order never moves one
    results = _run(WireConfig(delay_ns=delay, jitter_ns=j), n=n, gap_ns=100_000)
    offsets = [r.arrive_ns - r.depart_ns - delay for r in results]
    assert -j <= min(offsets) < -0.99 * j and j >= max(offsets) > 0.99 * j
    quarters = [sum(-j + q * j // 2 <= o < -j + (q + 1) * j // 2 for o in offsets)
                for q in range(4)]
    lo, hi = _binomial_bounds(n, 0.25)
    assert all(lo <= c <= hi for c in quarters), quarters


def test_jitter_never_reorders():
    j, delay = 40_000, 100_000
    results = _run(WireConfig(delay_ns=delay, jitter_ns=j), n=4000, gap_ns=5_000)
    arrivals = [r.arrive_ns for r in results]
    assert arrivals == sorted(arrivals)                       # order kept
    assert min(r.arrive_ns - r.depart_ns for r in results) >= delay - j
    assert len(set(arrivals)) < len(arrivals)                 # some waited for the one before


def test_jitter_larger_than_the_delay_is_clamped_at_zero():
    results = _run(WireConfig(delay_ns=1_000, jitter_ns=10_000), n=2000, gap_ns=100_000)
    flight = [r.arrive_ns - r.depart_ns for r in results]
    assert min(flight) == 0 and max(flight) <= 11_000
    assert sum(f == 0 for f in flight) > 0.3 * len(flight)    # about 9/20 of them


def test_loss_is_bernoulli():
    n, p = 20_000, 0.05
    lost = sum(r.verdict == DROP_LOSS for r in _run(WireConfig(loss=p), n=n))
    lo, hi = _binomial_bounds(n, p)
    assert lo <= lost <= hi


def test_gilbert_elliott_losses_come_in_bursts_of_mean_one_over_r():
    n, p, r = 60_000, 0.01, 0.25
    results = _run(WireConfig(gemodel=(p, r, 0.0, 1.0)), n=n)
    lost = [k for k, res in enumerate(results) if res.verdict != DELIVER]
    assert {results[k].verdict for k in lost} == {DROP_BURST}
    assert len(lost) / n == pytest.approx(p / (p + r), rel=0.15)
    bursts = sum(1 for i, k in enumerate(lost) if i == 0 or lost[i - 1] != k - 1)
    assert len(lost) / bursts == pytest.approx(1 / r, rel=0.15)


def test_loss_and_gemodel_compose_a_frame_is_lost_if_either_loses_it():
    n, loss, ge = 60_000, 0.1, (0.02, 0.2, 0.05, 0.8)
    results = _run(WireConfig(loss=loss, gemodel=ge), n=n)
    bad = ge[0] / (ge[0] + ge[1])
    ge_loss = bad * ge[3] + (1 - bad) * ge[2]
    got = sum(r.verdict != DELIVER for r in results) / n
    assert got == pytest.approx(1 - (1 - loss) * (1 - ge_loss), rel=0.08)
    # the Bernoulli draws are those of a wire with loss alone
    alone = _run(WireConfig(loss=loss), n=n)
    assert [r.verdict == DROP_LOSS for r in results] == [r.verdict == DROP_LOSS for r in alone]


def test_corruption_flips_one_bit_of_a_binomial_share():
    n, p = 10_000, 0.1
    results = _run(WireConfig(corrupt=p), n=n, size=200)
    bits = [r.corrupt_bit for r in results if r.corrupt_bit is not None]
    lo, hi = _binomial_bounds(n, p)
    assert lo <= len(bits) <= hi
    assert all(0 <= b < 200 * 8 for b in bits) and len(set(bits)) > 0.6 * len(bits)
    frame = bytes(range(200))
    damaged = flip_bit(frame, bits[0])
    assert sum(bin(a ^ b).count("1") for a, b in zip(frame, damaged, strict=True)) == 1
    assert flip_bit(b"\x00\x00", 0) == b"\x80\x00" and flip_bit(b"\x00\x00", 15) == b"\x00\x01"


def test_each_effect_has_its_own_stream():
    base = WireConfig(loss=0.05, corrupt=0.05, jitter_ns=1_000, delay_ns=10_000,
                      gemodel=(0.01, 0.3, 0.0, 1.0))
    everything = _run(base, seed=77)

    def lost(results: list) -> list[bool]:
        return [r.verdict != DELIVER for r in results]

    assert lost(_run(WireConfig(loss=0.05, gemodel=(0.01, 0.3, 0.0, 1.0)), seed=77)) == \
        lost(everything)                              # corruption and jitter change no loss
    corrupted = [r.corrupt_bit for r in _run(WireConfig(corrupt=0.05), seed=77)]
    assert [r.corrupt_bit for r in everything if r.verdict == DELIVER] == \
        [b for b, r in zip(corrupted, everything, strict=True) if r.verdict == DELIVER]


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    config = WireConfig(rate_bps=10**9, delay_ns=5_000, jitter_ns=2_000, loss=0.02,
                        gemodel=(0.01, 0.3, 0.0, 0.9), corrupt=0.01, limit=50)
    first = _run(config, seed=5, gap_ns=900)
    assert first == _run(config, seed=5, gap_ns=900)
    assert first != _run(config, seed=6, gap_ns=900)
    assert seed64(5) == 5 and seed64("5/2/out") == seed64("5/2/out") != seed64("5/2/in")
    assert 0 <= seed64(-1) < 1 << 64


@pytest.mark.parametrize("field, value", [("loss", 1.5), ("corrupt", -0.1),
                                          ("loss", float("nan")), ("delay_ns", -1),
                                          ("gemodel", (0.1, 0.2, 0.0)),
                                          ("gemodel", (0.1, 2.0, 0.0, 1.0))])
def test_bad_parameters_are_refused(field, value):
    with pytest.raises(ValueError):
        WireConfig(**{field: value})


def test_the_c_model_refuses_what_python_would_and_checks_bit_bounds():
    cfg = ffi.new("nw_link_config_t *")
    cfg.loss = float("nan")
    assert lib.nw_link_new(cfg, 1) == ffi.NULL
    cfg.loss, cfg.ge_r = 0.0, 1.5
    assert lib.nw_link_new(cfg, 1) == ffi.NULL
    buf = ffi.new("uint8_t[]", 2)
    assert lib.nw_link_flip_bit(buf, 2, 16) == -1 and lib.nw_link_flip_bit(buf, 2, 9) == 0
    assert bytes(buf) == b"\x00\x40"
