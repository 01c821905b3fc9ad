"""Registers, counters and meters (v1model, BMv2 semantics): registers start at 0
and keep their declared width; counters count packets and received bytes;
meters and direct meters with no configuration colour everything GREEN (0)."""

from __future__ import annotations

import struct

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("stateful", BOTH_BACKENDS)

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


def _colors(sw, op: int, index: int, count: int) -> list[int]:
    field = 6 if op == 5 else 7     # the colour byte the operation writes
    return [sw.process(0, packet(op, index))[0][1][14 + field] for _ in range(count)]


def test_meter_marks_green_yellow_red_and_refills_with_the_switch_clock(make_switch):
    now = [1_000_000]
    sw = make_switch(clock=lambda: now[0])
    # 1000 and 2000 packets/s (per microsecond), bursts of 1 and 2 packets
    sw.meter_set_rates("MyIngress.rate", [(0.001, 1), (0.002, 2)], index=2)
    assert _colors(sw, 5, 2, 3) == [0, 1, 2]
    now[0] += 1000       # one CIR token and two PIR tokens later
    assert _colors(sw, 5, 2, 2) == [0, 1]
    assert _colors(sw, 5, 3, 2) == [0, 0]      # another index is not configured


def test_direct_meter_colours_by_bytes(make_switch):
    now = [5_000]
    sw = make_switch(clock=lambda: now[0])
    entry = sw.table_add("MyIngress.metered", {"hdr.st.index": 4},
                         "MyIngress.read_entry_meter", {})
    size = len(packet(6, 4))
    sw.direct_meter_set_rates("MyIngress.metered", entry, [(1e-9, size), (2e-9, 2 * size)])
    assert entry.meter.get_rates() == [(1e-9, size), (2e-9, 2 * size)]
    assert _colors(sw, 6, 4, 3) == [0, 1, 2]


def test_direct_counter_counts_hits_and_survives_other_deletes(make_switch):
    sw = make_switch()
    entry = sw.table_add("MyIngress.counted", {"hdr.st.index": 4}, "MyIngress.count_entry", {})
    other = sw.table_add("MyIngress.counted", {"hdr.st.index": 5}, "MyIngress.count_entry", {})
    size = len(packet(6, 4))
    for _ in range(3):
        sw.process(0, packet(6, 4))
    sw.process(0, packet(6, 9))      # a miss counts nothing
    assert sw.direct_counter_read("MyIngress.counted", entry) == (3, 3 * size)
    sw.table_delete("MyIngress.counted", other)
    assert sw.direct_counter_read("MyIngress.counted", entry) == (3, 3 * size)
    entry.counter[:] = [10, 0]
    sw.process(0, packet(6, 4))
    assert list(entry.counter) == [11, size]
