"""netweft's reliable-multicast header ``nw_mcast_t`` (UDP port 4795), as fabric.p4 reads it.

docs/fabric.md is the reference; ``p4/include/fabric_headers.p4`` declares the same
12 bytes (big-endian): kind (1 DATA, 2 ACK), flags (0x01 AGGREGATED, set by the
switch that completed an aggregation), group, seq, receivers (an ACK's bitmap of
the receivers acknowledging ``seq``; 0 in DATA). An ACK is exactly the header.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MULTICAST_PORT = 4795
DATA, ACK = 1, 2
F_AGGREGATED = 0x01
HEADER = struct.Struct("!BBHII")
MAX_GROUP = 0xFFFF
MAX_SEQ = 0xFFFFFFFF


class MalformedMulticast(ValueError):
    """A datagram that is not a valid ``nw_mcast_t`` DATA or ACK; says why."""


@dataclass(frozen=True)
class McastHeader:
    kind: int
    flags: int
    group: int
    seq: int
    receivers: int


def encode_data(group: int, seq: int, payload: bytes | memoryview) -> bytes:
    return HEADER.pack(DATA, 0, group, seq, 0) + bytes(payload)


def encode_ack(group: int, seq: int, receivers: int) -> bytes:
    return HEADER.pack(ACK, 0, group, seq, receivers)


def decode(datagram: bytes | memoryview) -> tuple[McastHeader, memoryview]:
    """The header and the payload after it; :class:`MalformedMulticast` if invalid."""
    if len(datagram) < HEADER.size:
        raise MalformedMulticast(f"{len(datagram)} bytes, shorter than the 12-byte header")
    header = McastHeader(*HEADER.unpack_from(datagram))
    if header.kind not in (DATA, ACK):
        raise MalformedMulticast(f"unknown kind {header.kind}")
    if header.kind == ACK and len(datagram) != HEADER.size:
        raise MalformedMulticast(f"an ACK is exactly 12 bytes, got {len(datagram)}")
    return header, memoryview(datagram)[HEADER.size:]
