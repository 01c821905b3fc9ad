"""Broadcast's transfer (fabric-ctl's reliable multicast, with MulticastGroup's rank to
receiver mapping and growing sequence numbers) over p4/fabric.p4 on the embedded switch:
the root's DATA is replicated to every member as unicast, receivers' ACKs are aggregated
by the switch (or not), and loss, duplication and reordering on every host link are
repaired."""

from __future__ import annotations

import random
import struct
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from netweft.transport.collectives.multicast.header import MULTICAST_PORT as MCAST_UDP_PORT
from netweft.transport.collectives.multicast.reliable import MulticastReceiver, MulticastSender

P4_DIR = Path(__file__).resolve().parents[2] / "p4"
FWD, ACKS, QUEUES = "FabricIngress.forwarding.", "FabricIngress.acks.", "FabricEgress.queues."
GROUP, GROUP_IP = 5, "239.1.1.1"
ROOT_PORT, ROOT_IP = 9, "10.0.0.9"
MEMBERS = {1: "10.0.0.1", 2: "10.0.0.2", 3: "10.0.0.3"}  # rank -> ip; rank r on port r


@cache
def fabric_program():
    from netweft.p4.compiler import compile_p4

    return compile_p4(str(P4_DIR / "fabric.p4"), include_dirs=(str(P4_DIR),))


def fabric_switch(aggregate: bool):
    from netweft.emulation.switch import SoftSwitch

    sw = SoftSwitch(fabric_program())
    ports = {ROOT_PORT: ROOT_IP, **MEMBERS}
    for port, ip in ports.items():
        sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": (ip, 32)}, FWD + "route_to_port",
                     {"port": port})
        sw.table_add(QUEUES + "neighbors", {"standard_metadata.egress_port": port},
                     QUEUES + "set_neighbor", {"dmac": f"02:00:00:00:01:{port:02x}",
                                               "smac": "02:00:00:00:ff:00"})
        sw.table_add(QUEUES + "mcast_host_copies",
                     {"standard_metadata.egress_rid": GROUP,
                      "standard_metadata.egress_port": port},
                     QUEUES + "deliver_to_host", {"dst": ip})
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": (GROUP_IP, 32)},
                 FWD + "route_to_multicast", {"mcast_grp": GROUP})
    sw.mc_group_set(GROUP, [(port, GROUP) for port in ports])
    if aggregate:
        sw.table_add(ACKS + "ack_groups", {"mcast.group": GROUP}, ACKS + "aggregate_acks",
                     {"expected": 0b111})
    return sw


def frame(src_ip: str, dst_ip: str, payload: bytes) -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), 0, 0, 64, 17, 0,
                     bytes(map(int, src_ip.split("."))), bytes(map(int, dst_ip.split("."))))
    words = struct.unpack("!10H", ip)
    total = sum(words)
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    ip = ip[:10] + struct.pack("!H", ~total & 0xFFFF) + ip[12:]
    udp = struct.pack("!HHHH", MCAST_UDP_PORT, MCAST_UDP_PORT, 8 + len(payload), 0)
    return b"\x02\x00\x00\x00\xff\x00" + b"\x02\x00\x00\x00\x01\x09" + b"\x08\x00" + ip + udp \
        + payload


def run_broadcast(aggregate: bool, loss: float, duplicate: float, seed: int,
                  size: int = 50_000, first_seq: int = 0, sw=None):
    """Root on port 9 broadcasts ``size`` bytes; every host link loses, duplicates and
    reorders (a shuffled delivery queue); a virtual clock jumps to the next timeout."""
    rng = random.Random(seed)
    sw = sw or fabric_switch(aggregate)
    data = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    sender = MulticastSender(memoryview(data), GROUP, len(MEMBERS), chunk=1000, window=16,
                             first_seq=first_seq)
    # root rank 0; member rank r is receiver r - 1 (MulticastGroup's mapping)
    receivers = {r: MulticastReceiver(GROUP, r - 1, size, 1000, first_seq) for r in MEMBERS}
    now = 0
    queue: list[tuple[str, int, bytes]] = []  # (to, switch port or host, frame)

    def link(item) -> None:  # a host link: loss and duplication
        if rng.random() < loss:
            return
        queue.append(item)
        if rng.random() < duplicate:
            queue.append(item)

    for p in sender.poll(now):
        link(("switch", ROOT_PORT, frame(ROOT_IP, GROUP_IP, p)))
    steps = 0
    while not (sender.done and all(r.done for r in receivers.values())):
        steps += 1
        assert steps < 200_000
        if not queue:
            due = sender.next_deadline()
            assert due is not None, "nothing left to happen"
            now = max(now, due)
            for p in sender.poll(now):
                link(("switch", ROOT_PORT, frame(ROOT_IP, GROUP_IP, p)))
            continue
        to, port, f = queue.pop(rng.randrange(len(queue)))  # reordering
        if to == "switch":
            for out_port, out in sw.process(port, f):
                link(("host", out_port, out))
            continue
        payload = f[42:]
        if port == ROOT_PORT:
            sender.receive(payload, now)
            for p in sender.poll(now):
                link(("switch", ROOT_PORT, frame(ROOT_IP, GROUP_IP, p)))
        else:
            for ack in receivers[port].receive(payload, now):
                link(("switch", port, frame(MEMBERS[port], ROOT_IP, ack)))
    for r in MEMBERS:
        assert bytes(receivers[r].data) == data.tobytes()
    return sw, sender, receivers


@pytest.mark.parametrize("aggregate", [True, False], ids=["switch-aggregates-acks", "no-aggregation"])
def test_broadcast_clean(aggregate):
    sw, sender, _ = run_broadcast(aggregate, 0.0, 0.0, seed=1)
    assert sender.stats.retransmissions == 0
    if aggregate:  # one ACK per DATA reached the root, each the union of three receivers
        assert sender.stats.acks == sender.stats.aggregated_acks == sender.count
        assert sw.counter_read(ACKS + "acks_absorbed", GROUP)[0] == 2 * sender.count
    else:
        assert sender.stats.acks == 3 * sender.count


@pytest.mark.parametrize("aggregate", [True, False], ids=["switch-aggregates-acks", "no-aggregation"])
def test_broadcast_with_loss_duplication_and_reordering(aggregate):
    _sw, sender, receivers = run_broadcast(aggregate, 0.05, 0.05, seed=3)
    assert sender.stats.retransmissions > 0
    assert sum(r.stats.duplicates for r in receivers.values()) > 0


def test_consecutive_broadcasts_on_one_switch():
    # the second broadcast starts where the first ended: the switch's ACK slots (seq mod
    # 256) hold the first's sequence numbers, which the second must not reuse
    sw, first, _ = run_broadcast(True, 0.05, 0.1, seed=4, size=300_000)
    assert first.count > 256
    run_broadcast(True, 0.05, 0.1, seed=5, size=8000, first_seq=first.first_seq + first.count,
                  sw=sw)
