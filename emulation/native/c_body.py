"""The unit of generated C: a function body being written."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CBody:
    """A C function being written: its lines and scope.

    ``scope`` maps IR declarations (by ``id``) to the C l-value that holds them.
    ``kind`` is ``"parser"`` (``return`` rejects) or ``"control"``.
    """

    lines: list[str] = field(default_factory=list)
    indent: int = 1
    scope: dict[int, str] = field(default_factory=dict)
    kind: str = "control"

    def emit(self, line: str) -> None:
        """Append one line at the current indentation."""
        self.lines.append("    " * self.indent + line)

    def open(self, line: str) -> None:
        """``line {`` and indent."""
        self.emit(line + " {")
        self.indent += 1

    def close(self, tail: str = "") -> None:
        """Dedent and ``}``."""
        self.indent -= 1
        self.emit("}" + tail)
