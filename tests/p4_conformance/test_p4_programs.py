"""Every netweft program in p4/ compiles with the embedded front end."""

from __future__ import annotations

import pytest

from .harness import REPO_P4_DIR, compile_program

PROGRAMS = sorted(REPO_P4_DIR.glob("*.p4"))


def test_there_are_programs_to_check():
    names = {path.name for path in PROGRAMS}
    assert {"basic_forward.p4", "ecmp_spray.p4"} <= names


@pytest.mark.parametrize("path", PROGRAMS, ids=[path.name for path in PROGRAMS])
def test_program_compiles(path):
    program = compile_program(path)
    assert program is not None


@pytest.mark.parametrize("name", ["basic_forward", "ecmp_spray"])
def test_programs_compile_from_the_installed_package(name):
    """netweft.p4.program() finds the package data; includes resolve next to it."""
    from netweft.p4.compiler import compile_p4
    from netweft.p4.programs import program

    assert compile_p4(str(program(name))) is not None
