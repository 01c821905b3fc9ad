"""Control-plane names of actions (P4-16 'Control-plane names'): @name gives a
local name under the control (NIngress.renamed_action), a leading dot makes it
absolute (absolute_action), top-level actions have no prefix; a directional
argument bound in the actions list is not a control-plane parameter;
@tableonly actions cannot be defaults and @defaultonly actions cannot be entries."""

from __future__ import annotations

import pytest

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("action_names", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88c2")


def frame(key: int, first: int = 0, second: int = 0, third: int = 0) -> bytes:
    return ETH + bytes([key, first, second, third])


def test_annotated_absolute_and_top_level_action_names(make_switch):
    sw = make_switch()
    sw.table_add("NIngress.names", {"hdr.n.key": 1}, "NIngress.renamed_action", {"value": 0x11})
    sw.table_add("NIngress.names", {"hdr.n.key": 2}, "absolute_action", {"value": 0x22})
    sw.table_add("NIngress.names", {"hdr.n.key": 3}, "top_level_mark", {"value": 0x33})
    sw.table_add("NIngress.names", {"hdr.n.key": 4}, "NIngress.only_in_entries", {"value": 0x44})
    assert_outputs(sw.process(0, frame(1)), [(1, frame(1, first=0x11))])
    assert_outputs(sw.process(0, frame(2)), [(1, frame(2, second=0x22))])
    assert_outputs(sw.process(0, frame(3)), [(1, frame(3, third=0x33))])
    assert_outputs(sw.process(0, frame(4)), [(1, frame(4, first=0x44))])
    assert_outputs(sw.process(0, frame(5)), [(1, frame(5, first=0xDD))])


def test_defaultonly_action_cannot_be_an_entry(make_switch):
    sw = make_switch()
    with pytest.raises(Exception):  # noqa: B017 - the contract names no exception type
        sw.table_add("NIngress.names", {"hdr.n.key": 1}, "NIngress.only_as_default", {})
    assert_outputs(sw.process(0, frame(1)), [(1, frame(1, first=0xDD))])


def test_tableonly_action_cannot_be_the_default(make_switch):
    sw = make_switch()
    with pytest.raises(Exception):  # noqa: B017
        sw.table_set_default("NIngress.names", "NIngress.only_in_entries", {"value": 1})
    assert_outputs(sw.process(0, frame(9)), [(1, frame(9, first=0xDD))])
