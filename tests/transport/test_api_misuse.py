"""Misuse of the API raises clear exceptions; remote refusals arrive as failed completions."""

from __future__ import annotations

import numpy as np
import pytest

from netweft.transport import (
    Access,
    EndpointClosedError,
    InvalidArgumentError,
    OutOfBoundsError,
    RemoteKey,
    Simulation,
    UnregisteredMemoryError,
    WorkRequestFailed,
)


@pytest.fixture
def ends():
    sim = Simulation(seed=5)
    a, b = sim.endpoint(), sim.endpoint()
    src = a.register(np.arange(4096, dtype=np.uint8))
    dst = b.register(np.zeros(4096, dtype=np.uint8))
    return sim, a, b, src, dst, a.connect(b.address)


def test_local_buffer_must_be_registered_here(ends):
    sim, a, b, src, dst, peer = ends
    with pytest.raises(UnregisteredMemoryError, match="register the buffer first"):
        peer.write(bytearray(10), dst.remote())
    with pytest.raises(UnregisteredMemoryError, match="another endpoint"):
        peer.write(dst, dst.remote())
    src.deregister()
    with pytest.raises(UnregisteredMemoryError, match="deregistered"):
        peer.write(src, dst.remote())
    with pytest.raises(EndpointClosedError):
        src.remote()


def test_offsets_outside_regions_are_refused_before_sending(ends):
    sim, a, b, src, dst, peer = ends
    with pytest.raises(OutOfBoundsError, match="outside its 4096 bytes"):
        peer.write(src, dst.remote(), remote_offset=4000, length=200)
    with pytest.raises(OutOfBoundsError):
        peer.write(src, dst.remote(), local_offset=4095, length=2)
    with pytest.raises(OutOfBoundsError):
        peer.read(src, dst.remote(), remote_offset=4097, length=0)
    with pytest.raises(InvalidArgumentError, match=">= 0"):
        peer.write(src, dst.remote(), length=-1)
    with pytest.raises(InvalidArgumentError, match="int"):
        peer.write(src, dst.remote(), remote_offset=1.5)
    with pytest.raises(OutOfBoundsError):
        peer.send(b"abc", offset=2, length=5)
    with pytest.raises(OutOfBoundsError):
        b.post_recv(bytearray(8), offset=4, length=8)
    assert a.outstanding == 0 and b.outstanding == 0


def test_remote_refusals_complete_with_errors(ends):
    sim, a, b, src, dst, peer = ends
    bogus = RemoteKey(dst.rkey ^ 0x5A5A5A, 4096)
    c = a.cq.wait_for(peer.write(src, bogus, length=100), timeout=5)
    assert not c.ok and c.error
    with pytest.raises(WorkRequestFailed, match="write"):
        c.check()
    read_only = b.register(bytes(4096), access=Access.LOCAL | Access.REMOTE_READ)
    c = a.cq.wait_for(peer.write(src, read_only.remote(), length=10), timeout=5)
    assert not c.ok
    assert a.cq.wait_for(peer.read(src, read_only.remote(), length=10), timeout=5).ok
    stale = dst.remote()
    dst.deregister()
    c = a.cq.wait_for(peer.write(src, stale, length=10), timeout=5)
    assert not c.ok
    assert b.stats()["remote_access_errors"] == 3


def test_message_longer_than_the_receive_buffer_fails(ends):
    sim, a, b, src, dst, peer = ends
    rid = b.post_recv(bytearray(10))
    sid = peer.send(b"x" * 100)
    assert not b.cq.wait_for(rid, timeout=5).ok
    assert not a.cq.wait_for(sid, timeout=5).ok


def test_closed_endpoint_refuses_everything(ends):
    sim, a, b, src, dst, peer = ends
    a.close()
    a.close()  # idempotent
    assert a.closed and not src.registered
    for call in (lambda: peer.write(src, dst.remote()), lambda: peer.send(b"x"),
                 lambda: a.post_recv(bytearray(4)), lambda: a.register(bytearray(4)),
                 lambda: a.connect(b.address), lambda: a.cq.wait(timeout=1), a.stats):
        with pytest.raises(EndpointClosedError, match="closed"):
            call()


def test_bad_arguments(ends):
    sim, a, b, src, dst, peer = ends
    with pytest.raises(InvalidArgumentError, match="delivery mode"):
        a.connect(b.address, mode="fast")
    with pytest.raises(InvalidArgumentError, match="ip, port"):
        a.connect("10.0.0.2")
    with pytest.raises(InvalidArgumentError, match="IPv4"):
        a.connect(("not-an-ip", 4793))
    with pytest.raises(InvalidArgumentError, match="buffer"):
        a.register(42)
    with pytest.raises(InvalidArgumentError, match="empty"):
        a.register(bytearray())
    with pytest.raises(InvalidArgumentError, match="contiguous"):
        a.register(np.zeros((8, 8), dtype=np.uint8)[:, ::2])
    with pytest.raises(InvalidArgumentError, match="writable"):
        a.register(b"read-only bytes")
    with pytest.raises(InvalidArgumentError, match="RemoteKey"):
        peer.write(src, 1234)
    with pytest.raises(InvalidArgumentError, match="writable"):
        a.post_recv(b"immutable")
    wid = peer.write(src, dst.remote(), length=10, wr_id=77)
    with pytest.raises(InvalidArgumentError, match="in flight"):
        peer.write(src, dst.remote(), length=10, wr_id=77)
    assert a.cq.wait_for(wid, timeout=5).ok
    with pytest.raises(InvalidArgumentError, match="no file descriptor"):
        a.fileno()
    with pytest.raises(InvalidArgumentError, match="unknown engine setting"):
        sim.endpoint(mtu_bytes=9000)
    with pytest.raises(InvalidArgumentError, match="engine"):
        sim.endpoint(window_pkts=3)


def test_region_views_and_numpy_dtypes(ends):
    sim, a, b, src, dst, peer = ends
    f = np.linspace(0, 1, 1000, dtype=np.float32)
    region = a.register(f)
    out = np.zeros(1000, dtype=np.float32)
    target = b.register(out)
    a.cq.wait_for(peer.write(region, target.remote()), timeout=5).check()
    assert np.array_equal(out, f)
    assert region.length == 4000 and region.buffer is f


def test_unreachable_peer_times_out_with_a_clear_status():
    sim = Simulation(seed=6)
    a = sim.endpoint(max_retries=3)
    src = a.register(bytearray(10_000))
    peer = a.connect(("10.9.9.9", 4793))  # nobody there
    c = a.cq.wait_for(peer.write(src, RemoteKey(1, 10_000)), timeout=60)
    assert c.status == -9 and "retrans" in c.error.lower()  # NW_ETIMEDOUT
    with pytest.raises(WorkRequestFailed, match="failed"):
        c.check()
    assert sim.counters["unroutable"] > 0
    assert a.stats()["pdc_failed"] == 1


def test_simulated_addresses_are_checked():
    sim = Simulation(seed=7)
    sim.endpoint("10.1.1.1")
    with pytest.raises(InvalidArgumentError, match="already in use"):
        sim.endpoint("10.1.1.1")
    with pytest.raises(InvalidArgumentError, match="port"):
        sim.endpoint("10.1.1.2", port=70000)
    with pytest.raises(InvalidArgumentError, match="IPv4"):
        sim.endpoint("host.example")
    with pytest.raises(InvalidArgumentError, match="pass ip= and port="):
        sim.endpoint(local_port=5)


def test_waiting_for_an_unknown_or_already_polled_request_is_an_error(ends):
    sim, a, b, src, dst, peer = ends
    wr = peer.write(src, dst.remote(), length=10)
    assert a.cq.wait_for(wr, timeout=5).ok
    with pytest.raises(InvalidArgumentError, match="already polled"):
        a.cq.wait_for(wr, timeout=5)
    with pytest.raises(InvalidArgumentError, match="wr_id 999"):
        a.cq.wait_all([999], timeout=5)


def test_too_many_outstanding_requests_raise_queue_full_then_recover():
    from netweft.transport import QueueFullError

    sim = Simulation(seed=8)
    a, b = sim.endpoint(max_wrs=4), sim.endpoint()
    src = a.register(bytearray(1000))
    dst = b.register(bytearray(1000))
    peer = a.connect(b.address)
    ids = [peer.write(src, dst.remote(), length=10) for _ in range(4)]
    with pytest.raises(QueueFullError, match="retry"):
        peer.write(src, dst.remote(), length=10)
    assert a.outstanding == 4  # the refused post left nothing behind
    assert all(c.ok for c in a.cq.wait_all(ids, timeout=5))
    assert a.cq.wait_for(peer.write(src, dst.remote(), length=10), timeout=5).ok
