"""Choosing the back end (python / c / auto), refusals with their cause, and the
control plane driving the C tables, registers and counters through SoftSwitch."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.native import selection
from netweft.emulation.native.build import compiler
from netweft.emulation.switch import SoftSwitch, SwitchError
from netweft.p4.compiler import compile_p4_source

from .programs import program

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

# a digest of a signed field: not covered by the native back end
UNCOVERED = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
struct hs { h_t h; }
struct m_t { int<8> y; }
struct learn_t { int<8> y; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; digest<learn_t>(1, { m.y }); }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def frame(dst: str, ttl: int = 64) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:01") / IP(dst=dst, ttl=ttl) / UDP() / b"data")


def test_c_refuses_an_uncovered_program_with_the_construct_and_its_place():
    prog = compile_p4_source(UNCOVERED, "uncovered.p4")
    with pytest.raises(SwitchError, match=r"uncovered\.p4:\d+:\d+: .*digest"):
        SoftSwitch(prog, backend="c")


def test_auto_falls_back_to_python_saying_why_once(capsys):
    prog = compile_p4_source(UNCOVERED, "uncovered_auto.p4")
    first = SoftSwitch(prog, backend="auto")
    second = SoftSwitch(prog, backend="auto")
    assert (first.backend, second.backend) == ("python", "python")
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "uncovered_auto.p4" in ln]
    assert len(lines) == 1 and "using the Python back end" in lines[0] and "digest" in lines[0]
    assert first.process(0, b"\x07")[0] == (1, b"\x07")


def test_auto_runs_a_covered_program_natively_and_traces_on_python():
    from netweft.emulation.packet_trace import PacketTrace

    assert SoftSwitch(program("basic_forward"), backend="auto").backend == "c"
    traced = SoftSwitch(program("basic_forward"), backend="auto", trace=PacketTrace(lambda _line: None))
    assert traced.backend == "python"


def test_the_environment_chooses_when_the_caller_does_not(monkeypatch):
    monkeypatch.setenv("NETWEFT_SWITCH_BACKEND", "c")
    assert SoftSwitch(program("basic_forward")).backend == "c"
    monkeypatch.setenv("NETWEFT_SWITCH_BACKEND", "fast")
    with pytest.raises(SwitchError, match="unknown switch back end 'fast'"):
        SoftSwitch(program("basic_forward"))
    monkeypatch.delenv("NETWEFT_SWITCH_BACKEND")
    default = SoftSwitch(program("basic_forward")).backend
    assert default == ("python" if selection.DEFAULT_BACKEND == "python" else "c")


@pytest.mark.parametrize("backend", ["python", "c"])
def test_table_updates_reach_the_data_plane(backend):
    sw = SoftSwitch(program("basic_forward"), backend=backend)
    t, fwd = "MyIngress.ipv4_lpm", "MyIngress.ipv4_forward"
    wide = sw.table_add(t, {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)}, fwd,
                        {"dstAddr": "08:00:00:00:01:11", "port": 1})
    narrow = sw.table_add(t, {"hdr.ipv4.dstAddr": ("10.0.1.0", 24)}, fwd,
                          {"dstAddr": "08:00:00:00:02:22", "port": 2})
    assert [p for p, _ in sw.process(0, frame("10.0.1.9"))] == [2]
    sw.table_modify(t, narrow, fwd, {"dstAddr": "08:00:00:00:03:33", "port": 3})
    assert [p for p, _ in sw.process(0, frame("10.0.1.9"))] == [3]
    sw.table_delete(t, narrow)
    assert [p for p, _ in sw.process(0, frame("10.0.1.9"))] == [1]
    sw.table_set_default(t, fwd, {"dstAddr": "08:00:00:00:04:44", "port": 4})
    assert [p for p, _ in sw.process(0, frame("11.0.0.1"))] == [4]
    sw.table_clear(t)
    assert [p for p, _ in sw.process(0, frame("10.0.0.1"))] == [4]
    assert sw.table_entries(t) == [] and wide not in sw.table_entries(t)


@pytest.mark.parametrize("backend", ["python", "c"])
def test_registers_and_counters_are_shared_with_the_control_plane(backend):
    sw = SoftSwitch(program("ecmp_spray"), backend=backend)
    sw.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                 "MyIngress.set_group", {"group_id": 3, "group_size": 4, "mode": 1})
    for member in range(4):
        sw.table_add("MyIngress.group_members", {"meta.group_id": 3, "meta.member": member},
                     "MyIngress.set_next_hop", {"dmac": "08:00:00:00:00:01",
                                                "port": member + 1})
    sw.register_write("MyIngress.spray_cursor", 3, 2)
    assert [p for p, _ in sw.process(0, frame("10.1.1.1"))] == [3]
    assert sw.register_read("MyIngress.spray_cursor", 3) == 3
    assert sw.counter_read("MyEgress.tx_port", 3) == (1, len(frame("10.1.1.1")))
    sw.counter_reset("MyEgress.tx_port")
    sw.register_reset("MyIngress.spray_cursor")
    assert sw.counter_read("MyEgress.tx_port", 3) == (0, 0)
    assert [p for p, _ in sw.process(0, frame("10.1.1.1"))] == [1]


def test_updates_from_another_thread_while_packets_flow():
    """A P4Runtime server writes from its own threads: every packet sees a whole table."""
    import threading

    sw = SoftSwitch(program("basic_forward"), backend="c")
    t, fwd = "MyIngress.ipv4_lpm", "MyIngress.ipv4_forward"
    sw.table_add(t, {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)}, fwd,
                 {"dstAddr": "08:00:00:00:01:11", "port": 1})
    stop = threading.Event()

    def churn() -> None:
        n = 0
        while not stop.is_set():
            e = sw.table_add(t, {"hdr.ipv4.dstAddr": (f"10.{n % 200}.0.0", 16)}, fwd,
                             {"dstAddr": "08:00:00:00:02:22", "port": 2})
            sw.table_delete(t, e)
            n += 1

    writer = threading.Thread(target=churn)
    writer.start()
    try:
        ports = {p for _ in range(3000) for p, _f in sw.process(0, frame("10.7.1.1"))}
    finally:
        stop.set()
        writer.join()
    assert ports <= {1, 2} and 1 in ports
