"""Tables: match kinds, priorities (P4Runtime: the larger number wins), const
entries (program order, or explicit `priority = n`, larger wins by default),
default actions, @name annotations, hit/miss/action_run, directional params."""

from __future__ import annotations

import struct

import pytest

from .harness import BOTH_BACKENDS, switch_factory

make_switch = switch_factory("tables", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b8")
KEYS = "!BBHHBI"
RESULT = "!BBBB"


def packet(which: int, e: int = 0, t: int = 0, r: int = 0, o: int = 0, lk: int = 0,
           result: tuple[int, int, int, int] = (0, 0, 0, 0)) -> bytes:
    return ETH + struct.pack(KEYS, which, e, t, r, o, lk) + struct.pack(RESULT, *result) + b"pl"


def result_of(sw, which: int, **keys) -> tuple[int, int, int, int]:
    """Run one packet; check nothing but the result header changed; return it."""
    pkt = packet(which, **keys)
    out = sw.process(0, pkt)
    assert len(out) == 1, out
    port, data = out[0]
    assert port == 1
    keys_end = 14 + struct.calcsize(KEYS)
    assert data[:keys_end] == pkt[:keys_end] and data[keys_end + 4:] == b"pl"
    return struct.unpack(RESULT, data[keys_end:keys_end + 4])


def test_exact_hit_and_miss_with_apply_hit(make_switch):
    sw = make_switch()
    sw.table_add("TIngress.t_exact", {"hdr.keys.e": 7}, "TIngress.set_pair", {"id": 5, "param": 9})
    assert result_of(sw, 1, e=7) == (5, 9, 1, 0)
    assert result_of(sw, 1, e=8) == (0, 0, 2, 0)


def test_action_run_switch(make_switch):
    sw = make_switch()
    sw.table_add("t_exact", {"hdr.keys.e": 1}, "set_result", {"id": 1})
    sw.table_add("t_exact", {"hdr.keys.e": 2}, "set_pair", {"id": 2, "param": 3})
    assert result_of(sw, 11, e=1) == (1, 0, 0, 0x10)
    assert result_of(sw, 11, e=2) == (2, 3, 0, 0x20)
    assert result_of(sw, 11, e=3) == (0, 0, 0, 0x30)  # NoAction ran: default arm


def test_ternary_larger_priority_wins(make_switch):
    sw = make_switch()
    sw.table_add("t_ternary", {"hdr.keys.t": (0x1200, 0xFF00)}, "set_result", {"id": 1},
                 priority=10)
    sw.table_add("t_ternary", {"hdr.keys.t": (0x0034, 0x00FF)}, "set_result", {"id": 2},
                 priority=20)
    sw.table_add("t_ternary", {"hdr.keys.t": (0x0000, 0x0000)}, "set_result", {"id": 3},
                 priority=1)
    assert result_of(sw, 2, t=0x1234)[0] == 2
    assert result_of(sw, 2, t=0x12FF)[0] == 1
    assert result_of(sw, 2, t=0xAB34)[0] == 2
    assert result_of(sw, 2, t=0xABCD)[0] == 3


def test_ternary_bare_value_is_an_exact_mask(make_switch):
    sw = make_switch()
    sw.table_add("t_ternary", {"hdr.keys.t": 0x4242}, "set_result", {"id": 4}, priority=1)
    assert result_of(sw, 2, t=0x4242)[0] == 4
    assert result_of(sw, 2, t=0x4243)[0] == 0


def test_range_match_and_priority(make_switch):
    sw = make_switch()
    sw.table_add("t_range", {"hdr.keys.r": (100, 200)}, "set_result", {"id": 1}, priority=5)
    sw.table_add("t_range", {"hdr.keys.r": (150, 160)}, "set_result", {"id": 2}, priority=50)
    assert result_of(sw, 3, r=99)[0] == 0
    assert result_of(sw, 3, r=100)[0] == 1
    assert result_of(sw, 3, r=150)[0] == 2
    assert result_of(sw, 3, r=160)[0] == 2
    assert result_of(sw, 3, r=161)[0] == 1
    assert result_of(sw, 3, r=200)[0] == 1
    assert result_of(sw, 3, r=201)[0] == 0


def test_optional_wildcard_and_value(make_switch):
    sw = make_switch()
    sw.table_add("t_optional", {"hdr.keys.e": 1, "hdr.keys.o": None}, "set_result", {"id": 1},
                 priority=1)
    sw.table_add("t_optional", {"hdr.keys.e": 1, "hdr.keys.o": 9}, "set_result", {"id": 2},
                 priority=2)
    assert result_of(sw, 4, e=1, o=9)[0] == 2
    assert result_of(sw, 4, e=1, o=8)[0] == 1
    assert result_of(sw, 4, e=2, o=9)[0] == 0


def test_lpm_longest_prefix_regardless_of_insertion_order(make_switch):
    sw = make_switch()
    sw.table_add("t_lpm", {"hdr.keys.l": ("10.1.2.0", 24)}, "set_result", {"id": 24})
    sw.table_add("t_lpm", {"hdr.keys.l": ("10.1.2.128", 25)}, "set_result", {"id": 25})
    sw.table_add("t_lpm", {"hdr.keys.l": ("0.0.0.0", 0)}, "set_result", {"id": 0x77})
    sw.table_add("t_lpm", {"hdr.keys.l": ("10.0.0.0", 8)}, "set_result", {"id": 8})
    assert result_of(sw, 5, lk=0x0A010281)[0] == 25
    assert result_of(sw, 5, lk=0x0A010201)[0] == 24
    assert result_of(sw, 5, lk=0x0A090909)[0] == 8
    assert result_of(sw, 5, lk=0xC0A80001)[0] == 0x77


def test_lpm_miss_runs_default_and_reports_miss(make_switch):
    sw = make_switch()
    sw.table_add("t_lpm", {"hdr.keys.l": (0x0A000000, 8)}, "set_result", {"id": 8})
    assert result_of(sw, 5, lk=0x0B000000) == (0xEE, 0, 2, 0)
    assert result_of(sw, 5, lk=0x0A000000) == (8, 0, 0, 0)


def test_multiple_match_kinds_in_one_key(make_switch):
    sw = make_switch()
    sw.table_add("t_multi", {"hdr.keys.e": 3, "hdr.keys.t": (0, 0), "hdr.keys.r": (0, 0xFFFF)},
                 "set_result", {"id": 1}, priority=1)
    sw.table_add("t_multi", {"hdr.keys.e": 3, "hdr.keys.t": (0x00F0, 0x00F0),
                             "hdr.keys.r": (10, 20)}, "set_result", {"id": 2}, priority=2)
    assert result_of(sw, 6, e=3, t=0x00F0, r=15)[0] == 2
    assert result_of(sw, 6, e=3, t=0x00F0, r=21)[0] == 1
    assert result_of(sw, 6, e=3, t=0x0070, r=15)[0] == 1
    assert result_of(sw, 6, e=4, t=0x00F0, r=15)[0] == 0


def test_name_annotations_give_control_plane_names(make_switch):
    sw = make_switch()
    sw.table_add("TIngress.renamed", {"tenant": 6}, "TIngress.set_pair", {"id": 6, "param": 66})
    assert result_of(sw, 7, e=6)[:2] == (6, 66)
    assert result_of(sw, 7, e=5)[0] == 0xEE


def test_const_entries_in_program_order(make_switch):
    sw = make_switch()
    assert result_of(sw, 8, t=0x1234)[0] == 1
    assert result_of(sw, 8, t=0x12AB)[0] == 1
    assert result_of(sw, 8, t=0x9999)[0] == 3


def test_const_entries_with_explicit_priorities(make_switch):
    sw = make_switch()
    assert result_of(sw, 9, t=0x1234)[0] == 2
    assert result_of(sw, 9, t=0x12AB)[0] == 1
    assert result_of(sw, 9, t=0x9999)[0] == 3


@pytest.mark.parametrize("e, r, expected", [
    (1, 0, (10, 1)), (1, 99, (10, 1)), (1, 100, (11, 2)), (1, 0xFFFF, (11, 2)),
    (2, 1234, (12, 3)), (3, 5, (0, 0)),
])
def test_const_entries_with_tuples_and_ranges(make_switch, e, r, expected):
    assert result_of(make_switch(), 10, e=e, r=r)[:2] == expected


def test_directional_action_parameters(make_switch):
    assert result_of(make_switch(), 12, e=40)[1] == 41
    assert result_of(make_switch(), 12, e=255)[1] == 0  # 255 + 1 wraps in bit<8>


def test_table_entries_do_not_leak_between_switches(make_switch):
    sw = make_switch()
    sw.table_add("t_exact", {"hdr.keys.e": 7}, "set_result", {"id": 5})
    assert result_of(make_switch(), 1, e=7) == (0, 0, 2, 0)


def test_slice_and_validity_keys(make_switch):
    sw = make_switch()
    sw.table_add("t_slice_key", {"top_octet": 10, "hdr.keys.$valid$": True},  # p4c's name
                 "set_result", {"id": 10})
    sw.table_add("t_slice_key", {"top_octet": 11, "hdr.keys.isValid()": False},
                 "set_result", {"id": 11})  # the source spelling names the same key
    assert result_of(sw, 13, lk=0x0A0B0C0D)[0] == 10
    assert result_of(sw, 13, lk=0x0B000000)[0] == 0  # keys is valid: the False entry misses
    assert result_of(sw, 13, lk=0x0C000000)[0] == 0


def test_default_action_with_arguments_from_the_program(make_switch):
    sw = make_switch()
    assert result_of(sw, 14, e=1)[:2] == (0x42, 0x43)
    sw.table_set_default("t_default_args", "set_pair", {"id": 1, "param": 2})
    assert result_of(sw, 14, e=1)[:2] == (1, 2)


def test_const_default_action_cannot_be_changed(make_switch):
    sw = make_switch()
    with pytest.raises(Exception):  # noqa: B017 - the contract names no exception type
        sw.table_set_default("t_const_exact", "set_pair", {"id": 9, "param": 9})
    assert result_of(sw, 10, e=3, r=5)[:2] == (0, 0)


def test_tables_with_const_entries_reject_new_entries(make_switch):
    sw = make_switch()
    with pytest.raises(Exception):  # noqa: B017
        sw.table_add("t_const_order", {"hdr.keys.t": (0x9999, 0xFFFF)}, "set_result", {"id": 9},
                     priority=100)
    assert result_of(sw, 8, t=0x9999)[0] == 3


def test_duplicate_entry_is_rejected_and_the_first_kept(make_switch):
    sw = make_switch()
    sw.table_add("t_exact", {"hdr.keys.e": 3}, "set_result", {"id": 1})
    with pytest.raises(Exception):  # noqa: B017
        sw.table_add("t_exact", {"hdr.keys.e": 3}, "set_result", {"id": 2})
    assert result_of(sw, 1, e=3)[0] == 1


def test_match_values_as_int_bytes_and_strings(make_switch):
    """The contract's value forms: int, bytes (big-endian), and IPv4 strings."""
    sw = make_switch()
    sw.table_add("t_exact", {"hdr.keys.e": b"\x07"}, "set_result", {"id": 1})
    sw.table_add("t_lpm", {"hdr.keys.l": (b"\x0a\x01\x00\x00", 16)}, "set_result", {"id": 2})
    sw.table_add("t_lpm", {"hdr.keys.l": ("10.2.0.0", 16)}, "set_result", {"id": 3})
    sw.table_add("t_ternary", {"hdr.keys.t": (b"\x12\x00", b"\xff\x00")}, "set_result",
                 {"id": 4}, priority=1)
    assert result_of(sw, 1, e=7)[0] == 1
    assert result_of(sw, 5, lk=0x0A01FFFF)[0] == 2
    assert result_of(sw, 5, lk=0x0A020304)[0] == 3
    assert result_of(sw, 2, t=0x12AB)[0] == 4
