"""Tutorial-style v1model programs (written fresh in the style of the p4lang
tutorials): basic_tunnel, calc, ecn, mri, load_balance, source_routing,
multicast and qos.  Every expected packet is built independently here."""

from __future__ import annotations

import struct

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether

from . import reference_hashes as ref
from .harness import BOTH_BACKENDS, switch_factory
from .packets import SWITCH_MAC, assert_outputs, ipv4_udp

tunnel_switch = switch_factory("tut_basic_tunnel", BOTH_BACKENDS)
calc_switch = switch_factory("tut_calc", BOTH_BACKENDS)
ecn_switch = switch_factory("tut_ecn", BOTH_BACKENDS)
mri_switch = switch_factory("tut_mri", BOTH_BACKENDS)
lb_switch = switch_factory("tut_load_balance", BOTH_BACKENDS)
sr_switch = switch_factory("tut_source_routing", BOTH_BACKENDS)
mc_switch = switch_factory("tut_multicast", BOTH_BACKENDS)
qos_switch = switch_factory("tut_qos", BOTH_BACKENDS)

NH_MAC = "08:00:00:00:02:22"


def add_route(sw, prefix: str, length: int, port: int, mac: str = NH_MAC) -> None:
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (prefix, length)},
                 "MyIngress.ipv4_forward", {"dstAddr": mac, "port": port})


# --- basic_tunnel -----------------------------------------------------------

def tunnelled(dst_id: int) -> bytes:
    inner = bytes(IP(dst="10.0.2.2", src="10.0.1.1", ttl=64, id=1) / UDP(sport=1, dport=2) / b"t")
    return bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01", type=0x1212)) \
        + struct.pack("!HH", 0x0800, dst_id) + inner


def test_tunnel_forwarded_by_dst_id_unchanged(tunnel_switch):
    sw = tunnel_switch()
    sw.table_add("MyIngress.tunnel_exact", {"hdr.tunnel.dst_id": 2},
                 "MyIngress.tunnel_forward", {"port": 3})
    assert_outputs(sw.process(1, tunnelled(2)), [(3, tunnelled(2))])
    assert sw.process(1, tunnelled(5)) == []


def test_tunnel_program_routes_plain_ipv4(tunnel_switch):
    sw = tunnel_switch()
    add_route(sw, "10.0.2.0", 24, 4)
    out = sw.process(1, bytes(ipv4_udp(dst="10.0.2.2")))
    assert_outputs(out, [(4, bytes(ipv4_udp(dst="10.0.2.2", ttl=63, eth_dst=NH_MAC,
                                            eth_src=SWITCH_MAC)))])


# --- calc ------------------------------------------------------------------

A_MAC = bytes.fromhex("0a0000000001")
B_MAC = bytes.fromhex("0a0000000002")


def calc_frame(op: int, a: int, b: int, res: int = 0, dst=A_MAC, src=B_MAC,
               magic=(0x50, 0x34, 0x01)) -> bytes:
    return dst + src + b"\x12\x34" + struct.pack("!BBBBIII", *magic, op, a, b, res)


@pytest.mark.parametrize("op, a, b, result", [
    ("+", 5, 7, 12),
    ("+", 0xFFFFFFFF, 2, 1),
    ("-", 5, 7, (5 - 7) % 2**32),
    ("&", 0xF0F0, 0xFF00, 0xF000),
    ("|", 0xF0F0, 0x0F00, 0xFFF0),
    ("^", 0xFFFF, 0x0F0F, 0xF0F0),
])
def test_calc_answers_to_the_sender(calc_switch, op, a, b, result):
    out = calc_switch().process(6, calc_frame(ord(op), a, b))
    assert_outputs(out, [(6, calc_frame(ord(op), a, b, result, dst=B_MAC, src=A_MAC))])


def test_calc_unknown_operator_dropped(calc_switch):
    assert calc_switch().process(1, calc_frame(ord("*"), 2, 3)) == []


def test_calc_wrong_magic_dropped(calc_switch):
    assert calc_switch().process(1, calc_frame(ord("+"), 2, 3, magic=(0x50, 0x35, 0x01))) == []


def test_calc_too_short_for_lookahead_dropped(calc_switch):
    assert calc_switch().process(1, calc_frame(ord("+"), 2, 3)[:20]) == []


# --- ecn -------------------------------------------------------------------

def ecn_packet(tos: int, ttl: int = 64, forwarded: bool = False) -> bytes:
    pkt = ipv4_udp(dst="10.0.2.2", tos=tos, ttl=ttl)
    if forwarded:
        pkt = ipv4_udp(dst="10.0.2.2", tos=tos, ttl=ttl, eth_dst=NH_MAC, eth_src=SWITCH_MAC)
    return bytes(pkt)


def test_ecn_marking_disabled_by_default(ecn_switch):
    sw = ecn_switch()
    add_route(sw, "10.0.2.0", 24, 2)
    out = sw.process(1, ecn_packet(0xB8 | 2))
    assert_outputs(out, [(2, ecn_packet(0xB8 | 2, 63, True))])


@pytest.mark.parametrize("ecn_in, ecn_out", [(0, 0), (1, 3), (2, 3), (3, 3)])
def test_ecn_marks_ect_packets_at_threshold_zero(ecn_switch, ecn_in, ecn_out):
    sw = ecn_switch()
    add_route(sw, "10.0.2.0", 24, 2)
    sw.table_set_default("MyEgress.ecn_config", "MyEgress.set_threshold", {"threshold": 0})
    out = sw.process(1, ecn_packet(0xB8 | ecn_in))
    assert_outputs(out, [(2, ecn_packet(0xB8 | ecn_out, 63, True))])


def test_ecn_not_marked_below_threshold(ecn_switch):
    """process() bypasses queues, so enq_qdepth is 0, below a threshold of 5."""
    sw = ecn_switch()
    add_route(sw, "10.0.2.0", 24, 2)
    sw.table_set_default("MyEgress.ecn_config", "MyEgress.set_threshold", {"threshold": 5})
    assert_outputs(sw.process(1, ecn_packet(2)), [(2, ecn_packet(2, 63, True))])


# --- mri -------------------------------------------------------------------

MRI_OPTION = (0 << 7) | (2 << 5) | 31  # copyFlag 0, class 2 (debug), option 31


def mri_packet(traces: list[tuple[int, int]], ttl: int = 64, forwarded: bool = False) -> bytes:
    """Ethernet / IPv4 with the MRI option / UDP, the IPv4 checksum computed over
    the 20-byte base header as the program's update_checksum list does."""
    l4 = bytes(IP(src="10.0.1.1", dst="10.0.2.2") / UDP(sport=4000, dport=4001) / b"mri!")[20:]
    option = bytes([MRI_OPTION, 4 + 8 * len(traces)]) + struct.pack("!H", len(traces))
    option += b"".join(struct.pack("!II", swid, qdepth) for swid, qdepth in traces)
    ihl = 5 + len(option) // 4
    base = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(l4), 1, 0, ttl, 17, 0,
                       bytes([10, 0, 1, 1]), bytes([10, 0, 2, 2]))
    base = base[:10] + struct.pack("!H", ref.csum16(base)) + base[12:]
    if forwarded:
        eth = bytes(Ether(dst=NH_MAC, src=SWITCH_MAC, type=0x0800))
    else:
        eth = bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01", type=0x0800))
    return eth + base + option + l4


def mri_switch_with(mri_switch, swid: int):
    sw = mri_switch()
    add_route(sw, "10.0.2.0", 24, 2)
    sw.table_set_default("MyEgress.swtrace", "MyEgress.add_swtrace", {"swid": swid})
    return sw


def test_mri_first_hop_adds_a_trace(mri_switch):
    sw = mri_switch_with(mri_switch, 7)
    assert_outputs(sw.process(1, mri_packet([])), [(2, mri_packet([(7, 0)], 63, True))])


def test_mri_traces_accumulate_across_hops(mri_switch):
    first = mri_switch_with(mri_switch, 7).process(1, mri_packet([]))
    assert len(first) == 1
    # a second switch receives what the first one sent
    second_in = mri_packet([(7, 0)], 63)
    assert first[0][1][14:] == second_in[14:]
    out = mri_switch_with(mri_switch, 9).process(1, second_in)
    assert_outputs(out, [(2, mri_packet([(9, 0), (7, 0)], 62, True))])


def test_mri_parses_existing_traces(mri_switch):
    sw = mri_switch_with(mri_switch, 1)
    traces = [(5, 10), (4, 20), (3, 30)]
    assert_outputs(sw.process(1, mri_packet(traces)),
                   [(2, mri_packet([(1, 0)] + traces, 63, True))])


def test_mri_without_swtrace_configured_only_forwards(mri_switch):
    sw = mri_switch()
    add_route(sw, "10.0.2.0", 24, 2)
    assert_outputs(sw.process(1, mri_packet([(3, 3)])), [(2, mri_packet([(3, 3)], 63, True))])


# --- load_balance ------------------------------------------------------------

NHOPS = {0: ("00:00:00:00:02:02", "10.0.2.2", 2), 1: ("00:00:00:00:03:03", "10.0.3.3", 3)}
EGRESS_MACS = {2: "00:00:00:02:02:00", 3: "00:00:00:03:03:00"}


def lb_switch_configured(lb_switch):
    sw = lb_switch()
    sw.table_add("MyIngress.ecmp_group", {"hdr.ipv4.dstAddr": ("10.0.0.1", 32)},
                 "MyIngress.set_ecmp_select", {"ecmp_base": 0, "ecmp_count": 2})
    for select, (mac, ip, port) in NHOPS.items():
        sw.table_add("MyIngress.ecmp_nhop", {"meta.ecmp_select": select},
                     "MyIngress.set_nhop", {"nhop_dmac": mac, "nhop_ipv4": ip, "port": port})
    for port, mac in EGRESS_MACS.items():
        sw.table_add("MyEgress.send_frame", {"standard_metadata.egress_port": port},
                     "MyEgress.rewrite_mac", {"smac": mac})
    return sw


def test_load_balance_follows_crc16_of_the_five_tuple(lb_switch):
    sw = lb_switch_configured(lb_switch)
    chosen = set()
    for sport in range(1000, 1016):
        original = (Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01")
                    / IP(src="10.0.1.1", dst="10.0.0.1", ttl=64, id=1)
                    / TCP(sport=sport, dport=80, flags="S") / b"lb")
        original = Ether(bytes(original))
        key = bytes([10, 0, 1, 1, 10, 0, 0, 1, 6]) + struct.pack("!HH", sport, 80)
        select = ref.crc16(key) % 2
        chosen.add(select)
        mac, ip, port = NHOPS[select]
        expected = (Ether(dst=mac, src=EGRESS_MACS[port])
                    / IP(src="10.0.1.1", dst=ip, ttl=63, id=1)
                    / TCP(sport=sport, dport=80, flags="S", chksum=original[TCP].chksum)
                    / b"lb")
        assert_outputs(sw.process(1, bytes(original)), [(port, bytes(expected))])
    assert chosen == {0, 1}  # the flows above exercise both members


def test_load_balance_miss_is_overridden_by_member_zero(lb_switch):
    """As in BMv2: ecmp_group's default drop() only sets egress_spec to 511;
    ecmp_nhop still runs with meta.ecmp_select at its initial 0, hits member 0
    and its set_nhop writes egress_spec again, so the packet is forwarded."""
    sw = lb_switch_configured(lb_switch)
    original = Ether(bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01")
                             / IP(src="10.0.1.1", dst="10.9.9.9", id=1)
                             / TCP(sport=7, dport=8) / b"x"))
    mac, ip, port = NHOPS[0]
    expected = (Ether(dst=mac, src=EGRESS_MACS[port])
                / IP(src="10.0.1.1", dst=ip, id=1, ttl=63)
                / TCP(sport=7, dport=8, chksum=original[TCP].chksum) / b"x")
    assert_outputs(sw.process(1, bytes(original)), [(port, bytes(expected))])


# --- source_routing ------------------------------------------------------------

def routed(hops: list[int], ttl: int) -> bytes:
    inner = bytes(IP(src="10.0.1.1", dst="10.0.2.2", ttl=ttl, id=1) / UDP() / b"sr")
    if not hops:
        return bytes(Ether(dst="0a:00:00:00:00:02", src="0a:00:00:00:00:01", type=0x0800)) + inner
    stack = b"".join(struct.pack("!H", ((i == len(hops) - 1) << 15) | port)
                     for i, port in enumerate(hops))
    return bytes(Ether(dst="0a:00:00:00:00:02", src="0a:00:00:00:00:01", type=0x1234)) \
        + stack + inner


def test_source_routing_pops_one_hop_per_switch(sr_switch):
    out = sr_switch().process(1, routed([2, 3, 4], 64))
    assert_outputs(out, [(2, routed([3, 4], 63))])
    out = sr_switch().process(1, routed([3, 4], 63))
    assert_outputs(out, [(3, routed([4], 62))])


def test_source_routing_last_hop_restores_ipv4(sr_switch):
    assert_outputs(sr_switch().process(1, routed([4], 62)), [(4, routed([], 61))])


def test_source_routing_without_route_dropped(sr_switch):
    assert sr_switch().process(1, routed([], 64)) == []


# --- multicast ----------------------------------------------------------------

def mc_frame(dst: str, src: str = "0a:00:00:00:ff:ff") -> bytes:
    return bytes(Ether(dst=dst, src=src, type=0x0800) / IP(dst="10.0.0.9") / ICMP())


def test_multicast_floods_and_prunes_ingress_port(mc_switch):
    sw = mc_switch()
    sw.mc_group_set(1, [(1, 11), (2, 12), (3, 13)])
    out = sw.process(2, mc_frame("ff:ff:ff:ff:ff:ff"))
    assert_outputs(out, [
        (1, mc_frame("ff:ff:ff:ff:ff:ff", "0a:00:00:00:00:0b")),
        (3, mc_frame("ff:ff:ff:ff:ff:ff", "0a:00:00:00:00:0d")),
    ])


def test_known_unicast_mac_is_not_flooded(mc_switch):
    sw = mc_switch()
    sw.mc_group_set(1, [(1, 11), (2, 12), (3, 13)])
    sw.table_add("MyIngress.mac_lookup", {"hdr.ethernet.dstAddr": "08:00:00:00:03:33"},
                 "MyIngress.mac_forward", {"port": 3})
    assert_outputs(sw.process(1, mc_frame("08:00:00:00:03:33")),
                   [(3, mc_frame("08:00:00:00:03:33"))])


# --- qos --------------------------------------------------------------------

@pytest.mark.parametrize("proto, dscp", [("udp", 46), ("tcp", 10), ("icmp", 0)])
def test_qos_sets_dscp_by_protocol_and_keeps_ecn(qos_switch, proto, dscp):
    sw = qos_switch()
    add_route(sw, "10.0.2.0", 24, 2)
    l4 = {"udp": UDP(sport=1, dport=2), "tcp": TCP(sport=1, dport=2), "icmp": ICMP()}[proto]

    def pkt(tos: int, ttl: int, eth_dst: str, eth_src: str) -> bytes:
        return bytes(Ether(dst=eth_dst, src=eth_src)
                     / IP(src="10.0.1.1", dst="10.0.2.2", tos=tos, ttl=ttl, id=3)
                     / l4.copy() / b"qos")

    out = sw.process(1, pkt((20 << 2) | 1, 64, SWITCH_MAC, "00:00:00:00:01:01"))
    assert_outputs(out, [(2, pkt((dscp << 2) | 1, 63, NH_MAC, SWITCH_MAC))])


# --- firewall ---------------------------------------------------------------

INSIDE, OUTSIDE = "10.0.1.1", "10.0.3.3"
INSIDE_MAC, OUTSIDE_MAC = "08:00:00:00:01:11", "08:00:00:00:03:33"


def firewall_switch(fw_switch):
    sw = fw_switch()
    add_route(sw, INSIDE, 32, 1, INSIDE_MAC)
    add_route(sw, OUTSIDE, 32, 3, OUTSIDE_MAC)
    sw.table_add("MyIngress.check_ports", {"standard_metadata.ingress_port": 1,
                                           "standard_metadata.egress_spec": 3},
                 "MyIngress.set_direction", {"dir": 0})
    sw.table_add("MyIngress.check_ports", {"standard_metadata.ingress_port": 3,
                                           "standard_metadata.egress_spec": 1},
                 "MyIngress.set_direction", {"dir": 1})
    return sw


def tcp_segment(src: str, dst: str, sport: int, dport: int, flags: str, ttl: int = 64,
                eth_dst: str = SWITCH_MAC, eth_src: str = "00:00:00:00:00:99",
                chksum: int | None = None) -> bytes:
    tcp = TCP(sport=sport, dport=dport, flags=flags, seq=1)
    if chksum is not None:
        tcp.chksum = chksum
    return bytes(Ether(dst=eth_dst, src=eth_src) / IP(src=src, dst=dst, ttl=ttl, id=1) / tcp)


def forwarded_segment(data: bytes, dst_mac: str) -> bytes:
    pkt = Ether(data)
    return tcp_segment(pkt[IP].src, pkt[IP].dst, pkt[TCP].sport, pkt[TCP].dport,
                       str(pkt[TCP].flags), ttl=63, eth_dst=dst_mac, eth_src=SWITCH_MAC,
                       chksum=pkt[TCP].chksum)


def bloom_positions(src: str, dst: str, sport: int, dport: int) -> tuple[int, int]:
    key = bytes(map(int, src.split("."))) + bytes(map(int, dst.split("."))) \
        + struct.pack("!HH", sport, dport) + bytes([6])
    return ref.crc16(key) % 4096, ref.crc32(key) % 4096


fw_switch = switch_factory("tut_firewall", BOTH_BACKENDS)


def test_firewall_blocks_unsolicited_incoming_traffic(fw_switch):
    sw = firewall_switch(fw_switch)
    assert sw.process(3, tcp_segment(OUTSIDE, INSIDE, 80, 5555, "SA")) == []


def test_firewall_admits_replies_to_connections_opened_inside(fw_switch):
    sw = firewall_switch(fw_switch)
    syn = tcp_segment(INSIDE, OUTSIDE, 5555, 80, "S")
    assert_outputs(sw.process(1, syn), [(3, forwarded_segment(syn, OUTSIDE_MAC))])
    one, two = bloom_positions(INSIDE, OUTSIDE, 5555, 80)
    assert sw.register_read("MyIngress.bloom_filter_1", one) == 1
    assert sw.register_read("MyIngress.bloom_filter_2", two) == 1

    reply = tcp_segment(OUTSIDE, INSIDE, 80, 5555, "SA")
    assert_outputs(sw.process(3, reply), [(1, forwarded_segment(reply, INSIDE_MAC))])
    # a different connection from the same outside host is still blocked
    other_one, other_two = bloom_positions(INSIDE, OUTSIDE, 5555, 81)
    assert (other_one, other_two) != (one, two)  # no bloom-filter collision for it
    assert sw.process(3, tcp_segment(OUTSIDE, INSIDE, 81, 5555, "SA")) == []


def test_firewall_only_syn_opens_the_filter(fw_switch):
    sw = firewall_switch(fw_switch)
    ack = tcp_segment(INSIDE, OUTSIDE, 6000, 443, "A")
    assert_outputs(sw.process(1, ack), [(3, forwarded_segment(ack, OUTSIDE_MAC))])
    assert sw.process(3, tcp_segment(OUTSIDE, INSIDE, 443, 6000, "A")) == []
