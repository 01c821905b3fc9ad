"""verify_checksum / update_checksum(_with_payload) with csum16 (BMv2 semantics):
a wrong IPv4 checksum sets checksum_error without dropping; the compute stage
rewrites the IPv4 checksum and the UDP checksum over pseudo-header + payload.
Expected packets are built by scapy, which computes both checksums itself."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("checksums", BOTH_BACKENDS)


def udp_packet(ttl: int, sport: int, payload: bytes) -> Ether:
    return (Ether(dst="0a:00:00:00:00:01", src="0a:00:00:00:00:02")
            / IP(src="192.0.2.1", dst="198.51.100.7", ttl=ttl, id=77)
            / UDP(sport=sport, dport=4793) / payload)


@pytest.mark.parametrize("payload", [b"even payload", b"odd payload", b"", bytes(range(256))])
def test_both_checksums_recomputed(make_switch, payload):
    out = make_switch().process(0, bytes(udp_packet(64, 1000, payload)))
    assert_outputs(out, [(1, bytes(udp_packet(63, 1001, payload)))])


def test_bad_ipv4_checksum_sets_checksum_error_and_is_not_dropped(make_switch):
    data = bytearray(bytes(udp_packet(64, 1000, b"abc")))
    data[24:26] = bytes([data[24] ^ 0x5A, data[25]])
    out = make_switch().process(0, bytes(data))
    assert_outputs(out, [(2, bytes(udp_packet(63, 1001, b"abc")))])


def test_bad_udp_checksum_sets_checksum_error(make_switch):
    data = bytearray(bytes(udp_packet(64, 1000, b"payload")))
    data[40] ^= 0x01  # UDP checksum low byte (14 + 20 + 6)
    out = make_switch().process(0, bytes(data))
    assert_outputs(out, [(2, bytes(udp_packet(63, 1001, b"payload")))])


def test_corrupted_udp_payload_sets_checksum_error(make_switch):
    data = bytes(udp_packet(64, 1000, b"payload"))
    out = make_switch().process(0, data[:-1] + b"X")
    assert_outputs(out, [(2, bytes(udp_packet(63, 1001, b"payloaX")))])


def test_zero_udp_checksum_is_not_verified(make_switch):
    pkt = udp_packet(64, 1000, b"nocsum")
    pkt[UDP].chksum = 0
    out = make_switch().process(0, bytes(pkt))
    assert_outputs(out, [(1, bytes(udp_packet(63, 1001, b"nocsum")))])


def test_non_udp_ipv4_only_gets_the_header_checksum(make_switch):
    def icmp_like(ttl):
        return (Ether(dst="0a:00:00:00:00:01", src="0a:00:00:00:00:02")
                / IP(src="192.0.2.1", dst="198.51.100.7", ttl=ttl, proto=1, id=5) / b"\x08\x00ping")

    out = make_switch().process(0, bytes(icmp_like(10)))
    assert_outputs(out, [(1, bytes(icmp_like(9)))])
