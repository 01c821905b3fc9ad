"""Seeded impairments and the link model, without any engine."""

import random

import pytest

from netweft.transport.errors import InvalidArgumentError
from netweft.transport.impairments import Impairments, Link, Path


def _path(seed=1, **imp):
    return Path(Link(rate_bps=8e9, delay_ns=1_000), Impairments(**imp), random.Random(seed))


def test_same_seed_same_decisions():
    a, b = _path(7, loss=0.2, duplicate=0.1, reorder=0.1, corrupt=0.1, jitter_ns=500), \
        _path(7, loss=0.2, duplicate=0.1, reorder=0.1, corrupt=0.1, jitter_ns=500)
    pkts = [bytes([i % 256]) * 100 for i in range(500)]
    assert [a.transmit(i * 10, p) for i, p in enumerate(pkts)] == \
        [b.transmit(i * 10, p) for i, p in enumerate(pkts)]


def test_perfect_path_serializes_at_link_rate_and_adds_delay():
    path = _path()
    free, arrivals = path.transmit(0, b"x" * 1000)  # 1000 B at 8 Gbit/s = 1000 ns
    assert free == 1000 and [a.at_ns for a in arrivals] == [2000]
    free, arrivals = path.transmit(0, b"y" * 1000)  # queued behind the first
    assert free == 2000 and arrivals[0].at_ns == 3000 and arrivals[0].data == b"y" * 1000


def test_loss_rate_follows_probability():
    path = _path(3, loss=0.1)
    delivered = sum(len(path.transmit(0, b"z" * 10)[1]) for _ in range(5000))
    assert 0.08 < 1 - delivered / 5000 < 0.12
    assert path.counters["lost"] == 5000 - delivered


def test_duplicates_arrive_twice_and_reordered_packets_are_held_back():
    path = _path(4, duplicate=1.0)
    _, arrivals = path.transmit(0, b"d")
    assert [a.data for a in arrivals] == [b"d", b"d"]
    path = _path(4, reorder=1.0, reorder_delay_ns=9_999)
    _, arrivals = path.transmit(0, b"r")
    assert arrivals[0].at_ns == 1 + 1_000 + 9_999


def test_corruption_flips_exactly_one_bit():
    path = _path(5, corrupt=1.0)
    data = bytes(range(256))
    _, (arrival,) = path.transmit(0, data)
    assert not arrival.intact
    diff = [a ^ b for a, b in zip(arrival.data, data, strict=True)]
    assert sum(bin(d).count("1") for d in diff) == 1


def test_junk_is_extra_and_shorter_or_random():
    path = _path(6, junk=1.0)
    _, arrivals = path.transmit(0, b"q" * 200)
    assert [a.junk for a in arrivals] == [True, False]
    assert arrivals[1].data == b"q" * 200


@pytest.mark.parametrize("kwargs", [{"loss": 1.0}, {"loss": -0.1}, {"duplicate": 2},
                                    {"delay_ns": -5}, {"jitter_ns": 1.5}])
def test_bad_impairments_are_refused(kwargs):
    with pytest.raises(InvalidArgumentError):
        Impairments(**kwargs)


def test_bad_link_is_refused():
    with pytest.raises(InvalidArgumentError, match="rate_bps"):
        Link(rate_bps=0)


def test_downlink_queue_serializes_and_tail_drops():
    from netweft.transport.impairments import DownlinkQueue

    q = DownlinkQueue(Link(rate_bps=8e9, queue_pkts=2))
    assert q.admit(0, 1000) == 1000
    assert q.admit(0, 1000) == 2000
    assert q.admit(0, 1000) is None and q.drops == 1  # third packet at once: queue full
    assert q.admit(1000, 1000) == 3000  # the first left at 1000
    assert q.admit(5000, 500) == 5500 and q.max_depth == 2


def test_spraying_maps_entropy_to_paths_of_different_lengths():
    path = _path(8, spray_paths=4, spray_skew_ns=10_000)
    arrivals = [path.transmit(0, b"s", entropy)[1][0].at_ns for entropy in range(8)]
    base = arrivals[0]
    assert [a - base for a in arrivals] == [0, 10_001, 20_002, 30_003, 4, 10_005, 20_006, 30_007]
    with pytest.raises(InvalidArgumentError, match="spray_paths"):
        Impairments(spray_paths=0)
