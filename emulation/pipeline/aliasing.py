"""When copy-in/copy-out of aggregate arguments is observable (P4-16 6.8, 13.2).

The generated code passes header, union, stack and struct arguments of ``out``
and ``inout`` parameters by reference, which is fast and gives the
specification's result unless the callee can see the same storage twice: two
arguments that overlap (``a(hdr.h, hdr.h)``, ``a(hdr.h.x, hdr.h)``), or an
action whose body reaches an argument's storage through its control's own
names (``a(hdr.h)`` whose body writes ``hdr.h.f``).  This module answers
"could the callee observe aliasing?" from the IR alone, conservatively; the
call lowering copies (into a temporary, then back in parameter order) only then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from netweft.p4.compiler import ir

# one step of a location path: a field name, a constant index, or ANY_INDEX
ANY_INDEX = "*"
Path = tuple[Any, ...]  # (root declaration id, step, step, ...)


def location_path(e: ir.Expression) -> Path | None:
    """The storage path of an lvalue-like expression, or None if it is not one."""
    steps: list[Any] = []
    while True:
        if isinstance(e, ir.PathExpression):
            return (id(e.decl), *reversed(steps))
        if isinstance(e, ir.SliceExpr):
            e = e.expr
        elif isinstance(e, ir.Member):
            if isinstance(e.expr.type, ir.Type_Stack):
                if e.member in ("next", "last"):
                    steps.append(ANY_INDEX)
                else:
                    return None  # lastIndex, size, ...: values, not storage
            else:
                steps.append(e.member)
            e = e.expr
        elif isinstance(e, ir.ArrayIndex):
            index = e.index
            steps.append(index.value if isinstance(index, ir.Constant) else ANY_INDEX)
            e = e.left
        else:
            return None


def paths_touched(e: ir.Expression) -> list[Path]:
    """Every storage an argument expression may read or write (conservative)."""
    own = location_path(e)
    if own is not None:
        return [own]
    return [(id(p.decl),) for p in iter_nodes(e) if isinstance(p, ir.PathExpression)]


def may_overlap(p: Path, q: Path) -> bool:
    """True if the storage of one path may contain or equal the other's."""
    if p[0] != q[0]:
        return False
    for a, b in zip(p[1:], q[1:], strict=False):
        if a != b and a != ANY_INDEX and b != ANY_INDEX:
            return False
    return True


def iter_nodes(node: Any) -> Iterator[ir.Node]:
    """``node`` and every IR node below it (children only, never annotations)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
            continue
        if not isinstance(n, ir.Node):
            continue
        yield n
        for f in dataclasses.fields(n):
            if f.compare:
                value = getattr(n, f.name)
                if isinstance(value, (ir.Node, list)):
                    stack.append(value)


class AliasAnalysis:
    """Decides, per call, whether aggregate out/inout arguments must be copied."""

    def __init__(self) -> None:
        self._action_roots: dict[int, frozenset[int]] = {}

    def roots_used_by_action(self, action: ir.P4Action) -> frozenset[int]:
        """Declarations (ids) an action's body names, through the actions it calls."""
        key = id(action)
        if key in self._action_roots:
            return self._action_roots[key]
        self._action_roots[key] = frozenset()  # recursion guard
        roots: set[int] = set()
        for n in iter_nodes(action.body):
            if isinstance(n, ir.PathExpression) and n.decl is not None:
                roots.add(id(n.decl))
            elif isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_ACTION \
                    and isinstance(n.target, ir.P4Action):
                roots |= self.roots_used_by_action(n.target)
        result = frozenset(roots)
        self._action_roots[key] = result
        return result

    def needs_copies(self, params: list[ir.Parameter], args: list[Any],
                     is_aggregate: Any, action: ir.P4Action | None = None) -> bool:
        """True if passing aggregate out/inout arguments by reference could be observed."""
        by_ref: list[Path | None] = []
        others: list[Path] = []
        for p, a in zip(params, args, strict=False):
            if a is None or isinstance(a, ir.DefaultExpression):
                continue
            if is_aggregate(p.type) and p.direction in ("out", "inout"):
                by_ref.append(location_path(a))
            else:
                others.extend(paths_touched(a))
        if not by_ref:
            return False
        if any(path is None for path in by_ref):
            return True
        for i, p in enumerate(by_ref):
            if any(may_overlap(p, q) for q in by_ref[i + 1:]):
                return True
            if any(may_overlap(p, q) for q in others):
                return True
        if action is not None:
            used = self.roots_used_by_action(action)
            if any(path[0] in used for path in by_ref):
                return True
        return False
