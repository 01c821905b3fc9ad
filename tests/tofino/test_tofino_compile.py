"""Every Tofino program compiled by p4c's open-source Tofino back end (marked
``tofino``; skipped, saying why, when the back end is not on PATH, as in CI):

- p4/tna/*.p4 for Tofino 1 (``--target tofino --arch tna``) down to the binary:
  tofino.bin and bfrt.json are written;
- p4/t2na/*.p4 for Tofino 2 (``--target tofino2 --arch t2na``): TOFINO2_BINARY
  says how far. True: down to the binary (tofino2.bin and bfrt.json); False:
  every check of the back end up to its assembler (``-S``, the assembly file).

docs/tofino.md says how to build the back end and records what it reported."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tofino, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
TOFINO1 = sorted((ROOT / "p4" / "tna").glob("*.p4"))
TOFINO2 = sorted((ROOT / "p4" / "t2na").glob("*.p4"))

# How far the Tofino 2 programs are compiled (see the module's docstring).
TOFINO2_BINARY = True


def tofino_compiler() -> str:
    """The driver of p4c's Tofino back end on PATH; skips the test when there is none."""
    if shutil.which("bf-p4c"):
        return "bf-p4c"
    if shutil.which("p4c") and shutil.which("p4c-barefoot"):
        return "p4c"
    pytest.skip("Tofino compile: neither bf-p4c nor p4c with p4c-barefoot (p4c's Tofino "
                "back end) on PATH (docs/tofino.md says how to build it)")


def compile_program(args: list[str], out: Path) -> None:
    done = subprocess.run([tofino_compiler(), *args, "-o", str(out)],
                          capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, (f"exit {done.returncode}:\n{done.stdout[-2000:]}\n"
                                  f"{done.stderr[-4000:]}")


def written(out: Path, name: str) -> list[Path]:
    """The non-empty files called ``name`` under ``out``."""
    return [p for p in out.rglob(name) if p.stat().st_size > 0]


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("program", TOFINO1, ids=lambda p: f"tna/{p.name}")
def test_tofino1_program_compiles_to_a_binary(program, tmp_path):
    out = tmp_path / program.stem
    compile_program(["--target", "tofino", "--arch", "tna", str(program)], out)
    assert written(out, "tofino.bin")
    assert written(out, "bfrt.json")


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("program", TOFINO2, ids=lambda p: f"t2na/{p.name}")
def test_tofino2_program_compiles(program, tmp_path):
    out = tmp_path / program.stem
    args = ["--target", "tofino2", "--arch", "t2na", str(program)]
    if TOFINO2_BINARY:
        compile_program(args, out)
        assert written(out, "tofino2.bin")
        assert written(out, "bfrt.json")
    else:
        compile_program(["-S", *args], out)
        assert written(out, "*.bfa")
