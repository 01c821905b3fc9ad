"""Run the differential frames of every ``p4/`` program (and of the conformance programs
of test_differential_conformance.py) through the native back end
built with ``-fsanitize=address,undefined`` (run by test_sanitizers.py in a child
process with libasan preloaded; any report aborts it)."""

from __future__ import annotations

import sys

from netweft.emulation.native import build
from netweft.emulation.native.pipeline import NativePipeline

from . import test_differential_conformance as conformance
from .programs import SPECS, frames, switch

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
    print(f"sanitized run: {total} frames out")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000))
