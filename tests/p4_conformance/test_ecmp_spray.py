"""p4/ecmp_spray.p4: flow-hash ECMP (crc16 over the 5-tuple, UDP source port =
Ultra Ethernet entropy), per-packet round-robin spraying with a register
cursor, ECN marking against a per-port queue-depth threshold."""

from __future__ import annotations

import struct

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from . import reference_hashes as ref
from .harness import BOTH_BACKENDS, REPO_P4_DIR, switch_factory
from .packets import HOST_MAC, SWITCH_MAC, assert_outputs

make_switch = switch_factory(REPO_P4_DIR / "ecmp_spray.p4", BOTH_BACKENDS)

MEMBER_MACS = {port: f"08:00:00:00:0{port}:{port}{port}" for port in range(1, 5)}


def configured(make_switch, mode: int, size: int = 4, group: int = 7):
    sw = make_switch()
    sw.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("10.1.0.0", 16)},
                 "MyIngress.set_group", {"group_id": group, "group_size": size, "mode": mode})
    sw.table_add("MyIngress.ipv6_routes", {"hdr.ipv6.dstAddr": ("fd00:1::", 32)},
                 "MyIngress.set_group", {"group_id": group, "group_size": size, "mode": mode})
    for member in range(size):
        port = member + 1
        sw.table_add("MyIngress.group_members",
                     {"meta.group_id": group, "meta.member": member},
                     "MyIngress.set_next_hop", {"dmac": MEMBER_MACS[port], "port": port})
    return sw


def uet_packet(sport: int, ttl: int = 64, tos: int = 0, eth_dst: str = SWITCH_MAC,
               eth_src: str = HOST_MAC, dst: str = "10.1.2.3") -> bytes:
    return bytes(Ether(dst=eth_dst, src=eth_src)
                 / IP(src="10.0.0.5", dst=dst, ttl=ttl, tos=tos, id=9)
                 / UDP(sport=sport, dport=4793) / b"uet pds packet")


def flow_member(sport: int, size: int, dst: str = "10.1.2.3", dport: int = 4793,
                proto: int = 17) -> int:
    key = bytes(map(int, "10.0.0.5".split("."))) + bytes(map(int, dst.split("."))) \
        + bytes([proto]) + struct.pack("!HH", sport, dport)
    return ref.crc16(key) % size


def test_flow_hash_follows_crc16_of_the_five_tuple(make_switch):
    sw = configured(make_switch, mode=0)
    ports = set()
    for sport in range(49152, 49152 + 24):
        port = flow_member(sport, 4) + 1
        ports.add(port)
        expected = uet_packet(sport, 63, eth_dst=MEMBER_MACS[port], eth_src=SWITCH_MAC)
        assert_outputs(sw.process(9, uet_packet(sport)), [(port, expected)])
    assert len(ports) > 1


def test_flow_hash_keeps_a_flow_on_one_path(make_switch):
    sw = configured(make_switch, mode=0)
    first = sw.process(9, uet_packet(50000))
    for _ in range(5):
        assert sw.process(9, uet_packet(50000)) == first


def test_flow_hash_for_tcp_uses_tcp_ports(make_switch):
    sw = configured(make_switch, mode=0, size=3)
    for sport in (1000, 2000, 3000, 4000):
        pkt = (Ether(dst=SWITCH_MAC, src=HOST_MAC) / IP(src="10.0.0.5", dst="10.1.2.3", id=1)
               / TCP(sport=sport, dport=443) / b"t")
        port = flow_member(sport, 3, dport=443, proto=6) + 1
        expected = (Ether(dst=MEMBER_MACS[port], src=SWITCH_MAC)
                    / IP(src="10.0.0.5", dst="10.1.2.3", id=1, ttl=63)
                    / TCP(sport=sport, dport=443) / b"t")
        assert_outputs(sw.process(9, bytes(pkt)), [(port, bytes(expected))])


def test_flow_hash_for_ipv6(make_switch):
    sw = configured(make_switch, mode=0)
    src, dst = "fd00:0::5", "fd00:1::9"
    for sport in (7000, 7001, 7002, 7003, 7004):
        pkt = (Ether(dst=SWITCH_MAC, src=HOST_MAC) / IPv6(src=src, dst=dst, hlim=10)
               / UDP(sport=sport, dport=4793) / b"v6")
        key = bytes(IPv6(src=src, dst=dst))[8:40] + bytes([17]) + struct.pack("!HH", sport, 4793)
        port = ref.crc16(key) % 4 + 1
        expected = (Ether(dst=MEMBER_MACS[port], src=SWITCH_MAC) / IPv6(src=src, dst=dst, hlim=9)
                    / UDP(sport=sport, dport=4793) / b"v6")
        assert_outputs(sw.process(9, bytes(pkt)), [(port, bytes(expected))])


def test_spray_round_robins_packets_of_one_flow(make_switch):
    sw = configured(make_switch, mode=1, size=3)
    ports = []
    for _ in range(7):
        out = sw.process(9, uet_packet(50000))
        assert len(out) == 1
        ports.append(out[0][0])
    assert ports == [1, 2, 3, 1, 2, 3, 1]
    assert sw.register_read("MyIngress.spray_cursor", 7) == 7 % 3


def test_spray_cursor_set_by_control_plane(make_switch):
    sw = configured(make_switch, mode=1, size=4)
    sw.register_write("MyIngress.spray_cursor", 7, 2)
    assert [sw.process(9, uet_packet(1))[0][0] for _ in range(3)] == [3, 4, 1]
    sw.register_write("MyIngress.spray_cursor", 7, 100)  # out of range: restarts at 0
    assert sw.process(9, uet_packet(1))[0][0] == 1


def test_single_next_hop_route(make_switch):
    sw = make_switch()
    sw.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("10.2.0.0", 16)},
                 "MyIngress.forward", {"dmac": "08:00:00:00:09:99", "port": 6})
    out = sw.process(1, uet_packet(5, dst="10.2.0.1"))
    assert_outputs(out, [(6, uet_packet(5, 63, eth_dst="08:00:00:00:09:99",
                                        eth_src=SWITCH_MAC, dst="10.2.0.1"))])


def test_drops(make_switch):
    sw = configured(make_switch, mode=0)
    assert sw.process(9, uet_packet(1, dst="10.9.0.1")) == []  # no route
    assert sw.process(9, uet_packet(1, ttl=1)) == []  # TTL expires
    assert sw.process(9, bytes(Ether(dst=SWITCH_MAC) / ARP())) == []  # not IP
    assert sw.process(9, uet_packet(1)[:30]) == []  # truncated IPv4 header
    bad_ihl = bytearray(uet_packet(1))
    bad_ihl[14] = 0x44  # ihl 4: verify() in the shared sub-parser fails
    assert sw.process(9, bytes(bad_ihl)) == []


def test_ecn_marks_ect_at_threshold(make_switch):
    sw = configured(make_switch, mode=1, size=1)
    sw.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": 1},
                 "MyEgress.set_ecn_threshold", {"threshold": 0})
    for ecn_in, ecn_out in ((0, 0), (1, 3), (2, 3), (3, 3)):
        out = sw.process(9, uet_packet(3, tos=0x68 | ecn_in))
        assert_outputs(out, [(1, uet_packet(3, 63, tos=0x68 | ecn_out,
                                            eth_dst=MEMBER_MACS[1], eth_src=SWITCH_MAC))])
    length = len(uet_packet(3))
    assert sw.counter_read("MyEgress.ecn_marked", 1) == (2, 2 * length)
    assert sw.counter_read("MyEgress.tx_port", 1) == (4, 4 * length)


def test_ecn_not_marked_below_threshold_or_without_config(make_switch):
    sw = configured(make_switch, mode=1, size=2)
    sw.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": 1},
                 "MyEgress.set_ecn_threshold", {"threshold": 10})
    for port in (1, 2):  # port 1: depth 0 < 10; port 2: no threshold configured
        out = sw.process(9, uet_packet(3, tos=2))
        assert_outputs(out, [(port, uet_packet(3, 63, tos=2, eth_dst=MEMBER_MACS[port],
                                               eth_src=SWITCH_MAC))])
    assert sw.counter_read("MyEgress.ecn_marked", 1) == (0, 0)


def test_ipv4_options_are_kept_and_covered_by_the_checksum(make_switch):
    """The shared parser extracts options into a varbit; the checksum update
    lists them, so the recomputed checksum covers the whole header."""
    from scapy.layers.inet import IPOption_NOP, IPOption_Router_Alert

    sw = configured(make_switch, mode=1, size=1)

    def pkt(ttl: int, eth_dst: str, eth_src: str) -> bytes:
        return bytes(Ether(dst=eth_dst, src=eth_src)
                     / IP(src="10.0.0.5", dst="10.1.2.3", ttl=ttl, id=4,
                          options=[IPOption_Router_Alert(), IPOption_NOP(), IPOption_NOP(),
                                   IPOption_NOP(), IPOption_NOP()])
                     / UDP(sport=9, dport=4793) / b"opts")

    sent = pkt(64, SWITCH_MAC, HOST_MAC)
    assert sent[14] == 0x47  # ihl 7: 8 bytes of options
    assert_outputs(sw.process(9, sent), [(1, pkt(63, MEMBER_MACS[1], SWITCH_MAC))])


def test_vlan_tagged_traffic_keeps_its_tag(make_switch):
    from scapy.layers.l2 import Dot1Q

    sw = configured(make_switch, mode=0)
    for sport in (100, 200, 300):
        port = flow_member(sport, 4) + 1

        def pkt(ttl: int, eth_dst: str, eth_src: str, sport: int = sport) -> bytes:
            return bytes(Ether(dst=eth_dst, src=eth_src) / Dot1Q(vlan=42, prio=5)
                         / IP(src="10.0.0.5", dst="10.1.2.3", ttl=ttl, id=9)
                         / UDP(sport=sport, dport=4793) / b"vlan")

        out = sw.process(9, pkt(64, SWITCH_MAC, HOST_MAC))
        assert_outputs(out, [(port, pkt(63, MEMBER_MACS[port], SWITCH_MAC))])


def test_ipv6_ecn_marking(make_switch):
    sw = configured(make_switch, mode=1, size=1)
    sw.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": 1},
                 "MyEgress.set_ecn_threshold", {"threshold": 0})
    for ecn_in, ecn_out in ((0, 0), (2, 3)):
        def pkt(hlim: int, tc: int, eth_dst: str, eth_src: str) -> bytes:
            return bytes(Ether(dst=eth_dst, src=eth_src)
                         / IPv6(src="fd00::5", dst="fd00:1::9", hlim=hlim, tc=tc)
                         / UDP(sport=1, dport=4793) / b"v6")

        out = sw.process(9, pkt(5, 0xB8 | ecn_in, SWITCH_MAC, HOST_MAC))
        assert_outputs(out, [(1, pkt(4, 0xB8 | ecn_out, MEMBER_MACS[1], SWITCH_MAC))])
    assert sw.counter_read("MyEgress.ecn_marked", 1)[0] == 1
