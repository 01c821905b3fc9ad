"""Control-plane value parsing: numbers, addresses, bytes, widths."""

import pytest

from netweft.emulation.v1model.key_values import BadValueError, parse_value


@pytest.mark.parametrize("text, width, expected", [
    ("10.0.1.1", 32, 0x0A000101),
    ("2001:db8::1", 128, 0x20010DB8 << 96 | 1),
    ("08:00:00:00:01:11", 48, 0x080000000111),
    ("08-00-00-00-01-11", 48, 0x080000000111),
    ("0x1F", 8, 0x1F),
    ("42", 8, 42),
    (b"\x01\x02", 16, 0x0102),
    (True, 1, 1),
    (-1, 8, 0xFF),
])
def test_value_forms(text, width, expected):
    assert parse_value(text, width, "x") == expected


@pytest.mark.parametrize("value, width, message", [
    (256, 8, "does not fit in 8 bits"),
    (-129, 8, "does not fit in 8 bits"),
    ("10.0.0.1", 16, "does not fit in 16 bits"),
    ("not-a-number", 8, "cannot parse"),
    (1.5, 8, "cannot use a float"),
])
def test_bad_values(value, width, message):
    with pytest.raises(BadValueError, match=message):
        parse_value(value, width, "key k")
