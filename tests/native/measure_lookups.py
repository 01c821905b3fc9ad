"""Table lookups per second of the native back end with 10, 1,000 and 100,000 entries.

    python -m tests.native.measure_lookups [--sizes 10,1000,100000]

lookup_bench.p4's two tables on the IPv4 destination, one filled at a time
(both are applied): ``routes``, lpm (random prefixes of 8 to 32 bits), and
``acl``, ternary (random values under 14 distinct masks, random priorities). Frames go to addresses
the installed entries cover, through the C batch entry point
(``nw_process_batch``, 256 frames per call): each frame is one lookup, plus
the parse and deparse, which bound the figure for small tables. Packets per
second of this process's CPU time. Prints figures; nothing asserts them.
"""

from __future__ import annotations

import argparse
import ipaddress
import random
import time
from pathlib import Path

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.testbed.bench.switch import udp_frame

from .measure_pps import batched

_PREFIXES = [(0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF for n in range(8, 33, 4)]
_MASKS = _PREFIXES + [m & ~0x000F0000 & 0xFFFFFFFF for m in _PREFIXES]   # and with a hole


def _switch() -> SoftSwitch:
    return SoftSwitch(compile_p4(str(Path(__file__).with_name("lookup_bench.p4"))),
                      backend="c")


def _lpm(size: int, rng: random.Random) -> tuple[SoftSwitch, list[bytes]]:
    sw = _switch()
    seen: set[tuple[int, int]] = set()
    dests = []
    while len(seen) < size:
        plen = rng.randint(8, 32)
        value = rng.getrandbits(32) & ((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)
        if (value, plen) in seen:
            continue
        seen.add((value, plen))
        sw.table_add("BIngress.routes", {"hdr.ipv4.dstAddr": (value, plen)},
                     "BIngress.forward", {"port": 2})
        dests.append(value | (rng.getrandbits(32 - plen) if plen < 32 else 0))
    return sw, [udp_frame(str(ipaddress.IPv4Address(rng.choice(dests))), 16)
                for _ in range(256)]


def _ternary(size: int, rng: random.Random) -> tuple[SoftSwitch, list[bytes]]:
    sw = _switch()
    seen: set[tuple[int, int]] = set()
    dests = []
    while len(seen) < size:
        mask = rng.choice(_MASKS)
        value = rng.getrandbits(32) & mask
        if (value, mask) in seen:
            continue
        seen.add((value, mask))
        sw.table_add("BIngress.acl", {"hdr.ipv4.dstAddr": (value, mask)}, "BIngress.forward",
                     {"port": 2}, priority=rng.randint(1, 1 << 20))
        dests.append(value | (rng.getrandbits(32) & ~mask & 0xFFFFFFFF))
    return sw, [udp_frame(str(ipaddress.IPv4Address(rng.choice(dests))), 16)
                for _ in range(256)]


def _rate(sw: SoftSwitch, frames: list[bytes], budget: float = 1.0) -> float:
    count = 256
    while True:
        t = time.process_time()
        pps, _sent = batched(sw, frames, count)
        if time.process_time() - t >= budget or count >= 1 << 24:
            return pps
        count *= 4


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,1000,100000")
    args = ap.parse_args()
    for name, build in (("lpm", _lpm), ("ternary", _ternary)):
        for size in (int(s) for s in args.sizes.split(",")):
            sw, frames = build(size, random.Random(size))
            print(f"{name:28} {size:>7} entries: {_rate(sw, frames):>12,.0f} lookups/s",
                  flush=True)


if __name__ == "__main__":
    main()
