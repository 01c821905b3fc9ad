"""Lookup of control-plane names by fully qualified name or unambiguous suffix."""

from __future__ import annotations

from collections.abc import Iterable


class UnknownNameError(LookupError):
    """An unknown or ambiguous control-plane name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def resolve_name(name: str, candidates: Iterable[str], kind: str) -> str:
    """The candidate equal to ``name`` or, failing that, the only one ending in ``.name``."""
    names = list(candidates)
    if name in names:
        return name
    matches = [c for c in names if c.endswith("." + name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        known = ", ".join(sorted(names)) or "none"
        raise UnknownNameError(f"unknown {kind} {name!r} (known: {known})")
    raise UnknownNameError(f"ambiguous {kind} {name!r}: matches {', '.join(sorted(matches))}")
