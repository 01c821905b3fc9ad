"""Reed-Solomon coding in the C engine, with losses chosen packet by packet.

Each test drives two engines through the in-memory network, drops or delays
exactly the packets it names (by PSN and kind) and checks every byte, the
exactly-once placement (an overwrite after completion survives whatever
arrives late) and the coding counters."""

from __future__ import annotations

import os

import pytest
from engine_net import EngineNet, Impairments

from netweft.nic_offload import ffi, lib

RW = lib.NW_ACCESS_REMOTE_WRITE | lib.NW_ACCESS_REMOTE_READ
MTU = 1472


def _parse(pkt: bytes):
    out = ffi.new("nw_wire_pkt_t *")
    assert lib.nw_wire_parse(pkt, len(pkt), out) > 0
    return out


def _is_request(pkt: bytes) -> bool:
    return pkt[0] >> 3 in (lib.NW_PDS_RUD, lib.NW_PDS_ROD)


def _kind(pkt: bytes) -> str:
    """"parity", "data" or "other" (ACKs, NACKs, CTRL)."""
    if not _is_request(pkt):
        return "other"
    return "parity" if _parse(pkt).pds.next_hdr == lib.NW_NH_NW_PARITY else "data"


class DropFirst:
    """Drops the first transmission of the data/parity packets at the given positions
    (0-based, counted separately for data and parity, in sending order)."""

    def __init__(self, data=(), parity=()) -> None:
        self.want = {"data": set(data), "parity": set(parity)}
        self.seen = {"data": 0, "parity": 0}
        self.dropped: list[tuple[str, int]] = []

    def __call__(self, pkt: bytes) -> bool:
        kind = _kind(pkt)
        if kind == "other":
            return False
        if _parse(pkt).pds.flags & lib.NW_PDS_F_RETX:
            return False
        i = self.seen[kind]
        self.seen[kind] += 1
        if i in self.want[kind]:
            self.dropped.append((kind, _parse(pkt).pds.psn))
            return True
        return False


def _transfer(net, a, b, size: int, *, k: int, m: int, messages: int = 1):
    """Writes `messages` messages of `size` bytes with coding (k, m); returns (src, dst)."""
    data = os.urandom(size * messages)
    src, _ = net.register(a, size * messages, lib.NW_ACCESS_LOCAL, data)
    dst, rkey = net.register(b, size * messages, RW)
    peer = net.peer(a, b)
    assert lib.nw_peer_set_coding(a.engine, peer, k, m) == 0
    for i in range(messages):
        assert lib.nw_post_write(a.engine, peer, i, src + i * size, size, rkey, i * size) == 0
    net.run(until=lambda: len(a.completions) == messages)
    assert sorted(c[0] for c in a.completions) == list(range(messages))
    assert all(c[1] == 0 for c in a.completions)
    assert bytes(ffi.buffer(dst, size * messages)) == data
    return data, dst


def _settle_and_check_once(net, b, dst, total: int) -> None:
    """After completion: an overwrite survives everything still in flight (nothing is
    placed twice) and the receiver placed exactly `total` bytes."""
    ffi.memmove(dst, b"\xa5" * total, total)
    net.run()
    assert bytes(ffi.buffer(dst, total)) == b"\xa5" * total
    assert b.stats()["placed_bytes"] == total


def _net(drop=None, **imp) -> tuple[EngineNet, object, object]:
    net = EngineNet(seed=5, imp=Impairments(drop_filter=drop, **imp))
    return net, net.add("10.0.0.1", mtu=MTU), net.add("10.0.0.2", mtu=MTU)


def test_losses_up_to_m_per_block_are_decoded_without_retransmission():
    drop = DropFirst(data=[1, 3, 9])  # block 0 (data 0..7) loses two, block 1 loses one
    net, a, b = _net(drop)
    payload = lib.nw_max_payload(a.engine) - lib.NW_WIRE_PARITY_LEN - 4
    size = 16 * payload
    _, dst = _transfer(net, a, b, size, k=8, m=2)
    sa, sb = a.stats(), b.stats()
    assert sa["retransmits"] == 0 and sa["rto_fired"] == 0
    assert sa["ec_blocks_sent"] == 2 and sa["ec_parity_pkts_out"] == 4
    assert sa["ec_parity_bytes_out"] > 0
    assert sb["ec_pkts_recovered"] == 3 and sb["ec_blocks_recovered"] == 2
    _settle_and_check_once(net, b, dst, size)


def test_more_losses_than_parity_are_repaired_by_selective_repeat():
    drop = DropFirst(data=[0, 2, 5], parity=[1])  # 3 data + 1 parity lost, m = 2
    net, a, b = _net(drop)
    size = 8 * (lib.nw_max_payload(a.engine) - 16)
    _, dst = _transfer(net, a, b, size, k=8, m=2)
    sa, sb = a.stats(), b.stats()
    assert sa["ec_retransmits"] >= 1  # parity alone could not repair the block
    assert sb["ec_blocks_recovered"] + sb["ec_blocks_repaired"] == 1
    _settle_and_check_once(net, b, dst, size)


def test_all_parity_lost_is_counted_and_acknowledged_by_empty_resends():
    drop = DropFirst(parity=[0, 1])
    net, a, b = _net(drop)
    size = 4 * (lib.nw_max_payload(a.engine) - 16)
    _, dst = _transfer(net, a, b, size, k=4, m=2)
    net.run()
    sa, sb = a.stats(), b.stats()
    assert sa["ec_retransmits"] == 0  # data never resent
    # The first parity PSN comes back as an empty parity header; it names the block,
    # so the receiver counts the other parity PSN as received too.
    assert sa["retransmits"] == 1
    assert sb["ec_parity_pkts_in"] == 1 and sb["ec_pkts_recovered"] == 0
    _settle_and_check_once(net, b, dst, size)


def test_late_original_after_decoding_is_a_duplicate_and_never_placed_again():
    held = {"psn": None}

    def hold(pkt: bytes, now: int) -> int:
        # Delays the second data packet's first transmission by 50 ms: the block is
        # decoded long before it arrives.
        if _kind(pkt) == "data" and not _parse(pkt).pds.flags & lib.NW_PDS_F_RETX:
            psn = _parse(pkt).pds.psn
            if held["psn"] is None and _parse(pkt).ses.message_offset > 0:
                held["psn"] = psn
            if psn == held["psn"]:
                return now + 50_000_000
        return 0

    net, a, b = _net(hold_until=hold)
    size = 4 * (lib.nw_max_payload(a.engine) - 16)
    _, dst = _transfer(net, a, b, size, k=4, m=1)
    assert b.stats()["ec_pkts_recovered"] == 1
    dups = b.stats()["dup_pkts"]
    _settle_and_check_once(net, b, dst, size)
    assert b.stats()["dup_pkts"] == dups + 1  # the original arrived, and was dropped


def test_small_messages_share_blocks_across_messages():
    drop = DropFirst(data=[2, 6])
    net, a, b = _net(drop)
    _, dst = _transfer(net, a, b, 300, k=8, m=2, messages=12)
    sa, sb = a.stats(), b.stats()
    assert sa["ec_blocks_sent"] <= 3  # 12 one-packet messages, not 12 blocks
    assert sb["ec_pkts_recovered"] == 2 and sa["retransmits"] == 0
    _settle_and_check_once(net, b, dst, 300 * 12)


def test_coding_off_again_and_invalid_settings():
    net, a, b = _net()
    peer = net.peer(a, b)
    assert lib.nw_peer_set_coding(a.engine, peer, 0, 0) == 0
    for k, m in ((0, 1), (1, 0), (33, 2), (4, 9)):
        assert lib.nw_peer_set_coding(a.engine, peer, k, m) == lib.NW_EINVAL
    rod = net.peer(a, b, lib.NW_MODE_ROD)
    assert lib.nw_peer_set_coding(a.engine, rod, 4, 2) == lib.NW_EINVAL
    assert lib.nw_peer_set_coding(a.engine, 999, 4, 2) == lib.NW_ENOPEER
    path = ffi.new("nw_path_stats_t *")
    assert lib.nw_peer_path(a.engine, peer, path) == 0 and path.k == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_loss_reorder_duplication_and_corruption(seed):
    net = EngineNet(seed=seed, imp=Impairments(loss=0.08, dup=0.05, reorder=0.1,
                                               reorder_ns=30_000, corrupt=0.03))
    a, b = net.add("10.0.0.1", mtu=MTU), net.add("10.0.0.2", mtu=MTU)
    size = 200_000
    _, dst = _transfer(net, a, b, size, k=8, m=2, messages=3)
    assert b.stats()["ec_pkts_recovered"] > 0
    _settle_and_check_once(net, b, dst, size * 3)


def test_parity_that_contradicts_its_block_is_counted_not_decoded():
    """A parity header whose PSN does not match base + k + index is dropped as parity."""
    def corrupt_parity(pkt: bytes) -> bytes:
        if _kind(pkt) == "parity":
            b = bytearray(pkt)
            b[12 + 4] = (b[12 + 4] % 8) + 1 if b[12 + 4] != 9 else 3  # k
            return bytes(b)
        return pkt

    net = EngineNet(seed=9, imp=Impairments(mutate=corrupt_parity,
                                            drop_filter=DropFirst(data=[1])))
    a, b = net.add("10.0.0.1", mtu=MTU), net.add("10.0.0.2", mtu=MTU)
    size = 4 * (lib.nw_max_payload(a.engine) - 16)
    _, dst = _transfer(net, a, b, size, k=4, m=2)
    assert b.stats()["drop_malformed"] > 0 and b.stats()["ec_pkts_recovered"] == 0
    _settle_and_check_once(net, b, dst, size)


def test_coding_survives_a_remote_close_of_a_named_peer():
    """A CTRL CLOSE from the remote resets a named PDC in place; its code stays."""
    net, a, b = _net()
    peer = net.peer(a, b)
    assert lib.nw_peer_set_coding(a.engine, peer, 8, 2) == 0
    data = os.urandom(20_000)
    src, _ = net.register(a, len(data), lib.NW_ACCESS_LOCAL, data)
    _, rkey = net.register(b, len(data), RW)
    assert lib.nw_post_write(a.engine, peer, 1, src, len(data), rkey, 0) == 0
    net.run(until=lambda: len(a.completions) == 1)
    for handle in range(4):  # b's passive PDC for a: closing it sends a CTRL CLOSE
        if lib.nw_peer_close(b.engine, handle) == 0:
            break
    net.run()
    path = ffi.new("nw_path_stats_t *")
    assert lib.nw_peer_path(a.engine, peer, path) == 0
    assert (path.k, path.m) == (8, 2) and a.stats()["pdc_closed"] >= 1
