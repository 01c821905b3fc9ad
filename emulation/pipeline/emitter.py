"""The unit of generated code: a Python function body being written."""

from __future__ import annotations

from dataclasses import dataclass, field


def python_identifier(text: str) -> str:
    """``text`` (a P4 name, possibly dotted) made into a Python identifier."""
    return "".join(c if c.isalnum() else "_" for c in text)


@dataclass
class Body:
    """A Python function being written: its lines, scope and out values.

    ``scope`` maps IR declarations (by ``id``) to the Python expression that
    holds them; ``outs`` are the names returned as out/inout values.
    """

    lines: list[str] = field(default_factory=list)
    indent: int = 1
    scope: dict[int, str] = field(default_factory=dict)
    outs: list[str] = field(default_factory=list)
    has_retval: bool = False

    def emit(self, line: str) -> None:
        """Append one line at the current indentation."""
        self.lines.append("    " * self.indent + line)
