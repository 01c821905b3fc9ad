"""Aggregation packets to and from bytes: UDP payloads and whole Ethernet frames.

The layout is ``agg_t`` of ``p4/include/aggregation_headers.p4`` (described in
``docs/aggregation.md``; :mod:`netweft.transport.collectives.aggregation.layer` is its scapy
layer). This is the host library's fast path: ``struct`` for the 16-byte
header and numpy for the K big-endian int32 lanes, no scapy per packet. K is
the job's (the switch program's ``AGG_LANES``, 64 unless compiled otherwise):
a packet carries as many lanes as its values. Malformed payloads (short, wrong
version or lane count) decode to None, so drivers count and drop them.
"""

from __future__ import annotations

import struct

import numpy as np

from netweft.transport.collectives.aggregation.layer import (
    AGG_LANES,
    AGG_UDP_PORT,
    AGG_VERSION,
    FLAG_RESULT,
    FLAG_RETRANSMIT,
    HEADER_LEN,
    HEADER_STRUCT,
    LANES_DTYPE,
    PACKET_LEN,
    packet_len,
)
from netweft.transport.collectives.aggregation.worker import AggregationPacket

__all__ = ["AGG_LANES", "AGG_UDP_PORT", "PACKET_LEN", "packet_len", "decode_payload", "encode_payload",
           "FrameTemplate", "frame_payload"]

ETH_IPV4_UDP_LEN = 14 + 20 + 8


def encode_payload(packet: AggregationPacket, result: bool = False) -> bytes:
    """The UDP payload of ``packet`` (a contribution unless ``result``)."""
    flags = (FLAG_RESULT if result else 0) | (FLAG_RETRANSMIT if packet.retransmit else 0)
    values = np.asarray(packet.values)
    if values.ndim != 1 or not 1 <= values.size <= 0xFFFF:
        raise ValueError(f"an aggregation packet carries a vector of lanes, got {values.shape}")
    head = HEADER_STRUCT.pack(AGG_VERSION, flags, packet.job_id, packet.slot,
                              (packet.pool & 1) << 7, packet.worker_id, packet.block,
                              packet.exponent, values.size)
    return head + values.astype(LANES_DTYPE).tobytes()


def decode_payload(payload: bytes, lanes: int = AGG_LANES) -> tuple[AggregationPacket, int] | None:
    """(packet, flags) from a UDP payload, or None if it is not a well-formed packet of
    ``lanes`` lanes (the job's K)."""
    if len(payload) < packet_len(lanes):
        return None
    (version, flags, job_id, slot, pool_byte, worker_id, block, exponent,
     count) = HEADER_STRUCT.unpack_from(payload)
    if version != AGG_VERSION or count != lanes:
        return None
    values = np.frombuffer(payload, dtype=LANES_DTYPE, count=lanes,
                           offset=HEADER_LEN).astype(np.int32)
    packet = AggregationPacket(job_id, slot, pool_byte >> 7, worker_id, block, exponent,
                               values, retransmit=bool(flags & FLAG_RETRANSMIT))
    return packet, flags


def _checksum(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class FrameTemplate:
    """Ethernet/IPv4/UDP headers for a host's aggregation packets (fixed payload length,
    so the IPv4 checksum is computed once; the UDP checksum is 0, which IPv4 allows),
    for packets of ``lanes`` lanes."""

    def __init__(self, src_mac: str, dst_mac: str, src_ip: str, dst_ip: str,
                 src_port: int = AGG_UDP_PORT, dst_port: int = AGG_UDP_PORT,
                 lanes: int = AGG_LANES) -> None:
        self.lanes = lanes
        eth = (bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", ""))
               + b"\x08\x00")
        total = 20 + 8 + packet_len(lanes)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 17, 0,
                                   bytes(map(int, src_ip.split("."))),
                                   bytes(map(int, dst_ip.split(".")))))
        ip[10:12] = struct.pack("!H", _checksum(bytes(ip)))
        udp = struct.pack("!HHHH", src_port, dst_port, 8 + packet_len(lanes), 0)
        self.header = eth + bytes(ip) + udp

    def frame(self, packet: AggregationPacket) -> bytes:
        """The whole frame of a contribution."""
        if len(packet.values) != self.lanes:
            raise ValueError(f"this host's packets carry {self.lanes} lanes, got "
                             f"{len(packet.values)}")
        return self.header + encode_payload(packet)


def frame_payload(frame: bytes) -> bytes | None:
    """The UDP payload of an Ethernet/IPv4/UDP frame to or from the aggregation port."""
    if len(frame) < ETH_IPV4_UDP_LEN or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    ihl = (frame[14] & 0x0F) * 4
    udp = 14 + ihl
    if len(frame) < udp + 8:
        return None
    sport, dport = struct.unpack_from("!HH", frame, udp)
    if AGG_UDP_PORT not in (sport, dport):
        return None
    return frame[udp + 8:]
