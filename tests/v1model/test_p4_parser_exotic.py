"""Sub-parsers, header lookahead, tuple selects with ranges/masks, multi-key value sets."""

import pytest
from p4_switch import switch


@pytest.mark.parametrize("data, expected", [
    # kind 1, len in 0..3: the sub-parser extracts b; len := which(1) + sizeof(b_t)(4)
    (b"\x01\x02\x00\x05\x00\x06zz", b"\x01\x05\x00\x05\x00\x06zz"),
    # kind 2, len &&& 0xF0 == 0xF0: which 2
    (b"\x02\xf3abcd", b"\x02\x06abcd"),
    # no case: default, which 0
    (b"\x05\x06abcd", b"\x05\x04abcd"),
    # lookahead<b_t> past the end: PacketTooShort, peeked stays invalid -> kind 0xEE
    (b"\x02\x03ab", b"\xee\x04ab"),
])
def test_parser_paths(data, expected):
    assert switch("parser_exotic").process(0, data) == [(1, expected)]


def test_value_set_over_two_keys_matches_their_concatenation():
    sw = switch("parser_exotic")
    assert sw.process(0, b"\x05\x06abcd") == [(1, b"\x05\x04abcd")]
    sw.value_set_add("pairs", 0x0506)
    assert sw.process(0, b"\x05\x06abcd") == [(1, b"\x05\x07abcd")]
    sw.value_set_add("pairs", 0x0700, mask=0xFF00)
    assert sw.process(0, b"\x07\x42abcd") == [(1, b"\x07\x07abcd")]
