"""p4/fabric.p4 marks CE on ECN-capable packets whose enq_qdepth is at or above the
egress port's threshold (traffic manager in virtual time)."""

from __future__ import annotations

from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from netweft.emulation.links.port_options import parse_link_options

from .fabric_switch import HOST_PORT, QUEUES, fabric_switch, route_port, run, uet_request

THRESHOLD = 5
NOT_ECT, ECT1, ECT0, CE = range(4)


def ecn_switch(threshold: int | None = THRESHOLD):
    sw = fabric_switch()
    route_port(sw, "10.1.0.0", 16, 1)
    route_port(sw, "fd00:1::", 32, 1)
    if threshold is not None:
        sw.table_add(QUEUES + "ecn_config", {"standard_metadata.egress_port": 1},
                     QUEUES + "set_ecn_threshold", {"threshold": threshold})
    sw.configure_port(1, parse_link_options(["1:rate=10mbit,queue=64"])[1])
    return sw


def ecn_of(frame: bytes) -> int:
    pkt = Ether(frame)
    return pkt[IP].tos & 3 if IP in pkt else pkt[IPv6].tc & 3


def test_ect_packets_are_marked_from_the_threshold_on():
    for ect in (ECT0, ECT1):
        sw = ecn_switch()
        out = run(sw, [(0, HOST_PORT, uet_request(sport=50000 + k, tos=ect)) for k in range(20)])
        marks = [ecn_of(f) for _, _, f in out]
        # frame k found k - 1 queued (frame 0 left at once)
        assert marks == [CE if max(k - 1, 0) >= THRESHOLD else ect for k in range(20)]
        assert sw.counter_read(QUEUES + "ecn_marked", 1)[0] == marks.count(CE) == 14
        assert all(IP(bytes(Ether(f)[IP])).chksum == Ether(f)[IP].chksum for _, _, f in out)


def test_ipv6_ect_packets_are_marked():
    sw = ecn_switch()
    frames = [uet_request(sport=50000 + k, tos=ECT0, src="fd00:9::1", dst="fd00:1::2")
              for k in range(20)]
    marks = [ecn_of(f) for _, _, f in run(sw, [(0, HOST_PORT, f) for f in frames])]
    assert marks.count(CE) == 14


def test_no_marks_below_the_threshold_without_ect_or_without_a_setting():
    spaced = ecn_switch()                      # one frame per 2 ms: the queue never builds
    out = run(spaced, [(k * 2_000_000, HOST_PORT, uet_request(sport=50000 + k, tos=ECT0))
                       for k in range(20)])
    assert {ecn_of(f) for _, _, f in out} == {ECT0}
    not_ect = ecn_switch()
    out = run(not_ect, [(0, HOST_PORT, uet_request(sport=50000 + k, tos=NOT_ECT))
                        for k in range(20)])
    assert {ecn_of(f) for _, _, f in out} == {NOT_ECT}
    unset = ecn_switch(threshold=None)
    out = run(unset, [(0, HOST_PORT, uet_request(sport=50000 + k, tos=ECT0)) for k in range(20)])
    assert {ecn_of(f) for _, _, f in out} == {ECT0}
    assert unset.counter_read(QUEUES + "ecn_marked", 1)[0] == 0
