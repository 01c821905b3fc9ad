"""Peer.close(): cancelled work, an unusable handle, the remote's PDC freed, reconnect."""

from __future__ import annotations

import os
import random
import socket
import time

import numpy as np
import pytest

from netweft.transport import (
    EndpointClosedError,
    PeerClosedError,
    Simulation,
    WorkRequestFailed,
    udp_endpoint,
)

SIZE = 4 << 20  # big enough that a write is still in flight right after it is posted


def _pattern(size: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)


def _close_with_work_in_flight(a, b, address=None) -> None:
    """Post a large write and a send, close the peer at once: both complete cancelled.

    ``address`` (default b's) may name a silent port, so nothing can complete first."""
    src = a.register(_pattern(SIZE, 1))
    dst = b.register(np.zeros(SIZE, np.uint8))
    peer = a.connect(address or b.address)
    wr_write = peer.write(src, dst.remote())
    wr_send = peer.send(b"never delivered")
    peer.close()
    assert peer.closed
    for wr in (wr_write, wr_send):
        done = a.cq.wait_for(wr, timeout=10)
        assert done.cancelled and not done.ok
        with pytest.raises(WorkRequestFailed, match="cancel"):
            done.check()
    assert a.outstanding == 0
    with pytest.raises(PeerClosedError, match="closed"):
        peer.write(src, dst.remote())
    with pytest.raises(PeerClosedError):
        peer.send(b"x")
    with pytest.raises(PeerClosedError):
        peer.read(src, dst.remote())
    peer.close()  # twice is harmless
    assert a.stats()["pdc_closed"] == 1


def _reconnect_and_verify(a, b) -> None:
    """After a close, connect() gives a new usable peer and every byte arrives."""
    data = _pattern(256 << 10, 2)
    src = a.register(data)
    out = np.zeros(data.size, np.uint8)
    dst = b.register(out)
    peer = a.connect(b.address)
    assert not peer.closed
    a.cq.wait_for(peer.write(src, dst.remote()), timeout=10).check()
    assert np.array_equal(out, data)
    return peer


# ---- simulation ----

def test_sim_close_with_work_in_flight_cancels_it():
    sim = Simulation(seed=11)
    a, b = sim.endpoint(), sim.endpoint()
    _close_with_work_in_flight(a, b)


def test_sim_remote_frees_its_pdc_and_reconnect_works():
    sim = Simulation(seed=12)
    a, b = sim.endpoint(), sim.endpoint()
    old = _reconnect_and_verify(a, b)
    assert b.stats()["pdc_closed"] == 0
    old.close()
    sim.run_until_idle(1.0)
    assert b.stats()["pdc_closed"] == 1  # the CTRL CLOSE reached b
    new = _reconnect_and_verify(a, b)
    assert new is not old
    rid = b.post_recv(bytearray(16))
    a.cq.wait_for(new.send(b"after reconnect"), timeout=10).check()
    assert bytes(b.cq.wait_for(rid, timeout=10).check().data) == b"after reconnect"


def test_sim_endpoint_close_closes_its_peers():
    sim = Simulation(seed=13)
    a, b = sim.endpoint(), sim.endpoint()
    peers = [a.connect(b.address, mode) for mode in ("rud", "rod")]
    for peer in peers:
        rid = b.post_recv(bytearray(8))
        a.cq.wait_for(peer.send(b"hello"), timeout=10).check()
        assert bytes(b.cq.wait_for(rid, timeout=10).check().data) == b"hello"
    a.close()
    assert all(p.closed for p in peers)
    with pytest.raises(EndpointClosedError):
        peers[0].send(b"x")
    peers[0].close()  # harmless after the endpoint closed
    sim.run_until_idle(1.0)
    assert b.stats()["pdc_closed"] == 2


def test_sim_peer_of_another_endpoint_is_refused():
    sim = Simulation(seed=14)
    a, b, c = sim.endpoint(), sim.endpoint(), sim.endpoint()
    peer = a.connect(b.address)
    with pytest.raises(Exception, match="this endpoint"):
        c._close_peer(peer)
    assert not peer.closed


# ---- real UDP sockets (the C I/O thread) ----

@pytest.fixture
def loop_pair():
    r = random.Random(os.getpid() ^ 0x5EED)
    base = f"127.{r.randrange(1, 250)}.{r.randrange(1, 250)}"
    a = udp_endpoint((f"{base}.1", 0), mtu=8972)
    b = udp_endpoint((f"{base}.2", 0), mtu=8972)
    b.connect(a.address)  # b's replies go to a's port (a sends from entropy ports)
    yield a, b
    a.close()
    b.close()


def _wait_for_counter(ep, name: str, value: int, timeout: float = 5.0) -> int:
    end = time.monotonic() + timeout
    while ep.stats()[name] < value and time.monotonic() < end:
        time.sleep(0.005)
    return ep.stats()[name]


def test_udp_close_with_work_in_flight_cancels_it(loop_pair):
    a, b = loop_pair
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # bound, never read
    silent.bind((b.address[0], 0))
    try:
        _close_with_work_in_flight(a, b, silent.getsockname())
    finally:
        silent.close()


def test_udp_remote_frees_its_pdc_and_reconnect_works(loop_pair):
    a, b = loop_pair
    old = _reconnect_and_verify(a, b)
    old.close()
    assert _wait_for_counter(b, "pdc_closed", 1) == 1
    _reconnect_and_verify(a, b)


def test_udp_endpoint_close_tells_the_remote(loop_pair):
    a, b = loop_pair
    _reconnect_and_verify(a, b)
    a.close()
    assert _wait_for_counter(b, "pdc_closed", 1) == 1
