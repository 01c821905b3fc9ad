"""netweft's own front end on the Tofino programs (p4/tna/ for Tofino 1, p4/t2na/ for
Tofino 2): their syntax and types, against stand-in declarations of the TNA names
they use (stand_in/), so that every variant stays well-formed P4-16 on any machine.
Compiling them for Tofino is test_tofino_compile.py's (marked ``tofino``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.lexer import tokenize
from netweft.p4.compiler.parser import Parser
from netweft.p4.compiler.preprocessor import ARCH_DIR, preprocess_file, preprocess_text
from netweft.p4.compiler.program import Program
from netweft.p4.compiler.typecheck import TypeChecker

ROOT = Path(__file__).resolve().parents[2]
STAND_IN = Path(__file__).resolve().parent / "stand_in"
PROGRAMS = sorted([*(ROOT / "p4" / "tna").glob("*.p4"), *(ROOT / "p4" / "t2na").glob("*.p4")])


def check(source: str, path: Path):
    """Parse and type-check a Tofino program's preprocessed source; its AST."""
    ast = Parser(tokenize(source)).parse_program()
    TypeChecker(ast, Program(source_path=str(path), ast=ast)).check()
    return ast


def test_both_targets_have_programs():
    assert {p.parent.name for p in PROGRAMS} == {"tna", "t2na"}
    assert (ROOT / "p4" / "tna" / "aggregation.p4") in PROGRAMS
    assert (ROOT / "p4" / "tna" / "fabric.p4") in PROGRAMS


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_tofino_program_parses_and_type_checks(path):
    ast = check(preprocess_file(path, include_dirs=[str(STAND_IN), str(ARCH_DIR)]), path)
    names = {getattr(d, "name", None) for d in ast.objects}
    assert {"pipe", "main"} <= names
    assert any(n in names for n in ("Ingress", "FabricIngress"))


def test_a_type_error_in_a_tofino_program_is_reported():
    """The check above can fail: a lane assigned a 16-bit value is refused."""
    path = ROOT / "p4" / "tna" / "aggregation.p4"
    text = path.read_text().replace("hdr.agg.worker_id = (bit<8>)eg_intr_md.egress_rid;",
                                    "hdr.agg.worker_id = eg_intr_md.egress_rid;")
    assert text != path.read_text()
    source = preprocess_text(text, str(path), include_dirs=[str(STAND_IN), str(ARCH_DIR)])
    with pytest.raises(P4Error):
        check(source, path)
