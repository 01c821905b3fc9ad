"""BMv2 hash algorithms: standard check values and BMv2's field-list packing."""

from hypothesis import given
from hypothesis import strategies as st

from netweft.emulation.v1model.hash_algorithms import (
    CRC_CCITT,
    Crc,
    CrcConfig,
    HashAlgorithms,
    csum16,
    hash_with_offset,
    identity,
    pack_fields,
    xor16,
)

CHECK = b"123456789"


def test_crc32_check_value():
    assert HashAlgorithms().get("crc32")(CHECK) == 0xCBF43926


def test_crc16_is_crc16_arc():
    assert HashAlgorithms().get("crc16")(CHECK) == 0xBB3D


def test_custom_crcs_default_to_the_fixed_ones_and_reconfigure():
    algos = HashAlgorithms()
    assert algos.get("crc16_custom")(CHECK) == 0xBB3D
    assert algos.get("crc32_custom")(CHECK) == 0xCBF43926
    # CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected) has check 0x29B1
    algos.set_crc16_parameters(CRC_CCITT)
    assert algos.get("crc16_custom")(CHECK) == 0x29B1
    # CRC-32C (Castagnoli) has check 0xE3069283
    algos.set_crc32_parameters(CrcConfig(32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True))
    assert algos.get("crc32_custom")(CHECK) == 0xE3069283


def test_crc32_matches_zlib():
    import zlib

    crc = Crc(CrcConfig(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True))
    for data in (b"", b"\x00", b"\xff" * 7, bytes(range(256))):
        assert crc(data) == zlib.crc32(data)


def test_csum16_is_the_internet_checksum_of_an_ipv4_header():
    header = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    assert csum16(header) == 0xB861


def test_csum16_pads_an_odd_tail_with_zero():
    assert csum16(b"\x01") == (~0x0100) & 0xFFFF
    assert csum16(b"") == 0xFFFF


def test_xor16_and_identity():
    assert xor16(b"\x12\x34\x56\x78") == 0x1234 ^ 0x5678
    assert xor16(b"\x12\x34\x56") == 0x1234 ^ 0x5600
    assert identity(b"\x01\x02") == 0x0102
    assert identity(bytes(range(1, 11))) == 0x0102030405060708


def test_pack_fields_is_msb_first_and_pads_at_the_end():
    assert pack_fields([(0xA, 4), (0xBC, 8)]) == b"\xab\xc0"
    assert pack_fields([(1, 1)]) == b"\x80"
    assert pack_fields([(0x0A000001, 32), (0x0A000002, 32)]) == bytes.fromhex("0a0000010a000002")
    assert pack_fields([(0x1FF, 4)]) == b"\xf0"  # value truncated to its width


def test_hash_offset_mapping():
    assert hash_with_offset(1000, 5, 7) == 5 + 1000 % 7
    assert hash_with_offset(1000, 0, 0) == 1000


def test_random_is_seeded_and_bounded():
    a, b = HashAlgorithms(seed=3), HashAlgorithms(seed=3)
    xs = [a.random_in(10, 20) for _ in range(50)]
    assert xs == [b.random_in(10, 20) for _ in range(50)]
    assert all(10 <= x <= 20 for x in xs)


@given(st.binary(max_size=64))
def test_csum16_of_data_plus_its_checksum_verifies(data):
    if len(data) % 2:
        data += b"\x00"
    c = csum16(data)
    assert csum16(data + c.to_bytes(2, "big")) == 0


def _naive_csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


@given(st.binary(max_size=80))
def test_csum16_matches_a_word_by_word_sum(data):
    assert csum16(data) == _naive_csum16(data)


@given(st.lists(st.tuples(st.integers(0, 2**40), st.integers(1, 40)), max_size=12))
def test_checksum_over_bits_equals_checksum_over_packed_bytes(fields):
    from netweft.emulation.v1model.hash_algorithms import concat_fields, csum16_of_bits

    assert csum16_of_bits(*concat_fields(fields)) == csum16(pack_fields(fields))
