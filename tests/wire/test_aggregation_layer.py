"""The aggregation header's scapy layer against its P4 declaration
(p4/include/aggregation_headers.p4) and docs/aggregation.md's layout."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.preprocessor import Preprocessor
from netweft.transport.collectives.aggregation import layer as agg

P4_HEADER = Path(__file__).resolve().parents[2] / "p4" / "include" / "aggregation_headers.p4"


def _p4_text(lanes: int | None = None) -> str:
    """The header file after the preprocessor (``-D AGG_LANES=lanes`` if given)."""
    defines = {"AGG_LANES": str(lanes)} if lanes else None
    return Preprocessor((P4_HEADER.parent,), defines).run_file(P4_HEADER).text


def _p4_fields(lanes: int | None = None) -> list[tuple[str, int]]:
    body = re.search(r"header agg_t \{(.*?)\n\}", _p4_text(lanes), re.S).group(1)
    return [(name, int(width)) for width, name in re.findall(r"bit<(\d+)>\s+(\w+);", body)]


def _p4_const(name: str) -> int:
    match = re.search(rf"const bit<\d+> {name}\s*=\s*(\w+);", _p4_text())
    return int(match.group(1), 0)


def _scapy_fields() -> list[tuple[str, int]]:
    """(name, bits) of the layer's fields, the lanes list spelled out as P4 does."""
    fields = []
    for field in agg.Aggregation.fields_desc:
        if field.name == "lanes":
            fields += [(f"lane{i}", 32) for i in range(agg.AGG_LANES)]
        elif hasattr(field, "size"):  # BitField, FlagsField: size in bits
            fields.append((field.name, field.size))
        else:
            fields.append((field.name, int(8 * field.sz)))
    return fields


def test_fields_match_the_p4_header():
    p4 = _p4_fields()
    assert _scapy_fields() == p4
    assert sum(width for _, width in p4) == 8 * agg.PACKET_LEN


def test_constants_match_the_p4_header():
    assert _p4_const("AGG_UDP_PORT") == agg.AGG_UDP_PORT
    assert _p4_const("AGG_VERSION") == agg.AGG_VERSION
    assert _p4_const("AGG_LANE_COUNT") == agg.AGG_LANES
    assert _p4_const("AGG_MAX_WORKERS") == agg.AGG_MAX_WORKERS
    assert _p4_const("AGG_FLAG_RESULT") == agg.FLAG_RESULT
    assert _p4_const("AGG_FLAG_RETRANSMIT") == agg.FLAG_RETRANSMIT
    assert _p4_const("AGG_FLAG_RESENT") == agg.FLAG_RESENT


@pytest.mark.parametrize("lanes", [96, 256, 1024])
def test_wider_packets_add_lanes_after_the_default_ones(lanes):
    fields = _p4_fields(lanes)
    assert fields[:len(_p4_fields())] == _p4_fields()
    assert fields[-lanes:] == [(f"lane{i}", 32) for i in range(lanes)]
    assert sum(width for _, width in fields) == 8 * agg.packet_len(lanes)
    assert f"AGG_LANE_COUNT = {lanes};" in _p4_text(lanes).replace("\n", " ")


@pytest.mark.parametrize("lanes", [32, 100, 2048])
def test_lane_counts_the_program_cannot_take_are_refused(lanes):
    with pytest.raises(P4Error, match="multiple of 32 from 64 to 1024"):
        _p4_text(lanes)
    with pytest.raises(ValueError, match="multiple of 32"):
        agg.check_lanes(lanes)


def test_bytes_follow_the_documented_layout():
    lanes = [(-1) ** i * (i * 1_000_003) for i in range(agg.AGG_LANES)]
    lanes[0], lanes[1] = -2**31, 2**31 - 1
    pkt = agg.Aggregation(flags="RESULT+RESENT", job_id=0x1234, slot=0x0506, pool=1,
                          worker_id=31, block=0xDEADBEEF, exponent=-126, lanes=lanes)
    raw = bytes(pkt)
    assert len(raw) == agg.PACKET_LEN == 272
    header = agg.HEADER_STRUCT.unpack(raw[:agg.HEADER_LEN])
    assert header == (1, 0x05, 0x1234, 0x0506, 0x80, 31, 0xDEADBEEF, -126, 64)
    assert np.frombuffer(raw[agg.HEADER_LEN:], dtype=agg.LANES_DTYPE).tolist() == lanes
    back = agg.Aggregation(raw)
    assert back.lanes == lanes and back.exponent == -126 and back.pool == 1
    assert back.flags == agg.FLAG_RESULT | agg.FLAG_RESENT


def test_short_lane_lists_are_padded_and_udp_binds_both_directions():
    frame = bytes(Ether() / IP(dst="10.0.0.254") / UDP(sport=40000)
                  / agg.Aggregation(job_id=7, lanes=[5, -6]))
    decoded = Ether(frame)
    assert decoded[UDP].dport == agg.AGG_UDP_PORT
    assert decoded[agg.Aggregation].lanes == [5, -6] + [0] * (agg.AGG_LANES - 2)
    assert len(frame) == 14 + 20 + 8 + agg.PACKET_LEN
    result = Ether(bytes(Ether() / IP() / UDP(sport=agg.AGG_UDP_PORT, dport=40000)
                         / bytes(decoded[agg.Aggregation])))
    assert result[agg.Aggregation].job_id == 7
