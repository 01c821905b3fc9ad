"""Expressions with P4's width rules: wrap-around, saturation, shifts, slices, casts."""

from __future__ import annotations

import re
from typing import Any

from netweft.emulation.pipeline.emitter import Body
from netweft.emulation.pipeline.evaluation_order import may_have_side_effects
from netweft.emulation.pipeline.lowering_host import LoweringPart
from netweft.emulation.pipeline.types import (
    bit_width,
    field_attr,
    is_aggregate,
    is_signed,
    unsupported,
)
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

_SPILL_EVERY = 16
_VALUES = (ir.Binary, ir.Unary, ir.Cast, ir.Mux)  # never l-values
_LITERAL = re.compile(r"\(?-?\d+\)?|True|False")


class ExpressionLowering(LoweringPart):
    """Expressions: a part of :class:`~.codegen.Lowering`; what it uses of
    the other parts is declared by :class:`~.lowering_host.LoweringHost`."""

    def unsigned(self, value: str, t: Any) -> str:
        """``value`` (of type ``t``) as a non-negative int: its two's complement bits."""
        if isinstance(t, ir.Type_Boolean):
            return f"(1 if {value} else 0)"
        if is_signed(t):
            return f"({value} & {(1 << t.width) - 1:#x})"
        return value

    def cond(self, e: ir.Expression, body: Body) -> str:
        """A condition (a bool expression)."""
        return self.expr(e, body)

    def _mask(self, t: Any) -> int:
        return (1 << t.width) - 1

    def to_signed(self, x: str, w: int) -> str:
        """The ``w``-bit two's complement value of the int expression ``x``."""
        half = 1 << (w - 1)
        return f"((({x}) & {(1 << w) - 1:#x}) ^ {half:#x}) - {half:#x}"

    def wrap(self, x: str, t: Any) -> str:
        """Apply the width rule of ``t`` to the Python int expression ``x``."""
        if isinstance(t, ir.Type_Bits):
            if t.signed:
                return f"({self.to_signed(x, t.width)})"
            return f"(({x}) & {self._mask(t):#x})"
        return f"({x})"

    def expr(self, e: ir.Expression, body: Body) -> str:
        """Python source computing ``e`` (statements it needs are emitted into ``body``)."""
        method = getattr(self, "_e_" + type(e).__name__, None)
        if method is None:
            raise unsupported(f"the expression {type(e).__name__}", e)
        self.expr_depth += 1
        try:
            value = method(e, body)
        finally:
            self.expr_depth -= 1
        if self.expr_depth and self.expr_depth % _SPILL_EVERY == 0 and isinstance(e, _VALUES):
            # CPython refuses more than 200 nested parentheses: a deep operator tree
            # is computed in steps (its operands' order is kept: see in_order)
            spilled = self.tmp("v")
            body.emit(f"{spilled} = {value}")
            return spilled
        return value

    def _e_Constant(self, e: ir.Constant, body: Body) -> str:
        t = e.type
        if isinstance(t, ir.Type_Bits):
            if t.signed:
                v = e.value & self._mask(t)
                if v >> (t.width - 1):
                    v -= 1 << t.width
                return f"({v})" if v < 0 else str(v)
            return str(e.value & self._mask(t))
        if isinstance(t, ir.Type_Boolean):
            return "True" if e.value else "False"
        return f"({e.value})" if e.value < 0 else str(e.value)

    def _e_BoolLiteral(self, e: ir.BoolLiteral, body: Body) -> str:
        return "True" if e.value else "False"

    def _e_StringLiteral(self, e: ir.StringLiteral, body: Body) -> str:
        return repr(e.value)

    def _e_PathExpression(self, e: ir.PathExpression, body: Body) -> str:
        d = e.decl
        if d is not None and id(d) in body.scope:
            return body.scope[id(d)]
        if isinstance(d, ir.Declaration_Constant):
            return self.expr(d.initializer, body)
        if isinstance(d, ir.Declaration_Instance):
            if id(d) in self.extern_vars:
                return self.extern_vars[id(d)]
            raise unsupported(f"a reference to the instance {d.name} here", e)
        if isinstance(d, ir.P4ValueSet):
            return self.value_set_vars.get(id(d)) or self.value_set_var(d)
        if isinstance(d, (ir.Declaration_ID, ir.SerEnumMember)):
            return str(d.value)
        if isinstance(d, (ir.Parameter, ir.Declaration_Variable)):
            raise P4Error(f"internal: {d.name} is not in scope in the generated code", e.loc)
        raise unsupported(f"a reference to {type(d).__name__} {e.name}", e)

    def _e_Member(self, e: ir.Member, body: Body) -> str:
        if e.decl is not None and isinstance(e.decl, (ir.Declaration_ID, ir.SerEnumMember)):
            return str(e.decl.value)
        base_t = e.expr.type
        if isinstance(e.expr, ir.MethodCallExpression) and e.expr.kind == ir.CALL_TABLE_APPLY:
            call = self.call(e.expr, body)
            if e.member == "hit":
                return f"{call}[0]"
            if e.member == "miss":
                return f"(not {call}[0])"
            if e.member == "action_run":
                return f"{call}[1]"
        if isinstance(base_t, ir.Type_Stack):
            pinned = self.pins.get(id(e))
            if pinned is not None:  # next/last of an lvalue fixed before a side effect
                return pinned
            base = self.expr(e.expr, body)
            oob = self.ecode("StackOutOfBounds")
            if e.member == "next":
                return f"{base}.next_element({oob})"
            if e.member == "last":
                return f"{base}.last({oob})"
            if e.member == "lastIndex":
                return f"(({base}.nxt - 1) & 0xffffffff)"
            if e.member == "nextIndex":
                return f"{base}.nxt"
            if e.member == "size":
                return str(base_t.size)
        base = self.expr(e.expr, body)
        return f"{base}.{field_attr(e.member)}"

    def _e_ArrayIndex(self, e: ir.ArrayIndex, body: Body) -> str:
        base = self.expr(e.left, body)
        if isinstance(e.left.type, ir.Type_Stack):
            if isinstance(e.index, ir.Constant):
                if not 0 <= e.index.value < e.left.type.size:
                    raise P4Error(f"index {e.index.value} is outside the stack of "
                                  f"{e.left.type.size}", e.loc)
                return f"{base}.e[{e.index.value}]"
            index = self.pins.get(id(e.index)) or self.expr(e.index, body)
            return f"{base}.at({index})"
        return f"{base}[{self.pins.get(id(e.index)) or self.expr(e.index, body)}]"

    def _e_SliceExpr(self, e: ir.SliceExpr, body: Body) -> str:
        x = self.expr(e.expr, body)
        lo, hi = e.lo_value, e.hi_value
        m = (1 << (hi - lo + 1)) - 1
        return f"(({x} >> {lo}) & {m:#x})" if lo else f"({x} & {m:#x})"

    def _e_Unary(self, e: ir.Unary, body: Body) -> str:
        x = self.expr(e.expr, body)
        t = e.type
        if e.op == "!":
            return f"(not {x})"
        if e.op == "+":
            return x
        if e.op == "-":
            return self.wrap(f"-{x}", t)
        if e.op == "~":
            if isinstance(t, ir.Type_Bits) and not t.signed:
                return f"({x} ^ {self._mask(t):#x})"
            return f"(~{x})"
        raise unsupported(f"the operator {e.op}", e)

    def _e_Binary(self, e: ir.Binary, body: Body) -> str:
        op = e.op
        lt, rt, t = e.left.type, e.right.type, e.type
        if op in ("&&", "||"):
            return self._short_circuit(op, self.expr(e.left, body), e.right, body)
        a, b = self.in_order([e.left, e.right], body)
        if op in ("==", "!=") and isinstance(lt, ir.Type_Varbits):
            # varbit values are equal when their current widths and values are
            if not (isinstance(e.left, ir.Member) and isinstance(e.right, ir.Member)):
                raise unsupported("== on varbit values that are not header fields", e)
            r = f"({a} == {b} and {a}__len == {b}__len)"
            return r if op == "==" else f"(not {r})"
        if op in ("==", "!="):
            if is_aggregate(lt):
                r = f"{a}._eq({b})"
                return r if op == "==" else f"(not {r})"
            return f"({a} {op} {b})"
        if op in ("<", "<=", ">", ">="):
            return f"({a} {op} {b})"
        if op in ("+", "-", "*"):
            return self.wrap(f"{a} {op} {b}", t)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op == "/":
            return f"_div({a}, {b})"
        if op == "%":
            return f"_mod({a}, {b})"
        if op == "|+|" or op == "|-|":
            pyop = "+" if op == "|+|" else "-"
            if isinstance(t, ir.Type_Bits) and t.signed:
                half = 1 << (t.width - 1)
                return f"max(min({a} {pyop} {b}, {half - 1}), {-half})"
            if isinstance(t, ir.Type_Bits):
                if op == "|+|":
                    return f"min({a} + {b}, {self._mask(t):#x})"
                return f"max({a} - {b}, 0)"
            return f"({a} {pyop} {b})"
        if op == "<<":
            if isinstance(t, ir.Type_Bits):
                if isinstance(e.right, ir.Constant):
                    if e.right.value >= t.width:
                        return "0"
                    return self.wrap(f"{a} << {e.right.value}", t)
                return f"_shl({a}, {b}, {t.width}, {t.signed})"
            return f"({a} << {b})"
        if op == ">>":
            return f"({a} >> {b})"
        if op == "++":
            wr = bit_width(rt)
            ua = self.unsigned(a, lt)
            ub = self.unsigned(b, rt)
            r = f"(({ua} << {wr}) | {ub})"
            if is_signed(t):
                return f"({self.to_signed(r, t.width)})"
            return r
        raise unsupported(f"the operator {op} outside a keyset", e)

    def in_order(self, operands: list[Any], body: Body) -> list[str]:
        """Lower ``operands`` left to right (P4-16 8.1).

        A later operand whose lowering emits statements (a call's copy-out of an
        ``inout`` argument, as in ``x + f(x)``) could change what an earlier operand's
        source text reads, so the earlier values are pinned in temporaries first.
        """
        values: list[str] = []
        for e in operands:
            value, side = self.lowered_apart(e, body)
            if side:
                values = [self._pin(v, prev.type, body)
                          for v, prev in zip(values, operands, strict=False)]
                body.lines += side
            elif values and may_have_side_effects(e):
                # an aggregate is read by reference: a call changing it in place
                # would otherwise be seen by the earlier operand
                values = [self._pin(v, prev.type, body)
                          if is_aggregate(prev.type) or isinstance(prev.type, ir.Type_Tuple)
                          else v for v, prev in zip(values, operands, strict=False)]
            values.append(value)
        return values

    def _pin(self, value: str, t: Any, body: Body) -> str:
        """``value`` copied into a fresh temporary (unless it is a literal)."""
        if _LITERAL.fullmatch(value):
            return value
        pinned = self.tmp("pin")
        if is_aggregate(t):
            body.emit(f"{pinned} = {value}._copy()")
        elif isinstance(t, ir.Type_Tuple):
            body.emit(f"{pinned} = list({value})")
        else:
            body.emit(f"{pinned} = {value}")
        return pinned

    def lowered_apart(self, e: ir.Expression, body: Body) -> tuple[str, list[str]]:
        """Lower ``e``; also return (and take back) the statements it emitted."""
        mark = len(body.lines)
        value = self.expr(e, body)
        side = body.lines[mark:]
        del body.lines[mark:]
        return value, side

    def _short_circuit(self, op: str, a: str, right: ir.Expression, body: Body) -> str:
        """``a && right`` / ``a || right``: the right side's statements run only if needed."""
        b, side = self.lowered_apart(right, body)
        if not side:
            return f"({a} and {b})" if op == "&&" else f"({a} or {b})"
        t = self.tmp("sc")
        body.emit(f"{t} = {a}")
        body.emit(f"if {t}:" if op == "&&" else f"if not {t}:")
        body.lines += ["    " + line for line in side]
        body.emit(f"    {t} = {b}")
        return t

    def _e_Mux(self, e: ir.Mux, body: Body) -> str:
        c = self.expr(e.cond, body)
        v1, side1 = self.lowered_apart(e.e1, body)
        v2, side2 = self.lowered_apart(e.e2, body)
        if not side1 and not side2:
            return f"({v1} if {c} else {v2})"
        t = self.tmp("mux")
        body.emit(f"if {c}:")
        body.lines += ["    " + line for line in side1]
        body.emit(f"    {t} = {v1}")
        body.emit("else:")
        body.lines += ["    " + line for line in side2]
        body.emit(f"    {t} = {v2}")
        return t

    def _e_Cast(self, e: ir.Cast, body: Body) -> str:
        dst = e.dest_type
        if isinstance(dst, ir.Type_StructLike) and isinstance(e.expr, ir.ListExpression):
            return self.make_struct(dst, list(e.expr.components), body)
        if isinstance(dst, ir.Type_StructLike) and isinstance(e.expr, ir.StructExpression):
            by_name = {c.name: c.expr for c in e.expr.components}
            return self.make_struct(dst, [by_name.get(f.name) for f in dst.fields], body)
        x = self.expr(e.expr, body)
        src = e.expr.type
        if isinstance(dst, (ir.Type_Newtype, ir.Type_Typedef)):
            dst = dst.type
        if isinstance(dst, ir.Type_SerEnum):
            dst = dst.underlying
        if isinstance(dst, ir.Type_Bits):
            if isinstance(src, ir.Type_Boolean):
                return f"(1 if {x} else 0)"
            if dst.signed:
                return f"({self.to_signed(x, dst.width)})"
            return f"({x} & {self._mask(dst):#x})"
        if isinstance(dst, ir.Type_Boolean):
            if isinstance(src, ir.Type_Boolean):
                return x
            return f"({x} != 0)"
        return x

    def _e_ListExpression(self, e: ir.ListExpression, body: Body) -> str:
        t = e.type
        if isinstance(t, ir.Type_StructLike):
            return self.make_struct(t, list(e.components), body)
        return "[" + ", ".join(self.in_order(list(e.components), body)) + "]"

    def _e_StructExpression(self, e: ir.StructExpression, body: Body) -> str:
        t = e.type
        if not isinstance(t, ir.Type_StructLike):
            raise unsupported("a struct expression without a struct type", e)
        by_name = {c.name: c.expr for c in e.components}
        return self.make_struct(t, [by_name.get(f.name) for f in t.fields], body)

    def _e_InvalidHeader(self, e: ir.InvalidHeader, body: Body) -> str:
        return self.types.new_expr(e.type)

    def _e_MethodCallExpression(self, e: ir.MethodCallExpression, body: Body) -> str:
        return self.call(e, body)

    def _e_DefaultExpression(self, e: ir.DefaultExpression, body: Body) -> str:
        return "0"

    def _e_TypeNameExpression(self, e: ir.TypeNameExpression, body: Body) -> str:
        raise unsupported("a type name used as a value", e)

    def make_struct(self, t: ir.Type_StructLike, values: list[Any], body: Body) -> str:
        """A new ``t`` from field values in order (None: the field's default)."""
        cname = self.types.class_name(t)
        given = [v for v in values if v is not None]
        lowered = iter(self.in_order(given, body))
        args = []
        for f, v in zip(t.fields, values, strict=False):
            args.append(self.types.new_expr(f.type) if v is None else next(lowered))
        return f"{cname}._make({', '.join(args)})"
