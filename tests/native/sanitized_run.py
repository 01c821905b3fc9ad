"""Run the differential frames of every ``p4/`` program, of the conformance programs
of test_differential_conformance.py and of the extern programs of
test_differential_externs.py (meters, direct resources, selectors, payload
checksums), and lookup_bench.p4's tables with inserts and deletes, through the
native back end built with ``-fsanitize=address,undefined`` (run by
test_sanitizers.py in a child process with libasan preloaded; any report aborts it)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from netweft.emulation.native import build
from netweft.emulation.native.pipeline import NativePipeline
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4

from . import test_differential_conformance as conformance
from .programs import SPECS, frames, mutate, switch

_load = NativePipeline.load.__func__


def _sanitized_load(cls, program, seed=0, select_no_match_ends_parsing=False,
                    flags=build.SANITIZE_FLAGS):
    return _load(cls, program, seed, select_no_match_ends_parsing, build.SANITIZE_FLAGS)


def main(count: int) -> int:
    NativePipeline.load = classmethod(_sanitized_load)
    total = 0
    for name in sorted(SPECS):
        sw = switch(name, "c")
        assert "sanitize" in " ".join(build.SANITIZE_FLAGS)
        for port, frame in frames(name, count, seed=11):
            total += len(sw.process(port, frame))
        queued = switch(name, "c", priority_queues=2)
        queued.set_queue_depth(8)
        queued.set_queue_rate(20000.0)
        now = 0
        for port, frame in frames(name, count // 4, seed=12):
            now += 20_000
            total += len(queued.receive(port, frame, now))
    for name in conformance.PROGRAMS:      # the conformance programs run natively
        sw = conformance.switch(name, "c")
        for port, frame in conformance.frames(name, count // 2, seed=13):
            total += len(sw.process(port, frame))
    total += _externs(count) + _tables(count)
    print(f"sanitized run: {total} frames out")
    return 0


def _externs(count: int) -> int:
    from .test_differential_externs import SPECS as EXTERNS

    total = 0
    for _name, (path, setup, make, change) in sorted(EXTERNS.items()):
        now = [1_000]
        sw = SoftSwitch(compile_p4(str(path)), backend="c", clock=lambda now=now: now[0])
        if setup is not None:
            setup(sw)
        rng = random.Random(13)
        for i in range(count):
            if i == count // 2 and change is not None:
                change(sw)
            frame = make(rng)
            if rng.random() < 0.35:
                frame = mutate(rng, frame)
            now[0] += rng.randint(0, 400)
            total += len(sw.process(rng.randint(0, 3), frame))
    return total


def _tables(count: int) -> int:
    """lpm and ternary entries added and deleted (the tables rebuilt) between frames."""
    from netweft.testbed.bench.switch import udp_frame

    sw = SoftSwitch(compile_p4(str(Path(__file__).with_name("lookup_bench.p4"))), backend="c")
    rng = random.Random(14)
    entries = []
    total = 0
    for i in range(count):
        plen = rng.randint(0, 32)
        value = rng.getrandbits(32) & ((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)
        try:
            entries.append(("BIngress.routes", sw.table_add(
                "BIngress.routes", {"hdr.ipv4.dstAddr": (value, plen)}, "BIngress.forward",
                {"port": rng.randint(1, 8)})))
            mask = rng.getrandbits(32)
            entries.append(("BIngress.acl", sw.table_add(
                "BIngress.acl", {"hdr.ipv4.dstAddr": (value & mask, mask)}, "BIngress.forward",
                {"port": rng.randint(1, 8)}, priority=rng.randint(1, 50))))
        except Exception:  # noqa: BLE001 - a duplicate match: skip it
            pass
        if entries and i % 5 == 0:
            table, entry = entries.pop(rng.randrange(len(entries)))
            sw.table_delete(table, entry)
        dst = f"{rng.randint(0, 255)}.{rng.randint(0, 255)}.0.{rng.randint(0, 255)}"
        total += len(sw.process(1, udp_frame(dst, 8)))
    return total


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000))
