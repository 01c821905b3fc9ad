"""ROD under reordering (datagrams held back, with jitter on the delay; jitter alone
keeps the order, as on one wire): the receiver holds packets that arrive ahead of the
next expected PSN and the sender resends only the missing PSN, at most once per
round trip, so retransmissions track the packets the network really lost (the
go-back-N receiver used to turn jitter into tens of thousands of resends)."""

import numpy as np
import pytest

from netweft.transport import Impairments, Simulation

MIB = 1 << 20


def _rod_transfer(seed: int, loss: float):
    imp = Impairments(delay_ns=500_000, jitter_ns=200_000, reorder=0.3,
                      reorder_delay_ns=100_000, loss=loss)
    sim = Simulation(seed=seed, impairments=imp)
    alice, bob = sim.endpoint(), sim.endpoint()
    rng = np.random.default_rng(seed)
    msgs = [rng.integers(0, 256, MIB, dtype=np.uint8).tobytes() for _ in range(2)]
    recv_ids = [bob.post_recv(bytearray(MIB)) for _ in msgs]
    peer = alice.connect(bob.address, mode="rod")
    send_ids = [peer.send(m) for m in msgs]
    assert all(c.ok for c in alice.cq.wait_all(send_ids, timeout=60))
    received = bob.cq.wait_all(recv_ids, timeout=60)
    assert all(c.ok for c in received)
    assert [bytes(c.data) for c in received] == msgs  # byte-exact, in the order sent
    sim.run_until_idle(max_seconds=5)
    assert bob.cq.poll() == []  # nothing delivered twice
    return sim, alice.stats(), bob.stats()


@pytest.mark.parametrize("seed", [1, 6])
def test_rod_jitter_without_loss_needs_almost_no_resends(seed):
    sim, sa, sb = _rod_transfer(seed, loss=0.0)
    assert sim.path_counters()["lost"] == 0
    assert sb["rod_held"] > 100  # the flow really was reordered
    assert sb["drop_unordered"] == 0  # nothing was thrown away for arriving early
    assert sb["placed_bytes"] == 2 * MIB
    assert sa["retransmits"] <= 8  # was 63,615 with go-back-N per out-of-order arrival


@pytest.mark.parametrize("seed", [3, 8])
def test_rod_jitter_with_loss_resends_about_what_was_lost(seed):
    sim, sa, sb = _rod_transfer(seed, loss=0.02)
    lost = sim.path_counters()["lost"]  # both directions: an upper bound on data losses
    assert lost > 0
    assert sb["rod_held"] > 100
    assert sb["placed_bytes"] == 2 * MIB  # exactly once
    assert sa["retransmits"] <= 2 * lost + 8
