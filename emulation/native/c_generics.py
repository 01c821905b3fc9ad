"""Monomorphisation of generic P4 functions for the C lowering.

The Python back end runs a generic function (``T pick<T>(...)``) once for all
its instantiations (Python values are untyped); C needs one function per
instantiation.  :func:`specialise` copies a function's own nodes (its
parameters and body) with its type variables replaced by the type arguments
of one call, leaving every reference to the rest of the program as it is.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from netweft.emulation.pipeline.aliasing import iter_nodes
from netweft.p4.compiler import ir


def type_key(t: Any) -> tuple:
    """A key that is equal for equal canonical types (for the specialisation cache)."""
    if isinstance(t, ir.Type_Bits):
        return ("bits", t.width, t.signed)
    if isinstance(t, ir.Type_Varbits):
        return ("varbit", t.size)
    if isinstance(t, ir.Type_Stack):
        return ("stack", type_key(t.element), t.size)
    if isinstance(t, ir.Type_Tuple):
        return ("tuple", *(type_key(c) for c in t.components))
    if isinstance(t, (ir.Type_Boolean, ir.Type_Error, ir.Type_InfInt)):
        return (type(t).__name__,)
    return ("decl", id(t))


def _substitute(t: Any, bindings: dict[str, Any]) -> Any:
    if isinstance(t, ir.Type_Var):
        return bindings.get(t.name, t)
    if isinstance(t, ir.Type_Stack):
        element = _substitute(t.element, bindings)
        return t if element is t.element else dataclasses.replace(t, element=element)
    if isinstance(t, ir.Type_Tuple):
        comps = [_substitute(c, bindings) for c in t.components]
        if all(a is b for a, b in zip(comps, t.components, strict=True)):
            return t
        return dataclasses.replace(t, components=comps)
    return t


def specialise(fn: ir.Function, type_args: list[Any]) -> ir.Function:
    """A copy of ``fn`` with its type parameters bound to ``type_args``."""
    bindings = {tp.name: ta for tp, ta in zip(fn.type_params, type_args, strict=False)}
    owned = {id(n) for n in iter_nodes(fn)}
    copies: dict[int, Any] = {}

    def clone(value: Any) -> Any:
        if isinstance(value, list):
            return [clone(v) for v in value]
        if isinstance(value, ir.Type):
            return _substitute(value, bindings)
        if not isinstance(value, ir.Node) or id(value) not in owned:
            return value
        done = copies.get(id(value))
        if done is not None:
            return done
        new = copy.copy(value)
        copies[id(value)] = new
        for f in dataclasses.fields(value):
            if f.name != "loc":
                setattr(new, f.name, clone(getattr(value, f.name)))
        return new

    out = clone(fn)
    out.type_params = []
    return out
