"""Cross-check against p4c (marked ``bmv2``; skipped, saying why, when p4c-bm2-ss is
not on PATH): every program of the conformance suite and of p4/ is accepted by
netweft-p4c exactly when p4c-bm2-ss accepts it, and both write the same P4Info.

The conformance tests' packets run on netweft's switch only; the PTF suites
(tests/ptf_suites, docs/ptf.md) are what runs the same packets on BMv2."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from .harness import PROGRAMS_DIR, REPO_P4_DIR

pytestmark = pytest.mark.bmv2

PROGRAMS = sorted([*PROGRAMS_DIR.glob("*.p4"), *REPO_P4_DIR.glob("*.p4")])
NETWEFT_P4C = str(Path(sys.executable).parent / "netweft-p4c")


def compile_with(compiler: str, program: Path, out: Path) -> tuple[int, str, Path]:
    out.mkdir()
    p4info = out / "p4info.txtpb"
    done = subprocess.run([compiler, "--p4v", "16", "-I", str(REPO_P4_DIR), "-I",
                           str(PROGRAMS_DIR), "--p4runtime-files", str(p4info),
                           "-o", str(out / "program.json"), str(program)],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, done.stderr, p4info


@pytest.mark.slow
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_netweft_p4c_agrees_with_p4c_bm2_ss(program, tmp_path):
    if shutil.which("p4c-bm2-ss") is None:
        pytest.skip("BMv2 cross-check: p4c-bm2-ss not on PATH (docs/ptf.md says how to "
                    "build it)")
    theirs, their_errors, their_p4info = compile_with("p4c-bm2-ss", program, tmp_path / "p4c")
    ours, our_errors, our_p4info = compile_with(NETWEFT_P4C, program, tmp_path / "netweft")
    assert (ours == 0) == (theirs == 0), (
        f"p4c-bm2-ss exit {theirs}: {their_errors[-2000:]}\n"
        f"netweft-p4c exit {ours}: {our_errors[-2000:]}")
    if theirs == 0:
        expected = text_format.Parse(their_p4info.read_text(), p4info_pb2.P4Info())
        got = text_format.Parse(our_p4info.read_text(), p4info_pb2.P4Info())
        assert text_format.MessageToString(got) == text_format.MessageToString(expected)
