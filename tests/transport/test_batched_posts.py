"""``Peer.write_many`` and ``CompletionQueue.poll_batch``: many small writes in one
call and their completions as one array, exactly once, in every driver and I/O mode."""

from __future__ import annotations

import random

import numpy as np
import pytest

from netweft.nic_offload import ffi
from netweft.transport import InvalidArgumentError, OutOfBoundsError, udp_endpoint
from netweft.transport.completion_queue import completion_dtype

from .sim_helpers import pair, pattern


def _reap(ep, n, timeout=30.0):
    """Every completion of n work requests, as wr_id -> status."""
    got: dict[int, int] = {}
    while len(got) < n:
        batch = ep.cq.poll_batch()
        if not len(batch):
            c = ep.cq.wait(timeout=timeout)
            got[c.wr_id] = c.status
            continue
        for w, status in zip(batch["wr_id"].tolist(), batch["status"].tolist(), strict=True):
            assert w not in got  # exactly once
            got[w] = status
    return got


def _write_slots(a, b, n=48, size=100):
    data = pattern(n * size, n)
    src = a.register(data)
    dst_buf = np.zeros(n * size, dtype=np.uint8)
    dst = b.register(dst_buf)
    b.connect(a.address)  # replies to a's listen port on real sockets
    peer = a.connect(b.address)
    order = np.random.default_rng(1).permutation(n)  # slot i goes to remote slot order[i]
    ids = peer.write_many(src, dst.remote(), order * size, length=size,
                          local_offsets=np.arange(n) * size)
    assert len(ids) == n and len(set(ids.tolist())) == n
    return src, dst_buf, data, ids, order, size


def test_write_many_in_virtual_time_with_loss():
    sim, a, b = pair("loss", seed=4)
    _, dst_buf, data, ids, order, size = _write_slots(a, b)
    got = _reap(a, len(ids))
    assert sorted(got) == sorted(ids.tolist()) and set(got.values()) == {0}
    for i, slot in enumerate(order):
        assert np.array_equal(dst_buf[slot * size:(slot + 1) * size],
                              data[i * size:(i + 1) * size])
    assert a.outstanding == 0


@pytest.mark.parametrize("io", ["thread", "inline", "busy"])
def test_write_many_over_loopback_sockets(io):
    net = f"127.{random.randrange(1, 250)}.{random.randrange(1, 250)}"  # parallel suites
    with udp_endpoint((f"{net}.1", 0), mtu=8972, loss=0.05, io=io) as a, \
            udp_endpoint((f"{net}.2", 0), mtu=8972, loss=0.05, io=io) as b:
        _, dst_buf, data, ids, order, size = _write_slots(a, b, n=200)
        got = _reap(a, len(ids))
        assert sorted(got) == sorted(ids.tolist()) and set(got.values()) == {0}
        for i, slot in enumerate(order):
            assert bytes(dst_buf[slot * size:(slot + 1) * size]) == bytes(
                data[i * size:(i + 1) * size])
        assert a.outstanding == 0


def test_write_many_checks_every_range_before_posting():
    sim, a, b = pair("none")
    src = a.register(np.zeros(1000, dtype=np.uint8))
    dst = b.register(np.zeros(1000, dtype=np.uint8))
    peer = a.connect(b.address)
    with pytest.raises(OutOfBoundsError):
        peer.write_many(src, dst.remote(), [0, 100, 950], length=100)
    with pytest.raises(OutOfBoundsError):
        peer.write_many(src, dst.remote(), [0, 100], length=100, local_offsets=[0, 901])
    with pytest.raises(InvalidArgumentError, match="must be >= 0"):
        peer.write_many(src, dst.remote(), [0, -1], length=10)
    with pytest.raises(InvalidArgumentError, match="local_offsets has 1 entries"):
        peer.write_many(src, dst.remote(), [0, 10], length=10, local_offsets=[0])
    with pytest.raises(InvalidArgumentError, match="flat sequence of ints"):
        peer.write_many(src, dst.remote(), [0.5], length=10)
    assert a.outstanding == 0  # nothing was posted
    assert len(peer.write_many(src, dst.remote(), [], length=10)) == 0


def test_poll_batch_layout_is_the_engines_completion():
    dt = completion_dtype()
    assert dt.itemsize == ffi.sizeof("nw_completion_t")
    for name, c_name in (("wr_id", "wr_id"), ("nbytes", "bytes"), ("status", "status"),
                         ("peer", "peer"), ("opcode", "opcode"), ("mode", "mode")):
        assert dt.fields[name][1] == ffi.offsetof("nw_completion_t", c_name)


def test_poll_batch_returns_completions_a_wait_for_put_aside():
    sim, a, b = pair("none")
    src = a.register(np.ones(64, dtype=np.uint8))
    dst = b.register(np.zeros(640, dtype=np.uint8))
    peer = a.connect(b.address)
    ids = peer.write_many(src, dst.remote(), np.arange(10) * 64, length=64).tolist()
    a.cq.wait_for(ids[-1], timeout=1.0).check()  # the others are stashed as they arrive
    rest = _reap(a, len(ids) - 1)
    assert sorted(rest) == ids[:-1]
    with pytest.raises(InvalidArgumentError):
        a.cq.poll_batch(0)
