"""p4/fabric.p4 drops malformed and unroutable packets and counts them by reason
(FabricIngress.drops); no input makes the switch fail."""

from __future__ import annotations

import random

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from .fabric_switch import HOST_PORT, SWITCH_MAC, fabric_switch, route_port, uet_request

PARSER_ERROR, NOT_IP, TTL, NO_ROUTE, BAD_LENGTH = 1, 2, 3, 4, 7


def routed_switch():
    sw = fabric_switch()
    route_port(sw, "10.1.0.0", 16, 1)
    route_port(sw, "fd00:1::", 32, 1)
    return sw


def drops(sw, reason: int) -> int:
    return sw.counter_read("FabricIngress.drops", reason)[0]


def test_truncated_and_malformed_headers_are_parser_errors():
    sw = routed_switch()
    good = uet_request()
    bad_ihl = bytearray(good)
    bad_ihl[14] = 0x44                                  # IPv4 ihl 4 (< 5)
    frames = [good[:10], good[:14 + 12], bytes(bad_ihl),
              good[:14 + 20 + 8 + 30]]            # UDP length 1020 > 72: PDS + kept bytes cut
    for frame in frames:
        assert sw.process(HOST_PORT, frame) == []
    assert drops(sw, PARSER_ERROR) == len(frames)
    assert sw.stats["drop_parser_error"] == len(frames)
    assert len(sw.process(HOST_PORT, good)) == 1


def test_lengths_that_disagree_with_the_frame_are_dropped():
    sw = routed_switch()
    lying_udp = bytes(Ether(dst=SWITCH_MAC) / IP(src="10.0.0.5", dst="10.1.0.7")
                      / UDP(sport=1, dport=4793, len=400) / (b"u" * 100))
    short_udp = bytes(Ether(dst=SWITCH_MAC) / IP(src="10.0.0.5", dst="10.1.0.7")
                      / UDP(sport=1, dport=9, len=6) / (b"u" * 10))
    long_ip = bytes(Ether(dst=SWITCH_MAC) / IP(src="10.0.0.5", dst="10.1.0.7", len=1500)
                    / UDP(sport=1, dport=9) / (b"u" * 10))
    long_ipv6 = bytes(Ether(dst=SWITCH_MAC) / IPv6(src="fd00:9::1", dst="fd00:1::1", plen=900)
                      / UDP(sport=1, dport=9) / (b"u" * 10))
    ip_len_below_header = bytes(Ether(dst=SWITCH_MAC) / IP(src="10.0.0.5", dst="10.1.0.7", len=12)
                                / UDP(sport=1, dport=9) / (b"u" * 10))
    frames = [lying_udp, short_udp, long_ip, long_ipv6, ip_len_below_header]
    for frame in frames:
        assert sw.process(HOST_PORT, frame) == []
    assert drops(sw, BAD_LENGTH) == len(frames)
    padded = uet_request(payload=4) + bytes(20)          # Ethernet padding is fine
    assert len(sw.process(HOST_PORT, padded)) == 1


def test_non_ip_expiring_and_unroutable_packets_are_dropped_by_reason():
    sw = routed_switch()
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.1.0.7"))
    assert sw.process(HOST_PORT, arp) == []
    assert sw.process(HOST_PORT, uet_request(ttl=1)) == []
    assert sw.process(HOST_PORT, uet_request(ttl=0)) == []
    assert sw.process(HOST_PORT, uet_request(ttl=1, src="fd00:9::1", dst="fd00:1::1")) == []
    assert sw.process(HOST_PORT, uet_request(dst="10.2.0.1")) == []
    assert [drops(sw, r) for r in (NOT_IP, TTL, NO_ROUTE)] == [1, 3, 1]
    assert len(sw.process(HOST_PORT, uet_request(ttl=2))) == 1


def test_random_bytes_and_mutated_packets_never_fail_the_switch():
    sw = routed_switch()
    rng = random.Random(7)
    base = [uet_request(), uet_request(src="fd00:9::1", dst="fd00:1::1"),
            bytes(Ether(dst=SWITCH_MAC) / IP(dst="10.1.0.1") / UDP(dport=4795) / (b"\x02" * 12)),
            bytes(Ether(dst=SWITCH_MAC) / IPv6(dst="fd00:1::1") / UDP(dport=4795) / (b"\x01" * 30))]
    sent = 0
    for _ in range(300):
        frame = bytearray(rng.choice(base))
        for _ in range(rng.randint(1, 6)):
            frame[rng.randrange(len(frame))] = rng.randrange(256)
        frame = frame[:rng.randint(0, len(frame))]
        for port, out in sw.process(HOST_PORT, bytes(frame)):
            assert port == 1 and len(out) <= len(frame) + 4
            sent += 1
    dropped = sum(drops(sw, r) for r in range(8))
    assert sent + dropped == 300
