"""Registers, counters and meters (v1model, BMv2 semantics): registers start at 0
and keep their declared width; counters count packets and received bytes;
meters and direct meters with no configuration colour everything GREEN (0)."""

from __future__ import annotations

import struct

from .harness import switch_factory
from .packets import assert_outputs

make_switch = switch_factory("stateful")

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88ba")
STATE = "!BBIBB"


def packet(op: int, index: int = 0, value: int = 0, color: int = 0xFF,
           direct_color: int = 0xFF, pad: int = 0) -> bytes:
    return ETH + struct.pack(STATE, op, index, value, color, direct_color) + bytes(pad)


def test_register_fetch_and_add(make_switch):
    sw = make_switch()
    assert_outputs(sw.process(0, packet(1, 3)), [(1, packet(1, 3, 0))])
    assert_outputs(sw.process(0, packet(1, 3)), [(1, packet(1, 3, 1))])
    assert sw.register_read("MyIngress.values", 3) == 2
    assert sw.register_read("values", 4) == 0


def test_register_written_by_control_plane_is_seen_by_data_plane(make_switch):
    sw = make_switch()
    sw.register_write("MyIngress.values", 7, 0xFFFFFFFF)
    assert_outputs(sw.process(0, packet(1, 7)), [(1, packet(1, 7, 0xFFFFFFFF))])
    assert sw.register_read("MyIngress.values", 7) == 0  # wrapped in bit<32>


def test_register_written_by_data_plane(make_switch):
    sw = make_switch()
    sw.process(0, packet(2, 9, 0xDEADBEEF))
    assert sw.register_read("MyIngress.values", 9) == 0xDEADBEEF


def test_narrow_register_wraps(make_switch):
    sw = make_switch()
    sw.process(0, packet(3, 1, 200))
    sw.process(0, packet(3, 1, 100))
    assert sw.register_read("MyIngress.small", 1) == (200 + 100) % 256


def test_registers_do_not_leak_between_switches(make_switch):
    sw = make_switch()
    sw.register_write("values", 2, 5)
    assert make_switch().register_read("values", 2) == 0


def test_counter_counts_packets_and_received_bytes(make_switch):
    sw = make_switch()
    lengths = []
    for pad in (0, 10, 100):
        pkt = packet(4, 2, pad=pad)
        lengths.append(len(pkt))
        sw.process(0, pkt)
    assert sw.counter_read("MyIngress.by_index", 2) == (3, sum(lengths))
    assert sw.counter_read("by_index", 3) == (0, 0)


def test_unconfigured_meter_is_green(make_switch):
    sw = make_switch()
    assert_outputs(sw.process(0, packet(5, 1)), [(1, packet(5, 1, color=0))])


def test_unconfigured_direct_meter_is_green(make_switch):
    sw = make_switch()
    sw.table_add("MyIngress.metered", {"hdr.st.index": 4}, "MyIngress.read_entry_meter", {})
    sw.table_add("MyIngress.counted", {"hdr.st.index": 4}, "MyIngress.count_entry", {})
    assert_outputs(sw.process(0, packet(6, 4)), [(1, packet(6, 4, direct_color=0))])
    # a miss runs NoAction and leaves the field alone
    assert_outputs(sw.process(0, packet(6, 5)), [(1, packet(6, 5))])
