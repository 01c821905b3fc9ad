"""Parsing of user-supplied match and parameter values.

Control-plane users write values as integers, dotted IPv4 addresses,
IPv6 addresses, MAC addresses, ``0x`` hex strings or raw bytes; this
module turns each into an integer of a known width and says clearly when
a value does not fit.
"""

from __future__ import annotations

import ipaddress
import re

_MAC = re.compile(r"^[0-9a-fA-F]{1,2}([:-][0-9a-fA-F]{1,2}){5}$")


class BadValueError(ValueError):
    """A control-plane value that cannot be used (bad syntax or too wide)."""


def parse_value(value: object, width: int, what: str) -> int:
    """``value`` as an unsigned integer of ``width`` bits; raises :class:`BadValueError`."""
    if isinstance(value, bool):
        number = int(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, (bytes, bytearray)):
        number = int.from_bytes(value, "big")
    elif isinstance(value, str):
        number = _parse_text(value.strip(), what)
    else:
        raise BadValueError(f"{what}: cannot use a {type(value).__name__} as a value")
    if number < 0:
        if width > 0 and number >= -(1 << (width - 1)):
            number &= (1 << width) - 1
        else:
            raise BadValueError(f"{what}: {value!r} does not fit in {width} bits")
    if number >> width:
        raise BadValueError(f"{what}: {value!r} does not fit in {width} bits")
    return number


def _parse_text(text: str, what: str) -> int:
    if _MAC.match(text):
        return int(re.sub("[:-]", "", "".join(p.zfill(2) for p in re.split("[:-]", text))), 16)
    try:
        if text.count(".") == 3 and ":" not in text:
            return int(ipaddress.IPv4Address(text))
        if ":" in text:
            return int(ipaddress.IPv6Address(text))
        return int(text, 0)
    except ValueError:
        raise BadValueError(f"{what}: cannot parse {text!r} as a number or an address") from None
