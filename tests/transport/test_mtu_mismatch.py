"""Two endpoints with different ``mtu``: the receiver counts the packets larger than
its MTU, answers each with a NACK (EXP_FATAL, netweft vendor code TOO_BIG, payload =
its MTU), and the sender's work completes with an error that names the mismatch,
instead of retransmitting until "retransmission limit reached"."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from netweft.nic_offload import lib
from netweft.transport import Simulation, udp_endpoint
from netweft.transport.errors import EngineError, WorkRequestFailed


def _write_and_wait(a, b, size: int, timeout: float):
    src = a.register(np.ones(size, dtype=np.uint8))
    dst = b.register(np.zeros(size, dtype=np.uint8))
    peer = a.connect(b.address)
    peer.write(src, dst.remote())
    return peer, src, dst, a.cq.wait(timeout=timeout)


def test_simulated_sender_learns_the_mtu_mismatch():
    sim = Simulation(seed=2)
    a, b = sim.endpoint(mtu=4096), sim.endpoint(mtu=1472)
    peer, src, dst, done = _write_and_wait(a, b, 64 << 10, timeout=5)
    assert done.status == lib.NW_EMTU
    with pytest.raises(WorkRequestFailed, match="larger than its MTU: give both endpoints the "
                                                "same mtu"):
        done.check()
    assert b.stats()["drop_oversized"] >= 1
    assert b.stats()["nacks_out"] >= 1
    sent = a.stats()
    assert sent["rto_fired"] == 0 and sent["pdc_failed"] == 1
    with pytest.raises(EngineError, match="same mtu"):  # the failed peer says why, too
        peer.write(src, dst.remote())


def test_smaller_sender_mtu_is_fine():
    sim = Simulation(seed=2)
    a, b = sim.endpoint(mtu=1472), sim.endpoint(mtu=4096)
    _, _, _, done = _write_and_wait(a, b, 64 << 10, timeout=5)
    done.check()


def test_udp_sender_learns_the_mtu_mismatch():
    base = f"127.{random.Random(os.getpid()).randrange(1, 250)}.{random.randrange(1, 250)}"
    ip_a, ip_b = f"{base}.1", f"{base}.2"
    with udp_endpoint((ip_a, 0), mtu=8972) as a, udp_endpoint((ip_b, 0), mtu=1472) as b:
        b.connect(a.address)  # replies go to a's (ephemeral) port
        _, _, _, done = _write_and_wait(a, b, 1 << 20, timeout=30)
        assert done.status == lib.NW_EMTU, done
        assert b.stats()["drop_oversized"] >= 1


def test_read_from_a_larger_mtu_target_fails_naming_the_mismatch():
    """The target's read data are the oversized packets: the initiator refuses them and
    its READ completes with the MTU error (it once waited forever)."""
    sim = Simulation(seed=2)
    a, b = sim.endpoint(mtu=1472), sim.endpoint(mtu=4096)
    local = a.register(np.zeros(64 << 10, dtype=np.uint8))
    remote = b.register(np.ones(64 << 10, dtype=np.uint8))
    a.connect(b.address).read(local, remote.remote())
    done = a.cq.wait(timeout=5)
    assert done.status == lib.NW_EMTU
    sim.run_for(0.01)  # the NACK reaches the target, which stops sending
    assert a.stats()["drop_oversized"] >= 1 and b.stats()["pdc_failed"] == 1
