"""The simulator's wire (the one wire model plus its extra effects) and the downlink
queue, without any engine."""

import random

import pytest

from netweft.transport.errors import InvalidArgumentError
from netweft.transport.sim.port import TRIM_KEEP
from netweft.transport.sim.wire import Impairments, Link, Path


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
    from netweft.transport.sim.event_loop import EventLoop
    from netweft.transport.sim.port import FabricPacket, OutputPort

    loop, got = EventLoop(), []
    q = OutputPort.for_link(loop, "d", lambda pkt: got.append((loop.now_ns, pkt)),
                            Link(rate_bps=8e9, queue_pkts=2))

    def arrive(at: int, size: int) -> bool:
        loop.run_for(at - loop.now_ns)
        return q.arrive(FabricPacket(bytes(size), -1, -1, 1, 0, 0, at, overhead=0))

    # the first goes on the wire at once, two wait, the fourth finds the queue full
    assert [arrive(0, 1000) for _ in range(4)] == [True, True, True, False]
    assert q.counters.dropped == 1 and q.counters.peak_packets == 2
    assert arrive(1000, 1000)  # the first left at 1000: room for one more
    loop.run_for(10_000 - loop.now_ns)
    assert [t for t, _ in got] == [1000, 2000, 3000, 4000]
    assert arrive(10_000, 500) and loop.step() and got[-1][0] == 10_500


def test_downlink_queue_marks_from_k_waiting_and_trims_when_full_ahead_of_the_data():
    from netweft.transport.sim.event_loop import EventLoop
    from netweft.transport.sim.port import ECN_ECT0, FabricPacket, OutputPort

    loop, got = EventLoop(), []
    q = OutputPort.for_link(loop, "d", got.append,
                            Link(rate_bps=8e9, queue_pkts=4, ecn_threshold_pkts=2, trim=True))
    rud, ack = bytes([2 << 3, 0x10]) + bytes(998), bytes([7 << 3]) + bytes(31)
    pkts = [FabricPacket(rud, -1, -1, 1, k, ECN_ECT0, 0, overhead=0) for k in range(6)]
    control = FabricPacket(ack, -1, -1, 1, 99, ECN_ECT0, 0, overhead=0)
    assert all(q.arrive(p) for p in pkts[:3]) and q.arrive(control)
    assert all(q.arrive(p) for p in pkts[3:])
    while loop.step():
        pass
    # one on the wire, then found waiting 0, 1, (the ACK queues with the data), 3, 4, 4:
    # marked from 2 waiting on
    assert [p.ce for p in pkts] == [False, False, False, True, True, True]
    # the last two found the queue full: trimmed, and served before the data waiting
    assert [p.trimmed for p in pkts] == [False] * 4 + [True] * 2 and q.counters.trimmed == 2
    assert len(pkts[5].data) == TRIM_KEEP and q.counters.dropped == 0
    assert [p.entropy for p in got] == [0, 4, 5, 1, 2, 99, 3]


def test_spraying_maps_entropy_to_paths_of_different_lengths():
    path = _path(8, spray_paths=4, spray_skew_ns=10_000)
    arrivals = [path.transmit(0, b"s", entropy)[1][0].at_ns for entropy in range(8)]
    base = arrivals[0]
    assert [a - base for a in arrivals] == [0, 10_001, 20_002, 30_003, 4, 10_005, 20_006, 30_007]
    with pytest.raises(InvalidArgumentError, match="spray_paths"):
        Impairments(spray_paths=0)


def test_the_simulators_wire_and_an_emulated_link_agree_frame_by_frame():
    """One seed, one frame sequence: the simulator's path and the emulation's link
    direction with the same parameters lose, delay and corrupt the same frames."""
    from netweft.emulation.links.link_model import GilbertElliott, LinkConfig, LinkDirection

    seed = 0x5EED
    imp = Impairments(loss=0.03, corrupt=0.02, delay_ns=40_000, jitter_ns=15_000,
                      burst_enter=0.01, burst_exit=0.3, burst_loss=0.9)
    link = Link(rate_bps=1e9, delay_ns=10_000)
    path = Path(link, imp, seed)
    emulated = LinkDirection(LinkConfig(delay_ns=50_000, jitter_ns=15_000, loss=0.03,
                                        gemodel=GilbertElliott(0.01, 0.3, 0.9), corrupt=0.02,
                                        rate_bps=1e9), seed)
    frames = [bytes([k % 251]) * (60 + k % 1400) for k in range(3000)]
    sim_out, emu_out = [], []
    for k, frame in enumerate(frames):
        now = k * 20_000
        _, arrivals = path.transmit(now, frame)
        sim_out.append([(a.at_ns, a.data) for a in arrivals] or None)
        got = emulated.send(now, frame)
        emu_out.append(None if got is None else [got])
    assert sim_out == emu_out
    lost = sum(o is None for o in sim_out)
    assert path.counters["lost"] == emulated.stats.lost == lost > 50
    assert path.counters["corrupted"] == emulated.stats.corrupted > 20
    assert path.counters["burst_lost"] > 0
    # and another seed gives another run
    other = Path(link, imp, seed + 1)
    assert [len(other.transmit(k * 20_000, f)[1]) for k, f in enumerate(frames)] != \
        [0 if o is None else 1 for o in sim_out]


def test_extra_effects_change_nothing_the_wire_decides():
    link = Link(rate_bps=8e9, delay_ns=1_000)
    plain = Path(link, Impairments(loss=0.1, corrupt=0.1), 3)
    layered = Path(link, Impairments(loss=0.1, corrupt=0.1, duplicate=0.2, reorder=0.2,
                                     junk=0.2, spray_paths=2), 3)
    frames = [bytes(range(k % 200 + 1)) for k in range(2000)]

    def wire_view(path: Path) -> list:
        out = []
        for k, f in enumerate(frames):
            real = [a for a in path.transmit(k * 1000, f)[1] if not a.junk]
            out.append(None if not real else (real[0].data, real[0].intact))
        return out

    assert wire_view(plain) == wire_view(layered)
    assert layered.counters["duplicated"] and layered.counters["reordered"]


def test_jitter_alone_never_reorders_on_the_simulators_wire():
    path = _path(9, delay_ns=50_000, jitter_ns=40_000)
    times = [path.transmit(k * 2_000, b"j" * 100)[1][0].at_ns for k in range(2000)]
    assert times == sorted(times)
    assert path.counters["reordered"] == 0


def test_impairments_read_the_text_every_link_setting_is_written_in():
    imp = Impairments.from_spec("delay 20us jitter=10us, loss 1% gemodel 0.01 0.3 0.9 "
                                "corrupt 0.1% reorder 0.5% duplicate 0.01 junk 0")
    assert imp == Impairments(delay_ns=20_000, jitter_ns=10_000, loss=0.01, burst_enter=0.01,
                              burst_exit=0.3, burst_loss=0.9, corrupt=0.001, reorder=0.005,
                              duplicate=0.01)
    for text, message in [("rate 1gbit", "the Link's"), ("gemodel 0.1/0.2/1/0.1", "good state"),
                          ("loss", "needs a value"), ("spin 3", "unknown key 'spin'"),
                          ("delay 5", "duration with a unit")]:
        with pytest.raises(InvalidArgumentError, match=message):
            Impairments.from_spec(text)
