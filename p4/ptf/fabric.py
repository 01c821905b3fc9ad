"""PTF suite of p4/fabric.p4: routes to ports, ECMP groups in every spray mode,
multicast (pruning, copies for hosts), ECN marking, trimming of UET data packets,
reliable-multicast ACK aggregation, and the drops counted by reason.

Queue-dependent features are made deterministic with threshold 0: a port whose
ECN (or trim) threshold is 0 marks (or trims) every eligible packet, whatever the
queue.  fabric_aggregation.py runs these tests again on p4/fabric_aggregation.p4,
which keeps fabric.p4's names."""

from __future__ import annotations

import struct

from p4runtime_base import P4RuntimeTest
from ptf.testutils import (
    send_packet,
    simple_arp_packet,
    simple_udpv6_packet,
    verify_no_other_packets,
    verify_packet,
    verify_packet_any_port,
    verify_packets,
)
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

SWITCH_MAC = "00:00:00:00:0f:01"
HOST_MAC = "00:00:00:00:0a:01"
UET_PORT = 4793
MCAST_PORT = 4795
SPRAY_FLOW_HASH, SPRAY_ENTROPY, SPRAY_RANDOM, SPRAY_ROUND_ROBIN, SPRAY_ADAPTIVE = range(5)
DROP_NOT_IP, DROP_TTL, DROP_NO_ROUTE, DROP_BAD_GROUP, DROP_BAD_MCAST, DROP_BAD_LENGTH = \
    2, 3, 4, 5, 6, 7
GROUP = 3

ROUTES4 = "FabricIngress.forwarding.ipv4_routes"
ROUTES6 = "FabricIngress.forwarding.ipv6_routes"
ACTION = "FabricIngress.forwarding."
QUEUES = "FabricEgress.queues."


def udp4(dst: str = "10.1.0.5", ttl: int = 64, sport: int = 1234, dport: int = 4000,
         tos: int = 0, payload: bytes = b"\x00" * 32, src: str = "10.0.9.9"):
    return (Ether(dst=SWITCH_MAC, src=HOST_MAC) /
            IP(src=src, dst=dst, ttl=ttl, tos=tos, id=1) /
            UDP(sport=sport, dport=dport) / Raw(payload))


def pds(pds_type: int, flags: int = 0, next_hdr: int = 0) -> bytes:
    """UET PDS prologue: type (5 bits), next header (4), flags (7)."""
    return struct.pack("!H", (pds_type << 11) | (next_hdr << 7) | flags)


def mcast(kind: int, group: int, seq: int, receivers: int, flags: int = 0) -> bytes:
    """netweft's reliable-multicast header (nw_mcast_t)."""
    return struct.pack("!BBHII", kind, flags, group, seq, receivers)


class FabricTest(P4RuntimeTest):
    """Helpers for fabric.p4's tables."""

    def route4(self, prefix: str, action: str, **params) -> None:
        self.table_add(ROUTES4, {"ipv4.dstAddr": prefix}, ACTION + action, params)

    def add_group(self, mode: int, ports: list[int], size: int | None = None) -> None:
        self.route4("10.1.0.0/16", "route_to_group", group_id=GROUP, mode=mode)
        members = {f"port{i}": (ports[i] if i < len(ports) else 0) for i in range(8)}
        self.table_add("FabricIngress.forwarding.ecmp_groups", {"fm.group_id": GROUP},
                       ACTION + "set_members",
                       {"size": len(ports) if size is None else size, **members})

    def drops(self, reason: int) -> int:
        return self.counter_packets("FabricIngress.drops", reason)


class RouteToPortTest(FabricTest):
    """route_to_port for IPv4 and IPv6: TTL / hop limit - 1, MACs as they came."""

    def runTest(self):
        self.route4("10.1.0.0/16", "route_to_port", port=self.ports[1])
        self.table_add(ROUTES6, {"ipv6.dstAddr": "2001:db8:1::/48"},
                       ACTION + "route_to_port", {"port": self.ports[2]})
        send_packet(self, self.ports[0], udp4())
        verify_packets(self, udp4(ttl=63), [self.ports[1]])
        v6 = {"eth_dst": SWITCH_MAC, "ipv6_dst": "2001:db8:1::5"}
        send_packet(self, self.ports[0], simple_udpv6_packet(ipv6_hlim=64, **v6))
        verify_packets(self, simple_udpv6_packet(ipv6_hlim=63, **v6), [self.ports[2]])


class NeighborMacsTest(FabricTest):
    """Egress neighbors: set_neighbor rewrites both MACs on that port only."""

    def runTest(self):
        self.route4("10.1.0.0/16", "route_to_port", port=self.ports[1])
        self.route4("10.2.0.0/16", "route_to_port", port=self.ports[2])
        self.table_add(QUEUES + "neighbors", {"standard_metadata.egress_port": self.ports[1]},
                       QUEUES + "set_neighbor",
                       {"dmac": "08:00:00:00:01:11", "smac": "00:00:00:00:0f:11"})
        send_packet(self, self.ports[0], udp4())
        expected = udp4(ttl=63)
        expected[Ether].dst, expected[Ether].src = "08:00:00:00:01:11", "00:00:00:00:0f:11"
        verify_packets(self, expected, [self.ports[1]])
        send_packet(self, self.ports[0], udp4("10.2.0.1"))
        verify_packets(self, udp4("10.2.0.1", ttl=63), [self.ports[2]])


class EntropySprayTest(FabricTest):
    """Entropy mode: member = UDP source port mod group size (UET's entropy value)."""

    def runTest(self):
        members = self.ports[1:4]
        self.add_group(SPRAY_ENTROPY, members)
        for sport in (300, 301, 302, 303, 65535, 7):
            send_packet(self, self.ports[0], udp4(sport=sport))
            verify_packet(self, udp4(ttl=63, sport=sport), members[sport % 3])
        verify_no_other_packets(self)


class FlowHashTest(FabricTest):
    """Flow-hash mode: a flow keeps its member; several flows use several members."""

    def runTest(self):
        members = self.ports[1:4]
        self.add_group(SPRAY_FLOW_HASH, members)
        used = set()
        for dport in range(6000, 6012):
            send_packet(self, self.ports[0], udp4(dport=dport))
            index, _ = verify_packet_any_port(self, udp4(ttl=63, dport=dport), members)
            send_packet(self, self.ports[0], udp4(dport=dport))
            verify_packet(self, udp4(ttl=63, dport=dport), members[index])
            used.add(index)
        self.assertGreater(len(used), 1, "12 flows all hashed to one member")


class RoundRobinTest(FabricTest):
    """Round-robin mode: the members in turn from member 0, for one flow."""

    def runTest(self):
        members = self.ports[1:4]
        self.add_group(SPRAY_ROUND_ROBIN, members)
        for i in range(7):
            send_packet(self, self.ports[0], udp4())
            verify_packet(self, udp4(ttl=63), members[i % 3])
        verify_no_other_packets(self)


class RandomAndAdaptiveTest(FabricTest):
    """Random and adaptive (idle ports: ties broken at a random start) modes send one
    flow over the group's members only, and over more than one of them (20 packets
    all on one of 3 members: probability 3^-19)."""

    def runTest(self):
        members = self.ports[1:4]
        for mode in (SPRAY_RANDOM, SPRAY_ADAPTIVE):
            self.table_add("FabricIngress.forwarding.ecmp_groups", {"fm.group_id": 10 + mode},
                           ACTION + "set_members",
                           {"size": 3, "port0": members[0], "port1": members[1],
                            "port2": members[2], **{f"port{i}": 0 for i in range(3, 8)}})
            self.route4(f"10.{10 + mode}.0.0/16", "route_to_group", group_id=10 + mode,
                        mode=mode)
            used = set()
            for _ in range(20):
                dst = f"10.{10 + mode}.0.1"
                send_packet(self, self.ports[0], udp4(dst))
                index, _ = verify_packet_any_port(self, udp4(dst, ttl=63), members)
                used.add(index)
            self.assertGreater(len(used), 1, f"mode {mode} sent 20 packets to one member")


class BadGroupDropsTest(FabricTest):
    """A group without members, or of more than 8, drops (DROP_BAD_GROUP)."""

    def runTest(self):
        self.route4("10.1.0.0/16", "route_to_group", group_id=GROUP, mode=SPRAY_ROUND_ROBIN)
        self.route4("10.2.0.0/16", "route_to_group", group_id=GROUP + 1, mode=SPRAY_ROUND_ROBIN)
        self.table_add("FabricIngress.forwarding.ecmp_groups", {"fm.group_id": GROUP + 1},
                       ACTION + "set_members",
                       {"size": 9, **{f"port{i}": self.ports[1] for i in range(8)}})
        send_packet(self, self.ports[0], udp4("10.1.0.1"))
        send_packet(self, self.ports[0], udp4("10.2.0.1"))
        verify_no_other_packets(self)
        self.assertEqual(self.drops(DROP_BAD_GROUP), 2)


class MulticastTest(FabricTest):
    """route_to_multicast: a copy per replica except the ingress port's (pruned);
    mcast_host_copies turns one copy into unicast to a host (UDP checksum 0)."""

    def runTest(self):
        self.route4("239.1.1.0/24", "route_to_multicast", mcast_grp=5)
        self.multicast_group(5, [(port, rid) for rid, port in enumerate(self.ports[:4], 1)])
        self.table_add(QUEUES + "mcast_host_copies",
                       {"standard_metadata.egress_rid": 3,
                        "standard_metadata.egress_port": self.ports[2]},
                       QUEUES + "deliver_to_host", {"dst": "10.0.2.2"})
        send_packet(self, self.ports[0], udp4("239.1.1.1"))
        group_copy = udp4("239.1.1.1", ttl=63)
        host_copy = udp4("10.0.2.2", ttl=63)
        host_copy[UDP].chksum = 0
        verify_packet(self, group_copy, self.ports[1])
        verify_packet(self, host_copy, self.ports[2])
        verify_packet(self, group_copy, self.ports[3])
        verify_no_other_packets(self)
        self.assertEqual(self.counter_packets(QUEUES[:-1] + ".mcast_pruned", self.ports[0]), 1)


class EcnMarkingTest(FabricTest):
    """ecn_config threshold 0: ECT(0)/ECT(1) leave CE, not-ECT unchanged; no entry, no mark."""

    def runTest(self):
        self.route4("10.1.0.0/16", "route_to_port", port=self.ports[1])
        self.route4("10.2.0.0/16", "route_to_port", port=self.ports[2])
        self.table_add(QUEUES + "ecn_config", {"standard_metadata.egress_port": self.ports[1]},
                       QUEUES + "set_ecn_threshold", {"threshold": 0})
        for ecn, out in ((2, 3), (1, 3), (0, 0), (3, 3)):
            send_packet(self, self.ports[0], udp4(tos=0x20 | ecn))
            verify_packets(self, udp4(ttl=63, tos=0x20 | out), [self.ports[1]])
        send_packet(self, self.ports[0], udp4("10.2.0.1", tos=2))
        verify_packets(self, udp4("10.2.0.1", ttl=63, tos=2), [self.ports[2]])


class TrimTest(FabricTest):
    """trim_config threshold 0: a UET data packet keeps Ethernet, IP, UDP and 64 bytes
    of payload, gets the trimmed flag, the port's DSCP, and fixed lengths and
    checksums.  Control packets (PDS type 1), short datagrams and other ports are
    sent whole."""

    def runTest(self):
        self.route4("10.1.0.0/16", "route_to_port", port=self.ports[1])
        self.route4("10.2.0.0/16", "route_to_port", port=self.ports[2])
        self.table_add("FabricIngress.trim.trim_config",
                       {"standard_metadata.egress_spec": self.ports[1]},
                       "FabricIngress.trim.set_trim", {"threshold": 0, "priority": 7, "dscp": 10})
        body = bytes(range(256))[:198]
        data = pds(2, flags=0x01) + body      # RUD
        send_packet(self, self.ports[0], udp4(dport=UET_PORT, tos=2, payload=data))
        kept = pds(2, flags=0x41) + body[:62]
        trimmed = udp4(ttl=63, dport=UET_PORT, tos=(10 << 2) | 2, payload=kept)
        trimmed[IP].len, trimmed[UDP].len = 20 + 72, 72
        verify_packets(self, Ether(bytes(trimmed)), [self.ports[1]])

        control = pds(1) + body
        short = pds(2) + body[:40]
        for payload in (control, short):
            send_packet(self, self.ports[0], udp4(dport=UET_PORT, payload=payload))
            verify_packets(self, udp4(ttl=63, dport=UET_PORT, payload=payload), [self.ports[1]])
        send_packet(self, self.ports[0], udp4("10.2.0.1", dport=UET_PORT, payload=data))
        verify_packets(self, udp4("10.2.0.1", ttl=63, dport=UET_PORT, payload=data),
                       [self.ports[2]])


class AckAggregationTest(FabricTest):
    """ack_groups: the receivers' ACKs of one sequence are absorbed until the expected
    bitmap is complete; the last goes on to the sender with the union and the
    aggregated flag.  A group without an entry passes its ACKs unchanged; an ACK of
    the wrong length is dropped (DROP_BAD_MCAST)."""

    def ack(self, receiver: int, group: int = 7, seq: int = 10, extra: bytes = b""):
        return udp4("10.0.0.1", sport=MCAST_PORT, dport=MCAST_PORT, src=f"10.0.2.{receiver}",
                    payload=mcast(2, group, seq, 1 << receiver) + extra)

    def runTest(self):
        self.route4("10.0.0.1/32", "route_to_port", port=self.ports[0])
        self.table_add("FabricIngress.acks.ack_groups", {"mcast.group": 7},
                       "FabricIngress.acks.aggregate_acks", {"expected": 0b111})
        send_packet(self, self.ports[1], self.ack(0))
        send_packet(self, self.ports[2], self.ack(1))
        verify_no_other_packets(self)
        send_packet(self, self.ports[3], self.ack(2))
        done = udp4("10.0.0.1", ttl=63, sport=MCAST_PORT, dport=MCAST_PORT, src="10.0.2.2",
                    payload=mcast(2, 7, 10, 0b111, flags=1))
        verify_packets(self, done, [self.ports[0]])
        self.assertEqual(self.counter_packets("FabricIngress.acks.acks_absorbed", 7), 2)

        send_packet(self, self.ports[1], self.ack(0, group=8))
        expected = self.ack(0, group=8)
        expected[IP].ttl = 63
        verify_packets(self, expected, [self.ports[0]])
        send_packet(self, self.ports[1], self.ack(0, extra=b"\x00" * 4))
        verify_no_other_packets(self)
        self.assertEqual(self.drops(DROP_BAD_MCAST), 1)


class DropReasonsTest(FabricTest):
    """Non-IP, TTL 1, no route and an IP length longer than the frame are dropped and
    counted by reason."""

    def runTest(self):
        self.route4("10.1.0.0/16", "route_to_port", port=self.ports[1])
        send_packet(self, self.ports[0], simple_arp_packet())
        send_packet(self, self.ports[0], udp4(ttl=1))
        send_packet(self, self.ports[0], udp4("192.168.0.1"))
        long_ip = udp4()
        long_ip[IP].len = 200
        send_packet(self, self.ports[0], long_ip)
        verify_no_other_packets(self)
        for reason in (DROP_NOT_IP, DROP_TTL, DROP_NO_ROUTE, DROP_BAD_LENGTH):
            self.assertEqual(self.drops(reason), 1, f"drop reason {reason}")
