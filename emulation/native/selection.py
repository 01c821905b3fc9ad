"""Which back end a switch runs: ``python``, ``c`` or ``auto``.

``auto`` runs the native pipeline when the C compiler is there and the back
end covers the program, and otherwise the Python one, saying why in one line
on stderr (once per program and reason); ``c`` refuses with the cause.
``$NETWEFT_SWITCH_BACKEND`` chooses when the caller does not.
"""

from __future__ import annotations

import os
import sys

from netweft.emulation.native.pipeline import NativePipeline, NativeUnavailable
from netweft.p4.compiler.program import Program

BACKENDS = ("auto", "c", "python")
# C wherever it can run the program (the differential tests compare the two
# back ends on every program the suite runs: docs/native-backend.md).
DEFAULT_BACKEND = "auto"

_SAID: set[tuple[str, str]] = set()


def backend_choice(backend: str | None) -> str:
    """The back end asked for: ``backend``, else the environment, else the default."""
    choice = backend or os.environ.get("NETWEFT_SWITCH_BACKEND") or DEFAULT_BACKEND
    if choice not in BACKENDS:
        raise ValueError(f"unknown switch back end {choice!r} (choose {', '.join(BACKENDS)})")
    return choice


def select_backend(program: Program, backend: str | None, traced: bool, seed: int,
                   select_no_match_ends_parsing: bool) -> NativePipeline | None:
    """The native pipeline to run, or None for the Python back end.

    Raises :class:`NativeUnavailable` when ``backend`` is ``"c"`` and the native
    back end cannot run the program.
    """
    choice = backend_choice(backend)
    if choice == "python":
        return None
    try:
        if traced:
            raise NativeUnavailable("packet traces are only produced by the Python back end")
        return NativePipeline.load(program, abs(seed), select_no_match_ends_parsing)
    except NativeUnavailable as err:
        if choice == "c":
            raise
        reason = str(err).splitlines()[0]
        key = (program.source_path, reason)
        if key not in _SAID:
            _SAID.add(key)
            print(f"netweft switch: {program.source_path}: using the Python back end: {reason}",
                  file=sys.stderr)
        return None

