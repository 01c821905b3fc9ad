"""Differential tests of the conformance programs the native back end runs: each on
the Python and the native back end with the entries its conformance test installs,
about a thousand seeded frames (valid packets of the program's protocols, built as
its conformance test builds them, a third truncated, bit-flipped or junk); the
output ports and bytes, the switch's packet counters and every counter and
register cell must be identical.

To add a program: append its name to PROGRAMS and define ``valid_<name>(rng)``
(one valid frame) and, if its test installs entries, ``configure_<name>(sw)``.
"""

from __future__ import annotations

import random
import struct
import zlib
from functools import cache
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.native.build import compiler

from .differential import compare_frame_by_frame
from .programs import mutate

PROGRAMS = [
    "action_names",
    "generic_function",
    "header_ops",
    "parser_errors",
    "parser_features",
    "tut_calc",
    "tut_mri",
    "tut_source_routing",
]

FRAMES = 1000
PORTS = (0, 1, 2, 3, 6)
CONFORMANCE_DIR = Path(__file__).resolve().parents[1] / "p4_conformance" / "programs"
P4_DIR = Path(__file__).resolve().parents[2] / "p4"

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


@cache
def program(name: str):
    from netweft.p4.compiler import compile_p4

    return compile_p4(str(CONFORMANCE_DIR / f"{name}.p4"),
                      include_dirs=(str(P4_DIR), str(CONFORMANCE_DIR)))


def switch(name: str, backend: str, **options):
    """A switch running conformance program ``name``, configured as its test does."""
    from netweft.emulation.switch import SoftSwitch

    sw = SoftSwitch(program(name), backend=backend, **options)
    configure = globals().get(f"configure_{name}")
    if configure is not None:
        configure(sw)
    return sw


def frames(name: str, count: int, seed: int) -> list[tuple[int, bytes]]:
    """``count`` (port, frame) pairs: valid frames of the program, about a third mutated."""
    rng = random.Random(seed)
    valid = globals()[f"valid_{name}"]
    out = []
    for _ in range(count):
        frame = valid(rng)
        if rng.random() < 0.35:
            frame = mutate(rng, frame)
        out.append((rng.choice(PORTS), frame))
    return out


@pytest.mark.parametrize("name", PROGRAMS)
def test_both_back_ends_agree_on_conformance_programs(name: str) -> None:
    py, c = switch(name, "python"), switch(name, "c")
    compared, sent = compare_frame_by_frame(py, c, frames(name, FRAMES,
                                                          seed=zlib.crc32(name.encode())))
    assert compared == FRAMES
    assert sent > FRAMES // 10         # the frames exercise forwarding, not only drops


# ---------------------------------------------------------------- frames and entries

DST, SRC = bytes.fromhex("0a0000000001"), bytes.fromhex("0a0000000002")


def _eth(ethertype: int) -> bytes:
    return DST + SRC + ethertype.to_bytes(2, "big")


def _junk(rng: random.Random, most: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randrange(most + 1)))


def configure_action_names(sw) -> None:
    t = "NIngress.names"
    sw.table_add(t, {"hdr.n.key": 1}, "NIngress.renamed_action", {"value": 0x11})
    sw.table_add(t, {"hdr.n.key": 2}, "absolute_action", {"value": 0x22})
    sw.table_add(t, {"hdr.n.key": 3}, "top_level_mark", {"value": 0x33})
    sw.table_add(t, {"hdr.n.key": 4}, "NIngress.only_in_entries", {"value": 0x44})


def valid_action_names(rng: random.Random) -> bytes:
    return _eth(0x88C2) + bytes([rng.randrange(7)] + [rng.randrange(256) for _ in range(3)]) \
        + _junk(rng, 8)


def valid_generic_function(rng: random.Random) -> bytes:
    x = rng.choice((rng.randrange(20), rng.randrange(256)))
    y = rng.choice((1000, 1001, 999, rng.randrange(65536)))
    return _eth(0x88BC) + struct.pack("!BHBH", x, y, rng.randrange(256),
                                      rng.randrange(65536)) + _junk(rng, 4)


def valid_header_ops(rng: random.Random) -> bytes:
    op, has_a = rng.randrange(6), rng.random() < 0.5
    a = bytes([rng.randrange(256), rng.randrange(256)]) if has_a else b""
    return _eth(0x88C8) + bytes([(op << 1) | has_a]) + a + _junk(rng, 6)


def valid_parser_errors(rng: random.Random) -> bytes:
    etype = rng.choice((0x9000, 0x9001, 0x9002, 0x9003, 0x9004, 0x9005, 0x9006, 0x0800))
    if etype == 0x9000:
        body = bytes(rng.randrange(256) for _ in range(rng.choice((20, 24, 12))))
    elif etype == 0x9001:
        body = bytes([rng.choice((0x5A, 0x5B))]) + _junk(rng, 5)
    elif etype == 0x9002:   # tags: the low bit ends the stack (3 elements)
        n = rng.randrange(1, 6)
        body = bytes((rng.randrange(128) << 1) | (i == n - 1 and rng.random() < 0.8)
                     for i in range(n)) + _junk(rng, 3)
    elif etype == 0x9003:
        n = rng.randrange(7)
        body = bytes([n]) + bytes(rng.randrange(256) for _ in range(rng.randrange(n + 3)))
    elif etype == 0x9004:
        body = bytes([rng.randrange(1, 4)]) + _junk(rng, 4)
    elif etype == 0x9005:
        body = bytes([rng.choice((0xAA, 0x11))]) + _junk(rng, 5)
    else:
        body = _junk(rng, 8)
    return _eth(etype) + body


def configure_parser_features(sw) -> None:
    sw.value_set_add("FeatParser.special_types", 0x88CC)
    sw.value_set_add("FeatParser.special_types", 0x9200, 0xFF00)


def _hops(rng: random.Random) -> bytes:
    n = rng.randrange(1, 7)
    out = b""
    for i in range(n):
        first = rng.choice((0xA0, 0xB0, 0xC0, rng.randrange(256))) if i == 0 \
            else rng.randrange(256)
        out += bytes([first, int(i == n - 1 and rng.random() < 0.85)])
    return out


def valid_parser_features(rng: random.Random) -> bytes:
    etype = rng.choice((0x9100, 0x9101, 0x9102, 0x9103, 0x9103, 0x9104, 0x88CC, 0x9234,
                        0x0800))
    if etype == 0x9102:
        body = bytes([rng.choice((4, 6, 9)), rng.randrange(256)]) + _junk(rng, 5)
    elif etype == 0x9103:
        body = _hops(rng) + _junk(rng, 3)
    else:
        body = bytes([rng.randrange(256)]) + _junk(rng, 6)
    return _eth(etype) + body


def valid_tut_calc(rng: random.Random) -> bytes:
    magic = (0x50, 0x34, 0x01) if rng.random() < 0.85 else (0x50, 0x35, 0x01)
    op = ord(rng.choice("+-&|^*"))
    return DST + SRC + b"\x12\x34" + struct.pack("!BBBBIII", *magic, op,
                                                 rng.randrange(1 << 32), rng.randrange(1 << 32),
                                                 rng.randrange(1 << 32))


NH_MAC = "08:00:00:00:02:22"


def _add_route(sw, prefix: str, length: int, port: int) -> None:
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (prefix, length)},
                 "MyIngress.ipv4_forward", {"dstAddr": NH_MAC, "port": port})


def configure_tut_mri(sw) -> None:
    _add_route(sw, "10.0.2.0", 24, 2)
    sw.table_set_default("MyEgress.swtrace", "MyEgress.add_swtrace", {"swid": 7})


def _csum16(data: bytes) -> int:
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


MRI_OPTION = (2 << 5) | 31   # copyFlag 0, class 2 (debug), option 31


def valid_tut_mri(rng: random.Random) -> bytes:
    """Ethernet / IPv4 with the MRI option (0..9 traces) / UDP, as the tutorial test."""
    dst = rng.choice(("10.0.2.2", "10.0.2.9", "10.0.3.3"))
    l4 = bytes(IP(src="10.0.1.1", dst=dst) / UDP(sport=4000, dport=4001) / b"mri!")[20:]
    if rng.random() < 0.15:   # no option
        option = b""
    else:
        n = rng.randrange(10)
        option = bytes([MRI_OPTION, 4 + 8 * n]) + struct.pack("!H", n)
        option += b"".join(struct.pack("!II", rng.randrange(1 << 32), rng.randrange(1 << 32))
                           for _ in range(n))
    ihl = 5 + len(option) // 4
    base = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(l4), 1, 0,
                       rng.choice((64, 1, 0)), 17, 0, bytes([10, 0, 1, 1]),
                       bytes(int(x) for x in dst.split(".")))
    base = base[:10] + struct.pack("!H", _csum16(base)) + base[12:]
    return bytes(Ether(dst="0a:00:00:00:00:02", src="00:00:00:00:01:01", type=0x0800)) \
        + base + option + l4


def valid_tut_source_routing(rng: random.Random) -> bytes:
    """Ethernet / 0..11 (bos, port) hops / IPv4 (the stack holds 9)."""
    hops = [rng.choice((1, 2, 3, 4, 511, rng.randrange(1 << 15))) for _ in range(rng.randrange(12))]
    inner = bytes(IP(src="10.0.1.1", dst="10.0.2.2", ttl=rng.choice((64, 1, 0)), id=1)
                  / UDP() / b"sr")
    if not hops:
        return bytes(Ether(dst="0a:00:00:00:00:02", src="0a:00:00:00:00:01",
                           type=0x0800)) + inner
    last = rng.random() < 0.9
    stack = b"".join(struct.pack("!H", ((last and i == len(hops) - 1) << 15) | port)
                     for i, port in enumerate(hops))
    return bytes(Ether(dst="0a:00:00:00:00:02", src="0a:00:00:00:00:01", type=0x1234)) \
        + stack + inner
