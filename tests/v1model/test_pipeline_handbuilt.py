"""The back end on a hand-built typed IR program (independent of the front end)."""

import pytest
from handbuilt_ir import build
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.pipeline.compiled import lower_program
from netweft.emulation.switch import SoftSwitch, SwitchError
from netweft.emulation.v1model.match_table import TableError

PROG = build()


def frame(dst="08:00:00:00:01:11", ttl=9, payload=b"hello"):
    return bytes(Ether(dst=dst, src="00:00:00:00:00:01") / IP(dst="10.0.0.1", ttl=ttl)
                 / UDP(sport=1, dport=2) / payload)


def test_program_is_lowered_once():
    assert lower_program(PROG) is lower_program(PROG)
    assert "def RUN_ingress" in lower_program(PROG).source


def test_miss_runs_the_default_drop():
    sw = SoftSwitch(PROG)
    assert sw.process(0, frame()) == []
    assert sw.stats["dropped"] == 1


def test_hit_forwards_and_rewrites_ttl_keeping_the_payload():
    sw = SoftSwitch(PROG)
    sw.table_add("MyIngress.t", {"hdr.ethernet.dstAddr": "08:00:00:00:01:11"},
                 "MyIngress.fwd", {"port": 3})
    out = sw.process(0, frame(ttl=9))
    assert [p for p, _ in out] == [3]
    pkt = Ether(out[0][1])
    assert pkt[IP].ttl == 8
    assert bytes(pkt[UDP].payload) == b"hello"
    assert len(out[0][1]) == len(frame())


def test_ttl_wraps_around_at_zero():
    sw = SoftSwitch(PROG)
    sw.table_add("t", {"dstAddr": "08:00:00:00:01:11"}, "fwd", {"port": 1})
    out = sw.process(0, frame(ttl=0))
    assert Ether(out[0][1])[IP].ttl == 255


def test_non_ipv4_keeps_the_unparsed_bytes():
    sw = SoftSwitch(PROG)
    sw.table_add("t", {"dstAddr": "08:00:00:00:01:11"}, "fwd", {"port": 2})
    data = bytes(Ether(dst="08:00:00:00:01:11", type=0x86DD)) + b"\x01\x02\x03"
    assert sw.process(5, data) == [(2, data)]


def test_short_packet_is_not_dropped_by_the_parser():
    # PacketTooShort: ethernet stays invalid, the table is skipped, egress_spec stays 0
    sw = SoftSwitch(PROG)
    data = b"\x08\x00\x00\x00\x01\x11\x00"
    assert sw.process(4, data) == [(0, data)]


def test_control_plane_errors_are_clear():
    sw = SoftSwitch(PROG)
    with pytest.raises(SwitchError, match="unknown table"):
        sw.table_add("nope", {}, "fwd", {"port": 1})
    with pytest.raises(TableError, match="does not fit in 9 bits"):
        sw.table_add("t", {"dstAddr": 1}, "fwd", {"port": 600})
    with pytest.raises(SwitchError, match="0..511"):
        sw.process(512, frame())
    with pytest.raises(SwitchError, match="must be bytes"):
        sw.process(1, "not bytes")


def test_multicast_group_and_clone_session_validation():
    sw = SoftSwitch(PROG)
    sw.mc_group_set(1, [(1, 0), (2, 1)])
    with pytest.raises(SwitchError):
        sw.mc_group_set(0, [(1, 0)])
    with pytest.raises(SwitchError):
        sw.clone_session_set(1, 900)


def test_the_compiled_code_cache_lets_programs_go():
    import gc
    import weakref

    from handbuilt_ir import build

    prog = build()
    SoftSwitch(prog).process(0, frame())
    ref = weakref.ref(prog)
    del prog
    gc.collect()
    assert ref() is None
