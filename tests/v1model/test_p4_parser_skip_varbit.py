"""extract<T>(_) skips a header; a varbit extract that would leave the header
short of whole bytes fails with error.ParserInvalidArgument (BMv2's parser),
consuming nothing."""

import pytest
from p4_switch import switch


@pytest.fixture(scope="module")
def sw():
    return switch("parser_skip_varbit")


def test_extract_into_dont_care_skips_the_header(sw):
    # the two skipped bytes vanish: they were parsed, but into no header
    assert sw.process(0, bytes([0, 0, 0xFF, 0xAA, 0xBB, 0x77, 0x01])) == [
        (1, bytes([0, 0, 0, 0x77, 0x01]))]


def test_skip_of_a_header_longer_than_the_packet_is_packet_too_short(sw):
    assert sw.process(0, bytes([0, 0, 0xFF, 0xAA])) == [(1, bytes([0, 0, 3, 0xAA]))]


@pytest.mark.parametrize("vbits, data, expected", [
    # 4-bit kind + 4 varbit bits: one byte, then the tail
    (4, bytes([0x5C, 0x77, 0x01]), bytes([0x5C, 0x77, 0x01])),
    # 4 + 12 bits: two bytes
    (12, bytes([0x5A, 0xBC, 0x77]), bytes([0x5A, 0xBC, 0x77])),
])
def test_whole_byte_varbit_headers_extract(sw, vbits, data, expected):
    out = sw.process(0, bytes([1, vbits, 0xFF]) + data)
    assert out == [(1, bytes([1, vbits, 0]) + expected)]


@pytest.mark.parametrize("vbits", [8, 3, 19])
def test_varbit_header_of_a_partial_byte_is_parser_invalid_argument(sw, vbits):
    data = bytes([0x5A, 0xBC, 0xDE, 0xF0])
    # nothing was extracted: opt and tail invalid, all bytes stay as payload
    assert sw.process(0, bytes([1, vbits, 0xFF]) + data) == [(1, bytes([1, vbits, 1]) + data)]


def test_varbit_longer_than_its_maximum_is_header_too_short(sw):
    data = bytes([0x5A, 0xBC, 0xDE, 0xF0])
    assert sw.process(0, bytes([1, 28, 0xFF]) + data) == [(1, bytes([1, 28, 2]) + data)]
