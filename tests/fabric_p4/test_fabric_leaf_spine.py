"""p4/fabric.p4 on a 2-leaf, 2-spine fabric of in-process switches: spraying over the
spines, multicast trees with ingress pruning (broadcast and all-gather), and ACK
aggregation configured as docs/fabric.md advises (each leaf expects the receivers
below it, the sender's leaf all of them, the spines pass ACKs)."""

from __future__ import annotations

import struct
from collections import Counter

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from .fabric_switch import (
    ACKS,
    FWD,
    QUEUES,
    add_group,
    fabric_switch,
    route_group,
    route_port,
    uet_request,
)

# host -> (leaf, port, address); leaves' uplinks: port 3 to spine1, port 4 to spine2;
# spines: port 1 to leaf1, port 2 to leaf2
HOSTS = {"h1": ("leaf1", 1, "10.0.1.1"), "h2": ("leaf1", 2, "10.0.1.2"),
         "h3": ("leaf2", 1, "10.0.2.3"), "h4": ("leaf2", 2, "10.0.2.4")}
WIRES = {("leaf1", 3): ("spine1", 1), ("leaf1", 4): ("spine2", 1),
         ("leaf2", 3): ("spine1", 2), ("leaf2", 4): ("spine2", 2)}
WIRES.update({b: a for a, b in list(WIRES.items())})
GROUP_ADDRESS, MGRP = "239.1.1.1", 5
RECEIVER_BIT = {"h2": 0, "h3": 1, "h4": 2}


class Fabric:
    """Four switches wired as above; ``send`` runs a frame to completion."""

    def __init__(self, mode: int):
        self.switches = {name: fabric_switch() for name in ("leaf1", "leaf2", "spine1", "spine2")}
        self.uplink_counts: Counter[str] = Counter()
        for leaf, other in (("leaf1", "10.0.2.0"), ("leaf2", "10.0.1.0")):
            sw = self.switches[leaf]
            for at, port, address in HOSTS.values():
                if at == leaf:
                    route_port(sw, address, 32, port)
            add_group(sw, 1, (3, 4))
            route_group(sw, other, 24, 1, mode)
        for spine in ("spine1", "spine2"):
            route_port(self.switches[spine], "10.0.1.0", 24, 1)
            route_port(self.switches[spine], "10.0.2.0", 24, 2)
        # one shared tree through spine1: every member port, the ingress copy pruned
        trees = {"leaf1": (1, 2, 3), "leaf2": (1, 2, 3), "spine1": (1, 2)}
        for name, ports in trees.items():
            sw = self.switches[name]
            sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": (GROUP_ADDRESS, 32)},
                         FWD + "route_to_multicast", {"mcast_grp": MGRP})
            sw.mc_group_set(MGRP, [(port, MGRP) for port in ports])

    def send(self, host: str, frame: bytes) -> dict[str, list[bytes]]:
        """Frames each host receives after ``host`` sent ``frame``."""
        leaf, port, _ = HOSTS[host]
        received: dict[str, list[bytes]] = {h: [] for h in HOSTS}
        todo = [(leaf, port, frame)]
        while todo:
            name, in_port, data = todo.pop(0)
            for out_port, out in self.switches[name].process(in_port, data):
                if (name, out_port) in WIRES:
                    if name.startswith("leaf"):
                        self.uplink_counts[WIRES[(name, out_port)][0]] += 1
                    todo.append((*WIRES[(name, out_port)], out))
                else:
                    received[next(h for h, (sw, p, _) in HOSTS.items()
                                  if sw == name and p == out_port)].append(out)
        return received


def from_host(host: str, dst: str, payload: bytes, sport: int = 7000, dport: int = 4793) -> bytes:
    return bytes(Ether(dst="02:00:00:00:ff:00") / IP(src=HOSTS[host][2], dst=dst)
                 / UDP(sport=sport, dport=dport) / payload)


def test_round_robin_sprays_one_flow_evenly_over_the_spines_and_flow_hash_does_not():
    for mode, spread in ((3, {"spine1": 20, "spine2": 20}), (0, None)):
        fabric = Fabric(mode)
        for _ in range(40):
            got = fabric.send("h1", uet_request(src="10.0.1.1", dst="10.0.2.3", sport=50000))
            assert [len(v) for v in got.values()] == [0, 0, 1, 0]
        if spread:
            assert fabric.uplink_counts == Counter(spread)
        else:
            assert len(fabric.uplink_counts) == 1 and sum(fabric.uplink_counts.values()) == 40


def test_broadcast_and_all_gather_reach_every_other_member_once():
    fabric = Fabric(0)
    for sender in HOSTS:
        data = struct.pack("!BBHII", 1, 0, MGRP, 1, 0) + b"chunk of " + sender.encode()
        got = fabric.send(sender, from_host(sender, GROUP_ADDRESS, data, dport=4795))
        assert {h: len(v) for h, v in got.items()} == {h: int(h != sender) for h in HOSTS}
    pruned = sum(sw.counter_read(QUEUES + "mcast_pruned", p)[0]
                 for sw in fabric.switches.values() for p in (1, 2, 3))
    assert pruned == 3 * 4     # per send, at each of the three switches: its arrival port


def ack(host: str, seq: int) -> bytes:
    header = struct.pack("!BBHII", 2, 0, MGRP, seq, 1 << RECEIVER_BIT[host])
    return from_host(host, "10.0.1.1", header, dport=4795)


def test_the_sender_gets_one_ack_once_every_receiver_acknowledged():
    fabric = Fabric(2)                                       # ACKs sprayed at random
    expected = {"leaf1": 0b111, "leaf2": 0b110}
    for leaf, bits in expected.items():
        fabric.switches[leaf].table_add(ACKS + "ack_groups", {"mcast.group": MGRP},
                                        ACKS + "aggregate_acks", {"expected": bits})
    for order in (("h3", "h2", "h4"), ("h2", "h4", "h3"), ("h4", "h3", "h2")):
        seq = len(order[0]) + ord(order[0][1])
        acks_at_sender = []
        for receiver in order:
            acks_at_sender += fabric.send(receiver, ack(receiver, seq))["h1"]
        assert len(acks_at_sender) == 1
        kind, flags, group, got_seq, receivers = struct.unpack(
            "!BBHII", bytes(Ether(acks_at_sender[0])[UDP].payload))
        assert (kind, flags & 1, group, got_seq, receivers) == (2, 1, MGRP, seq, 0b111)
