"""p4/basic_forward.p4: IPv4 LPM forwarding as BMv2 simple_switch would run it."""

from __future__ import annotations

from scapy.layers.l2 import ARP, Ether

from .harness import BOTH_BACKENDS, REPO_P4_DIR, switch_factory
from .packets import SWITCH_MAC, assert_outputs, ipv4_udp

make_switch = switch_factory(REPO_P4_DIR / "basic_forward.p4", BOTH_BACKENDS)

NH_MAC_1 = "08:00:00:00:01:11"
NH_MAC_2 = "08:00:00:00:02:22"


def forwarded(dst: str, port: int, nh_mac: str, ttl: int = 64) -> tuple[int, bytes]:
    """The packet ipv4_forward emits: next-hop MAC, old dst as src, TTL-1, fresh checksum."""
    return port, bytes(ipv4_udp(dst=dst, ttl=ttl - 1, eth_dst=nh_mac, eth_src=SWITCH_MAC))


def routed_switch(make_switch):
    sw = make_switch()
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.1.0", 24)},
                 "MyIngress.ipv4_forward", {"dstAddr": NH_MAC_1, "port": 2})
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.0.0", 16)},
                 "MyIngress.ipv4_forward", {"dstAddr": NH_MAC_2, "port": 3})
    return sw


def test_lpm_forwarding_rewrites_macs_ttl_and_checksum(make_switch):
    sw = routed_switch(make_switch)
    out = sw.process(1, bytes(ipv4_udp(dst="10.0.1.5")))
    assert_outputs(out, [forwarded("10.0.1.5", 2, NH_MAC_1)])


def test_longest_prefix_wins_and_shorter_prefix_catches_the_rest(make_switch):
    sw = routed_switch(make_switch)
    assert_outputs(sw.process(1, bytes(ipv4_udp(dst="10.0.1.200"))),
                   [forwarded("10.0.1.200", 2, NH_MAC_1)])
    assert_outputs(sw.process(1, bytes(ipv4_udp(dst="10.0.77.1", ttl=9))),
                   [forwarded("10.0.77.1", 3, NH_MAC_2, ttl=9)])


def test_table_miss_runs_default_drop(make_switch):
    sw = routed_switch(make_switch)
    assert sw.process(1, bytes(ipv4_udp(dst="192.168.1.1"))) == []


def test_bare_value_on_lpm_key_is_a_host_route(make_switch):
    sw = make_switch()
    sw.table_add("ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.1.1"},
                 "ipv4_forward", {"dstAddr": NH_MAC_1, "port": 4})
    assert_outputs(sw.process(0, bytes(ipv4_udp(dst="10.0.1.1"))),
                   [forwarded("10.0.1.1", 4, NH_MAC_1)])
    assert sw.process(0, bytes(ipv4_udp(dst="10.0.1.2"))) == []


def test_default_action_can_be_replaced(make_switch):
    sw = make_switch()
    sw.table_set_default("MyIngress.ipv4_lpm", "MyIngress.ipv4_forward",
                         {"dstAddr": NH_MAC_2, "port": 7})
    assert_outputs(sw.process(0, bytes(ipv4_udp(dst="172.16.0.1"))),
                   [forwarded("172.16.0.1", 7, NH_MAC_2)])


def test_expiring_ttl_is_dropped(make_switch):
    sw = routed_switch(make_switch)
    assert sw.process(1, bytes(ipv4_udp(dst="10.0.1.5", ttl=1))) == []
    assert sw.process(1, bytes(ipv4_udp(dst="10.0.1.5", ttl=0))) == []
    assert_outputs(sw.process(1, bytes(ipv4_udp(dst="10.0.1.5", ttl=2))),
                   [forwarded("10.0.1.5", 2, NH_MAC_1, ttl=2)])


def test_bad_ipv4_checksum_is_dropped(make_switch):
    sw = routed_switch(make_switch)
    pkt = ipv4_udp(dst="10.0.1.5")
    good = bytes(pkt)
    bad = bytearray(good)
    bad[24] ^= 0xFF  # IPv4 header checksum high byte (14 + 10)
    assert sw.process(1, bytes(bad)) == []
    assert len(sw.process(1, good)) == 1


def test_non_ipv4_is_dropped(make_switch):
    sw = routed_switch(make_switch)
    arp = Ether(dst="ff:ff:ff:ff:ff:ff", src="00:00:00:00:01:01") / ARP(pdst="10.0.1.5")
    assert sw.process(1, bytes(arp)) == []


def test_ipv4_options_are_dropped(make_switch):
    from scapy.layers.inet import IP, UDP, IPOption_NOP

    sw = routed_switch(make_switch)
    pkt = (Ether(dst=SWITCH_MAC) / IP(dst="10.0.1.5", options=[IPOption_NOP()] * 4)
           / UDP() / b"x")
    assert bytes(pkt)[14] == 0x46
    assert sw.process(1, bytes(pkt)) == []


def test_truncated_ipv4_header_is_dropped(make_switch):
    sw = routed_switch(make_switch)
    data = bytes(ipv4_udp(dst="10.0.1.5"))[: 14 + 12]
    assert sw.process(1, data) == []
