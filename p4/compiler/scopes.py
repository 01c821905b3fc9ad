"""Lexical scopes for name resolution (one namespace per scope, overloads kept)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

# Declarations that may share a name in one scope (overloaded by argument count).
_OVERLOADABLE = (ir.Method, ir.Function)


class Scope:
    """Names declared in one block, with a link to the enclosing scope."""

    def __init__(self, parent: Scope | None = None, kind: str = "block") -> None:
        self.parent = parent
        self.kind = kind
        self.names: dict[str, list[ir.Node]] = {}

    def declare(self, name: str, decl: ir.Node, loc_node: ir.Node | None = None) -> None:
        """Add a declaration; a duplicate in the same scope is an error."""
        existing = self.names.get(name)
        if existing:
            if isinstance(decl, _OVERLOADABLE) and all(isinstance(d, _OVERLOADABLE)
                                                        for d in existing):
                existing.append(decl)
                return
            where = (loc_node or decl).loc
            raise P4Error(f"duplicate declaration of '{name}' (previous at {existing[0].loc})",
                          where)
        self.names[name] = [decl]

    def lookup_all(self, name: str) -> list[ir.Node]:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found:
                return found
            scope = scope.parent
        return []

    def lookup(self, name: str) -> ir.Node | None:
        found = self.lookup_all(name)
        return found[0] if found else None

    def visible_names(self) -> set[str]:
        """Every name visible from this scope (for "did you mean" hints)."""
        names: set[str] = set()
        scope: Scope | None = self
        while scope is not None:
            names.update(scope.names)
            scope = scope.parent
        return names

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(name, sorted(set(candidates) - {name}), n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""
