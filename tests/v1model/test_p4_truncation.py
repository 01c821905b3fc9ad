"""truncate() with BMv2 simple_switch's semantics (bm_sim Packet::truncate and
simple_switch.cpp): the smallest requested length wins and survives from ingress
to egress; multicast copies (clone_with_phv) and recirculated packets
(clone_no_phv of the deparsed buffer) are new packets without a truncation length.
"""

import struct

import pytest
from p4_switch import switch

PAYLOAD = bytes(range(100, 130))  # 30 bytes after the 4-byte control header


def packet(op: int, passes: int = 0, seen: int = 0) -> bytes:
    return struct.pack("!BBH", op, passes, seen) + PAYLOAD


@pytest.fixture
def sw():
    return switch("truncation")


def test_smallest_length_wins_across_ingress_and_egress(sw):
    assert sw.process(0, packet(0)) == [(1, packet(0, 0, 34)[:12])]


def test_multicast_copies_are_not_truncated_by_ingress(sw):
    sw.mc_group_set(1, [(2, 0), (3, 0)])
    full = packet(1, 0, 34)
    assert sw.process(0, packet(1)) == [(2, full), (3, full)]


def test_recirculated_packet_is_the_whole_deparsed_packet(sw):
    # the second pass sees the full length and is sent whole
    assert sw.process(0, packet(2)) == [(1, packet(2, 1, 34))]


def test_truncate_in_egress_cuts_the_sent_packet(sw):
    assert sw.process(0, packet(3)) == [(1, packet(3, 0, 34)[:10])]

