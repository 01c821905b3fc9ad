"""PTF suite of p4/basic_forward.p4: IPv4 LPM forwarding, and what it drops."""

from __future__ import annotations

from p4runtime_base import P4RuntimeTest
from ptf.testutils import (
    send_packet,
    simple_arp_packet,
    simple_udp_packet,
    verify_no_other_packets,
    verify_packets,
)

SWITCH_MAC = "00:00:00:00:0f:01"
HOST_MAC = "00:00:00:00:0a:01"
NEXT_HOP_1 = "08:00:00:00:01:11"
NEXT_HOP_2 = "08:00:00:00:02:22"

LPM = "MyIngress.ipv4_lpm"
FORWARD = "MyIngress.ipv4_forward"


def packet(dst: str, ttl: int = 64, **kwargs):
    return simple_udp_packet(eth_dst=SWITCH_MAC, eth_src=HOST_MAC, ip_src="10.0.9.9",
                             ip_dst=dst, ip_ttl=ttl, **kwargs)


def forwarded(dst: str, next_hop: str, ttl: int = 64):
    """What ipv4_forward makes of packet(dst): next hop's MAC, old destination as
    source, TTL - 1, checksum recomputed."""
    return simple_udp_packet(eth_dst=next_hop, eth_src=SWITCH_MAC, ip_src="10.0.9.9",
                             ip_dst=dst, ip_ttl=ttl - 1)


class BasicForwardTest(P4RuntimeTest):
    """Two routes, a /24 inside a /16."""

    def add_routes(self) -> None:
        self.table_add(LPM, {"hdr.ipv4.dstAddr": "10.0.1.0/24"}, FORWARD,
                       {"dstAddr": NEXT_HOP_1, "port": self.ports[1]})
        self.table_add(LPM, {"hdr.ipv4.dstAddr": "10.0.0.0/16"}, FORWARD,
                       {"dstAddr": NEXT_HOP_2, "port": self.ports[2]})


class LpmForwardTest(BasicForwardTest):
    """The longest prefix wins; MACs, TTL and checksum are rewritten."""

    def runTest(self):
        self.add_routes()
        send_packet(self, self.ports[0], packet("10.0.1.5"))
        verify_packets(self, forwarded("10.0.1.5", NEXT_HOP_1), [self.ports[1]])
        send_packet(self, self.ports[0], packet("10.0.77.1", ttl=9))
        verify_packets(self, forwarded("10.0.77.1", NEXT_HOP_2, ttl=9), [self.ports[2]])


class MissDropsTest(BasicForwardTest):
    """A destination without a route meets the default action, drop."""

    def runTest(self):
        self.add_routes()
        send_packet(self, self.ports[0], packet("192.168.1.1"))
        verify_no_other_packets(self)


class DefaultActionTest(BasicForwardTest):
    """The default action, replaced over P4Runtime, forwards every miss."""

    def runTest(self):
        self.table_set_default(LPM, FORWARD, {"dstAddr": NEXT_HOP_2, "port": self.ports[3]})
        send_packet(self, self.ports[0], packet("172.16.0.1"))
        verify_packets(self, forwarded("172.16.0.1", NEXT_HOP_2), [self.ports[3]])


class TtlExpiryTest(BasicForwardTest):
    """TTL 1 (or 0) is dropped, TTL 2 leaves with 1."""

    def runTest(self):
        self.add_routes()
        for ttl in (0, 1):
            send_packet(self, self.ports[0], packet("10.0.1.5", ttl=ttl))
        verify_no_other_packets(self)
        send_packet(self, self.ports[0], packet("10.0.1.5", ttl=2))
        verify_packets(self, forwarded("10.0.1.5", NEXT_HOP_1, ttl=2), [self.ports[1]])


class NotIpv4DropsTest(BasicForwardTest):
    """ARP is not forwarded."""

    def runTest(self):
        self.add_routes()
        send_packet(self, self.ports[0], simple_arp_packet(ip_tgt="10.0.1.5"))
        verify_no_other_packets(self)


class BadChecksumDropsTest(BasicForwardTest):
    """verify_checksum: an IPv4 header with a wrong checksum is dropped."""

    def runTest(self):
        self.add_routes()
        bad = packet("10.0.1.5")
        bad["IP"].chksum = (bad["IP"].__class__(bytes(bad["IP"])).chksum + 1) & 0xFFFF
        send_packet(self, self.ports[0], bad)
        verify_no_other_packets(self)


class Ipv4OptionsDropsTest(BasicForwardTest):
    """A header with options (IHL 6) fails the parser's verify and is dropped."""

    def runTest(self):
        self.add_routes()
        send_packet(self, self.ports[0], packet("10.0.1.5", ip_ihl=6,
                                                ip_options=b"\x01\x01\x01\x00"))
        verify_no_other_packets(self)
