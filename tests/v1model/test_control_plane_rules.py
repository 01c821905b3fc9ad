"""Control-plane rules the switch enforces: entry priorities as P4Runtime requires,
and value-set members given per field."""

import pytest
from p4_switch import switch

from netweft.emulation.switch import SwitchError
from netweft.emulation.v1model.match_table import TableError
from netweft.emulation.v1model.value_sets import ValueSet


@pytest.fixture
def ternary_switch():
    return switch("control_plane_rules")


def frame(key: int) -> bytes:
    return bytes([key, 0])


def test_ternary_entry_without_a_priority_is_rejected(ternary_switch):
    with pytest.raises(TableError, match="needs a priority"):
        ternary_switch.table_add("tern", {"hdr.h.k": (0x10, 0xF0)}, "to", {"p": 2})
    # nothing was installed: the packet takes the default action
    assert ternary_switch.process(0, frame(0x12)) == [(9, frame(0x12))]


def test_ternary_entry_with_a_negative_priority_is_rejected(ternary_switch):
    with pytest.raises(TableError, match="non-negative"):
        ternary_switch.table_add("tern", {"hdr.h.k": (0x10, 0xF0)}, "to", {"p": 2},
                                 priority=-3)


def test_priority_zero_is_the_lowest_rank(ternary_switch):
    # p4c's STF tests use 0 (only P4Runtime itself forbids it)
    ternary_switch.table_add("tern", {"hdr.h.k": (0x10, 0xF0)}, "to", {"p": 2}, priority=0)
    ternary_switch.table_add("tern", {"hdr.h.k": (0x00, 0x00)}, "to", {"p": 3}, priority=1)
    assert ternary_switch.process(0, frame(0x12)) == [(3, frame(0x12))]


def test_larger_priority_wins_among_overlapping_ternary_entries(ternary_switch):
    ternary_switch.table_add("tern", {"hdr.h.k": (0x10, 0xF0)}, "to", {"p": 2}, priority=5)
    ternary_switch.table_add("tern", {"hdr.h.k": (0x12, 0xFF)}, "to", {"p": 3}, priority=7)
    assert ternary_switch.process(0, frame(0x12)) == [(3, frame(0x12))]
    assert ternary_switch.process(0, frame(0x13)) == [(2, frame(0x13))]


def test_range_and_optional_tables_need_priorities_too(ternary_switch):
    with pytest.raises(TableError, match="needs a priority"):
        ternary_switch.table_add("ranged", {"hdr.h.k": (1, 5)}, "to", {"p": 2})
    with pytest.raises(TableError, match="needs a priority"):
        ternary_switch.table_add("optional_key", {"hdr.h.k": 4}, "to", {"p": 2})


def test_exact_table_takes_no_priority(ternary_switch):
    with pytest.raises(TableError, match="no priority"):
        ternary_switch.table_add("exact_only", {"hdr.h.k": 4}, "to", {"p": 2}, priority=3)
    ternary_switch.table_add("exact_only", {"hdr.h.k": 4}, "to", {"p": 4}, priority=0)
    assert ternary_switch.process(0, frame(4)) == [(4, frame(4))]


def test_value_set_member_per_field():
    sw = switch("parser_exotic")
    sw.value_set_add("pairs", (5, 6))
    assert sw.process(0, b"\x05\x06abcd") == [(1, b"\x05\x07abcd")]
    # a per-field mask; None means all ones for that field
    sw.value_set_add("pairs", (7, 0), mask=(None, 0))
    assert sw.process(0, b"\x07\x42abcd") == [(1, b"\x07\x07abcd")]
    assert sw.process(0, b"\x08\x42abcd") == [(1, b"\x08\x04abcd")]


@pytest.mark.parametrize("value, message", [
    ((5,), "needs 2 fields"),
    ((5, 6, 7), "needs 2 fields"),
    ((256, 1), "does not fit in 8 bits"),
])
def test_bad_value_set_members_say_why(value, message):
    sw = switch("parser_exotic")
    with pytest.raises(SwitchError, match=message):
        sw.value_set_add("pairs", value)


def test_value_set_fields_of_different_widths():
    vs = ValueSet("vs", 4, (16, 32))
    vs.add((0x0800, "10.0.0.1"))
    assert vs.match(((0x0800 << 32) | 0x0A000001,))
    assert not vs.match(((0x0806 << 32) | 0x0A000001,))
