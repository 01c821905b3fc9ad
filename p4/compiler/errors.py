"""Source locations and the single error type of the P4 front end.

Every problem with a user's program -- syntax, an unknown name, a width
mismatch, an unsupported feature -- is reported as a :class:`P4Error` whose
``str()`` is ``file:line:col: message``. Locations always name the original
file and line, also for text that arrived through ``#include``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A position in a source file: 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_LOC = SourceLoc("<unknown>", 0, 0)


class P4Error(Exception):
    """A malformed or unsupported P4 program.

    ``str(err)`` is ``file:line:col: message``; ``err.loc`` and ``err.msg``
    hold the parts.
    """

    def __init__(self, message: str, loc: SourceLoc | None = None) -> None:
        self.msg = message
        self.loc = loc if loc is not None else UNKNOWN_LOC
        super().__init__(f"{self.loc}: {message}")
