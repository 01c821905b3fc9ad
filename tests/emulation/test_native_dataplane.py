"""The native dataplane loop on real veth pairs: forwarding, counting, drops, start/stop.

Two veth pairs in the root namespace (removed on exit, also when a test fails)::

    tx --l1a==l1b-- [port 1  loop  port 2] --l2a==l2b-- rx
"""

from __future__ import annotations

import os
import select
import socket
import struct
import threading

import pytest

from netweft.emulation.native.dataplane import (
    Dataplane,
    DataplaneError,
    MinimalForwarder,
    StandinPipeline,
)
from netweft.testbed.bench.switch_veth import STAMP_OFFSET, udp_frame, veth_links

pytestmark = pytest.mark.netns

ETH_P_ALL = 0x0003
NEXT_HOP = "08:00:00:00:01:11"


@pytest.fixture
def links():
    with veth_links() as made:
        yield made


def _socket(ifname: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((ifname, 0))
    return sock


def _receive(sock: socket.socket, want: int, timeout: float = 5.0) -> list[bytes]:
    """Frames arriving on ``sock`` (not its own) until ``want`` came or ``timeout`` passed."""
    got: list[bytes] = []
    while len(got) < want and select.select([sock], [], [], timeout)[0]:
        frame, addr = sock.recvfrom(65536)
        if addr[2] != socket.PACKET_OUTGOING:
            got.append(frame)
    return got


def _checksum_ok(ip: bytes) -> bool:
    s = sum(struct.unpack(">10H", ip[:20]))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _os_threads() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


def test_the_stand_in_pipeline_forwards_and_rewrites_frames_and_counts_them(links):
    dp = Dataplane(StandinPipeline([("10.0.0.0/8", NEXT_HOP, 2)]),
                   {1: links.port1, 2: links.port2})
    tx, rx = _socket(links.generator), _socket(links.sink)
    try:
        with dp:
            frames = [udp_frame(64 + 10 * k, dst=f"10.0.2.{k + 1}") for k in range(20)]
            for frame in frames:
                tx.send(frame)
            got = _receive(rx, len(frames))
            counters = dp.counters()
        final = dp.counters()
    finally:
        tx.close()
        rx.close()
    assert len(got) == len(frames)
    for sent, out in zip(frames, got, strict=True):
        assert out[:6] == bytes.fromhex(NEXT_HOP.replace(":", ""))   # the next hop's MAC
        assert out[6:12] == sent[:6]                                   # old dst is new src
        assert out[14 + 8] == sent[14 + 8] - 1                         # TTL decremented
        assert _checksum_ok(out[14:34])                                # checksum recomputed
        assert out[34:] == sent[34:]
    # read while running: as of the loop's last pass, never ahead of the final count
    assert 0 <= counters["rx_port1"] <= final["rx_port1"]
    assert final["rx_port1"] == final["tx_port2"] == len(frames)
    assert final["rx"] == final["tx"] == len(frames)
    assert final["drop_malformed"] == final["drop_program"] == 0


def test_malformed_and_unrouted_frames_are_counted_and_dropped(links):
    dp = Dataplane(StandinPipeline([("10.0.0.0/8", NEXT_HOP, 2)]),
                   {1: links.port1, 2: links.port2})
    tx, rx = _socket(links.generator), _socket(links.sink)
    good = udp_frame(64)
    short = good[:20]                                   # IPv4 ethertype, 6 bytes of header
    options = good[:14] + bytes([0x46]) + good[15:]     # IHL 6: options are not supported
    unrouted = udp_frame(64, dst="192.168.1.1")         # no route: the program drops it
    bad_checksum = good[:24] + bytes([good[24] ^ 0xFF]) + good[25:]
    try:
        with dp:
            for frame in (short, options, unrouted, bad_checksum, good):
                tx.send(frame)
            got = _receive(rx, 1)
            assert _receive(rx, 1, timeout=0.5) == []
        counters = dp.counters()
    finally:
        tx.close()
        rx.close()
    assert len(got) == 1 and got[0][14 + 8] == good[14 + 8] - 1
    assert counters["rx"] == 5
    assert counters["drop_malformed"] == 2
    assert counters["drop_program"] == 2
    assert counters["tx"] == 1


def test_the_minimal_forwarder_moves_frames_unchanged_both_ways(links):
    dp = Dataplane(MinimalForwarder({1: 2, 2: 1}), {1: links.port1, 2: links.port2})
    a, b = _socket(links.generator), _socket(links.sink)
    try:
        with dp:
            forth = [udp_frame(100, dst=f"10.9.0.{k}") for k in range(1, 11)]
            back = [udp_frame(1500, dst=f"10.8.0.{k}") for k in range(1, 6)]
            for frame in forth:
                a.send(frame)
            got_forth = _receive(b, len(forth))
            for frame in back:
                b.send(frame)
            got_back = _receive(a, len(back))
        counters = dp.counters()
    finally:
        a.close()
        b.close()
    assert got_forth == forth and got_back == back
    assert counters["tx_port2"] == 10 and counters["tx_port1"] == 5


def test_stop_and_start_leave_no_sockets_or_threads_behind(links):
    fds, threads, os_threads = _fds(), threading.active_count(), _os_threads()
    dp = Dataplane(StandinPipeline([("10.0.0.0/8", NEXT_HOP, 2)]),
                   {1: links.port1, 2: links.port2})
    tx, rx = _socket(links.generator), _socket(links.sink)
    try:
        for round_ in range(3):
            dp.start()
            assert dp.running
            tx.send(udp_frame(64))
            assert len(_receive(rx, 1)) == 1, f"round {round_}"
            dp.stop()
            assert not dp.running
    finally:
        tx.close()
        rx.close()
        dp.stop()
    assert _fds() == fds
    assert threading.active_count() == threads
    assert _os_threads() == os_threads


def test_a_port_that_cannot_open_fails_the_start_and_closes_the_others(links):
    fds = _fds()
    dp = Dataplane(StandinPipeline(), {1: links.port1, 2: "nwnosuchif0"})
    with pytest.raises(DataplaneError, match="port 2 on nwnosuchif0"):
        dp.start()
    assert not dp.running
    assert _fds() == fds


def test_the_c_generator_and_sink_count_every_stamped_frame(links):
    from netweft.testbed.bench.switch_veth import measure

    with Dataplane(MinimalForwarder({1: 2}), {1: links.port1, 2: links.port2}):
        # 500 frames: fewer than the switch's ring holds, so none can be lost
        point = measure(links, udp_frame(64), None, 10.0, None, "forwarder", 42,
                        count=500)
    assert point.sent == 500
    assert point.delivered == 500 and point.loss == 0.0
    assert point.reordered == 0
    assert point.p50_us is not None and point.p50_us > 0
    assert STAMP_OFFSET + 20 <= 64


def test_the_switch_command_stops_on_sigterm_and_writes_its_counters(links, tmp_path):
    import json
    import signal
    import subprocess
    import sys

    stats = tmp_path / "stats.json"
    proc = subprocess.Popen([sys.executable, "-m", "netweft.emulation.native.dataplane",
                             "--port", f"1={links.port1}", "--port", f"2={links.port2}",
                             "--route", f"10.0.0.0/8=2,{NEXT_HOP}", "--stats-out", str(stats)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tx, rx = _socket(links.generator), _socket(links.sink)
    try:
        assert proc.stdout.readline().strip() == "ready"
        for k in range(7):
            tx.send(udp_frame(80, dst=f"10.1.1.{k + 1}"))
        assert len(_receive(rx, 7)) == 7
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        tx.close()
        rx.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    counters = json.loads(stats.read_text())
    assert counters["rx_port1"] == 7 and counters["tx_port2"] == 7


def test_the_traffic_manager_holds_frames_behind_a_slow_port_and_drops_at_the_tail(links):
    # 16 kbit/s: a 1000-byte frame occupies port 2 for half a second, so a burst of
    # five finds it busy: one on the wire, two queued (depth 2), two dropped; the
    # loop's timers let the held ones out as the port frees up
    dp = Dataplane(StandinPipeline([("10.0.0.0/8", NEXT_HOP, 2)]),
                   {1: links.port1, 2: links.port2})
    dp.tm.set_port_rate(2, 16_000)
    dp.tm.configure_queue(2, depth_packets=2)
    tx, rx = _socket(links.generator), _socket(links.sink)
    try:
        with dp:
            burst = [udp_frame(1000, dst=f"10.0.0.{k + 1}") for k in range(5)]
            for frame in burst:
                tx.send(frame)
            got = _receive(rx, 3, timeout=10.0)
        counters = dp.counters()
    finally:
        tx.close()
        rx.close()
    assert [f[14 + 19] for f in got] == [1, 2, 3]        # the first three, in order
    assert counters["drop_queue_full"] == 2
    assert counters["tx"] == 3


def test_a_frame_too_long_for_the_egress_port_is_counted_and_dropped(links):
    import subprocess

    for name in (links.generator, links.port1):           # jumbo frames into port 1 only
        subprocess.run(["ip", "link", "set", name, "mtu", "9000"], check=True)
    dp = Dataplane(MinimalForwarder({1: 2}), {1: links.port1, 2: links.port2})
    tx, rx = _socket(links.generator), _socket(links.sink)
    try:
        with dp:
            tx.send(udp_frame(3000))                         # port 2 carries 1518 at most
            tx.send(udp_frame(1500))
            got = _receive(rx, 1)
            assert _receive(rx, 1, timeout=0.5) == []
        counters = dp.counters()
    finally:
        tx.close()
        rx.close()
    assert [len(f) for f in got] == [1500]
    assert counters["drop_tx_too_long"] == 1 and counters["tx"] == 1


def _hold_between_passes(dp: Dataplane) -> tuple[threading.Lock, tuple]:
    """A lock the loop takes around every pass (its guard): while the test holds it the
    loop waits between passes, so time passes and frames arrive without it looking.
    Keep the returned callbacks alive while the loop runs."""
    import cffi

    ffi = cffi.FFI()
    gate = threading.Lock()

    def take(_: object) -> None:
        gate.acquire()

    def give(_: object) -> None:
        gate.release()

    lock, unlock = ffi.callback("void(void *)", take), ffi.callback("void(void *)", give)
    dp.set_guard(0, int(ffi.cast("uintptr_t", lock)), int(ffi.cast("uintptr_t", unlock)))
    return gate, (lock, unlock)


def test_a_departure_due_before_a_frame_came_leaves_before_the_frame_joins_the_queue(links):
    # Port 2 at 80 kbit/s with a one-packet queue: A (1000 bytes) leaves at once and
    # holds the port 100 ms, B waits in the queue. The loop is then held between
    # passes while B's departure time passes and C arrives. In time order (as the
    # Python back end runs it) B leaves before C joins the queue: nothing is dropped.
    # The loop used to take a pass's frames before the departures already due, and
    # dropped C at a queue that, by then, was empty (bursts of trimmed headers behind
    # a late wake-up, issue 20).
    dp = Dataplane(StandinPipeline([("10.0.0.0/8", NEXT_HOP, 2)]),
                   {1: links.port1, 2: links.port2})
    dp.tm.set_port_rate(2, 80_000)
    dp.tm.configure_queue(2, depth_packets=1)
    gate, _callbacks = _hold_between_passes(dp)
    tx, rx = _socket(links.generator), _socket(links.sink)
    try:
        with dp:
            tx.send(udp_frame(1000, dst="10.0.0.1"))
            tx.send(udp_frame(1000, dst="10.0.0.2"))
            for _ in range(500):                       # both through ingress: A out, B queued
                if dp.counters()["rx"] == 2:
                    break
                select.select([], [], [], 0.002)
            with gate:
                assert dp.counters()["tx"] == 0          # A is still on the wire, B queued
                tx.send(udp_frame(1000, dst="10.0.0.3"))
                select.select([], [], [], 0.15)          # B's departure time passes
            got = _receive(rx, 3, timeout=5.0)
        counters = dp.counters()
    finally:
        tx.close()
        rx.close()
    assert counters["drop_queue_full"] == 0
    assert [f[14 + 19] for f in got] == [1, 2, 3]
