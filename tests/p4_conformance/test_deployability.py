"""Which of the project's P4 programs deploy to BMv2: every program in ``p4/`` does;
a test program may not, only if it says which netweft-only leniency it exercises
(a ``// netweft-only leniency ...: <construct>`` line per construct)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.bmv2_target import bmv2_errors

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "p4").glob("*.p4"))
TEST_PROGRAMS = sorted(p for d in ("tests/p4_conformance/programs", "tests/v1model/programs",
                                   "tests/p4_frontend/programs", "tests/stf/programs")
                       for p in (ROOT / d).glob("*.p4"))
MARK = re.compile(r"^// netweft-only leniency \(p4c-bm2-ss refuses it; see "
                  r"docs/bmv2-differences\.md\): (.+)$", re.M)


def compiled(path: Path):
    return compile_p4(str(path), include_dirs=(str(ROOT / "p4"), str(path.parent)))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_program_deploys_to_bmv2(path):
    assert [str(d) for d in bmv2_errors(compiled(path))] == []


@pytest.mark.parametrize("path", TEST_PROGRAMS, ids=lambda p: p.name)
def test_test_programs_deploy_or_name_their_netweft_only_leniency(path):
    refused = {d.construct for d in bmv2_errors(compiled(path))}
    marked = set(MARK.findall(path.read_text()))
    assert refused == marked, "mark the constructs BMv2 refuses, and only those"
