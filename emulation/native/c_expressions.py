"""Expressions in C with P4's width rules: wrap-around, saturation, shifts, slices, casts.

Every scalar expression yields its canonical value (the low W bits) in
``uint64_t`` or, above 64 bits, ``nw_u128``; statements an expression needs
(calls with copy-out, table applies) are emitted before it into the body, and
where they must run only conditionally (``&&``, ``||``, ``?:``) they go into
a GNU statement expression.
"""

from __future__ import annotations

import re
from typing import Any

from netweft.emulation.native.c_body import CBody
from netweft.emulation.native.c_types import (
    field_name,
    is_aggregate,
    is_signed,
    mask_literal,
    scalar_width,
    unsupported,
    value_type,
)
from netweft.emulation.pipeline.evaluation_order import may_have_side_effects
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

_LITERAL = re.compile(r"(0x[0-9a-f]+|\d+)ULL|[01]")


def _width_of(t: Any, node: Any) -> int:
    if isinstance(t, ir.Type_InfInt):
        return 64
    return scalar_width(t, node)


class CExpressionLowering:
    """Mixin of :class:`~netweft.emulation.native.c_codegen.CLowering`."""

    types: Any

    # ------------------------------------------------------------- helpers

    def wrap(self, x: str, t: Any, node: Any = None) -> str:
        """``x`` reduced to the canonical value of type ``t``."""
        if isinstance(t, ir.Type_Bits):
            m = mask_literal(t.width)
            return f"(({x}) & {m})" if m else f"({x})"
        if isinstance(t, ir.Type_Boolean):
            return f"(({x}) != 0)"
        return f"({x})"

    def sx(self, x: str, t: Any, node: Any) -> str:
        """A signed ``int64_t`` of the canonical int<W> ``x``."""
        w = _width_of(t, node)
        if w > 64:
            raise unsupported("a signed value wider than 64 bits", node)
        return f"nw_sx64({x}, {w})"

    def vt(self, t: Any, node: Any = None) -> str:
        return value_type(t, node)

    def apart(self, e: ir.Expression, body: CBody) -> tuple[str, list[str]]:
        """Lower ``e``; also return (and take back) the statements it emitted."""
        mark = len(body.lines)
        value = self.expr(e, body)
        side = body.lines[mark:]
        del body.lines[mark:]
        return value, side

    def stmt_expr(self, side: list[str], value: str) -> str:
        """A GNU statement expression running ``side`` then yielding ``value``."""
        if not side:
            return value
        return "({ " + " ".join(line.strip() for line in side) + f" {value}; }})"

    def pin(self, value: str, t: Any, body: CBody) -> str:
        """``value`` copied into a fresh temporary now."""
        if _LITERAL.fullmatch(value):
            return value
        tmp = self.tmp("pin")
        ctype = self.types.name(t) if is_aggregate(t) else self.vt(t)
        body.emit(f"{ctype} {tmp} = {value};")
        return tmp

    def in_order(self, operands: list[ir.Expression], body: CBody) -> list[str]:
        """Lower operands left to right (P4-16 8.1), pinning earlier values when a later
        operand has side effects."""
        values: list[str] = []
        for e in operands:
            value, side = self.apart(e, body)
            if side or (values and may_have_side_effects(e)):
                values = [self.pin(v, prev.type, body) for v, prev in zip(values, operands,
                                                                           strict=False)]
                body.lines += side
            values.append(value)
        return values

    # ------------------------------------------------------------- dispatch

    def expr(self, e: ir.Expression, body: CBody) -> str:
        """C source computing ``e`` (statements it needs are emitted into ``body``)."""
        pinned = self.__dict__.get("pins", {}).get(id(e))
        if pinned is not None:   # a compound assignment's copy of its (run-time) location
            return pinned if is_aggregate(e.type) else f"(({self.vt(e.type, e)}){pinned})"
        method = getattr(self, "_e_" + type(e).__name__, None)
        if method is None:
            raise unsupported(f"the expression {type(e).__name__}", e)
        return method(e, body)

    def cond(self, e: ir.Expression, body: CBody) -> str:
        return self.expr(e, body)

    def _e_Constant(self, e: ir.Constant, body: CBody) -> str:
        t = e.type
        v = e.value
        if isinstance(t, ir.Type_Bits):
            v &= (1 << t.width) - 1
        elif isinstance(t, ir.Type_Boolean):
            return "1" if v else "0"
        elif v < 0:
            v &= (1 << 64) - 1
        if v >= 1 << 64:
            return f"NW_U128({v >> 64:#x}ULL, {v & ((1 << 64) - 1):#x}ULL)"
        return f"{v:#x}ULL" if v > 9 else f"{v}ULL"

    def _e_BoolLiteral(self, e: ir.BoolLiteral, body: CBody) -> str:
        return "1" if e.value else "0"

    def _e_PathExpression(self, e: ir.PathExpression, body: CBody) -> str:
        d = e.decl
        if d is not None and id(d) in body.scope:
            ref = body.scope[id(d)]
            t = getattr(d, "type", None)
            if t is not None and not is_aggregate(t) and not isinstance(
                    t, ir.Type_ExternInstance):
                return f"(({self.vt(t, e)}){ref})"
            return ref
        if isinstance(d, ir.Declaration_Constant):
            return self.expr(d.initializer, body)
        if isinstance(d, (ir.Declaration_ID, ir.SerEnumMember)):
            return f"{d.value}ULL"
        if isinstance(d, (ir.Parameter, ir.Declaration_Variable)):
            raise P4Error(f"internal: {d.name} is not in scope in the generated C", e.loc)
        raise unsupported(f"a reference to {type(d).__name__} {e.name}", e)

    def lvalue(self, e: ir.Expression, body: CBody) -> str:
        """C l-value of an assignable location (no value cast)."""
        pinned = self.__dict__.get("pins", {}).get(id(e))
        if pinned is not None:
            return pinned
        if isinstance(e, ir.PathExpression):
            d = e.decl
            if d is not None and id(d) in body.scope:
                return body.scope[id(d)]
            raise unsupported(f"assignment to {e.name}", e)
        if isinstance(e, ir.Member):
            if isinstance(e.expr.type, ir.Type_Stack):
                return self.stack_member(e, body)
            return f"{self.lvalue(e.expr, body)}.{field_name(e.member)}"
        if isinstance(e, ir.ArrayIndex):
            if isinstance(e.left.type, ir.Type_Tuple):
                return self.tuple_component(e, body)
            return self.stack_element(e, body)
        raise unsupported(f"assignment to a {type(e).__name__}", e)

    def _e_Member(self, e: ir.Member, body: CBody) -> str:
        if e.decl is not None and isinstance(e.decl, (ir.Declaration_ID, ir.SerEnumMember)):
            return f"{e.decl.value}ULL"
        inner = e.expr
        if isinstance(inner, ir.MethodCallExpression) and inner.kind == ir.CALL_TABLE_APPLY:
            hit, act = self.table_call(inner, body)
            if e.member == "hit":
                return hit
            if e.member == "miss":
                return f"(!{hit})"
            if e.member == "action_run":
                return act
        if isinstance(inner.type, ir.Type_Stack):
            return self.stack_property(e, body)
        if isinstance(inner, (ir.PathExpression, ir.Member, ir.ArrayIndex)):
            ref = f"{self.lvalue(inner, body)}.{field_name(e.member)}"
        else:
            ref = f"{self.expr(inner, body)}.{field_name(e.member)}"
        if is_aggregate(e.type):
            return ref
        return f"(({self.vt(e.type, e)}){ref})"

    def _e_ArrayIndex(self, e: ir.ArrayIndex, body: CBody) -> str:
        if isinstance(e.left.type, ir.Type_Tuple):
            ref = self.tuple_component(e, body)
            return ref if is_aggregate(e.type) else f"(({self.vt(e.type, e)}){ref})"
        return self.stack_element(e, body)

    def tuple_component(self, e: ir.ArrayIndex, body: CBody) -> str:
        """``t[i]`` of a tuple (an l-value; ``i`` is a constant)."""
        if not isinstance(e.index, ir.Constant):
            raise unsupported("a tuple indexed at run time", e)
        n = len(e.left.type.components)
        if not 0 <= e.index.value < n:
            raise P4Error(f"index {e.index.value} is outside the tuple of {n}", e.loc)
        if isinstance(e.left, (ir.PathExpression, ir.Member, ir.ArrayIndex)):
            base = self.lvalue(e.left, body)
        else:
            base = self.pin(self.expr(e.left, body), e.left.type, body)
        return f"{base}.c{e.index.value}"

    def _e_SliceExpr(self, e: ir.SliceExpr, body: CBody) -> str:
        x = self.expr(e.expr, body)
        lo, hi = e.lo_value, e.hi_value
        w = hi - lo + 1
        src_w = _width_of(e.expr.type, e)
        m = mask_literal(w)
        shifted = f"({x} >> {lo})" if lo else x
        if src_w > 64 and w <= 64:
            shifted = f"(uint64_t)({shifted})"
        return f"({shifted} & {m})" if m else shifted

    def _e_Unary(self, e: ir.Unary, body: CBody) -> str:
        x = self.expr(e.expr, body)
        t = e.type
        if e.op == "!":
            return f"(!{x})"
        if e.op == "+":
            return x
        if e.op == "-":
            return self.wrap(f"({self.vt(t, e)})0 - {x}", t)
        if e.op == "~":
            return self.wrap(f"~{x}", t)
        raise unsupported(f"the operator {e.op}", e)

    def _e_Binary(self, e: ir.Binary, body: CBody) -> str:
        op = e.op
        lt, t = e.left.type, e.type
        if op in ("&&", "||"):
            a = self.expr(e.left, body)
            b, side = self.apart(e.right, body)
            return f"({a} {op} {self.stmt_expr(side, b)})"
        if op in ("==", "!=") and (is_aggregate(lt) or isinstance(lt, ir.Type_Varbits)):
            return self._aggregate_eq(e, body)
        if is_aggregate(lt) or isinstance(lt, (ir.Type_Varbits, ir.Type_Tuple)):
            raise unsupported(f"{op} on {type(lt).__name__} values", e)
        a, b = self.in_order([e.left, e.right], body)
        if isinstance(t, ir.Type_InfInt) or isinstance(lt, ir.Type_InfInt):
            raise unsupported("arithmetic on untyped integers at run time", e)
        if op in ("==", "!="):
            return f"({a} {op} {b})"
        if op in ("<", "<=", ">", ">="):
            if is_signed(lt):
                return f"({self.sx(a, lt, e)} {op} {self.sx(b, lt, e)})"
            return f"({a} {op} {b})"
        w = _width_of(t, e)
        wide = w > 64
        if op in ("+", "-", "*"):
            return self.wrap(f"{a} {op} {b}", t)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("/", "%"):
            if is_signed(t):
                raise unsupported(f"{op} on signed values", e)
            fn = ("nw_div" if op == "/" else "nw_mod") + ("128" if wide else "64")
            return f"{fn}({a}, {b})"
        if op in ("|+|", "|-|"):
            if is_signed(t):
                if w >= 64:
                    raise unsupported("saturating arithmetic on int<64>", e)
                return f"nw_ssat64({a}, {b}, {w}, {1 if op == '|-|' else 0})"
            if op == "|+|":
                return f"nw_usat_add{'128' if wide else '64'}({a}, {b}, {w})"
            return f"nw_usat_sub{'128' if wide else '64'}({a}, {b})"
        if op in ("<<", ">>"):
            rw = _width_of(e.right.type, e) if not isinstance(e.right.type, ir.Type_InfInt) \
                else 64
            amount = f"(uint64_t)({b})" if rw > 64 else b
            if rw > 64:
                amount = f"(({b}) >> 64 ? 0xffffffffULL : (uint64_t)({b}))"
            if op == "<<":
                if isinstance(e.right, ir.Constant):
                    if e.right.value >= w:
                        return f"(({self.vt(t, e)})0)"
                    return self.wrap(f"{a} << {e.right.value}", t)
                return f"nw_shl{'128' if wide else '64'}({a}, {amount}, {w})"
            if is_signed(t):
                if wide:
                    raise unsupported("a signed shift wider than 64 bits", e)
                return f"nw_sar64({a}, {amount}, {w})"
            return f"nw_shr{'128' if wide else '64'}({a}, {amount})"
        if op == "++":
            wr = _width_of(e.right.type, e)
            ctype = self.vt(t, e)
            return f"((({ctype}){a} << {wr}) | ({ctype}){b})"
        raise unsupported(f"the operator {op} outside a keyset", e)

    def _aggregate_eq(self, e: ir.Binary, body: CBody) -> str:
        """``==``/``!=`` on headers, unions, structs, stacks (the Python back end's
        ``_eq``) and on varbit fields (same length and value)."""
        lt = e.left.type
        if isinstance(lt, ir.Type_Varbits):
            if not (isinstance(e.left, ir.Member) and isinstance(e.right, ir.Member)):
                raise unsupported("== on varbit values that are not header fields", e)
            a, b = self.lvalue(e.left, body), self.lvalue(e.right, body)
            r = f"nw_varbit_same({a}, {a}__len, {b}, {b}__len, sizeof {a})"
        else:
            a, b = self.in_order([e.left, e.right], body)
            r = f"{self.types.eq(lt)}(&{a}, &{b})"
        return f"((uint64_t)({r}))" if e.op == "==" else f"((uint64_t)!({r}))"

    def _e_Mux(self, e: ir.Mux, body: CBody) -> str:
        c = self.expr(e.cond, body)
        if is_aggregate(e.type):
            raise unsupported("?: on headers or structs", e)
        v1, s1 = self.apart(e.e1, body)
        v2, s2 = self.apart(e.e2, body)
        return f"({c} ? {self.stmt_expr(s1, v1)} : {self.stmt_expr(s2, v2)})"

    def _e_Cast(self, e: ir.Cast, body: CBody) -> str:
        dst = e.dest_type
        if isinstance(dst, (ir.Type_Newtype, ir.Type_Typedef)):
            dst = dst.type
        if isinstance(dst, ir.Type_SerEnum):
            dst = dst.underlying
        if isinstance(dst, ir.Type_StructLike):
            raise unsupported("a cast to a struct or header", e)
        x = self.expr(e.expr, body)
        src = e.expr.type
        if isinstance(src, ir.Type_SerEnum):
            src = src.underlying
        if isinstance(dst, ir.Type_Bits):
            ctype = self.vt(dst, e)
            if isinstance(src, ir.Type_Boolean):
                return f"(({ctype})({x} != 0))"
            if is_signed(src) and isinstance(src, ir.Type_Bits) and src.width < dst.width:
                # widening a signed value extends its sign (into 128 bits as well)
                via = "(__int128)" if dst.width > 64 else "(uint64_t)"
                return self.wrap(f"({ctype}){via}{self.sx(x, src, e)}", dst)
            return self.wrap(f"({ctype})({x})", dst)
        if isinstance(dst, ir.Type_Boolean):
            if isinstance(src, ir.Type_Boolean):
                return x
            return f"({x} != 0)"
        return x

    def _e_MethodCallExpression(self, e: ir.MethodCallExpression, body: CBody) -> str:
        return self.call(e, body)

    def _e_DefaultExpression(self, e: ir.DefaultExpression, body: CBody) -> str:
        return "0"

    def _e_InvalidHeader(self, e: ir.InvalidHeader, body: CBody) -> str:
        tmp = self.tmp("inv")
        body.emit(f"{self.types.name(e.type)} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
        return tmp

    def _e_StructExpression(self, e: ir.StructExpression, body: CBody) -> str:
        t = e.type
        if not isinstance(t, ir.Type_StructLike):
            raise unsupported("a struct expression without a struct type", e)
        by_name = {c.name: c.expr for c in e.components}
        return self.make_struct(t, [by_name.get(f.name) for f in t.fields], body)

    def _e_ListExpression(self, e: ir.ListExpression, body: CBody) -> str:
        t = e.type
        if isinstance(t, ir.Type_StructLike):
            return self.make_struct(t, list(e.components), body)
        if isinstance(t, ir.Type_Tuple):
            values = self.in_order(list(e.components), body)
            tmp = self.tmp("tu")
            body.emit(f"{self.types.name(t)} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
            for i, v in enumerate(values):
                body.emit(f"{tmp}.c{i} = {v};")
            return tmp
        raise unsupported("a list value at run time", e)

    def make_struct(self, t: ir.Type_StructLike, values: list[Any], body: CBody) -> str:
        """A temporary of type ``t`` built from ``values`` (None: default)."""
        given = [v for v in values if v is not None]
        lowered = iter(self.in_order(given, body))
        tmp = self.tmp("mk")
        body.emit(f"{self.types.name(t)} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
        for f, v in zip(t.fields, values, strict=False):
            if v is None:
                continue
            val = next(lowered)
            body.emit(f"{tmp}.{field_name(f.name)} = {val};")
        if isinstance(t, ir.Type_Header):
            body.emit(f"{tmp}._v = 1;")
        return tmp
