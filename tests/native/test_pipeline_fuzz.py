"""libFuzzer on the generated C of every ``p4/`` program (parser, controls, deparser)
under ASan and UBSan, with the tables its tests install replayed in the harness.

The replay is checked first: frames run through the harness binary come out as
they do from ``SoftSwitch`` on the native back end.  Then a bounded fuzzing run
from a seed corpus of the program's valid and mutated frames: any crash,
sanitizer report or harness abort fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from netweft.emulation.native.fuzzing import build_fuzzer, run_fuzzer, write_corpus
from netweft.emulation.switch import SoftSwitch

from .programs import SPECS, frames, program

RUNS = 15_000


def _echo(exe: Path, inputs: list[Path]) -> list[str]:
    proc = subprocess.run([str(exe), "-detect_leaks=0", *map(str, inputs)], capture_output=True, text=True,
                          env=dict(os.environ, NW_FUZZ_ECHO="1"), timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [ln for ln in proc.stdout.splitlines() if ln.startswith(("out ", "drop"))]


@pytest.mark.slow
@pytest.mark.clang_fuzzer
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_generated_pipeline_survives_libfuzzer(name: str, tmp_path: Path) -> None:
    exe = build_fuzzer(program(name), tmp_path / "fuzz", SPECS[name].configure)
    seeds = frames(name, 300, seed=5)
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seeds)

    # The replayed tables forward as the switch does: the first 150 seeds through
    # the harness and through a SoftSwitch configured the same, in order; every
    # frame the switch sends out once leaves the harness the same (multicast
    # copies are not compared: the harness takes one pass on port 1 for them).
    sw = SoftSwitch(program(name), backend="c")
    SPECS[name].configure(sw)
    got = _echo(exe, [corpus / f"seed-{i:05d}" for i in range(1, 151)])
    assert len(got) == 150
    compared = 0
    for (port, frame), line in zip(seeds[:150], got, strict=True):
        want = [f"out {p} {data.hex()}" for p, data in sw.process(port, frame)]
        if len(want) == 1:
            assert line == want[0], (port, frame.hex())
            compared += 1
        elif not want:
            assert line == "drop" or line.startswith("out 1 "), (port, frame.hex())
    assert compared >= 5

    run = run_fuzzer(exe, corpus, RUNS, seed=7)
    assert run.clean, run.log[-4000:]
    assert run.runs == RUNS
