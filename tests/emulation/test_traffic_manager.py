"""The traffic manager in virtual time: queueing metadata, priorities, tail drop, rates."""

from __future__ import annotations

import pytest
from tm_helpers import MS, probe_fields, probe_frame, probe_switch, run

from netweft.emulation.switch import SwitchError

# 8 Mbit/s: one byte per microsecond, so a 1000-byte frame takes exactly 1 ms
SLOW = "2:rate=8mbit"


def test_queue_metadata_is_filled_as_bmv2_fills_it():
    sw = probe_switch(SLOW)
    start = 5 * MS
    out = run(sw, [(start, 1, probe_frame(2, tag=k)) for k in range(5)])
    assert [p for _, p, _ in out] == [2] * 5
    fields = [probe_fields(f) for _, _, f in out]
    assert [f["tag"] for f in fields] == [0, 1, 2, 3, 4]
    # frame k leaves the queue when frame k-1's last bit has gone: k ms after it came
    assert [t for t, _, _ in out] == [start + (k + 1) * MS for k in range(5)]
    assert [f["enq_timestamp"] for f in fields] == [5000] * 5          # microseconds
    assert [f["deq_timedelta"] for f in fields] == [0, 1000, 2000, 3000, 4000]
    assert [f["egress_timestamp"] for f in fields] == [5000, 6000, 7000, 8000, 9000]
    # depth of the port's queues when each frame came (frame 0 already left) and left
    assert [f["enq_qdepth"] for f in fields] == [0, 0, 1, 2, 3]
    assert [f["deq_qdepth"] for f in fields] == [0, 3, 2, 1, 0]
    assert [f["qid"] for f in fields] == [0] * 5


def test_strict_priority_serves_the_highest_priority_first_and_sets_qid():
    sw = probe_switch(SLOW, priority_queues=8)
    sends = [(0, 1, probe_frame(2, 0, tag=100))]                       # occupies the port
    sends += [(0, 1, probe_frame(2, 0, tag=k)) for k in range(3)]
    sends += [(0, 1, probe_frame(2, 7, tag=70 + k)) for k in range(3)]
    sends += [(0, 1, probe_frame(2, 3, tag=30 + k)) for k in range(2)]
    fields = [probe_fields(f) for _, _, f in run(sw, sends)]
    assert [f["tag"] for f in fields] == [100, 70, 71, 72, 30, 31, 0, 1, 2]
    # qid = queues - 1 - priority, as simple_switch numbers them
    assert [f["qid"] for f in fields] == [7, 0, 0, 0, 4, 4, 7, 7, 7]
    # enq_qdepth counts the whole port (all priorities), as simple_switch does
    assert [f["enq_qdepth"] for f in fields if 70 <= f["tag"] < 100] == [3, 4, 5]


def test_a_priority_beyond_the_ports_queues_is_dropped_and_counted():
    sw = probe_switch(SLOW, priority_queues=4)
    out = run(sw, [(0, 1, probe_frame(2, 3)), (0, 1, probe_frame(2, 5)),
                   (0, 1, probe_frame(2, 0))])
    assert [probe_fields(f)["priority"] for _, _, f in out] == [3, 0]
    assert sw.stats["drop_priority"] == 1
    assert sw.stats["dropped"] == 1


def test_tail_drop_at_the_configured_depth_in_packets():
    sw = probe_switch(SLOW + ",queue=8")
    out = run(sw, [(0, 1, probe_frame(2, tag=k)) for k in range(20)])
    # one frame on the wire, eight waiting; the rest find the queue full
    assert [probe_fields(f)["tag"] for _, _, f in out] == list(range(9))
    assert sw.stats["drop_queue_full"] == 11
    assert sw.stats["dropped"] == 11


def test_tail_drop_at_the_configured_depth_in_bytes():
    sw = probe_switch(SLOW + ",queue=100,queue_bytes=3500")
    out = run(sw, [(0, 1, probe_frame(2, tag=k)) for k in range(10)])
    assert len(out) == 1 + 3                  # 3 x 1000 bytes fit in 3500, a fourth does not
    assert sw.stats["drop_queue_full"] == 6


def test_set_queue_depth_per_port_and_priority_at_run_time():
    sw = probe_switch(SLOW, priority_queues=2)
    sw.set_queue_depth(2, 2, 1)               # port 2, priority 1 only
    sw.set_queue_depth(5, 2, 0)
    burst = [(0, 1, probe_frame(2, 0, tag=k)) for k in range(10)]
    burst += [(0, 1, probe_frame(2, 1, tag=100 + k)) for k in range(10)]
    tags = [probe_fields(f)["tag"] for _, _, f in run(sw, burst)]
    assert tags == [0, 100, 101, 1, 2, 3, 4, 5]
    with pytest.raises(SwitchError, match="priority 2 is not in 0..1"):
        sw.set_queue_depth(4, 2, 2)
    with pytest.raises(SwitchError, match="port 600"):
        sw.set_queue_rate(10, 600)


def test_set_queue_rate_spaces_departures_at_the_rate_in_packets_per_second():
    sw = probe_switch()
    sw.set_queue_depth(1000, 2)
    sw.set_queue_rate(4000, 2)                # 250 us apart
    out = run(sw, [(0, 1, probe_frame(2, size=100)) for _ in range(400)])
    times = [t for t, _, _ in out]
    assert len(times) == 400
    rate = (len(times) - 1) / ((times[-1] - times[0]) / 1e9)
    assert rate == pytest.approx(4000, rel=0.02)


@pytest.mark.parametrize("rate_bps", [10e6, 100e6, 1e9])
def test_line_rate_is_within_two_percent_of_the_configured_rate(rate_bps):
    sw = probe_switch(f"2:rate={int(rate_bps)}bit,queue=5000")
    size = 1500
    gap = int(size * 8 / rate_bps * 1e9 / 2)  # offered at twice the line rate
    out = run(sw, [(k * gap, 1, probe_frame(2, size=size)) for k in range(2000)])
    times = [t for t, _, _ in out]
    bits = sum(len(f) * 8 for _, _, f in out[1:])
    assert bits / ((times[-1] - times[0]) / 1e9) == pytest.approx(rate_bps, rel=0.02)
    assert sw.stats["dropped"] == 0


def test_a_queue_rate_in_bits_per_second_shapes_one_priority():
    sw = probe_switch("2:queue=1000", priority_queues=2)
    sw.set_queue_rate_bps(20e6, 2, 0)        # priority 0 shaped, priority 1 free
    sends = [(k * 1000, 1, probe_frame(2, 0, size=1000, tag=k)) for k in range(300)]
    sends += [(k * 1000, 1, probe_frame(2, 1, size=1000, tag=1000 + k)) for k in range(300)]
    out = run(sw, sends)
    low = [t for t, _, f in out if probe_fields(f)["tag"] < 1000]
    high = [t for t, _, f in out if probe_fields(f)["tag"] >= 1000]
    assert high[-1] <= 300 * 1000             # the unshaped queue is never held back
    rate = (len(low) - 1) * 1000 * 8 / ((low[-1] - low[0]) / 1e9)
    assert rate == pytest.approx(20e6, rel=0.02)


@pytest.mark.parametrize("link", ["2/out:delay=5ms", "2/out:delay=5ms,jitter=1ms",
                                  "1/in:delay=5ms,jitter=2ms"])
def test_delay_is_within_five_percent_of_the_configured_delay(link):
    sw = probe_switch(link, seed=3)
    sends = [(k * 20 * MS, 1, probe_frame(2, tag=k)) for k in range(200)]
    out = run(sw, sends)
    assert len(out) == 200
    delays = [t - probe_fields(f)["tag"] * 20 * MS for t, _, f in out]
    assert sum(delays) / len(delays) == pytest.approx(5 * MS, rel=0.05)
    if "jitter" not in link:
        assert set(delays) == {5 * MS}
    else:
        assert min(delays) < 5 * MS < max(delays)


def test_both_directions_of_a_link_add_their_delay_and_frames_keep_their_order():
    sw = probe_switch("1:delay=3ms,jitter=2ms", "2:delay=4ms,jitter=3ms", seed=9)
    out = run(sw, [(k * 100_000, 1, probe_frame(2, tag=k)) for k in range(300)])
    tags = [probe_fields(f)["tag"] for _, _, f in out]
    assert tags == sorted(tags)               # jitter never reorders a link
    delays = [t - probe_fields(f)["tag"] * 100_000 for t, _, f in out]
    assert min(delays) >= 2 * MS              # (3 - 2) + (4 - 3) ms at the least


def _binomial_bounds(n: int, p: float, sigmas: float = 4.5) -> tuple[float, float]:
    mean, sd = n * p, (n * p * (1 - p)) ** 0.5
    return mean - sigmas * sd, mean + sigmas * sd


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_loss_fraction_is_within_binomial_bounds_and_reproducible(seed):
    n, p = 4000, 0.05
    sends = [(k * 10_000, 1, probe_frame(2, size=100, tag=k)) for k in range(n)]
    sw = probe_switch("2/out:loss=0.05", seed=seed)
    kept = [probe_fields(f)["tag"] for _, _, f in run(sw, sends)]
    lo, hi = _binomial_bounds(n, p)
    assert lo <= n - len(kept) <= hi
    assert sw.stats["drop_link_loss"] == n - len(kept)
    again = probe_switch("2/out:loss=0.05", seed=seed)
    assert [probe_fields(f)["tag"] for _, _, f in run(again, sends)] == kept
    other = probe_switch("2/out:loss=0.05", seed=seed + 100)
    assert [probe_fields(f)["tag"] for _, _, f in run(other, sends)] != kept


def test_gilbert_elliott_losses_come_in_bursts_at_the_models_mean_rate():
    n = 20000
    sw = probe_switch("2/out:gemodel=0.01/0.25", seed=5)   # bursts of 4 on average
    sends = [(k * 10_000, 1, probe_frame(2, size=64, tag=k)) for k in range(n)]
    kept = {probe_fields(f)["tag"] for _, _, f in run(sw, sends)}
    lost = [k for k in range(n) if k not in kept]
    mean_loss = 0.01 / (0.01 + 0.25)
    assert len(lost) / n == pytest.approx(mean_loss, rel=0.2)
    bursts = sum(1 for i, k in enumerate(lost) if i == 0 or lost[i - 1] != k - 1)
    assert len(lost) / bursts == pytest.approx(4.0, rel=0.2)


def test_corruption_flips_one_bit_in_a_binomial_share_of_frames():
    n, p = 3000, 0.1
    sw = probe_switch("2/out:corrupt=0.1", seed=4)
    frames = [probe_frame(2, size=200, tag=k) for k in range(n)]
    out = run(sw, [(k * 10_000, 1, f) for k, f in enumerate(frames)])
    assert len(out) == n
    clean = run(probe_switch(), [(k * 10_000, 1, f) for k, f in enumerate(frames)])
    flips = [sum(bin(a ^ b).count("1") for a, b in zip(x, y, strict=True))
             for (_, _, x), (_, _, y) in zip(out, clean, strict=True)]
    damaged = [f for f in flips if f]
    assert set(damaged) == {1}
    lo, hi = _binomial_bounds(n, p)
    assert lo <= len(damaged) <= hi
    assert sw.stats["link_corrupted"] == len(damaged)


def test_an_ingress_link_rate_holds_frames_and_drops_beyond_its_limit():
    sw = probe_switch("1/in:rate=8mbit,limit=5")
    out = run(sw, [(0, 1, probe_frame(2, tag=k)) for k in range(10)])
    assert [t for t, _, _ in out] == [(k + 1) * MS for k in range(5)]
    assert sw.stats["drop_link_limit"] == 5


def test_multicast_copies_and_clones_go_through_the_queues():
    sw = probe_switch(SLOW + ",queue=1", "3:rate=8mbit,queue=2")
    sw.mc_group_set(1, [(2, 1), (3, 2), (4, 3)])
    sw.clone_session_set(7, 5)
    out = run(sw, [(0, 1, probe_frame(255, tag=k, clone=7)) for k in range(6)])
    by_port: dict[int, list[int]] = {}
    for _, port, frame in out:
        by_port.setdefault(port, []).append(probe_fields(frame)["tag"])
    assert by_port[4] == list(range(6))         # no rate: every copy at once
    assert by_port[5] == list(range(6))         # every clone too
    assert by_port[2] == [0, 1]                 # 1 on the wire + 1 queued
    assert by_port[3] == [0, 1, 2]              # 1 on the wire + 2 queued
    assert sw.stats["drop_queue_full"] == 4 + 3


def test_drops_are_counted_by_reason():
    sw = probe_switch("3/out:loss=1")
    run(sw, [(0, 1, probe_frame(511)),                  # the program drops it
             (0, 1, probe_frame(2)[:20]),               # too short: parser error, dropped
             (0, 1, probe_frame(3)),                    # lost on the link
             (0, 1, probe_frame(2))])                   # forwarded
    stats = sw.stats
    assert (stats["drop_program"], stats["drop_parser_error"], stats["drop_link_loss"]) == (
        1, 1, 1)
    assert stats["dropped"] == 3 and stats["sent"] == 2


def test_without_settings_receive_is_process_at_that_time():
    plain, timed = probe_switch(), probe_switch()
    frames = [probe_frame(2, tag=k) for k in range(5)]
    expected = [plain.process(1, f) for f in frames]
    got = [timed.receive(1, f, 7 * MS) for f in frames]
    assert [[p for p, _ in o] for o in got] == [[p for p, _ in o] for o in expected]
    assert {probe_fields(o[0][1])["egress_timestamp"] for o in got} == {7000}
    assert timed.next_deadline() is None


def test_the_same_seed_gives_the_same_run():
    links = ("1/in:delay=1ms,jitter=500us,loss=0.02", "2:rate=50mbit,corrupt=0.01,queue=16",
             "2/out:gemodel=0.02/0.3,delay=2ms,jitter=1ms")
    sends = [(k * 30_000, 1, probe_frame(2, size=64 + k % 1400, tag=k)) for k in range(1500)]
    first = run(probe_switch(*links, seed=11), sends)
    assert first == run(probe_switch(*links, seed=11), sends)
    assert first != run(probe_switch(*links, seed=12), sends)


def test_time_given_out_of_order_is_taken_as_the_latest_time():
    sw = probe_switch(SLOW)
    sw.receive(1, probe_frame(2, tag=0), 10 * MS)
    late = sw.receive(1, probe_frame(2, tag=1), 3 * MS)     # a clock that stepped back
    assert late == [] and sw.next_deadline() == 11 * MS
    fields = [probe_fields(f) for _, _, f in run(sw, [])]
    assert [f["enq_timestamp"] for f in fields] == [10_000, 10_000]
