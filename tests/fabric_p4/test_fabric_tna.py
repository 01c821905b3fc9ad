"""p4/tna/fabric.p4 is never compiled here (bf-p4c is not available); netweft's front
end checks its syntax and types against stand-in declarations of the TNA names it
uses, so that the variant at least stays well-formed P4-16."""

from __future__ import annotations

from pathlib import Path

from netweft.p4.compiler.lexer import tokenize
from netweft.p4.compiler.parser import Parser
from netweft.p4.compiler.preprocessor import ARCH_DIR, preprocess_file
from netweft.p4.compiler.program import Program
from netweft.p4.compiler.typecheck import TypeChecker

ROOT = Path(__file__).resolve().parents[2]
STAND_IN = Path(__file__).resolve().parent / "tna_stand_in"


def test_the_tna_variant_parses_and_type_checks():
    path = ROOT / "p4" / "tna" / "fabric.p4"
    src = preprocess_file(path, include_dirs=[str(STAND_IN), str(ARCH_DIR)])
    ast = Parser(tokenize(src)).parse_program()
    TypeChecker(ast, Program(source_path=str(path), ast=ast)).check()
    names = {getattr(d, "name", None) for d in ast.objects}
    assert {"FabricIngress", "FabricEgress", "FabricIngressParser", "main"} <= names
