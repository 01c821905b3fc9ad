"""P4Runtime binary strings: big-endian unsigned integers checked against a bitwidth.

The server accepts any length that holds a value fitting the P4Info bitwidth
(leading zero bytes allowed) and answers in the canonical form, the shortest
string holding the value (the P4Runtime specification's bytestring rules).
"""

from __future__ import annotations

from netweft.emulation.p4runtime.errors import P4RuntimeError, invalid


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """The value of ``data``; INVALID_ARGUMENT if empty or wider than ``bitwidth`` bits."""
    if not data:
        raise invalid(f"{what}: empty bytestring")
    value = int.from_bytes(data, "big")
    if bitwidth and value >> bitwidth:
        raise invalid(f"{what}: a value of {value.bit_length()} bits (a {len(data)}-byte "
                      f"string) does not fit in {bitwidth} bits")
    return value


def encode(value: int) -> bytes:
    """The canonical (shortest) bytestring of a non-negative ``value``."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_width(value: int, bitwidth: int) -> bytes:
    """``value`` in ``ceil(bitwidth / 8)`` bytes (packet metadata and headers)."""
    return value.to_bytes((bitwidth + 7) // 8, "big")


__all__ = ["P4RuntimeError", "decode", "encode", "encode_width"]
