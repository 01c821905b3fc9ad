"""p4/ecmp_spray.p4 marks CE once a queue passes its threshold (traffic manager, virtual time)."""

from __future__ import annotations

from functools import cache

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from tm_helpers import run

from netweft.emulation.links.port_options import parse_link_options
from netweft.emulation.switch import SoftSwitch
from netweft.p4.programs import program

THRESHOLD = 5
CE, ECT0 = 3, 2


@cache
def _ecmp_spray():
    from netweft.p4.compiler import compile_p4

    path = program("ecmp_spray")
    return compile_p4(str(path), include_dirs=(str(path.parent),))


def _switch() -> SoftSwitch:
    sw = SoftSwitch(_ecmp_spray())
    sw.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("10.1.0.0", 16)},
                 "MyIngress.forward", {"dmac": "08:00:00:00:00:01", "port": 1})
    sw.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": 1},
                 "MyEgress.set_ecn_threshold", {"threshold": THRESHOLD})
    sw.configure_port(1, parse_link_options(["1:rate=10mbit,queue=64"])[1])
    return sw


def _frame(tag: int, ecn: int) -> bytes:
    return bytes(Ether(dst="08:00:00:00:00:09") / IP(src="10.2.0.1", dst="10.1.0.7", tos=ecn)
                 / UDP(sport=1000 + tag, dport=4793) / (b"x" * 1000))


def test_ecmp_spray_marks_ce_once_the_queue_passes_its_threshold():
    sw = _switch()
    out = run(sw, [(0, 2, _frame(k, ECT0)) for k in range(20)])
    assert len(out) == 20
    marks = [IP(bytes(Ether(f).payload)).tos & 3 for _, _, f in out]
    # frame k found k - 1 frames queued (frame 0 left at once): CE from depth THRESHOLD on
    expected = [CE if max(k - 1, 0) >= THRESHOLD else ECT0 for k in range(20)]
    assert marks == expected
    assert marks.count(CE) == 20 - (THRESHOLD + 1)
    assert sw.counter_read("MyEgress.ecn_marked", 1)[0] == marks.count(CE)


def test_ecmp_spray_never_marks_without_a_queue_or_without_ect():
    sw = _switch()
    out = run(sw, [(0, 2, _frame(k, 0)) for k in range(20)])          # not ECN-capable
    assert {IP(bytes(Ether(f).payload)).tos & 3 for _, _, f in out} == {0}
    spaced = _switch()                                                # the queue never builds
    out = run(spaced, [(k * 2_000_000, 2, _frame(k, ECT0)) for k in range(20)])
    assert {IP(bytes(Ether(f).payload)).tos & 3 for _, _, f in out} == {ECT0}
