"""The simulator's fabric model: output queues mark ECN, trim instead of dropping,
serve trimmed headers first, and leaf-spine routing sprays or hashes."""

from __future__ import annotations

import random

import pytest

from netweft.transport import InvalidArgumentError
from netweft.transport.sim.event_loop import EventLoop
from netweft.transport.sim.network import Fabric, FabricSpec
from netweft.transport.sim.port import (
    ECN_ECT0,
    PDS_F_TRIMMED,
    TRIM_KEEP,
    WIRE_OVERHEAD,
    FabricPacket,
    OutputPort,
)

RUD = 2 << 3   # PDS prologue byte 0 of a RUD request (type 2 in the top five bits)
ACK = 7 << 3


def packet(size: int = 4000, first: int = RUD, src: int = 1, dst: int = 0,
           entropy: int = 0) -> FabricPacket:
    data = bytes([first, 0x10]) + bytes(size - 2)
    return FabricPacket(data, src, dst, 0x0A000001, entropy, ECN_ECT0, 0)


def port(loop: EventLoop, got: list, *, buffer: int = 10 * 4046, trim: bool = True,
         ecn_min: int = 0, ecn_max: int = 0, seed: int = 1, random_trim: bool = False,
         priority: int = 4 * 4046) -> OutputPort:
    return OutputPort(loop, "p", got.append, rate_bps=100e9, delay_ns=1000,
                      buffer_bytes=buffer, priority_bytes=priority,
                      ecn_min_bytes=ecn_min, ecn_max_bytes=ecn_max, ecn=ecn_max > 0,
                      trim=trim, random_trim=random_trim, rng=random.Random(seed))


def burst(loop: EventLoop, p: OutputPort, pkts: list[FabricPacket]) -> None:
    """Every packet arrives at once, then the loop runs dry."""
    for pkt in pkts:
        p.arrive(pkt)
    while loop.step():
        pass


def test_ce_marks_only_above_the_threshold_and_always_above_the_maximum():
    loop, got = EventLoop(), []
    wire = 4000 + WIRE_OVERHEAD
    p = port(loop, got, buffer=40 * wire, ecn_min=5 * wire, ecn_max=15 * wire)
    pkts = [packet() for _ in range(30)]
    burst(loop, p, pkts)
    assert got == pkts  # FIFO, nothing lost
    # The first packet leaves an empty queue, then packet k leaves a queue of 30 - k.
    queued = [0] + [(30 - k) * wire for k in range(1, 30)]
    for pkt, q in zip(pkts, queued, strict=True):
        if q <= 5 * wire:
            assert not pkt.ce, q
        if q >= 15 * wire:
            assert pkt.ce, q
    between = [pkt.ce for pkt, q in zip(pkts, queued, strict=True) if 5 * wire < q < 15 * wire]
    assert 0 < sum(between) < len(between)  # RED: some but not all in between
    assert p.counters.ce_marked == sum(pkt.ce for pkt in pkts)


def test_ce_marking_is_seeded():
    def marks(seed: int) -> list[bool]:
        loop, got = EventLoop(), []
        p = port(loop, got, buffer=60 * 4046, ecn_min=4046, ecn_max=50 * 4046, seed=seed)
        burst(loop, p, [packet() for _ in range(50)])
        return [pkt.ce for pkt in got]

    assert marks(3) == marks(3)
    assert marks(3) != marks(4)


def test_a_full_data_queue_trims_to_the_headers_with_the_mark_and_serves_them_first():
    loop, got = EventLoop(), []
    p = port(loop, got, buffer=5 * (4000 + WIRE_OVERHEAD))
    pkts = [packet() for _ in range(10)]
    burst(loop, p, pkts)
    # One leaves at once, five wait, the other four are trimmed, not dropped.
    trimmed = [pkt for pkt in pkts if pkt.trimmed]
    assert len(trimmed) == 4 and p.counters.trimmed == 4
    assert p.counters.dropped == 0 and len(got) == 10
    for pkt in trimmed:
        assert len(pkt.data) == TRIM_KEEP
        assert pkt.data[1] & PDS_F_TRIMMED and pkt.data[1] & 0x10  # mark set, flags kept
        assert pkt.data[0] == RUD
    # The trimmed headers overtake the queued data (priority queue).
    assert got[0] is pkts[0]
    assert all(pkt.trimmed for pkt in got[1:5])
    assert not any(pkt.trimmed for pkt in got[5:])


def test_random_trim_cuts_the_arrival_or_the_last_queued_packet_half_and_half():
    # htsim's (NDP's) rule: at a full queue either the arriving packet or the last one
    # queued becomes a header, so no sender's packets lose every time by their timing.
    loop, got = EventLoop(), []
    wire = 4000 + WIRE_OVERHEAD
    p = port(loop, got, buffer=5 * wire, random_trim=True, priority=1000 * wire)
    pkts = [packet() for _ in range(206)]
    cut_on_arrival = 0
    for pkt in pkts:          # one leaves at once, five wait, 200 meet a full queue
        p.arrive(pkt)
        cut_on_arrival += pkt.trimmed
    while loop.step():
        pass
    assert p.counters.trimmed == 200 and p.counters.dropped == 0 and len(got) == 206
    assert 70 <= cut_on_arrival <= 130       # the others took the last place
    full = [pkts.index(pkt) for pkt in got if not pkt.trimmed]
    assert full[:5] == [0, 1, 2, 3, 4] and full[5] > 5 and pkts[5].trimmed
    assert all(len(pkt.data) == TRIM_KEEP and pkt.data[1] & PDS_F_TRIMMED
               for pkt in got if pkt.trimmed)


def test_without_trimming_a_full_queue_drops():
    loop, got = EventLoop(), []
    p = port(loop, got, buffer=5 * (4000 + WIRE_OVERHEAD), trim=False)
    burst(loop, p, [packet() for _ in range(10)])
    assert p.counters.dropped == 4 and p.counters.trimmed == 0 and len(got) == 6


def test_control_packets_are_never_trimmed_and_the_priority_queue_is_bounded():
    loop, got = EventLoop(), []
    p = port(loop, got, buffer=4046)
    acks = [packet(size=40, first=ACK) for _ in range(400)]
    burst(loop, p, acks)
    assert p.counters.trimmed == 0
    assert p.counters.priority_dropped > 0
    assert len(got) + p.counters.priority_dropped == 400
    assert all(len(a.data) == 40 for a in got)


def test_wire_sizes_of_trimmed_headers_and_control_packets_can_be_set():
    # netweft's own frames: a trimmed header is its 64 kept bytes plus 46 of Ethernet,
    # IPv4 and UDP; with trimmed_wire / control_wire (htsim's 64 B) the port serializes
    # those sizes while the packets keep their bytes.
    def run(**sizes: int) -> tuple[OutputPort, list[FabricPacket]]:
        loop, got = EventLoop(), []
        p = port(loop, got, buffer=5 * (4000 + WIRE_OVERHEAD))
        data = [FabricPacket(bytes([RUD, 0x10]) + bytes(3998), 1, 0, 1, 0, ECN_ECT0, 0,
                             **sizes) for _ in range(10)]
        acks = [FabricPacket(bytes([ACK]) + bytes(31), 1, 0, 1, 0, 0, 0, **sizes)
                for _ in range(3)]
        burst(loop, p, data + acks)
        return p, got

    p, got = run()
    assert p.counters.trimmed == 4
    assert {pkt.wire for pkt in got if pkt.trimmed} == {TRIM_KEEP + WIRE_OVERHEAD}
    assert {pkt.wire for pkt in got if not pkt.is_data} == {32 + WIRE_OVERHEAD}
    real = p.counters.forwarded_bytes
    assert real == 6 * (4000 + WIRE_OVERHEAD) + 4 * (TRIM_KEEP + WIRE_OVERHEAD) \
        + 3 * (32 + WIRE_OVERHEAD)
    p, got = run(overhead=8, trimmed_wire=64, control_wire=64)
    assert p.counters.trimmed == 4
    assert {pkt.wire for pkt in got if pkt.trimmed} == {64}
    assert {pkt.wire for pkt in got if not pkt.is_data} == {64}
    assert all(len(pkt.data) == TRIM_KEEP for pkt in got if pkt.trimmed)
    assert p.counters.forwarded_bytes == 6 * 4008 + 4 * 64 + 3 * 64
    assert p.counters.busy_ns < real * 8 // 100


def test_serialization_and_delay_set_the_arrival_time():
    loop, times = EventLoop(), []
    p = OutputPort(loop, "p", lambda pkt: times.append(loop.now_ns), rate_bps=100e9,
                   delay_ns=1000, buffer_bytes=10**6, priority_bytes=10**6, ecn_min_bytes=0,
                   ecn_max_bytes=0, ecn=False, trim=True, rng=random.Random(0))
    burst(loop, p, [packet(size=4104), packet(size=4104)])  # 4150 B on the wire: 332 ns
    assert times == [332 + 1000, 2 * 332 + 1000]


def test_leaf_spine_sprays_on_entropy_and_hashes_flows_to_one_uplink():
    def uplinks(routing: str) -> set[int]:
        loop, got = EventLoop(), []
        spec = FabricSpec.leaf_spine(2, 4, 4, routing=routing)
        fabric = Fabric(spec, loop, got.append)
        for entropy in range(64):
            fabric.inject(packet(src=0, dst=5, entropy=49152 + entropy))
        while loop.step():
            pass
        assert len(got) == 64 and all(pkt.dst_host == 5 for pkt in got)
        return {s for s in range(4) if fabric.leaf_ports[0][4 + s].counters.forwarded}

    assert uplinks("spray") == {0, 1, 2, 3}
    assert len(uplinks("hash")) == 1


def test_fabric_spec_rejects_bad_values():
    with pytest.raises(InvalidArgumentError, match="topology"):
        FabricSpec(topology="ring")
    with pytest.raises(InvalidArgumentError, match="spines"):
        FabricSpec(topology="leaf_spine", leaves=2, spines=0)
    with pytest.raises(InvalidArgumentError, match="ECN"):
        FabricSpec(ecn_min=0.9, ecn_max=0.5)
    with pytest.raises(InvalidArgumentError, match="trimmed_wire"):
        FabricSpec(trimmed_wire=-1)


def _incast(n: int, size: int, seed: int = 5, **spec_kw):
    """N→1 incast through one switch; returns (sim, receiver buffer, data, per-host arrivals)."""
    import numpy as np

    from netweft.transport import Simulation

    spec = FabricSpec.one_switch(n + 1, **spec_kw)
    sim = Simulation(seed=seed, fabric=spec, mtu=4142, rto_init_ns=200_000)
    seen: list[tuple[int, int, bool, int]] = []  # (time, psn, trimmed, src host)
    deliver = sim.fabric.to_host

    def spy(pkt: FabricPacket) -> None:
        if pkt.is_data:
            seen.append((sim.loop.now_ns, int.from_bytes(pkt.data[4:8], "big"), pkt.trimmed,
                         pkt.src_host))
        deliver(pkt)

    for ports in sim.fabric.leaf_ports:
        for p in ports:
            p.deliver = spy
    inject = sim.fabric.inject

    def spy_inject(pkt: FabricPacket) -> None:
        if pkt.is_data:
            sent.append((sim.loop.now_ns, int.from_bytes(pkt.data[4:8], "big"), pkt.src_host))
        inject(pkt)

    sim.fabric.inject = spy_inject
    sent: list[tuple[int, int, int]] = []  # (time at the ToR, psn, src host)
    rx = sim.endpoint(max_peers=n + 4)
    txs = [sim.endpoint() for _ in range(n)]
    data = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    buf = np.zeros(n * size, dtype=np.uint8)
    dst = rx.register(buf)
    ids = []
    for i, tx in enumerate(txs):
        ids.append((tx, tx.connect(rx.address).write(tx.register(data), dst.remote(),
                                                      remote_offset=i * size, length=size)))
    for tx, wr in ids:
        tx.cq.wait_for(wr, timeout=5).check()
    return sim, buf, data, seen, sent, txs


def test_incast_through_a_trimming_switch_delivers_every_byte_and_repairs_trims_fast():
    n, size = 4, 256 * 1024
    sim, buf, data, seen, sent, txs = _incast(n, size, buffer_bytes=8 * 4188)
    for i in range(n):
        assert (buf[i * size:(i + 1) * size] == data).all()
    totals = sim.fabric.totals()
    assert totals["trimmed"] > 0 and totals["dropped"] == 0 and totals["trim_dropped"] == 0
    assert sum(tx.stats()["rto_fired"] for tx in txs) == 0  # NACKs, not timeouts, repaired
    # Each trimmed packet is resent within one RTT: its header reaches the receiver, the
    # NACK returns and the resend reaches the ToR within the path's base RTT (no queue
    # on the way: trimmed headers and NACKs jump the data queue).
    base_rtt = 4 * 1000 + 2 * 4188 * 8 // 100  # 4 links of 1 us, one data packet per hop
    events = sorted([(t, 1, psn, src) for t, psn, trimmed, src in seen if trimmed]
                    + [(t, 0, psn, src) for t, psn, src in sent])
    waiting: dict[tuple[int, int], int] = {}
    delays = []
    for t, kind, psn, src in events:
        if kind == 1:
            waiting[(src, psn)] = t
        elif (src, psn) in waiting:
            delays.append(t - waiting.pop((src, psn)))
    assert delays and not waiting
    assert max(delays) <= base_rtt, (max(delays), base_rtt)
