"""Scapy layer for netweft's in-network aggregation header (docs/aggregation.md).

Field names are those of ``agg_t`` in ``p4/include/aggregation_headers.p4``, the
one P4 declaration of the format; tests compare the two. Importing this module
binds the layer to UDP port 61440 in either direction (contributions go to it,
results come from it)::

    from netweft.transport.collectives.aggregation import layer as agg
    pkt = IP(dst="10.0.0.254") / UDP(sport=40000) / agg.Aggregation(
        job_id=1, slot=3, worker_id=2, lanes=list(range(agg.AGG_LANES)))
    bytes(pkt)                                  # dport 61440 filled in
    agg.Aggregation(raw_payload).lanes           # K signed 32-bit integers

``HEADER_STRUCT`` and ``LANES_DTYPE`` give the same layout to code that packs
packets without scapy (the host library's fast path).
"""

from __future__ import annotations

import struct

from scapy.fields import (
    BitField,
    ByteField,
    FieldListField,
    FlagsField,
    IntField,
    ShortField,
    SignedIntField,
    SignedShortField,
)
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_bottom_up, bind_top_down

AGG_UDP_PORT = 61440
AGG_VERSION = 1
AGG_LANES = 64  # K by default: 32-bit lanes per packet, one quantization block (Tofino-sized)
MIN_LANES, MAX_LANES = 64, 1024  # what ``-D AGG_LANES=K`` accepts (multiples of 32)
AGG_MAX_WORKERS = 32  # one bit per worker in a slot's bitmap

FLAG_RESULT = 0x01  # set by the switch: the lanes are the sum over the job's workers
FLAG_RETRANSMIT = 0x02  # set by a worker on a contribution it sends again
FLAG_RESENT = 0x04  # set by the switch on a result unicast again to a retransmitting worker
FLAG_NAMES = ["RESULT", "RETRANSMIT", "RESENT"]  # least significant bit first

# version, flags, job_id, slot, pool<<7 | reserved, worker_id, block, exponent, lane_count
HEADER_STRUCT = struct.Struct("!BBHHBBIhH")
HEADER_LEN = HEADER_STRUCT.size  # 16 bytes before the lanes
LANES_DTYPE = ">i4"  # numpy dtype of the lanes: big-endian int32
PACKET_LEN = HEADER_LEN + 4 * AGG_LANES  # UDP payload bytes of a 64-lane packet: 272


def check_lanes(lanes: int) -> int:
    """``lanes`` if a program compiled with ``-D AGG_LANES=lanes`` exists (a multiple of
    32 from 64 to 1024), else ValueError."""
    if (not isinstance(lanes, int) or isinstance(lanes, bool) or not
            MIN_LANES <= lanes <= MAX_LANES or lanes % 32):
        raise ValueError(f"lanes must be a multiple of 32 from {MIN_LANES} to {MAX_LANES}, "
                         f"got {lanes!r}")
    return lanes


def packet_len(lanes: int = AGG_LANES) -> int:
    """UDP payload bytes of a packet of ``lanes`` lanes (header + 4 bytes a lane)."""
    return HEADER_LEN + 4 * lanes


class Aggregation(Packet):
    """The aggregation header and its K int32 lanes (one contribution or result)."""

    name = "netweft aggregation"
    fields_desc = [
        ByteField("version", AGG_VERSION),
        FlagsField("flags", 0, 8, FLAG_NAMES),
        ShortField("job_id", 0),
        ShortField("slot", 0),
        BitField("pool", 0, 1),
        BitField("reserved", 0, 7),
        ByteField("worker_id", 0),
        IntField("block", 0),
        SignedShortField("exponent", 0),
        ShortField("lane_count", AGG_LANES),
        FieldListField("lanes", [0] * AGG_LANES, SignedIntField("lane", 0),
                       count_from=lambda pkt: pkt.lane_count),
    ]

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        """Pads a lanes list shorter than ``lane_count`` with zeros (a full-size packet)."""
        missing = HEADER_LEN + 4 * self.lane_count - len(pkt)
        return pkt + b"\0" * max(missing, 0) + pay

    def mysummary(self) -> str:
        kind = "result" if int(self.flags) & FLAG_RESULT else "contribution"
        return self.sprintf(f"agg {kind} job=%job_id% slot=%slot% pool=%pool% "
                            "worker=%worker_id% block=%block%")


def bind_port(port: int = AGG_UDP_PORT) -> None:
    """Decode UDP datagrams to or from ``port`` as aggregation packets (61440 on import)."""
    for direction in ("dport", "sport"):
        bind_bottom_up(UDP, Aggregation, **{direction: port})
        UDP.payload_guess.remove(({direction: port}, Aggregation))
        UDP.payload_guess.insert(0, ({direction: port}, Aggregation))


bind_port(AGG_UDP_PORT)
bind_top_down(UDP, Aggregation, sport=AGG_UDP_PORT, dport=AGG_UDP_PORT)
