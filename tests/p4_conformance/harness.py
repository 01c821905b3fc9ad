"""Compile-once fixtures for the P4 conformance suite.

Each test module compiles its program once (module-scoped fixture) and builds a
fresh ``SoftSwitch`` per test, so table entries and register state never leak
between tests.  Only the public contract is used: ``compile_p4``, ``P4Error``
and ``SoftSwitch``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs"
REPO_P4_DIR = Path(__file__).resolve().parents[2] / "p4"


def program_path(name: str) -> Path:
    """Path of the conformance program ``name`` (without ``.p4``)."""
    return PROGRAMS_DIR / f"{name}.p4"


def compile_program(path: Path):
    """Compile ``path`` with the embedded front end (imported lazily)."""
    from netweft.p4.compiler import compile_p4

    return compile_p4(str(path), include_dirs=(str(REPO_P4_DIR), str(PROGRAMS_DIR)))


BOTH_BACKENDS = ("python", "c")


def switch_factory(name_or_path: str | Path, backends: tuple[str, ...] = ("python",)):
    """A module-scoped fixture giving ``make_switch()`` for one program.

    ``make_switch(**options)`` passes options (beyond the contract, e.g. a
    ``clock``) to ``SoftSwitch``; contract tests call it without arguments.

    ``name_or_path`` is a conformance program name (``programs/<name>.p4``) or
    a path to any ``.p4`` file.  The program is compiled once per module.
    ``backends``: the switch back ends each test runs on (the fixture is
    parametrized; ``"c"`` is skipped only where no C compiler is installed).
    """

    @pytest.fixture(scope="module", params=backends)
    def _factory(request) -> Callable[[], object]:
        from netweft.emulation.switch import SoftSwitch

        path = name_or_path if isinstance(name_or_path, Path) else program_path(name_or_path)
        program = compile_program(path)
        backend = request.param
        if backend == "c":
            from netweft.emulation.native.build import compiler

            if compiler() is None:
                pytest.skip("no C compiler for the native back end")
        return lambda **options: SoftSwitch(program, backend=backend, **options)

    return _factory
