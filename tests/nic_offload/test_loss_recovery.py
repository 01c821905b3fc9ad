"""Selective repeat under loss, in virtual time: a lost packet costs one
retransmission found from SACKs (not an RTO), a lost SES response is fetched
while other traffic flows, and the delay-based window keeps a shared queue
short. Every byte is checked; nothing here asserts a time."""

import os
import random

import numpy as np
import pytest
from engine_net import EngineNet, Impairments

from netweft.nic_offload import ffi, lib
from netweft.transport import Link, Simulation

RW = lib.NW_ACCESS_REMOTE_WRITE | lib.NW_ACCESS_REMOTE_READ
DATA_TYPES = {lib.NW_PDS_RUD, lib.NW_PDS_ROD}


def _pds_type(pkt: bytes) -> int:
    return pkt[0] >> 3


def _carries_response(pkt: bytes) -> bool:
    """An ACK_CC with an SES response riding on it (next_hdr, bits 10..7, is RSP)."""
    return _pds_type(pkt) == lib.NW_PDS_ACK_CC and ((pkt[0] << 8 | pkt[1]) >> 7) & 0xF == 4


class SeededLoss:
    """Drops each datagram with probability p and counts the data packets it dropped."""

    def __init__(self, seed: int, p: float) -> None:
        self.rng = random.Random(seed)
        self.p = p
        self.data_dropped = 0
        self.other_dropped = 0

    def __call__(self, pkt: bytes) -> bool:
        if self.rng.random() >= self.p:
            return False
        if _pds_type(pkt) in DATA_TYPES:
            self.data_dropped += 1
        else:
            self.other_dropped += 1
        return True


def _stream(net, a, b, *, messages: int, size: int, depth: int, mode: int = 0) -> None:
    """Writes `messages` messages with `depth` in flight; checks every byte of each."""
    data = [os.urandom(size) for _ in range(depth)]
    srcs = [net.register(a, size, lib.NW_ACCESS_LOCAL, d)[0] for d in data]
    dst, rkey = net.register(b, size * depth, RW)
    p = net.peer(a, b, mode)
    posted = 0

    def refill() -> bool:
        nonlocal posted
        while posted < messages and posted - len(a.completions) < depth:
            slot = posted % depth
            # Reuse a slot only once its previous write completed (depth bounds that).
            assert lib.nw_post_write(a.engine, p, posted, srcs[slot], size, rkey,
                                     slot * size) == 0
            posted += 1
        return len(a.completions) == messages

    refill()
    net.run(until=refill)
    assert sorted(c[0] for c in a.completions) == list(range(messages))
    assert all(c[1] == 0 for c in a.completions)
    for slot in range(depth):
        assert bytes(ffi.buffer(dst + slot * size, size)) == data[slot]


@pytest.mark.parametrize("seed", range(4))
def test_one_percent_loss_costs_one_retransmission_per_lost_packet(seed):
    loss = SeededLoss(seed, 0.01)
    net = EngineNet(seed=seed, imp=Impairments(delay_ns=200_000, drop_filter=loss))
    a = net.add("10.0.0.1", window_pkts=128)
    b = net.add("10.0.0.2", window_pkts=128)
    _stream(net, a, b, messages=24, size=100_000, depth=4)
    sa, sb = a.stats(), b.stats()
    assert loss.data_dropped > 5  # the seed really dropped data
    # Without reordering every retransmission beyond the lost ones would be spurious;
    # only a timeout after a lost final ACK may resend something that had arrived.
    assert loss.data_dropped <= sa["retransmits"] <= loss.data_dropped + sa["rto_fired"]
    assert sa["fast_retransmits"] >= sa["retransmits"] - sa["rto_fired"]
    assert sa["rto_fired"] <= 2  # only tail losses, never while SACKs flow
    assert sb["dup_pkts"] <= sa["rto_fired"]
    assert sb["placed_bytes"] == 24 * 100_000  # every payload byte placed exactly once


def test_losses_in_mid_stream_are_repaired_from_sacks_without_a_timeout():
    doomed = set()

    def drop_some(pkt: bytes) -> bool:
        # Every 37th data packet's first transmission (the retransmission carries RETX).
        if _pds_type(pkt) in DATA_TYPES:
            drop_some.count += 1
            if drop_some.count % 37 == 0 and len(doomed) < 20:
                doomed.add(drop_some.count)
                return True
        return False

    drop_some.count = 0
    net = EngineNet(seed=5, imp=Impairments(delay_ns=200_000, drop_filter=drop_some))
    a = net.add("10.0.0.1", window_pkts=128)
    b = net.add("10.0.0.2", window_pkts=128)
    _stream(net, a, b, messages=20, size=120_000, depth=4)
    sa = a.stats()
    assert len(doomed) == 20
    assert sa["rto_fired"] == 0
    assert sa["retransmits"] == sa["fast_retransmits"] == 20
    assert b.stats()["dup_pkts"] == 0


def test_a_lost_response_is_fetched_while_other_messages_flow():
    seen, lost = [], []

    def drop_some_responses(pkt: bytes) -> bool:
        # Lose the 5th, 12th and 20th ACK that carries a response (mid-stream).
        if _carries_response(pkt):
            seen.append(pkt)
            if len(seen) in (5, 12, 20):
                lost.append(pkt)
                return True
        return False

    net = EngineNet(seed=9, imp=Impairments(delay_ns=50_000, rate_bps=1e9,
                                               drop_filter=drop_some_responses))
    a = net.add("10.0.0.1", window_pkts=64)
    b = net.add("10.0.0.2", window_pkts=64)
    _stream(net, a, b, messages=40, size=60_000, depth=4)
    sa = a.stats()
    assert len(lost) == 3
    assert sa["rsp_probes"] >= 1
    # The probe timer is not postponed by other messages' progress, so the stuck
    # message needs no retransmission timeout (the pipeline never drains).
    assert sa["rto_fired"] == 0 and sa["retransmits"] == 0


def _incast(cc_mode: str) -> tuple[Simulation, list]:
    link = Link(rate_bps=10e9, delay_ns=5_000, queue_pkts=200, ecn_threshold_pkts=4)
    sim = Simulation(seed=3, link=link, mtu=8972, window_pkts=512, cc_mode=cc_mode,
                     link_rate_mbps=10_000, cc_base_rtt_ns=30_000)
    dst = sim.endpoint()
    senders = [sim.endpoint() for _ in range(2)]
    size = 2_000_000
    buf = np.zeros(size * len(senders), dtype=np.uint8)
    region = dst.register(buf)
    datas = []
    for i, ep in enumerate(senders):
        data = np.frombuffer(np.random.default_rng(i).bytes(size), np.uint8).copy()
        datas.append(data)
        ep.connect(dst.address).write(ep.register(data), region.remote(), remote_offset=i * size)
    for ep in senders:
        ep.cq.wait(timeout=10).check()
    for i, data in enumerate(datas):
        assert np.array_equal(buf[i * size:(i + 1) * size], data)
    return sim, senders


def test_nscc_window_keeps_an_incast_queue_short():
    sim, senders = _incast("nscc")
    assert sum(ep.stats()["cwnd_cuts"] for ep in senders) > 0
    assert sim.counters["ce_marks"] > 0
    assert sim.counters["queue_drops"] == 0
    # The same incast with a fixed window overflows the 200-packet queue.
    fixed, fixed_senders = _incast("none")
    assert sum(ep.stats()["cwnd_cuts"] for ep in fixed_senders) == 0
    assert fixed.counters["queue_drops"] > 0


def test_cc_min_pkts_is_checked():
    cfg = ffi.new("nw_config_t *")
    lib.nw_config_default(cfg)
    cfg.cc_min_pkts = 0
    assert b"cc_min_pkts" in ffi.string(lib.nw_config_check(cfg))
    cfg.cc_min_pkts = cfg.window_pkts + 1
    assert b"cc_min_pkts" in ffi.string(lib.nw_config_check(cfg))


def test_a_spurious_timeout_is_undone_and_the_same_stall_does_not_fire_again():
    # The receiver "stalls" twice (its host does not run it): the ACKs it sends
    # during a stall leave only at its end. The first stall outlasts the sender's
    # 1 ms RTO by a little, so the original's ACK arrives right after the resend;
    # the second (1.9 ms) would fire the RTO again unless the first taught the PDC.
    stalls = [(2_000_000, 3_040_000), (6_000_000, 7_900_000)]

    def hold(pkt: bytes, now: int) -> int:
        if _pds_type(pkt) == lib.NW_PDS_ACK_CC:
            for start, end in stalls:
                if start <= now < end:
                    return end
        return 0

    net = EngineNet(seed=2, imp=Impairments(delay_ns=20_000, rate_bps=10e9, hold_until=hold))
    a = net.add("10.0.0.1", window_pkts=64)
    b = net.add("10.0.0.2", window_pkts=64)
    _stream(net, a, b, messages=120, size=60_000, depth=4)
    sa = a.stats()
    assert net.now > stalls[1][1]  # the transfer outlived both stalls
    assert sa["spurious_rtos"] == 1  # the first stall's RTO was recognised as spurious ...
    assert sa["rto_fired"] == 1  # ... and raised the floor above the second stall
    assert sa["retransmits"] == 1 and b.stats()["dup_pkts"] == 1


@pytest.mark.parametrize("per_packet", [0, 1])
def test_rto_per_packet_resends_every_packet_out_for_a_whole_timeout(per_packet):
    # The first packet of a 9-packet message arrives; the first transmissions of the
    # other 8, the tail, are lost, so no SACK reveals them and only the timer can. The
    # first packet's ACK restarts the timer, so when it fires all 8 have been out for a
    # whole timeout. With rto_per_packet each of them has timed out, as its own timer
    # says in UEC's htsim model, and one RTO resends them all; by default the timeout
    # resends the oldest alone (a probe), and the 8 take 8 timeouts.
    lost_tail = 8
    count = 0

    def drop_tail(pkt: bytes) -> bool:
        nonlocal count
        if _pds_type(pkt) not in DATA_TYPES:
            return False
        count += 1
        return 2 <= count <= 1 + lost_tail  # the originals; the resends come after

    net = EngineNet(seed=3, imp=Impairments(delay_ns=20_000, drop_filter=drop_tail))
    a = net.add("10.0.0.1", window_pkts=64, rto_per_packet=per_packet)
    b = net.add("10.0.0.2", window_pkts=64)
    _stream(net, a, b, messages=1, size=(1 + lost_tail) * lib.nw_max_payload(a.engine), depth=1)
    sa = a.stats()
    assert count == 1 + 2 * lost_tail  # every lost packet resent once, nothing else
    assert sa["rto_fired"] == (1 if per_packet else lost_tail)
    assert sa["retransmits"] == lost_tail and sa["fast_retransmits"] == 0
    assert b.stats()["dup_pkts"] == 0


def test_rto_per_packet_is_checked():
    cfg = ffi.new("nw_config_t *")
    lib.nw_config_default(cfg)
    assert cfg.rto_per_packet == 0  # off by default: a timeout resends the oldest alone
    cfg.rto_per_packet = 2
    assert ffi.string(lib.nw_config_check(cfg)).decode() == "rto_per_packet: must be 0 or 1"
