"""Two C engines against each other in virtual time under seeded impairments:
every byte delivered is checked, every work request completes exactly once,
and the engine places each payload byte exactly once (placed_bytes)."""

import os
import random

import pytest
from engine_net import EngineNet, Impairments

from netweft.nic_offload import ffi, lib

RUD, ROD, UUD = lib.NW_MODE_RUD, lib.NW_MODE_ROD, lib.NW_MODE_UUD
RW = lib.NW_ACCESS_REMOTE_WRITE | lib.NW_ACCESS_REMOTE_READ

IMPAIRMENTS = {
    "clean": Impairments(),
    "loss": Impairments(loss=0.05),
    "duplication": Impairments(dup=0.10),
    "reordering": Impairments(reorder=0.2, reorder_ns=100_000),
    "corruption": Impairments(corrupt=0.05),
    "delay": Impairments(delay_ns=5_000_000),
    "everything": Impairments(loss=0.03, dup=0.05, reorder=0.1, corrupt=0.03),
}


def pair(seed, imp, **cfg):
    net = EngineNet(seed=seed, imp=imp)
    a = net.add("10.0.0.1", **cfg)
    b = net.add("10.0.0.2", **cfg)
    return net, a, b


@pytest.mark.parametrize("mode", [RUD, ROD], ids=["RUD", "ROD"])
@pytest.mark.parametrize("name", list(IMPAIRMENTS))
def test_rma_write_and_read_integrity(name, mode):
    net, a, b = pair(11, IMPAIRMENTS[name])
    size = 600_000
    data = os.urandom(size)
    src, _ = net.register(a, size, lib.NW_ACCESS_LOCAL, data)
    dst, rkey = net.register(b, size + 100, RW)
    p = net.peer(a, b, mode)
    # Two writes into disjoint halves plus an offset: placement by offset.
    half = size // 2
    assert lib.nw_post_write(a.engine, p, 1, src, half, rkey, 100) == 0
    assert lib.nw_post_write(a.engine, p, 2, src + half, size - half, rkey, 100 + half) == 0
    net.run(until=lambda: len(a.completions) == 2)
    assert sorted(c[:4] for c in a.completions) == [
        (1, 0, lib.NW_OP_WRITE, half),
        (2, 0, lib.NW_OP_WRITE, size - half),
    ]
    assert bytes(ffi.buffer(dst, size + 100))[100:] == data
    assert b.stats()["placed_bytes"] == size  # exactly once, despite dups and retransmits

    back = ffi.new("uint8_t[]", size)
    assert lib.nw_post_read(a.engine, p, 3, back, size, rkey, 100) == 0
    net.run(until=lambda: len(a.completions) == 3)
    assert a.completions[2][:4] == (3, 0, lib.NW_OP_READ, size)
    assert bytes(ffi.buffer(back, size)) == data
    assert a.stats()["placed_bytes"] == size
    net.run()  # drain: nothing further completes
    assert len(a.completions) == 3 and b.completions == []


@pytest.mark.parametrize("name", list(IMPAIRMENTS))
def test_send_recv_each_message_exactly_once(name):
    net, a, b = pair(5, IMPAIRMENTS[name])
    p = net.peer(a, b, RUD)
    rng = random.Random(3)
    msgs = [os.urandom(rng.choice([0, 1, 100, 1416, 1417, 5000, 30_000])) for _ in range(40)]
    bufs = []
    for i in range(len(msgs)):
        buf = ffi.new("uint8_t[]", 30_000)
        bufs.append(buf)
        assert lib.nw_post_recv(b.engine, 1000 + i, buf, 30_000) == 0
    for i, m in enumerate(msgs):
        assert lib.nw_post_send(a.engine, p, i, m, len(m)) == 0
    net.run(until=lambda: len(a.completions) == len(msgs) and len(b.completions) == len(msgs))
    assert sorted(c[0] for c in a.completions) == list(range(len(msgs)))
    assert all(c[1] == 0 and c[2] == lib.NW_OP_SEND for c in a.completions)
    # Each receive buffer holds one whole message; every message arrived once.
    got = []
    for wr_id, status, op, nbytes, _peer, _mode in b.completions:
        assert status == 0 and op == lib.NW_OP_RECV
        got.append(bytes(ffi.buffer(bufs[wr_id - 1000], nbytes)))
    assert sorted(got) == sorted(msgs)
    assert b.stats()["placed_bytes"] == sum(len(m) for m in msgs)


@pytest.mark.parametrize("name", ["clean", "loss", "reordering", "everything"])
def test_rod_delivers_in_order(name):
    net, a, b = pair(8, IMPAIRMENTS[name])
    p = net.peer(a, b, ROD)
    msgs = [i.to_bytes(4, "big") + os.urandom(3000) for i in range(30)]
    bufs = [ffi.new("uint8_t[]", 4000) for _ in msgs]
    for i, buf in enumerate(bufs):
        assert lib.nw_post_recv(b.engine, i, buf, 4000) == 0
    for i, m in enumerate(msgs):
        assert lib.nw_post_send(a.engine, p, i, m, len(m)) == 0
    net.run(until=lambda: len(b.completions) == len(msgs) and len(a.completions) == len(msgs))
    # Receive buffers are consumed in order and hold the messages in order;
    # the sender's completions come back in posting order too.
    assert [c[0] for c in b.completions] == list(range(len(msgs)))
    for i, buf in enumerate(bufs):
        assert bytes(ffi.buffer(buf, len(msgs[i]))) == msgs[i]
    assert [c[0] for c in a.completions] == list(range(len(msgs)))
    if name != "clean":
        st = b.stats()
        assert st["drop_unordered"] + st["rod_held"] + st["dup_pkts"] > 0


def test_uud_sends_without_retransmission_and_reports_loss():
    net, a, b = pair(2, Impairments(loss=0.2))
    p = net.peer(a, b, UUD)
    n = 60
    bufs = [ffi.new("uint8_t[]", 8000) for _ in range(n)]
    for i, buf in enumerate(bufs):
        assert lib.nw_post_recv(b.engine, i, buf, 8000) == 0
    msgs = [os.urandom(4000) for _ in range(n)]
    for i, m in enumerate(msgs):
        assert lib.nw_post_send(a.engine, p, i, m, len(m)) == 0
    net.run()
    sa, sb = a.stats(), b.stats()
    assert sa["retransmits"] == 0 and sa["acks_in"] == 0 and sb["acks_out"] == 0
    assert len(a.completions) == n and all(c[1] == 0 for c in a.completions)
    ok = [c for c in b.completions if c[1] == 0]
    lost = [c for c in b.completions if c[1] == lib.NW_ELOST]
    assert ok and lost and len(ok) + len(lost) == len(b.completions)
    delivered = {bytes(ffi.buffer(bufs[c[0]], 4000)) for c in ok}
    assert delivered <= set(msgs) and len(delivered) == len(ok)
    assert all(c[3] < 4000 for c in lost)  # bytes that did arrive


def test_uud_write_places_what_arrives_and_never_retransmits():
    net, a, b = pair(6, Impairments())
    p = net.peer(a, b, UUD)
    size = 10 * 1416
    data = os.urandom(size)
    src, _ = net.register(a, size, lib.NW_ACCESS_LOCAL, data)
    dst, rkey = net.register(b, size, lib.NW_ACCESS_REMOTE_WRITE)
    assert lib.nw_post_write(a.engine, p, 1, src, size, rkey, 0) == 0
    net.run()
    assert a.completions == [(1, 0, lib.NW_OP_WRITE, size, p, UUD)]
    assert bytes(ffi.buffer(dst, size)) == data
    net.imp.loss = 1.0
    assert lib.nw_post_write(a.engine, p, 2, src, size, rkey, 0) == 0
    net.run()
    assert a.completions[1][:2] == (2, 0)  # UUD: completes once sent, whatever happens
    assert a.stats()["retransmits"] == 0 and b.stats()["acks_out"] == 0


def test_uud_duplicates_are_suppressed():
    net, a, b = pair(4, Impairments(dup=1.0))
    p = net.peer(a, b, UUD)
    buf = ffi.new("uint8_t[]", 8000)
    assert lib.nw_post_recv(b.engine, 1, buf, 8000) == 0
    assert lib.nw_post_recv(b.engine, 2, buf, 8000) == 0
    msg = os.urandom(3000)
    assert lib.nw_post_send(a.engine, p, 7, msg, len(msg)) == 0
    net.run()
    assert [c[:4] for c in b.completions] == [(1, 0, lib.NW_OP_RECV, 3000)]
    assert bytes(ffi.buffer(buf, 3000)) == msg
    assert b.stats()["dup_pkts"] >= 1


def test_both_sides_initiate_over_one_pdc_pair():
    net, a, b = pair(9, Impairments(loss=0.05))
    size = 50_000
    da, db = os.urandom(size), os.urandom(size)
    sa, _ = net.register(a, size, lib.NW_ACCESS_LOCAL, da)
    sb, _ = net.register(b, size, lib.NW_ACCESS_LOCAL, db)
    ma, ka = net.register(a, size, RW)
    mb, kb = net.register(b, size, RW)
    pa, pb = net.peer(a, b), net.peer(b, a)
    assert lib.nw_post_write(a.engine, pa, 1, sa, size, kb, 0) == 0
    assert lib.nw_post_write(b.engine, pb, 2, sb, size, ka, 0) == 0
    net.run(until=lambda: a.completions and b.completions)
    assert bytes(ffi.buffer(mb, size)) == da and bytes(ffi.buffer(ma, size)) == db
    assert a.stats()["pdc_opened"] == 1 and b.stats()["pdc_opened"] == 1
