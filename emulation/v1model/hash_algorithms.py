"""BMv2's hash and checksum algorithms, bit for bit.

The input of every v1model calculation (``hash``, ``verify_checksum``,
``update_checksum``, action selectors) is a *field list*: the fields'
values concatenated MSB first with no padding between them, the whole
buffer zero-padded at the end to a whole number of bytes (BMv2's
``BufBuilder``).  :func:`pack_fields` builds that buffer; the algorithms
then work on bytes exactly as ``bm_sim/calculations.cpp`` does.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable, Iterable
from dataclasses import dataclass


def concat_fields(fields: Iterable[tuple[int, int]]) -> tuple[int, int]:
    """``(value, nbits)`` of the ``(value, width)`` pairs concatenated MSB first."""
    acc = 0
    nbits = 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        nbits += width
    return acc, nbits


def pack_fields(fields: Iterable[tuple[int, int]]) -> bytes:
    """Concatenate ``(value, width)`` pairs MSB first; zero-pad the tail to a byte."""
    acc, nbits = concat_fields(fields)
    pad = (-nbits) % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


def csum16_of_bits(acc: int, nbits: int) -> int:
    """:func:`csum16` of the bit string ``acc`` (``nbits`` long), without building bytes.

    The one's complement sum of 16-bit words is the value modulo 0xFFFF
    (2**16 is 1 modulo 0xFFFF), with 0xFFFF standing for a non-zero multiple.
    """
    value = acc << ((-nbits) % 16)
    total = value % 0xFFFF
    if total == 0 and value:
        total = 0xFFFF
    return ~total & 0xFFFF


def _reflect(value: int, nbits: int) -> int:
    out = 0
    for _ in range(nbits):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


@dataclass(frozen=True)
class CrcConfig:
    """A CRC parameter set as BMv2's ``crc_config_t`` (Rocksoft model)."""

    width: int
    polynomial: int
    initial_remainder: int
    final_xor_value: int
    data_reflected: bool
    remainder_reflected: bool


CRC16_DEFAULT = CrcConfig(16, 0x8005, 0x0000, 0x0000, True, True)
CRC32_DEFAULT = CrcConfig(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)
CRC_CCITT = CrcConfig(16, 0x1021, 0xFFFF, 0x0000, False, False)


class Crc:
    """A table-driven CRC computed as BMv2's ``crc_custom<T>``."""

    def __init__(self, config: CrcConfig) -> None:
        self.config = config
        width = config.width
        top = 1 << (width - 1)
        mask = (1 << width) - 1
        table = []
        for dividend in range(256):
            rem = (dividend << (width - 8)) & mask
            for _ in range(8):
                rem = ((rem << 1) ^ config.polynomial) if rem & top else (rem << 1)
                rem &= mask
            table.append(rem)
        self._table = table
        self._mask = mask
        self._reflect8 = [_reflect(b, 8) for b in range(256)]

    def __call__(self, data: bytes) -> int:
        cfg = self.config
        table, mask, shift = self._table, self._mask, self.config.width - 8
        rem = cfg.initial_remainder
        if cfg.data_reflected:
            r8 = self._reflect8
            for byte in data:
                rem = table[(r8[byte] ^ (rem >> shift)) & 0xFF] ^ ((rem << 8) & mask)
        else:
            for byte in data:
                rem = table[(byte ^ (rem >> shift)) & 0xFF] ^ ((rem << 8) & mask)
        if cfg.remainder_reflected:
            rem = _reflect(rem, cfg.width)
        return rem ^ cfg.final_xor_value


def csum16(data: bytes) -> int:
    """The Internet checksum (RFC 1071) as BMv2's ``csum16``: ~sum, odd tail zero-padded."""
    return csum16_of_bits(int.from_bytes(data, "big"), len(data) * 8)


def xor16(data: bytes) -> int:
    """XOR of the big-endian 16-bit words, the tail zero-padded (BMv2 ``xor16``)."""
    if len(data) % 2:
        data = data + b"\x00"
    out = 0
    for i in range(0, len(data), 2):
        out ^= (data[i] << 8) | data[i + 1]
    return out


def identity(data: bytes) -> int:
    """The first (at most) eight bytes read big-endian (BMv2 ``identity``)."""
    return int.from_bytes(data[:8], "big")


def bmv2_refusal(name: str) -> str | None:
    """Why BMv2 ``simple_switch`` cannot run HashAlgorithm ``name``; None if it can.

    p4c writes ``HashAlgorithm.random`` into the BMv2 JSON as ``"random"``, but
    bm_sim registers no hash of that name (calculations.cpp), so simple_switch
    refuses to load such a program.  netweft rejects it the same way, by name.
    """
    if name == "random":
        return ("HashAlgorithm.random: BMv2 simple_switch has no 'random' hash algorithm "
                "and refuses to load a program that uses one; use random() for random "
                "numbers or a real hash such as HashAlgorithm.crc32")
    return None


class HashAlgorithms:
    """The v1model ``HashAlgorithm`` members of one switch, by name.

    ``crc16_custom``/``crc32_custom`` are per-switch and reconfigurable (as
    ``simple_switch_CLI set_crc16_parameters``).  v1model ``random()`` draws
    from a seeded generator so that runs are reproducible.
    """

    NAMES = ("crc32", "crc32_custom", "crc16", "crc16_custom", "identity", "csum16", "xor16")

    def __init__(self, seed: int = 0) -> None:
        self._rng = _random.Random(seed)
        self._crc16 = Crc(CRC16_DEFAULT)
        self._crc32 = Crc(CRC32_DEFAULT)
        self.crc16_custom = Crc(CRC16_DEFAULT)
        self.crc32_custom = Crc(CRC32_DEFAULT)

    def set_crc16_parameters(self, config: CrcConfig) -> None:
        """Reconfigure ``crc16_custom`` (width must be 16)."""
        if config.width != 16:
            raise ValueError("crc16_custom needs a 16-bit CRC configuration")
        self.crc16_custom = Crc(config)

    def set_crc32_parameters(self, config: CrcConfig) -> None:
        """Reconfigure ``crc32_custom`` (width must be 32)."""
        if config.width != 32:
            raise ValueError("crc32_custom needs a 32-bit CRC configuration")
        self.crc32_custom = Crc(config)

    def get(self, name: str) -> Callable[[bytes], int]:
        """The function computing algorithm ``name`` over a byte buffer."""
        if name == "crc16":
            return self._crc16
        if name == "crc32":
            return self._crc32
        if name == "crc16_custom":
            return lambda data: self.crc16_custom(data)
        if name == "crc32_custom":
            return lambda data: self.crc32_custom(data)
        if name == "csum16":
            return csum16
        if name == "xor16":
            return xor16
        if name == "identity":
            return identity
        raise KeyError(f"unknown hash algorithm {name!r}")

    def random_in(self, lo: int, hi: int) -> int:
        """A value uniformly in ``[lo, hi]`` (v1model ``random``)."""
        if hi < lo:
            lo, hi = hi, lo
        return self._rng.randint(lo, hi)


def hash_with_offset(raw: int, base: int, max_: int) -> int:
    """v1model ``hash`` output mapping as BMv2: ``base + raw % max`` (``max`` 0 means none)."""
    if max_ == 0:
        return base + raw
    return base + raw % max_
