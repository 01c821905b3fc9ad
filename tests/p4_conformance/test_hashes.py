"""hash() and random() in v1model with BMv2's algorithms, bit for bit.

Expected values come from reference_hashes (checked against published CRC
check values and zlib below); hash() returns base + (hash % max), truncated to
the destination field's width.
"""

from __future__ import annotations

import struct
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from . import reference_hashes as ref
from .harness import BOTH_BACKENDS, switch_factory

make_switch = switch_factory("hashes", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b7")
RESULT = "!HIHHIHIHHBBHHHHHI"
RESULT_LEN = struct.calcsize(RESULT)


def test_reference_crcs_match_published_check_values():
    assert ref.crc16(b"123456789") == 0xBB3D  # CRC-16/ARC check value
    assert ref.crc32(b"123456789") == 0xCBF43926
    assert ref.crc32(b"netweft") == zlib.crc32(b"netweft")
    assert ref.csum16(bytes.fromhex("4500003c1c4640004006" "0000" "ac100a63ac100a0c")) == 0xB1E6


def expected_result(a: int, b: int, c: int, d: int) -> tuple:
    data = struct.pack("!IHBB", a, b, c, d)
    return (
        ref.crc16(data),
        ref.crc32(data),
        ref.csum16(data),
        ref.xor16(data),
        ref.identity(struct.pack("!I", a)),
        ref.crc16(data),  # crc16_custom with BMv2's default parameters
        ref.crc32(data),  # crc32_custom with BMv2's default parameters
        (100 + ref.crc16(data) % 1000) & 0xFFFF,
        ref.crc16(ref.pack_fields([(a & 0xFFF, 12)])),
        ref.crc32(struct.pack("!H", b)) & 0xFF,
        ref.csum16(struct.pack("!IB", a, c)),
        ref.xor16(struct.pack("!IB", a, c)),
        ref.csum16(ref.pack_fields([(a & 0xFFF, 12)])),
        ref.csum16(ref.pack_fields([(a, 32), (c & 0xF, 4)])),
        ref.xor16(ref.pack_fields([(a, 32), (c & 0xF, 4)])),
        ((b << 16) | (c << 8) | d) & 0xFFFFFFFF,
    )


def run(make_switch, a: int, b: int, c: int, d: int) -> tuple:
    sw = make_switch()
    pkt = ETH + struct.pack("!IHBB", a, b, c, d) + bytes(RESULT_LEN) + b"tail"
    out = sw.process(0, pkt)
    assert len(out) == 1 and out[0][0] == 1
    data = out[0][1]
    assert data[:22] == pkt[:22]
    assert data[22 + RESULT_LEN:] == b"tail"
    return struct.unpack(RESULT, data[22:22 + RESULT_LEN])


def test_hashes_of_a_fixed_input(make_switch):
    got = run(make_switch, 0x0A000001, 0x1234, 0x11, 0xFF)
    assert got[:10] + got[11:] == expected_result(0x0A000001, 0x1234, 0x11, 0xFF)


def test_random_stays_within_bounds(make_switch):
    for seed in range(20):
        got = run(make_switch, seed, seed, 0, 0)
        assert 10 <= got[10] <= 20


@settings(max_examples=25, deadline=None)
@given(a=st.integers(0, 2**32 - 1), b=st.integers(0, 2**16 - 1),
       c=st.integers(0, 255), d=st.integers(0, 255))
def test_hashes_match_reference(make_switch, a, b, c, d):
    got = run(make_switch, a, b, c, d)
    assert got[:10] + got[11:] == expected_result(a, b, c, d)


def test_custom_crc_parameters_apply_to_the_data_plane(make_switch):
    """set_crc16/32_parameters (simple_switch_CLI) reconfigure crc16/32_custom."""
    a, b, c, d = 0x0A000001, 0x1234, 0x11, 0xFF
    sw = make_switch()
    sw.set_crc16_parameters(0x1021, 0xFFFF, 0x0000, False, False)    # CRC-16/CCITT-FALSE
    sw.set_crc32_parameters(0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True)   # CRC-32C
    pkt = ETH + struct.pack("!IHBB", a, b, c, d) + bytes(RESULT_LEN)
    got = struct.unpack(RESULT, sw.process(0, pkt)[0][1][22:22 + RESULT_LEN])
    data = struct.pack("!IHBB", a, b, c, d)
    assert got[5] == ref.crc(data, 16, 0x1021, 0xFFFF, 0x0000, False, False)
    assert got[6] == ref.crc(data, 32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True)
    assert got[5] != ref.crc16(data) and got[0] == ref.crc16(data)   # crc16 itself unchanged
