"""PDC table under a spoofed SYN flood: half-open PDCs (opened by a remote SYN,
nothing delivered, our PDC id never used by the remote) are bounded per source,
reclaimed when the table is full and expire when idle, so legitimate peers
still get PDCs and established ones are never touched."""

import os

from engine_net import NEVER, EngineNet, ip

from netweft.nic_offload import ffi, lib

RW = lib.NW_ACCESS_REMOTE_WRITE | lib.NW_ACCESS_REMOTE_READ
MAX_PEERS = 16


def _net():
    net = EngineNet(seed=5)
    victim = net.add("10.0.0.2", max_peers=MAX_PEERS)
    return net, victim


def _syn_template(net):
    """A real SYN (first packet of a SEND) and its parsed headers."""
    attacker = net.add("10.0.0.99")
    p = net.peer(attacker, net.nodes[ip("10.0.0.2")])
    msg = ffi.new("uint8_t[]", b"flood" * 10)
    attacker.keep.append(msg)
    assert lib.nw_post_send(attacker.engine, p, 1, msg, 50) == 0
    n = lib.nw_output(attacker.engine, net.buf, len(net.buf), net.dst, 0)
    assert n > 0
    raw = bytes(ffi.buffer(net.buf, n))
    del net.nodes[attacker.addr]
    pk = ffi.new("nw_wire_pkt_t *")
    hl = lib.nw_wire_parse(raw, n, pk)
    assert hl > 0 and pk.pds.flags & lib.NW_PDS_F_SYN
    return pk, raw[hl:]


def _spoofed_syn(pk, payload, spdcid: int) -> bytes:
    pk.pds.spdcid = spdcid
    out = ffi.new("uint8_t[]", 256)
    hl = lib.nw_wire_build(pk, out, 256)
    assert hl > 0
    return bytes(ffi.buffer(out, hl)) + payload


def _flood(net, victim, count: int, same_source: bool = False) -> None:
    pk, payload = _syn_template(net)
    for i in range(count):
        src = ip("10.66.0.1") if same_source else ip("10.66.0.0") + 1 + i
        pkt = _spoofed_syn(pk, payload, 1 + i % 60000)
        lib.nw_input(victim.engine, pkt, len(pkt), src, 49152, net.now)
        net._drain(victim)  # its SYN-ACKs go to addresses nobody answers


def _write(net, a, b, peer, size, wr_id):
    data = os.urandom(size)
    src, _ = net.register(a, size, lib.NW_ACCESS_LOCAL, data)
    dst, rkey = net.register(b, size, RW)
    assert lib.nw_post_write(a.engine, peer, wr_id, src, size, rkey, 0) == 0
    net.run(until=lambda: any(c[0] == wr_id for c in a.completions))
    comp = next(c for c in a.completions if c[0] == wr_id)
    assert comp[1] == 0, comp
    assert bytes(ffi.buffer(dst, size)) == data


def test_spoofed_syn_flood_leaves_room_for_legitimate_peers():
    net, victim = _net()
    alice = net.add("10.0.0.1")
    to_victim = net.peer(alice, victim)
    _write(net, alice, victim, to_victim, 50_000, 1)  # established before the flood

    _flood(net, victim, 1000)
    st = victim.stats()
    assert st["pdc_reclaimed"] >= 1000 - MAX_PEERS  # the flood recycled half-open PDCs
    assert st["drop_no_peer_slot"] == 0  # ... and never ran the table out

    _write(net, alice, victim, to_victim, 50_000, 2)  # the established PDC survived
    bob = net.add("10.0.0.3")
    _write(net, bob, victim, net.peer(bob, victim), 80_000, 3)  # a newcomer still gets one
    assert victim.stats()["placed_bytes"] == 180_000  # every byte exactly once


def test_half_open_pdcs_are_bounded_per_source():
    net, victim = _net()
    _flood(net, victim, 10, same_source=True)
    st = victim.stats()
    assert st["pdc_opened"] == lib.NW_HALF_OPEN_PER_SOURCE
    assert st["drop_syn_half_open"] == 10 - lib.NW_HALF_OPEN_PER_SOURCE


def test_idle_half_open_pdcs_expire_and_stop_the_timer():
    net, victim = _net()
    _flood(net, victim, MAX_PEERS)
    assert victim.stats()["pdc_reclaimed"] == 0
    deadline = lib.nw_next_deadline(victim.engine)
    assert deadline != NEVER
    net.now = 2 * victim.cfg.rto_max_ns + 1
    lib.nw_on_time(victim.engine, net.now)
    assert victim.stats()["pdc_reclaimed"] == MAX_PEERS
    assert lib.nw_next_deadline(victim.engine) == NEVER


def _pdcs_in_use(node) -> int:
    st = node.stats()
    return st["pdc_opened"] - st["pdc_reclaimed"] - st["pdc_closed"]


def test_closed_pdcs_are_freed_on_both_sides_and_their_slots_reused():
    net = EngineNet(seed=9)
    hub = net.add("10.0.0.1", max_peers=2)
    target = net.add("10.0.0.2", max_peers=2)
    for round_ in range(5):  # more PDCs over time than either table holds
        peer = net.peer(hub, target)
        _write(net, hub, target, peer, 20_000, 100 + round_)
        assert lib.nw_peer_close(hub.engine, peer) == 0
        net.run()  # the CTRL CLOSE reaches the target
        assert lib.nw_post_write(hub.engine, peer, 1, ffi.NULL, 0, 0, 0) == lib.NW_ENOPEER
        assert _pdcs_in_use(hub) == 0 and _pdcs_in_use(target) == 0
    assert hub.stats()["pdc_closed"] == 5 and target.stats()["pdc_closed"] == 5
    assert target.stats()["placed_bytes"] == 5 * 20_000


def test_close_cancels_outstanding_work():
    net = EngineNet(seed=10)
    a, b = net.add("10.0.0.1"), net.add("10.0.0.2")
    peer = net.peer(a, b)
    src, _ = net.register(a, 100_000, lib.NW_ACCESS_LOCAL, os.urandom(100_000))
    _, rkey = net.register(b, 100_000, RW)
    assert lib.nw_post_write(a.engine, peer, 7, src, 100_000, rkey, 0) == 0
    net._drain(a)  # some packets leave, none is acknowledged yet
    assert lib.nw_peer_close(a.engine, peer) == 0
    assert [c[:2] for c in net.poll(a)] == [(7, lib.NW_ECANCELED)]
    assert lib.nw_peer_close(a.engine, peer) == lib.NW_ENOPEER
    net.run()
    assert len(net.poll(a)) == 1  # nothing else completes


def test_remote_close_keeps_the_applications_handle_usable():
    net = EngineNet(seed=11)
    a, b = net.add("10.0.0.1"), net.add("10.0.0.2")
    peer = net.peer(a, b)
    _write(net, a, b, peer, 30_000, 1)
    back = net.peer(b, a)  # b names the PDC that a's SYN opened, then closes it
    assert lib.nw_peer_close(b.engine, back) == 0
    net.run()
    assert a.stats()["pdc_closed"] == 1
    _write(net, a, b, peer, 30_000, 2)  # the same handle opens a new PDC pair
    assert b.stats()["placed_bytes"] == 60_000
