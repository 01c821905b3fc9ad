"""The STF parser: every command's arguments, and file:line messages for malformed lines."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netweft.emulation.stf import STFError, parse_stf


def one(text: str):
    (cmd,) = parse_stf(text, "t.stf")
    return cmd


def test_comments_blank_lines_and_line_numbers():
    cmds = parse_stf("# header\n\n  wait  # trailing\nWAIT\n", "t.stf")
    assert [(c.keyword, c.line) for c in cmds] == [("wait", 3), ("wait", 4)]


def test_packet_hex_with_spaces():
    cmd = one("packet 3 0a0B 0c\t0d")
    assert cmd.args == {"port": 3, "data": bytes([0x0A, 0x0B, 0x0C, 0x0D])}


def test_packet_with_an_odd_number_of_digits_reads_pairs_like_p4c():
    # p4c's HexToByte: "20 0" is the bytes 0x20, 0x00 (a lone last digit is a byte)
    assert one("packet 1 20 0").args["data"] == bytes([0x20, 0x00])
    assert one("packet 1 0a0b 7").args["data"] == bytes([0x0A, 0x0B, 0x07])


def test_packet_without_data_is_empty():
    assert one("packet 4").args == {"port": 4, "data": b""}


def test_expect_wildcards_exact_length_and_no_data():
    cmd = one("expect 2 0a** ff $")
    assert cmd.args == {"port": 2, "pattern": "0A**FF", "exact": True}
    assert one("expect 2 0aff").args["exact"] is False
    assert one("expect 7").args == {"port": 7, "pattern": None, "exact": False}
    # p4c compares nibble strings, so an odd number of nibbles is a valid prefix
    assert one("expect 1 0b ** *").args["pattern"] == "0B***"


def test_add_with_priority_keys_action_and_handle():
    cmd = one("add ingress.t 10 hdr.h.a:0x0a** h.b:10/8 c:1->5 "
              "ingress.set(x:0x1, y: 22) = A")
    assert cmd.args == {
        "table": "ingress.t", "priority": 10,
        "keys": [("hdr.h.a", "0x0a**"), ("h.b", "10/8"), ("c", "1->5")],
        "action": "ingress.set", "params": [("x", "0x1"), ("y", "22")]}


def test_add_without_priority_and_without_params():
    cmd = one("add t k:5 NoAction()")
    assert cmd.args["priority"] is None
    assert cmd.args["keys"] == [("k", "5")]
    assert cmd.args["action"] == "NoAction" and cmd.args["params"] == []


def test_setdefault_and_multicast_and_mirroring():
    assert one("setdefault t a(p:1)").args == {"table": "t", "action": "a",
                                                "params": [("p", "1")]}
    assert one("mirroring_add 5 7").args == {"session": 5, "port": 7}
    assert one("mc_mgrp_create 1").args == {"group": 1}
    assert one("mc_node_create 9 1 2 3").args == {"rid": 9, "ports": [1, 2, 3]}
    assert one("mc_node_associate 1 0").args == {"group": 1, "node": 0}


def test_registers_and_counters():
    assert one("register_write r 2 0x10").args == {"name": "r", "index": 2, "value": 16}
    assert one("register_read r 2").args["op"] is None
    assert one("register_read r 2 >= 3").args == {"name": "r", "index": 2, "op": ">=",
                                                   "value": 3}
    assert one("register_reset ingress.r").args == {"name": "ingress.r"}
    assert one("counter_read c 4").args == {"name": "c", "index": 4}
    assert one("check_counter c(4) bytes == 60").args == {
        "name": "c", "index": 4, "kind": "bytes", "op": "==", "value": 60}
    # without a check the counter must be zero packets (p4c's grammar)
    assert one("check_counter c(1)").args == {"name": "c", "index": 1, "kind": "packets",
                                              "op": "==", "value": 0}


@pytest.mark.parametrize(("text", "message"), [
    ("frobnicate 1", "t.stf:2: unknown STF command 'frobnicate'"),
    ("packet 1 0g", "t.stf:2: packet: invalid hex digit 'g' in packet data"),
    ("packet x 00", "t.stf:2: packet: port 'x' is not a number"),
    ("packet 600 00", "t.stf:2: packet: port 600 is outside 0..511"),
    ("expect 1 0a?b", "t.stf:2: expect: invalid character '?' in expected packet data"),
    ("expect 1 $", "t.stf:2: expect: '$' needs packet data before it"),
    ("add t k:1 act", "t.stf:2: add: missing ACTION(...)"),
    ("add t k1 act()", "t.stf:2: add: match 'k1' is not KEY:VALUE"),
    ("add t k:1 act(p=1)", "t.stf:2: add: action argument 'p=1' is not NAME:VALUE"),
    ("setdefault t", "t.stf:2: setdefault: expected 'setdefault TABLE ACTION(...)'"),
    ("mirroring_add 1", "t.stf:2: mirroring_add: expected SESSION PORT"),
    ("register_write r 1", "t.stf:2: register_write: expected REGISTER INDEX VALUE"),
    ("check_counter c", "t.stf:2: check_counter: expected 'check_counter NAME(INDEX) "
                        "[packets|bytes] [OP N]'"),
    ("wait 5", "t.stf:2: wait: takes no arguments, got '5'"),
])
def test_malformed_lines_name_file_and_line(text, message):
    with pytest.raises(STFError) as info:
        parse_stf("# first line\n" + text, "t.stf")
    assert str(info.value) == message
    assert info.value.line == 2


KEYWORDS = ["packet", "expect", "add", "setdefault", "mirroring_add", "mc_mgrp_create",
            "mc_node_create", "mc_node_associate", "register_write", "register_read",
            "register_reset", "counter_read", "check_counter", "wait", "bogus"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KEYWORDS),
                          st.text(alphabet="0123456789abcdefx*$/:.,()&-> \t=_[]#", max_size=40)),
                max_size=6))
def test_arbitrary_lines_parse_or_raise_stf_error(lines):
    text = "\n".join(f"{word} {rest}" for word, rest in lines)
    try:
        cmds = parse_stf(text, "fuzz.stf")
    except STFError as err:
        assert str(err).startswith("fuzz.stf:")
        assert 1 <= err.line <= len(lines)
    else:
        assert all(c.keyword in KEYWORDS for c in cmds)
