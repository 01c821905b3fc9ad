"""Differential tests of the stateful externs, custom CRCs, payload checksums and
action selectors: stateful.p4, hashes.p4 and checksums.p4 (conformance programs)
and action_selectors.p4 on the Python and the native back end, configured alike
(meter rates, direct meters, entries, members and groups, CRC parameters), under
the same clock; ~1000 seeded frames each (valid, a third mutated). Output ports
and bytes (meter colours, hashes, checksums, chosen members), the switch
counters, every counter, register, meter bucket and direct counter must match."""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.native.build import compiler
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4

from .programs import mutate

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

FRAMES = 1000
HERE = Path(__file__).resolve().parent
CONFORMANCE = HERE.parent / "p4_conformance" / "programs"


# ---------------------------------------------------------------- stateful.p4


def _stateful_setup(sw: SoftSwitch) -> None:
    sw.meter_set_rates("MyIngress.rate", [(0.00005, 1), (0.0001, 2)])
    sw.meter_set_rates("MyIngress.rate", [(0.0002, 1), (0.0004, 3)], index=1)
    for i in range(6):
        e = sw.table_add("MyIngress.metered", {"hdr.st.index": i}, "MyIngress.read_entry_meter")
        if i % 2 == 0:
            sw.direct_meter_set_rates("MyIngress.metered", e, [(0.01, 60), (0.03, 150)])
    for i in range(0, 8, 2):
        sw.table_add("MyIngress.counted", {"hdr.st.index": i}, "MyIngress.count_entry")


def _stateful_frame(rng: random.Random) -> bytes:
    return (bytes.fromhex("0a00000000010a000000000288ba")
            + struct.pack("!BBIBB", rng.choice([1, 2, 3, 4, 5, 5, 6, 6, rng.randint(0, 7)]),
                          rng.randint(0, 5) if rng.random() < 0.8 else rng.randint(0, 20),
                          rng.getrandbits(32), rng.getrandbits(8), rng.getrandbits(8))
            + rng.randbytes(rng.randint(0, 60)))


# ---------------------------------------------------------------- hashes.p4


def _hashes_setup(sw: SoftSwitch) -> None:
    sw.set_crc16_parameters(0x1021, 0xFFFF, 0x0000, False, False)
    sw.set_crc32_parameters(0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True)


def _hashes_frame(rng: random.Random) -> bytes:
    return (bytes.fromhex("0a00000000010a000000000288b7") + rng.randbytes(8) + bytes(41)
            + rng.randbytes(rng.randint(0, 20)))


# ---------------------------------------------------------------- checksums.p4


def _checksums_frame(rng: random.Random) -> bytes:
    payload = rng.randbytes(rng.randint(0, 90))
    ip = IP(src=f"10.0.0.{rng.randint(1, 9)}", dst=f"10.0.1.{rng.randint(1, 9)}",
            ttl=rng.randint(1, 64))
    l4 = (UDP(sport=rng.randint(1, 65535), dport=rng.randint(1, 65535))
          if rng.random() < 0.75 else TCP(sport=rng.randint(1, 65535)))
    frame = bytearray(bytes(Ether(dst="0a:00:00:00:00:01", src="0a:00:00:00:00:02")
                            / ip / l4 / payload))
    r = rng.random()
    if r < 0.15:
        frame[24] ^= 0xFF                     # the IPv4 header checksum
    elif r < 0.3 and len(frame) > 41 and isinstance(l4, UDP):
        frame[40] ^= 0x5A                     # the UDP checksum
    elif r < 0.4 and isinstance(l4, UDP):
        frame[40:42] = b"\0\0"                # no UDP checksum
    elif r < 0.5 and payload:
        frame[-1] ^= 0x01                     # the payload
    return bytes(frame)


# ---------------------------------------------------------------- action_selectors.p4


def _selectors_setup(sw: SoftSwitch) -> None:
    t = "AIngress.profiled"
    m0 = sw.act_prof_add_member(t, "AIngress.set_port", {"port": 2})
    m1 = sw.act_prof_add_member(t, "AIngress.tag", {"value": 0x1234, "port": 3})
    sw.table_add_member(t, {"hdr.ethernet.dstAddr": 0x0A0000000001}, m0)
    sw.table_add_member(t, {"hdr.ethernet.dstAddr": 0x0A0000000002}, m1)
    t = "AIngress.spread"
    ms = [sw.act_prof_add_member(t, "AIngress.set_port", {"port": p}) for p in (4, 5, 6, 7)]
    ms.append(sw.act_prof_add_member(t, "AIngress.tag", {"value": 0x88B5, "port": 8}))
    groups = [sw.act_prof_create_group(t, ms), sw.act_prof_create_group(t, ms[:2] + ms[4:]),
              sw.act_prof_create_group(t, [])]
    for i, g in enumerate(groups):
        sw.table_add_group(t, {"hdr.ethernet.dstAddr[7:0]": (0x10 * (i + 1), 0xF0)}, g,
                           priority=10 + i)
    sw.table_add_member(t, {"hdr.ethernet.dstAddr[7:0]": (0x05, 0x0F)}, ms[0], priority=20)
    t = "AIngress.custom"
    ms = [sw.act_prof_add_member(t, "AIngress.tag", {"value": v, "port": 9 + v % 3})
          for v in range(6)]
    g = sw.act_prof_create_group(t, ms)
    sw.table_add_group(t, {"hdr.ethernet.dstAddr[15:8]": (0x80, 1)}, g)
    sw.table_add_group(t, {"hdr.ethernet.dstAddr[15:8]": (0xC0, 2)},
                       sw.act_prof_create_group(t, ms[:3]))
    sw.set_crc32_parameters(0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True)


def _selectors_change(sw: SoftSwitch) -> None:
    """Midway: a group loses members (as a P4Runtime group MODIFY), an entry is modified."""
    group = sw.profiles["AIngress.spread"].group(0)
    group.members = group.members[1:4]
    entry = sw.table_entries("AIngress.profiled")[0]
    sw.table_modify("AIngress.profiled", entry, "AIngress.tag", {"value": 7, "port": 11})


def _selectors_frame(rng: random.Random) -> bytes:
    dst = rng.choice([0x0A0000000001, 0x0A0000000002, 0, 0x8015, 0xC025, 0xC135, 0x80A5,
                      rng.getrandbits(48)])
    return (dst.to_bytes(6, "big") + rng.randbytes(6) + rng.randbytes(2)
            + rng.randbytes(rng.randint(0, 30)))


Spec = tuple[Path, Callable[[SoftSwitch], None] | None, Callable[[random.Random], bytes],
             Callable[[SoftSwitch], None] | None]
SPECS: dict[str, Spec] = {
    "stateful": (CONFORMANCE / "stateful.p4", _stateful_setup, _stateful_frame, None),
    "hashes": (CONFORMANCE / "hashes.p4", _hashes_setup, _hashes_frame, None),
    "checksums": (CONFORMANCE / "checksums.p4", None, _checksums_frame, None),
    "action_selectors": (HERE / "p4" / "action_selectors.p4", _selectors_setup,
                         _selectors_frame, _selectors_change),
}


def _buckets(meter) -> list:
    """A meter's rates and token buckets, whichever back end holds them."""
    if hasattr(meter, "_c"):
        c = meter._c
        return [(c.rate[i].info_rate, c.rate[i].burst, c.rate[i].tokens,
                 c.rate[i].tokens_last, c.rate[i].color) for i in range(c.nrates)]
    return [(r.info_rate, r.burst, r.tokens, r.tokens_last, r.color) for r in meter._rates]


def state_of(sw: SoftSwitch) -> dict:
    """Switch counters, every counter/register cell, meter bucket and direct resource."""
    out: dict = {"stats": sw.stats}
    for name, c in sw.counters.items():
        out[f"counter {name}"] = [c.read(i) for i in range(c.size)]
    for name, r in sw.registers.items():
        out[f"register {name}"] = [r.read(i) for i in range(r.size)]
    for name, m in sw.meters.items():
        out[f"meter {name}"] = [_buckets(x) for x in m.meters]
    for name, t in sw.tables.items():
        out[f"table {name}"] = [(e.action, e.args, list(e.counter),
                                 _buckets(e.meter) if e.meter is not None else None)
                                for e in t.entries]
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
def test_both_back_ends_agree_frame_by_frame(name: str) -> None:
    path, setup, make, change = SPECS[name]
    program = compile_p4(str(path))
    now = [1_000]
    py, c = (SoftSwitch(program, backend=b, clock=lambda: now[0]) for b in ("python", "c"))
    assert (py.backend, c.backend) == ("python", "c")
    for sw in (py, c):
        if setup is not None:
            setup(sw)
    rng = random.Random(zlib.crc32(name.encode()))
    sent = 0
    colours = set()
    for i in range(FRAMES):
        if i == FRAMES // 2 and change is not None:
            change(py)
            change(c)
        frame = make(rng)
        if rng.random() < 0.35:
            frame = mutate(rng, frame)
        port = rng.randint(0, 3)
        now[0] += rng.randint(0, 400)
        expected = py.process(port, frame)
        assert c.process(port, frame) == expected, f"frame {i}: {frame.hex()}"
        sent += len(expected)
        if name == "stateful" and expected and len(frame) >= 22 and frame[14] in (5, 6):
            colours.add((frame[14], expected[0][1][20 if frame[14] == 5 else 21]))
    assert sent > FRAMES // 4
    if name == "stateful":        # every colour of both kinds of meter was seen
        assert {(op, colour) for op in (5, 6) for colour in (0, 1, 2)} <= colours
    assert state_of(c) == state_of(py)
