"""Packet builders and output comparison for the conformance tests.

Expected packets are built independently with scapy (or by hand from the
protocol layouts), never captured from the switch under test.
"""

from __future__ import annotations

from scapy.layers.inet import IP, UDP
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
