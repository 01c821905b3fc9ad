"""Where an lvalue's location depends on run-time values (P4-16 8.1, 8.18).

P4 evaluates an assignment's left-hand side before its right-hand side, and a
call's arguments left to right, each out/inout argument's location being fixed
when it is evaluated.  The generated code re-evaluates an lvalue's source text
where it writes, which gives the same result unless a run-time stack index
(``hdr.s[hdr.k.i]``) or ``next``/``last`` is read after a side effect changed
it.  This module finds those run-time parts and answers "could this expression
have a side effect?", so the lowering pins the location into temporaries only
then and leaves the common path (constant indices, side-effect free values)
untouched.
"""

from __future__ import annotations

from netweft.emulation.pipeline.aliasing import iter_nodes
from netweft.p4.compiler import ir

# calls that only read: header validity and compile-time sizes
_PURE_CALLS = {(ir.CALL_HEADER, "isValid"), (ir.CALL_BUILTIN, "minSizeInBits"),
               (ir.CALL_BUILTIN, "minSizeInBytes"), (ir.CALL_BUILTIN, "maxSizeInBits"),
               (ir.CALL_BUILTIN, "maxSizeInBytes"), (ir.CALL_BUILTIN, "sizeInBits"),
               (ir.CALL_BUILTIN, "sizeInBytes")}


def run_time_location_parts(lvalue: ir.Expression) -> list[ir.Expression]:
    """The parts of an lvalue's path whose meaning is decided at run time.

    Each is either the index expression of an ``ArrayIndex`` on a header stack
    or list with a non-constant index, or a stack ``Member`` ``next``/``last``;
    outermost first.  Parts inside an index expression are not listed: the
    index is pinned as a whole value.
    """
    parts: list[ir.Expression] = []
    e = lvalue
    while True:
        if isinstance(e, ir.SliceExpr):
            e = e.expr
        elif isinstance(e, ir.ArrayIndex):
            if not isinstance(e.index, ir.Constant):
                parts.append(e.index)
            e = e.left
        elif isinstance(e, ir.Member):
            if isinstance(e.expr.type, ir.Type_Stack) and e.member in ("next", "last"):
                parts.append(e)
            e = e.expr
        else:
            return parts


def may_have_side_effects(e: ir.Expression) -> bool:
    """True if evaluating ``e`` may change state (any call but pure reads)."""
    for n in iter_nodes(e):
        if isinstance(n, ir.MethodCallExpression) and \
                (n.kind, n.method_name) not in _PURE_CALLS:
            return True
    return False
