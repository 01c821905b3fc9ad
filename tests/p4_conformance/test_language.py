"""P4-16 language features: enums (serializable and plain), typedef/type,
functions, controls with constructor parameters, sub-parsers, list-expression
struct initialisation, header assignment, ?:, and generic functions."""

from __future__ import annotations

import struct

import pytest

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("language", BOTH_BACKENDS)
make_generic_switch = switch_factory("generic_function", BOTH_BACKENDS)
make_switch_statement_switch = switch_factory("switch_statement", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002")
LANG = "!BBHIBBBB"


def lang_frame(kind: int, x: int, y: int, tenant: int, results=(0, 0, 0, 0),
               tails: bytes = b"") -> bytes:
    return ETH + b"\x88\xbb" + struct.pack(LANG, kind, x, y, tenant, *results) + tails


@pytest.mark.parametrize("kind, x, y, tenant, tail", [
    (1, 5, 0x1234, 41, 9),
    (2, 101, 0xABCD, 0xFFFFFFFF, 255),
    (7, 100, 0x00FF, 0, 0),
    (0xFF, 250, 0x0100, 12345, 17),
])
def test_language_features(make_switch, kind, x, y, tenant, tail):
    new_kind = {1: 2, 2: 1}.get(kind, 0xFF)
    expected = lang_frame(
        new_kind, x ^ 7, ((y & 0xFF) << 8) | (y >> 8), (tenant + 1) % 2**32,
        (max(x, 50), (x + 13) % 256, 2 if x > 100 else 1, 0xAA if x < 10 else 0xBB),
        bytes([tail, (tail + 1) % 256]),
    )
    out = make_switch().process(0, lang_frame(kind, x, y, tenant, tails=bytes([tail])) + b"!")
    assert_outputs(out, [(1, expected + b"!")])


def test_other_frames_pass_unchanged(make_switch):
    frame = ETH + b"\x08\x06" + bytes(28)
    assert_outputs(make_switch().process(3, frame), [(1, frame)])


@pytest.mark.parametrize("x, y", [(3, 5000), (10, 999), (200, 1000), (0, 1001)])
def test_generic_function(make_generic_switch, x, y):
    frame = ETH + b"\x88\xbc" + struct.pack("!BHBH", x, y, 0, 0)
    expected = ETH + b"\x88\xbc" + struct.pack(
        "!BHBH", x, y, 0xAA if x < 10 else 0xBB, y if y > 1000 else 1000)
    assert_outputs(make_generic_switch().process(0, frame), [(1, expected)])


@pytest.mark.parametrize("value, by_value", [(0, 10), (1, 20), (2, 20), (7, 0x55), (9, 30)])
@pytest.mark.parametrize("color, by_color", [(1, 0xAA), (2, 0xBB), (3, 0xBB), (9, 0x55)])
def test_switch_statement_on_values_and_enums(make_switch_statement_switch, value, by_value,
                                              color, by_color):
    frame = ETH + b"\x88\xc0" + bytes([value, color, 0x55, 0x55])
    expected = ETH + b"\x88\xc0" + bytes([value, color, by_value, by_color])
    assert_outputs(make_switch_statement_switch().process(0, frame), [(1, expected)])


make_names_switch = switch_factory("names_and_arguments", BOTH_BACKENDS)


@pytest.mark.parametrize("x", [0, 7, 200, 255])
def test_dot_names_named_arguments_and_defaults(make_names_switch, x):
    frame = ETH + b"\x88\xc4" + bytes([x, 0, 0, 0, 0])
    expected = ETH + b"\x88\xc4" + bytes([x, (x + 1) % 256, (x + 100) % 256, (x + 5) % 256,
                                           (x - 3) % 256])
    assert_outputs(make_names_switch().process(0, frame), [(1, expected)])


make_keyword_switch = switch_factory("keyword_names", BOTH_BACKENDS)


def test_identifiers_that_are_keywords_elsewhere(make_keyword_switch):
    sw = make_keyword_switch()
    sw.table_add("KIngress.import", {"hdr.w.class": 3}, "KIngress.pass", {"print": 0x77})
    frame = ETH + b"\x88\xc5" + bytes([3, 4, 0, 0, 0, 0x0F, 0xF0])
    expected = ETH + b"\x88\xc5" + bytes([3, 4, 7, 0x77, 0xFF, 0x0F, 0xF0])
    assert_outputs(sw.process(0, frame), [(1, expected)])


make_scopes_switch = switch_factory("scopes", BOTH_BACKENDS)


@pytest.mark.parametrize("x", [0, 5, 130])
def test_block_scopes_and_shadowing(make_scopes_switch, x):
    frame = ETH + b"\x88\xc6" + bytes([x, 0xEE, 0, 0, 0, 0])
    inner = 9 if x != 0 else 0xEE
    expected = ETH + b"\x88\xc6" + bytes([x, inner, x, 42, (2 * x) % 256, x])
    assert_outputs(make_scopes_switch().process(0, frame), [(1, expected)])


make_field_names_switch = switch_factory("field_names", BOTH_BACKENDS)


def test_field_names_an_implementation_might_use_itself(make_field_names_switch):
    fields = list(range(1, 13))  # valid size name width fields copy value data bits F X type
    frame = ETH + b"\x88\x88" + bytes(fields)
    valid, _, _, width, count, _, value, data, _, f, x, kind = fields
    expected = [valid, valid + 1, width + count, width, count, value ^ data, value, data,
                f + x + kind, f, x, kind]
    assert_outputs(make_field_names_switch().process(0, frame),
                   [(1, ETH + b"\x88\x88" + bytes(expected))])
