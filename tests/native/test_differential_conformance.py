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
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.native.build import compiler

from .differential import compare_frame_by_frame
from .programs import mutate

PROGRAMS = [
    "action_names",
    "arithmetic",
    "constants",
    "field_names",
    "generic_function",
    "header_ops",
    "keyword_names",
    "language",
    "misc_externs",
    "names_and_arguments",
    "nested_controls",
    "parser_errors",
    "parser_features",
    "scopes",
    "subcontrols",
    "switch_statement",
    "tables",
    "tut_basic_tunnel",
    "tut_calc",
    "tut_ecn",
    "tut_firewall",
    "tut_load_balance",
    "tut_mri",
    "tut_multicast",
    "tut_qos",
    "tut_source_routing",
    "v1model_metadata",
    "wide_arithmetic",
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


# Programs whose test sends one fixed-layout header after Ethernet: the header
# (random field values, some of them the test's interesting ones) and a tail.

def _header(rng: random.Random, ethertype: int, body: bytes, other: int = 0x0800) -> bytes:
    """Ethernet (``ethertype``, now and then ``other``) / ``body`` / a short tail."""
    if rng.random() < 0.1:
        ethertype = other
    return _eth(ethertype) + body + _junk(rng, 6)


def _bytes(rng: random.Random, count: int, small: int = 16) -> bytes:
    """``count`` random bytes, each small (below ``small``) half of the time."""
    return bytes(rng.randrange(small) if rng.random() < 0.5 else rng.randrange(256)
                 for _ in range(count))


def valid_arithmetic(rng: random.Random) -> bytes:
    a, b = rng.choice((0, 0x7F, 0x80, 0xFF, rng.randrange(256))), rng.randrange(256)
    return _header(rng, 0x88B9, bytes([a, b, rng.randrange(13)]) + b"after")


def valid_constants(rng: random.Random) -> bytes:
    return _header(rng, 0x88C3, b"rest")


def valid_field_names(rng: random.Random) -> bytes:
    return _header(rng, 0x8888, _bytes(rng, 12))


def configure_keyword_names(sw) -> None:
    sw.table_add("KIngress.import", {"hdr.w.class": 3}, "KIngress.pass", {"print": 0x77})


def valid_keyword_names(rng: random.Random) -> bytes:
    return _header(rng, 0x88C5, bytes([rng.choice((3, 3, 4, rng.randrange(256)))])
                   + _bytes(rng, 6))


def valid_language(rng: random.Random) -> bytes:
    kind = rng.choice((1, 2, 7, 0xFF, rng.randrange(256)))
    x = rng.choice((5, 9, 10, 100, 101, 250, rng.randrange(256)))
    body = struct.pack("!BBHIBBBB", kind, x, rng.randrange(65536),
                       rng.choice((0, 0xFFFFFFFF, rng.randrange(1 << 32))), 0, 0, 0, 0)
    return _header(rng, 0x88BB, body + bytes([rng.randrange(256)]) + b"!")


def valid_misc_externs(rng: random.Random) -> bytes:
    dst = rng.choice((DST, bytes.fromhex("0a00000000ff"), bytes(rng.randrange(256)
                                                                for _ in range(6))))
    return dst + bytes.fromhex("0a00000000ff") \
        + rng.choice((0x0800, 0x86DD, rng.randrange(65536))).to_bytes(2, "big") \
        + b"payload" + _junk(rng, 10)


def valid_names_and_arguments(rng: random.Random) -> bytes:
    return _header(rng, 0x88C4, _bytes(rng, 5))


def configure_nested_controls(sw) -> None:
    sw.table_add("NIngress.mid.left.t", {"key": 1}, "set", {"v": 1})
    sw.table_add("NIngress.mid.right.t", {"key": 1}, "set", {"v": 2})


def valid_nested_controls(rng: random.Random) -> bytes:
    return _header(rng, 0x88C7, bytes([rng.choice((1, 2, rng.randrange(256)))])
                   + _bytes(rng, 2))


def valid_scopes(rng: random.Random) -> bytes:
    return _header(rng, 0x88C6, bytes([rng.choice((0, 5, 130, rng.randrange(256)))])
                   + _bytes(rng, 5))


def configure_subcontrols(sw) -> None:
    sw.table_add("MyIngress.outer.classify", {"k": 5}, "set_class", {"c": 1})
    sw.table_add("MyIngress.inner.classify", {"k": 5}, "set_class", {"c": 2})
    sw.table_add("inner.classify", {"k": 6}, "set_class", {"c": 3})
    sw.table_add("MyIngress.first", {"hdr.s.k1": 1}, "MyIngress.mark_first", {})
    sw.table_add("MyIngress.second", {"hdr.s.k2": 2}, "MyIngress.mark_second", {})
    sw.table_add("MyIngress.exiting", {"hdr.s.k1": 1}, "MyIngress.stop_here", {})


def valid_subcontrols(rng: random.Random) -> bytes:
    body = struct.pack("!BHHBBBB", rng.randrange(11), rng.choice((1, 5, 6, 9)),
                       rng.choice((2, 5, 6, 9)), 0, 0, 0, rng.choice((0, 7, rng.randrange(256))))
    return _header(rng, 0x88BF, body)


def valid_switch_statement(rng: random.Random) -> bytes:
    return _header(rng, 0x88C0, bytes([rng.choice((0, 1, 2, 7, 9, rng.randrange(256))),
                                       rng.choice((1, 2, 3, 9, rng.randrange(256))),
                                       0x55, 0x55]))


def configure_tables(sw) -> None:
    """The entries of test_tables.py's tests that do not contradict each other."""
    sw.table_add("t_exact", {"hdr.keys.e": 1}, "set_result", {"id": 1})
    sw.table_add("t_exact", {"hdr.keys.e": 2}, "set_pair", {"id": 2, "param": 3})
    sw.table_add("TIngress.t_exact", {"hdr.keys.e": 7}, "TIngress.set_pair", {"id": 5, "param": 9})
    for value, mask, ident, priority in ((0x1200, 0xFF00, 1, 10), (0x0034, 0x00FF, 2, 20),
                                         (0, 0, 3, 1)):
        sw.table_add("t_ternary", {"hdr.keys.t": (value, mask)}, "set_result", {"id": ident},
                     priority=priority)
    sw.table_add("t_range", {"hdr.keys.r": (100, 200)}, "set_result", {"id": 1}, priority=5)
    sw.table_add("t_range", {"hdr.keys.r": (150, 160)}, "set_result", {"id": 2}, priority=50)
    sw.table_add("t_optional", {"hdr.keys.e": 1, "hdr.keys.o": None}, "set_result", {"id": 1},
                 priority=1)
    sw.table_add("t_optional", {"hdr.keys.e": 1, "hdr.keys.o": 9}, "set_result", {"id": 2},
                 priority=2)
    for prefix, length, ident in (("10.1.2.0", 24, 24), ("10.1.2.128", 25, 25),
                                  ("0.0.0.0", 0, 0x77), ("10.0.0.0", 8, 8)):
        sw.table_add("t_lpm", {"hdr.keys.l": (prefix, length)}, "set_result", {"id": ident})
    sw.table_add("t_multi", {"hdr.keys.e": 3, "hdr.keys.t": (0, 0), "hdr.keys.r": (0, 0xFFFF)},
                 "set_result", {"id": 1}, priority=1)
    sw.table_add("t_multi", {"hdr.keys.e": 3, "hdr.keys.t": (0x00F0, 0x00F0),
                             "hdr.keys.r": (10, 20)}, "set_result", {"id": 2}, priority=2)
    sw.table_add("TIngress.renamed", {"tenant": 6}, "TIngress.set_pair", {"id": 6, "param": 66})
    sw.table_add("t_slice_key", {"top_octet": 10, "hdr.keys.$valid$": True},
                 "set_result", {"id": 10})
    sw.table_add("t_slice_key", {"top_octet": 11, "hdr.keys.isValid()": False},
                 "set_result", {"id": 11})
    sw.table_set_default("t_default_args", "set_pair", {"id": 1, "param": 2})


def valid_tables(rng: random.Random) -> bytes:
    keys = struct.pack("!BBHHBI", rng.randrange(17), rng.choice((1, 2, 3, 6, 7, rng.randrange(256))),
                       rng.choice((0x1234, 0x12FF, 0xAB34, 0x4242, 0x00F0, rng.randrange(65536))),
                       rng.choice((99, 100, 150, 160, 161, 15, rng.randrange(65536))),
                       rng.choice((9, rng.randrange(256))),
                       rng.choice((0x0A010281, 0x0A010201, 0x0A0B0C0D, 0x0B000000,
                                   rng.randrange(1 << 32))))
    return _header(rng, 0x88B8, keys + bytes(4) + b"pl")


SWITCH_MAC = "08:00:00:00:01:00"


def _route(sw) -> None:
    _add_route(sw, "10.0.2.0", 24, 2)


def _ipv4(rng: random.Random, l4=None, tos: int = 0, ethertype: int = 0x0800) -> bytes:
    dst = rng.choice(("10.0.2.2", "10.0.2.9", "10.0.3.3"))
    l4 = UDP(sport=1, dport=2) if l4 is None else l4
    return bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01", type=ethertype)
                 / IP(src="10.0.1.1", dst=dst, tos=tos, ttl=rng.choice((64, 1, 0)), id=1)
                 / l4 / b"payload")


def configure_tut_basic_tunnel(sw) -> None:
    _route(sw)
    sw.table_add("MyIngress.tunnel_exact", {"hdr.tunnel.dst_id": 2},
                 "MyIngress.tunnel_forward", {"port": 3})


def valid_tut_basic_tunnel(rng: random.Random) -> bytes:
    plain = _ipv4(rng)
    if rng.random() < 0.4:
        return plain
    proto = rng.choice((0x0800, 0x0800, rng.randrange(65536)))
    return bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01", type=0x1212)) \
        + struct.pack("!HH", proto, rng.choice((2, 5, rng.randrange(65536)))) + plain[14:]


def configure_tut_ecn(sw) -> None:
    _route(sw)
    sw.table_set_default("MyEgress.ecn_config", "MyEgress.set_threshold", {"threshold": 0})


def valid_tut_ecn(rng: random.Random) -> bytes:
    return _ipv4(rng, tos=rng.choice((0xB8, 0, rng.randrange(64) << 2)) | rng.randrange(4))


INSIDE, OUTSIDE = "10.0.1.1", "10.0.3.3"


def configure_tut_firewall(sw) -> None:
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (INSIDE, 32)},
                 "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 1})
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (OUTSIDE, 32)},
                 "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:03:33", "port": 3})
    sw.table_add("MyIngress.check_ports", {"standard_metadata.ingress_port": 1,
                                           "standard_metadata.egress_spec": 3},
                 "MyIngress.set_direction", {"dir": 0})
    sw.table_add("MyIngress.check_ports", {"standard_metadata.ingress_port": 3,
                                           "standard_metadata.egress_spec": 1},
                 "MyIngress.set_direction", {"dir": 1})


def valid_tut_firewall(rng: random.Random) -> bytes:
    """TCP between the inside and outside hosts (few ports: replies find the filter)."""
    src, dst = (INSIDE, OUTSIDE) if rng.random() < 0.5 else (OUTSIDE, INSIDE)
    sport, dport = rng.choice((1000, 1001, 80)), rng.choice((1000, 1001, 80))
    tcp = TCP(sport=sport, dport=dport, flags=rng.choice(("S", "SA", "A", "PA", "F")), seq=1)
    l4 = tcp if rng.random() < 0.9 else UDP(sport=sport, dport=dport)
    return bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:00:99")
                 / IP(src=src, dst=dst, ttl=rng.choice((64, 1)), id=1) / l4)


def configure_tut_load_balance(sw) -> None:
    sw.table_add("MyIngress.ecmp_group", {"hdr.ipv4.dstAddr": ("10.0.0.1", 32)},
                 "MyIngress.set_ecmp_select", {"ecmp_base": 0, "ecmp_count": 2})
    for select, (mac, ip, port) in {0: ("00:00:00:00:02:02", "10.0.2.2", 2),
                                    1: ("00:00:00:00:03:03", "10.0.3.3", 3)}.items():
        sw.table_add("MyIngress.ecmp_nhop", {"meta.ecmp_select": select},
                     "MyIngress.set_nhop", {"nhop_dmac": mac, "nhop_ipv4": ip, "port": port})
    for port, mac in {2: "00:00:00:02:02:00", 3: "00:00:00:03:03:00"}.items():
        sw.table_add("MyEgress.send_frame", {"standard_metadata.egress_port": port},
                     "MyEgress.rewrite_mac", {"smac": mac})


def valid_tut_load_balance(rng: random.Random) -> bytes:
    dst = rng.choice(("10.0.0.1", "10.0.0.1", "10.0.0.2"))
    sport, dport = rng.randrange(65536), rng.randrange(65536)
    l4 = TCP(sport=sport, dport=dport) if rng.random() < 0.7 else UDP(sport=sport, dport=dport)
    return bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01")
                 / IP(src=f"10.0.1.{rng.randrange(256)}", dst=dst, ttl=rng.choice((64, 1)))
                 / l4 / b"lb")


def configure_tut_multicast(sw) -> None:
    sw.mc_group_set(1, [(1, 11), (2, 12), (3, 13)])
    sw.table_add("MyIngress.mac_lookup", {"hdr.ethernet.dstAddr": "08:00:00:00:03:33"},
                 "MyIngress.mac_forward", {"port": 3})


def valid_tut_multicast(rng: random.Random) -> bytes:
    dst = rng.choice(("ff:ff:ff:ff:ff:ff", "08:00:00:00:03:33", "08:00:00:00:04:44"))
    return bytes(Ether(dst=dst, src="0a:00:00:00:ff:ff", type=0x0800)
                 / IP(dst="10.0.0.9") / ICMP())


def configure_tut_qos(sw) -> None:
    _route(sw)


def valid_tut_qos(rng: random.Random) -> bytes:
    l4 = rng.choice((UDP(sport=1, dport=2), TCP(sport=1, dport=2), ICMP()))
    return _ipv4(rng, l4, tos=rng.randrange(256))


def configure_v1model_metadata(sw) -> None:
    sw.mc_group_set(3, [(1, 100), (4, 101), (1, 102)])
    sw.mc_group_set(9, [(5, 1)])


def valid_v1model_metadata(rng: random.Random) -> bytes:
    """The probe header (command, argument, zeroed observations), sometimes padded."""
    body = struct.pack("!BBHIIIHHI", rng.randrange(11),
                       rng.choice((0, 2, 3, 5, 6, 7, 9, rng.randrange(256))), 0, 0, 0, 0, 0, 0, 0)
    pad = bytes(rng.choice((0, 0, 100)))
    return _header(rng, 0x88B5, body + b"\x11\x22\x33\x44\x55" + pad)


def valid_wide_arithmetic(rng: random.Random) -> bytes:
    def value(bits: int) -> int:
        return rng.choice((0, 1, 0x7F, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF, (1 << bits) - 1,
                           rng.randrange(1 << bits), rng.randrange(1 << bits)))

    body = value(64).to_bytes(8, "big") + value(64).to_bytes(8, "big") \
        + value(128).to_bytes(16, "big")
    return _header(rng, 0x88BE, body)
