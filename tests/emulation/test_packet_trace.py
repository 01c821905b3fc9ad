"""The per-packet trace: what it says about a packet's way, and that it is absent when off."""

from __future__ import annotations

from tm_helpers import probe_frame, probe_program, run

from netweft.emulation.links.port_options import parse_link_options
from netweft.emulation.packet_trace import PacketTrace, TracedTable
from netweft.emulation.switch import SoftSwitch
from netweft.emulation.v1model.match_table import MatchTable
from netweft.emulation.v1model.simple_switch import V1ModelDriver
from netweft.p4.compiler import compile_p4
from netweft.p4.programs import program


def _basic(trace: PacketTrace | None) -> SoftSwitch:
    path = program("basic_forward")
    sw = SoftSwitch(compile_p4(str(path), include_dirs=(str(path.parent),)), trace=trace)
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.1.0", 24)},
                 "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 2})
    return sw


def _udp(dst: str) -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    return bytes(Ether() / IP(dst=dst, ttl=9) / UDP(sport=5, dport=6) / b"hello")


def test_the_trace_follows_a_packet_through_parser_tables_and_ports():
    lines: list[str] = []
    sw = _basic(PacketTrace(lines.append))
    assert len(sw.process(1, _udp("10.0.1.7"))) == 1
    sw.process(1, _udp("10.9.9.9"))
    text = "\n".join(lines)
    for expected in [
        "[pkt 1] Processing packet received on port 1, 47 bytes",
        "[pkt 1] Parser 'BasicParser' entering state 'start'",
        "[pkt 1] Parser 'BasicParser' entering state 'parse_ipv4'",
        "valid headers: ethernet, ipv4",
        "[pkt 1] Pipeline 'ingress': start",
        "[pkt 1] Applying table 'MyIngress.ipv4_lpm' with key hdr.ipv4.dstAddr=0x0a000107",
        "Table 'MyIngress.ipv4_lpm': hit entry #0 [0x0a000100/24]; action "
        "MyIngress.ipv4_forward(8796093022481, 2)",
        "[pkt 1] Egress port is 2, priority 0",
        "[pkt 1] Transmitting packet of size 47 out of port 2",
        "[pkt 2] Table 'MyIngress.ipv4_lpm': miss; default action MyIngress.drop()",
        "[pkt 2] Dropping packet at the end of ingress",
    ]:
        assert expected in text, expected


def test_the_trace_reports_queue_decisions_link_loss_and_extern_calls():
    lines: list[str] = []
    sw = SoftSwitch(probe_program(), trace=PacketTrace(lines.append))
    for port, opts in parse_link_options(["2:rate=8mbit,queue=1", "3/out:loss=1"]).items():
        sw.configure_port(port, opts)
    run(sw, [(0, 1, probe_frame(2)) for _ in range(3)] + [(0, 1, probe_frame(3))])
    text = "\n".join(lines)
    assert "[pkt 1] Port 2 is idle: straight to egress" in text
    assert "[pkt 2] Enqueued on port 2 priority 0; the port now holds 1 packet(s)" in text
    assert "[pkt 3] Dropped: queue full on port 2 priority 0 (depth 1 packets)" in text
    assert "[pkt 2] Dequeued from port 2 queue 0: enq_qdepth 0, deq_qdepth 0, " \
           "deq_timedelta 1000 us" in text
    assert "[pkt 4] Lost on the link out of port 3" in text
    assert "[    0.001000] [pkt 2] Transmitting packet of size 1000 out of port 2" in text

    path = program("ecmp_spray")
    lines.clear()
    spray = SoftSwitch(compile_p4(str(path), include_dirs=(str(path.parent),)),
                       trace=PacketTrace(lines.append))
    spray.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                    "MyIngress.forward", {"dmac": "08:00:00:00:00:01", "port": 1})
    spray.process(2, _udp("10.1.2.3"))
    assert "[pkt 1] Extern 'MyEgress.tx_port'.count(1, 47)" in "\n".join(lines)


def test_without_a_trace_the_switch_runs_the_plain_pipeline():
    sw = _basic(None)
    assert type(sw.driver) is V1ModelDriver
    assert "TRACE_STATE" not in sw._lowered.source
    tables = [v for k, v in sw._ns.items() if k.startswith("TBL_")]
    assert tables and all(type(t) is MatchTable for t in tables)
    traced = _basic(PacketTrace(lambda _line: None))
    assert any(isinstance(v, TracedTable) for v in traced._ns.values())
    assert "TRACE_STATE(" in traced._lowered.source


def test_the_trace_names_a_parser_error_and_the_drop_it_caused():
    lines: list[str] = []
    sw = SoftSwitch(probe_program(), trace=PacketTrace(lines.append))
    sw.process(1, probe_frame(2)[:20])                      # too short for the probe header
    text = "\n".join(lines)
    assert "parser error error.PacketTooShort" in text
    assert "Dropping packet at the end of ingress after a parser error" in text
    assert sw.stats["drop_parser_error"] == 1
