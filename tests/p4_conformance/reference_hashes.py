"""Straightforward reference implementations of BMv2's hash algorithms.

Written from the algorithms' definitions (the Rocksoft CRC model, RFC 1071), not
from BMv2's code: BMv2's ``crc16`` is CRC-16/ARC (poly 0x8005, reflected, init 0),
``crc32`` is the zlib CRC-32, the ``*_custom`` variants default to the same
parameters, ``csum16`` is the Internet checksum (odd tail padded with a zero
byte), ``xor16`` XORs big-endian 16-bit words (odd tail padded), ``identity``
reads the first 8 bytes as a big-endian number.
"""

from __future__ import annotations

import struct


def _reflect(value: int, width: int) -> int:
    out = 0
    for _ in range(width):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


def crc(data: bytes, width: int, poly: int, init: int, xorout: int,
        refin: bool, refout: bool) -> int:
    """Bit-at-a-time CRC in the Rocksoft parameter model."""
    top = 1 << (width - 1)
    mask = (1 << width) - 1
    reg = init
    for byte in data:
        if refin:
            byte = _reflect(byte, 8)
        reg ^= byte << (width - 8)
        for _ in range(8):
            reg = ((reg << 1) ^ poly) & mask if reg & top else (reg << 1) & mask
    if refout:
        reg = _reflect(reg, width)
    return reg ^ xorout


def crc16(data: bytes) -> int:
    return crc(data, 16, 0x8005, 0x0000, 0x0000, True, True)


def crc32(data: bytes) -> int:
    return crc(data, 32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)


def csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def xor16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    out = 0
    for (word,) in struct.iter_unpack("!H", data):
        out ^= word
    return out


def identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")


def pack_fields(fields: list[tuple[int, int]]) -> bytes:
    """Concatenate (value, width) bit fields, left-aligned, zero-padded to bytes."""
    value = 0
    nbits = 0
    for field_value, width in fields:
        value = (value << width) | (field_value & ((1 << width) - 1))
        nbits += width
    pad = (-nbits) % 8
    return (value << pad).to_bytes((nbits + pad) // 8, "big")
