"""Header stacks and header unions in C, with the Python back end's semantics.

A stack ``H[n]`` is ``{ H e[n]; uint32_t nxt; }`` (``nxt``: nextIndex); a
union a struct of its member headers, valid when one of them is.  As in
:mod:`netweft.emulation.pipeline.runtime`: ``next``/``last`` out of bounds
stop the parser with ``error.StackOutOfBounds`` (outside a parser the packet
is dropped and counted as an internal error); a run-time index out of range
reads an invalid all-zero header and writes nowhere (a scratch element);
``push_front``/``pop_front`` shift whole elements and invalidate the ones
that come free; making a union member valid invalidates the others.
"""

from __future__ import annotations

from typing import Any

from netweft.emulation.native.c_body import CBody
from netweft.emulation.native.c_types import field_name, is_signed, unsupported
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error


def _stack_type(e: ir.Expression) -> ir.Type_Stack:
    t = e.type
    if not isinstance(t, ir.Type_Stack):
        raise unsupported(f"a stack operation on a {type(t).__name__}", e)
    return t


class CAggregateLowering:
    """Mixin of :class:`~netweft.emulation.native.c_codegen.CLowering`."""

    types: Any

    # ------------------------------------------------------------- validity

    def invalidate(self, ref: str, t: Any) -> str:
        """C statement making the header or union ``ref`` invalid (fields kept)."""
        if isinstance(t, ir.Type_HeaderUnion):
            return " ".join(f"{ref}.{field_name(f.name)}._v = 0;" for f in t.fields)
        return f"{ref}._v = 0;"

    def union_valid(self, ref: str, t: ir.Type_HeaderUnion) -> str:
        """C expression: some member of the union ``ref`` is valid."""
        terms = [f"{ref}.{field_name(f.name)}._v" for f in t.fields]
        return "((uint64_t)(" + (" || ".join(terms) or "0") + "))"

    def union_set_valid(self, ref: str, t: ir.Type_HeaderUnion, member: str) -> str:
        """C statement: member ``member`` of the union ``ref`` valid, the others not."""
        return " ".join(f"{ref}.{field_name(f.name)}._v = {1 if f.name == member else 0};"
                        for f in t.fields)

    def element_valid(self, ref: str, t: Any) -> str:
        if isinstance(t, ir.Type_HeaderUnion):
            return self.union_valid(ref, t)
        return f"{ref}._v"

    # ------------------------------------------------------------- stack access

    def out_of_bounds(self, test: str, body: CBody) -> None:
        """If ``test``: error.StackOutOfBounds (a parser's reject; see c_program)."""
        body.emit(f"if ({test}) {{ X->perr = {self.ecode('StackOutOfBounds')}; "
                  "return NW_RC_REJECT; }")

    def stack_member(self, e: ir.Member, body: CBody, for_extract: bool = False) -> str:
        """The element ``stack.next`` or ``stack.last`` refers to (an l-value).

        ``for_extract``: ``extract(stack.next)`` also advances nextIndex."""
        t = _stack_type(e.expr)
        base = self.lvalue(e.expr, body)
        ix = self.tmp("ix")
        if e.member == "next":
            body.emit(f"uint32_t {ix} = {base}.nxt;")
            self.out_of_bounds(f"{ix} >= {t.size}u", body)
            if for_extract:
                body.emit(f"{base}.nxt = {ix} + 1u;")
        elif e.member == "last":
            body.emit(f"uint32_t {ix} = {base}.nxt - 1u;")
            self.out_of_bounds(f"{base}.nxt == 0u || {ix} >= {t.size}u", body)
        else:
            raise unsupported(f"the stack member {e.member} as a location", e)
        return f"{base}.e[{ix}]"

    def stack_property(self, e: ir.Member, body: CBody) -> str:
        """``lastIndex``, ``nextIndex`` or ``size`` of a stack (values)."""
        t = _stack_type(e.expr)
        if e.member == "size":
            return f"{t.size}ULL"
        base = self.lvalue(e.expr, body)
        if e.member == "nextIndex":
            return f"((uint64_t){base}.nxt)"
        if e.member == "lastIndex":
            return f"((uint64_t)(uint32_t)({base}.nxt - 1u))"
        return self.stack_member(e, body)

    def stack_element(self, e: ir.ArrayIndex, body: CBody) -> str:
        """``stack[i]`` (an l-value): out of range, a fresh invalid scratch element."""
        t = _stack_type(e.left)
        base = self.lvalue(e.left, body)
        if isinstance(e.index, ir.Constant):
            if not 0 <= e.index.value < t.size:
                raise P4Error(f"index {e.index.value} is outside the stack of {t.size}",
                              e.loc)
            return f"{base}.e[{e.index.value}]"
        it = e.index.type
        ix = self.tmp("ix")
        body.emit(f"uint64_t {ix} = {self.expr(e.index, body)};")
        test = f"{ix} < {t.size}ULL"
        if is_signed(it):
            test = f"{self.sx(ix, it, e)} >= 0 && " + test
        scratch = self.tmp("scr")
        etype = self.types.name(t.element)
        body.emit(f"{etype} {scratch}; memset(&{scratch}, 0, sizeof {scratch});")
        return f"(*(({test}) ? &{base}.e[{ix}] : &{scratch}))"

    def stack_call(self, c: ir.MethodCallExpression, args: list[Any], body: CBody) -> None:
        """``push_front(n)`` / ``pop_front(n)``."""
        t = _stack_type(c.instance)
        base = self.lvalue(c.instance, body)
        n = self.tmp("n")
        count = self.expr(args[0], body) if args and args[0] is not None else "1ULL"
        body.open("")
        body.emit(f"uint64_t {n} = {count};")
        body.emit(f"if ({n} > {t.size}u) {n} = {t.size}u;")
        e = f"{base}.e"
        if c.method_name == "push_front":
            body.open(f"for (uint32_t i = {t.size}u; i-- > 0;)")
            body.emit(f"if (i >= {n}) {e}[i] = {e}[i - {n}]; "
                      f"else {{ {self.invalidate(f'{e}[i]', t.element)} }}")
            body.close()
            body.emit(f"{base}.nxt = {base}.nxt + {n} > {t.size}u ? {t.size}u : "
                      f"(uint32_t)({base}.nxt + {n});")
        elif c.method_name == "pop_front":
            body.open(f"for (uint32_t i = 0; i < {t.size}u; i++)")
            body.emit(f"if (i + {n} < {t.size}u) {e}[i] = {e}[i + {n}]; "
                      f"else {{ {self.invalidate(f'{e}[i]', t.element)} }}")
            body.close()
            body.emit(f"{base}.nxt = {base}.nxt > {n} ? (uint32_t)({base}.nxt - {n}) : 0u;")
        else:
            raise unsupported(f"the stack method {c.method_name}", c)
        body.close()

    # ------------------------------------------------------------- extract targets

    def extract_target(self, target: ir.Expression, body: CBody) -> tuple[str, str]:
        """Where ``extract(target)`` writes, and the C statement making it valid (a
        union member invalidates the others; ``stack.next`` advances nextIndex)."""
        if isinstance(target, ir.Member) and isinstance(target.expr.type, ir.Type_HeaderUnion):
            parent = target.expr
            if _is_stack_next(parent):
                uref = self.stack_member(parent, body, for_extract=True)
            else:
                uref = self.lvalue(parent, body)
            ref = f"{uref}.{field_name(target.member)}"
            return ref, f"{ref}._v = 1; " + self.union_set_valid(uref, parent.type,
                                                                  target.member)
        if _is_stack_next(target):
            ref = self.stack_member(target, body, for_extract=True)
        else:
            ref = self.lvalue(target, body)
        return ref, f"{ref}._v = 1;"


def _is_stack_next(e: Any) -> bool:
    return isinstance(e, ir.Member) and e.member == "next" and isinstance(e.expr.type,
                                                                         ir.Type_Stack)
