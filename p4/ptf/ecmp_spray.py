"""PTF suite of p4/ecmp_spray.p4: next hops, ECMP by flow hash and by per-packet
spraying (round robin), ECN marking, and the drops."""

from __future__ import annotations

from p4runtime_base import P4RuntimeTest
from ptf.testutils import (
    send_packet,
    simple_udp_packet,
    simple_udpv6_packet,
    verify_no_other_packets,
    verify_packet,
    verify_packet_any_port,
    verify_packets,
)

SWITCH_MAC = "00:00:00:00:0f:01"
HOST_MAC = "00:00:00:00:0a:01"
NEXT_HOP = "08:00:00:00:01:11"
MODE_FLOW_HASH = 0
MODE_SPRAY = 1
GROUP = 7


def udp4(dst: str = "10.1.0.5", ttl: int = 64, sport: int = 1234, ecn: int | None = None,
         eth_dst: str = SWITCH_MAC, eth_src: str = HOST_MAC):
    return simple_udp_packet(eth_dst=eth_dst, eth_src=eth_src, ip_src="10.0.9.9", ip_dst=dst,
                             ip_ttl=ttl, udp_sport=sport, udp_dport=4793, ip_ecn=ecn)


def routed4(dst: str = "10.1.0.5", ttl: int = 64, sport: int = 1234, ecn: int | None = None):
    """udp4(...) after the switch: next hop's MAC, old destination as source, TTL - 1."""
    return udp4(dst, ttl - 1, sport, ecn, eth_dst=NEXT_HOP, eth_src=SWITCH_MAC)


class EcmpSprayTest(P4RuntimeTest):
    """Helpers: a group of three members on ports 1..3 for 10.1.0.0/16."""

    def add_group(self, mode: int, size: int = 3, members: int = 3) -> list[int]:
        self.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": "10.1.0.0/16"},
                       "MyIngress.set_group",
                       {"group_id": GROUP, "group_size": size, "mode": mode})
        ports = self.ports[1:1 + members]
        for member, port in enumerate(ports):
            self.table_add("MyIngress.group_members",
                           {"meta.group_id": GROUP, "meta.member": member},
                           "MyIngress.set_next_hop", {"dmac": NEXT_HOP, "port": port})
        return ports


class NextHopTest(EcmpSprayTest):
    """forward(): IPv4 and IPv6 routes to one next hop; TTL and hop limit decremented."""

    def runTest(self):
        self.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": "10.1.0.0/16"},
                       "MyIngress.forward", {"dmac": NEXT_HOP, "port": self.ports[1]})
        self.table_add("MyIngress.ipv6_routes", {"hdr.ipv6.dstAddr": "2001:db8:1::/48"},
                       "MyIngress.forward", {"dmac": NEXT_HOP, "port": self.ports[2]})
        send_packet(self, self.ports[0], udp4())
        verify_packets(self, routed4(), [self.ports[1]])
        v6 = {"ipv6_src": "2001:db8:9::9", "ipv6_dst": "2001:db8:1::5"}
        send_packet(self, self.ports[0], simple_udpv6_packet(
            eth_dst=SWITCH_MAC, eth_src=HOST_MAC, ipv6_hlim=64, **v6))
        verify_packets(self, simple_udpv6_packet(
            eth_dst=NEXT_HOP, eth_src=SWITCH_MAC, ipv6_hlim=63, **v6), [self.ports[2]])


class FlowHashTest(EcmpSprayTest):
    """Mode 0: every packet of a flow takes one member; different flows use several."""

    def runTest(self):
        ports = self.add_group(MODE_FLOW_HASH)
        used = set()
        for sport in range(5000, 5012):
            send_packet(self, self.ports[0], udp4(sport=sport))
            index, _ = verify_packet_any_port(self, routed4(sport=sport), ports)
            send_packet(self, self.ports[0], udp4(sport=sport))
            verify_packet(self, routed4(sport=sport), ports[index])
            used.add(ports[index])
        verify_no_other_packets(self)
        self.assertGreater(len(used), 1, "12 flows all hashed to one member")


class SprayRoundRobinTest(EcmpSprayTest):
    """Mode 1: one flow's packets go to the members in turn, starting at member 0."""

    def runTest(self):
        ports = self.add_group(MODE_SPRAY)
        for i in range(7):
            send_packet(self, self.ports[0], udp4())
            verify_packet(self, routed4(), ports[i % 3])
        verify_no_other_packets(self)


class EcnMarkingTest(EcmpSprayTest):
    """ecn_config threshold 0 on a port: ECN-capable packets leave CE, others as they
    came; a port without an entry never marks."""

    def runTest(self):
        self.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": "10.1.0.0/16"},
                       "MyIngress.forward", {"dmac": NEXT_HOP, "port": self.ports[1]})
        self.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": "10.2.0.0/16"},
                       "MyIngress.forward", {"dmac": NEXT_HOP, "port": self.ports[2]})
        self.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": self.ports[1]},
                       "MyEgress.set_ecn_threshold", {"threshold": 0})
        for ecn, out in ((2, 3), (1, 3), (0, 0)):     # ECT(0), ECT(1) -> CE; not-ECT stays
            send_packet(self, self.ports[0], udp4(ecn=ecn))
            verify_packets(self, routed4(ecn=out), [self.ports[1]])
        send_packet(self, self.ports[0], udp4("10.2.0.1", ecn=2))
        verify_packets(self, routed4("10.2.0.1", ecn=2), [self.ports[2]])
        self.assertEqual(self.counter_packets("MyEgress.ecn_marked", self.ports[1]), 2)


class GroupDropsTest(EcmpSprayTest):
    """A group of size 0, and a member index without an entry, drop."""

    def runTest(self):
        self.add_group(MODE_SPRAY, size=0)
        send_packet(self, self.ports[0], udp4())
        verify_no_other_packets(self)


class MissingMemberDropsTest(EcmpSprayTest):
    """Round robin over 3 members with only 2 installed: the third packet is dropped."""

    def runTest(self):
        ports = self.add_group(MODE_SPRAY, size=3, members=2)
        for i in range(2):
            send_packet(self, self.ports[0], udp4())
            verify_packet(self, routed4(), ports[i])
        send_packet(self, self.ports[0], udp4())
        verify_no_other_packets(self)


class ExpiryAndMissDropTest(EcmpSprayTest):
    """TTL 1, hop limit 1, a destination without a route, and non-IP are dropped."""

    def runTest(self):
        self.add_group(MODE_SPRAY)
        self.table_add("MyIngress.ipv6_routes", {"hdr.ipv6.dstAddr": "2001:db8:1::/48"},
                       "MyIngress.forward", {"dmac": NEXT_HOP, "port": self.ports[2]})
        send_packet(self, self.ports[0], udp4(ttl=1))
        send_packet(self, self.ports[0], simple_udpv6_packet(
            eth_dst=SWITCH_MAC, ipv6_dst="2001:db8:1::5", ipv6_hlim=1))
        send_packet(self, self.ports[0], udp4("192.168.0.1"))
        verify_no_other_packets(self)
