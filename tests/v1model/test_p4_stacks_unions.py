"""Header stacks, unions, varbit, lookahead and value sets, packet in -> packets out."""

import struct

from p4_switch import switch

DST = bytes.fromhex("0a0000000001")
SRC = bytes.fromhex("0a0000000002")


def eth(ethertype: int) -> bytes:
    return DST + SRC + struct.pack("!H", ethertype)


def mpls(label: int, bos: int, ttl: int = 64) -> bytes:
    return struct.pack("!I", (label << 12) | (bos << 8) | ttl)


def result(depth=0, which=0, optlen=0, special=0, top_label=0, ethertype=0) -> bytes:
    return struct.pack("!BBBBIH", depth, which, optlen, special, top_label, ethertype)


def run(data: bytes, sw=None):
    sw = sw or switch("stacks_unions")
    out = sw.process(3, data)
    assert [p for p, _ in out] == [1]
    return out[0][1]


def test_mpls_stack_union_member_and_pop_front():
    data = eth(0x8847) + mpls(100, 0) + mpls(200, 0) + mpls(300, 1) + b"\x0a\x55" + b"zz"
    expected = (eth(0x88B5) + result(3, 1, 0, 0, 200, 0x8847) + mpls(200, 0) + mpls(300, 1)
                + b"\x0a\x55" + b"zz")
    assert run(data) == expected


def test_stack_overflow_is_a_parser_error_and_keeps_the_unparsed_label():
    data = eth(0x8847) + mpls(1, 0) + mpls(2, 0) + mpls(3, 0) + mpls(4, 1) + b"\x0a\x55"
    # the parser stops in parse_mpls, so after_mpls never records the depth
    expected = eth(0x88B5) + result(0, 0, 0, 0, 2, 0x8847) + mpls(2, 0) + mpls(3, 0) \
        + mpls(4, 1) + b"\x0a\x55"
    assert run(data) == expected


def test_second_union_member():
    data = eth(0x8847) + mpls(7, 1) + b"\x0b\x12\x34" + b"!"
    assert run(data) == eth(0x88B5) + result(1, 2, 0, 0, 0, 0x8847) + b"\x0b\x12\x34" + b"!"


def test_varbit_extract_and_emit():
    # kind 0x0C is skipped with advance(8); the option (len 2, 16 data bits) is re-emitted
    data = eth(0x8847) + mpls(7, 1) + b"\x0c\x02\xbe\xef" + b"tail"
    assert run(data) == eth(0x88B5) + result(1, 0, 2, 0, 0, 0x8847) + b"\x02\xbe\xef" + b"tail"


def test_varbit_longer_than_its_maximum_is_header_too_short():
    data = eth(0x8847) + mpls(7, 1) + b"\x0c\x09" + bytes(9)
    # the option stays invalid; the bytes from the failed extract on are payload
    assert run(data) == eth(0x88B5) + result(1, 0, 0, 0, 0, 0x8847) + b"\x09" + bytes(9)


def test_lookahead_past_the_end_is_packet_too_short():
    data = eth(0x8847) + mpls(7, 1)
    assert run(data) == eth(0x88B5) + result(1, 0, 0, 0, 0, 0x8847)


def test_parser_value_set_membership():
    sw = switch("stacks_unions")
    data = eth(0x1234) + b"abc"
    assert run(data, sw) == eth(0x88B5) + result(0, 0, 0, 0, 0, 0x1234) + b"abc"
    sw.value_set_add("special_types", 0x1234)
    assert run(data, sw) == eth(0x88B5) + result(0, 0, 0, 1, 0, 0x1234) + b"abc"
