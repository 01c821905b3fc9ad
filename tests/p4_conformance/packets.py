"""Packet builders and output comparison for the conformance tests.

Expected packets are built independently with scapy (or by hand from the
protocol layouts), never captured from the switch under test.
"""

from __future__ import annotations

import struct

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

HOST_MAC = "00:00:00:00:01:01"
SWITCH_MAC = "08:00:00:00:01:00"


def ipv4_udp(
    dst: str = "10.0.1.1",
    src: str = "10.0.0.1",
    sport: int = 1234,
    dport: int = 4793,
    ttl: int = 64,
    tos: int = 0,
    payload: bytes = b"netweft payload!",
    eth_dst: str = SWITCH_MAC,
    eth_src: str = HOST_MAC,
) -> Ether:
    """An Ethernet/IPv4/UDP packet with correct checksums."""
    return (
        Ether(dst=eth_dst, src=eth_src)
        / IP(dst=dst, src=src, ttl=ttl, tos=tos, id=1)
        / UDP(sport=sport, dport=dport)
        / payload
    )


def ipv4_tcp(dst: str = "10.0.1.1", src: str = "10.0.0.1", sport: int = 5555,
             dport: int = 80, ttl: int = 64, payload: bytes = b"tcp data") -> Ether:
    """An Ethernet/IPv4/TCP packet with correct checksums."""
    return (
        Ether(dst=SWITCH_MAC, src=HOST_MAC)
        / IP(dst=dst, src=src, ttl=ttl, id=1)
        / TCP(sport=sport, dport=dport, flags="S", seq=1000)
        / payload
    )


def rebuilt(pkt: Ether) -> bytes:
    """Bytes of ``pkt`` with IPv4 checksum and lengths recomputed by scapy."""
    pkt = pkt.copy()
    if IP in pkt:
        del pkt[IP].chksum
    if UDP in pkt:
        del pkt[UDP].chksum
    if TCP in pkt:
        del pkt[TCP].chksum
    return bytes(pkt)


def ipv4_checksum(header: bytes) -> int:
    """RFC 1071 checksum of an IPv4 header whose checksum field is zero."""
    if len(header) % 2:
        header += b"\x00"
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def hexdiff(outputs: list[tuple[int, bytes]]) -> str:
    """Readable rendering of a list of (port, bytes) for assertion messages."""
    return "\n".join(f"port {port}: {data.hex()}" for port, data in outputs)


def assert_outputs(actual: list[tuple[int, bytes]], expected: list[tuple[int, bytes]],
                   ordered: bool = False) -> None:
    """Assert the switch produced exactly ``expected`` (as a multiset unless ``ordered``)."""
    actual = [(int(port), bytes(data)) for port, data in actual]
    if not ordered:
        actual = sorted(actual)
        expected = sorted(expected)
    assert actual == expected, (
        f"\nactual:\n{hexdiff(actual)}\nexpected:\n{hexdiff(expected)}"
    )
