"""Bad control-plane requests fail with an exception whose message names the
offending item, and leave the switch unchanged (errors are part of the
interface; the contract names no exception type, so only the message is
checked)."""

from __future__ import annotations

import struct

import pytest

from .harness import BOTH_BACKENDS, switch_factory

make_switch = switch_factory("tables", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b8")


def exact_result(sw, e: int) -> int:
    pkt = ETH + struct.pack("!BBHHBI", 1, e, 0, 0, 0, 0) + bytes(4)
    (port, data), = sw.process(0, pkt)
    return data[14 + 11]


@pytest.mark.parametrize("table, match, action, params, named", [
    ("no_such_table", {"hdr.keys.e": 1}, "set_result", {"id": 1}, "no_such_table"),
    ("t_exact", {"hdr.keys.e": 1}, "no_such_action", {"id": 1}, "no_such_action"),
    ("t_exact", {"hdr.keys.nope": 1}, "set_result", {"id": 1}, "nope"),
    ("t_exact", {"hdr.keys.e": 1}, "set_result", {"wrong": 1}, "wrong"),
    ("t_exact", {"hdr.keys.e": 1}, "set_result", {"id": 300}, "300"),
    ("t_exact", {"hdr.keys.e": 256}, "set_result", {"id": 1}, "256"),
    ("t_lpm", {"hdr.keys.l": ("10.0.0.0", 33)}, "set_result", {"id": 1}, "33"),
    ("t_lpm", {"hdr.keys.l": ("10.0.0.300", 8)}, "set_result", {"id": 1}, "10.0.0.300"),
])
def test_bad_table_add_is_rejected_with_a_clear_message(make_switch, table, match, action,
                                                        params, named):
    sw = make_switch()
    with pytest.raises(Exception) as info:  # noqa: B017
        sw.table_add(table, match, action, params)
    assert named in str(info.value)
    assert exact_result(sw, 1) == 0  # nothing was installed


def test_unknown_register_and_counter_are_named(make_switch):
    sw = make_switch()
    with pytest.raises(Exception, match="no_such_register"):
        sw.register_read("no_such_register", 0)
    with pytest.raises(Exception, match="no_such_counter"):
        sw.counter_read("no_such_counter", 0)
