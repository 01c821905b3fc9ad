"""Statements and assignments (scalars, slices and aggregate copies)."""

from __future__ import annotations

from typing import Any

from netweft.emulation.pipeline.aliasing import iter_nodes
from netweft.emulation.pipeline.emitter import Body, python_identifier
from netweft.emulation.pipeline.evaluation_order import (
    may_have_side_effects,
    run_time_location_parts,
)
from netweft.emulation.pipeline.lowering_host import LoweringPart
from netweft.emulation.pipeline.types import (
    bit_width,
    field_attr,
    is_aggregate,
    is_signed,
    unsupported,
)
from netweft.p4.compiler import ir


class StatementLowering(LoweringPart):
    """Statements and assignments: a part of :class:`~.codegen.Lowering`; what it uses of
    the other parts is declared by :class:`~.lowering_host.LoweringHost`."""

    def stmt(self, s: ir.Node, body: Body) -> None:
        """Emit the code of one statement or declaration."""
        if isinstance(s, ir.BlockStatement):
            if not s.components:
                body.emit("pass")
            for c in s.components:
                self.stmt(c, body)
        elif isinstance(s, ir.AssignmentStatement):
            if s.compound_op is not None and isinstance(s.right, ir.Binary):
                self.compound_assign(s.left, s.right, body)
            else:
                self.assign(s.left, s.right, body)
        elif isinstance(s, ir.MethodCallStatement):
            code = self.call(s.call, body, as_statement=True)
            if code:
                body.emit(code)
        elif isinstance(s, ir.IfStatement):
            self._if(s, body)
        elif isinstance(s, ir.Declaration_Variable):
            name = f"l_{python_identifier(s.name)}_{self.fresh_number()}"
            init = self.initial_value(s, body)
            body.emit(f"{name} = {init}")
            body.scope[id(s)] = name
        elif isinstance(s, ir.Declaration_Constant):
            pass
        elif isinstance(s, ir.EmptyStatement):
            body.emit("pass")
        elif isinstance(s, ir.ExitStatement):
            body.emit("raise ExitBlock()")
        elif isinstance(s, ir.ReturnStatement):
            self._return(s, body)
        elif isinstance(s, ir.SwitchStatement):
            self._switch(s, body)
        elif isinstance(s, ir.Declaration_Instance):
            pass  # extern instances are module globals
        elif isinstance(s, ir.ForStatement):
            self._for(s, body)
        elif isinstance(s, ir.ForInStatement):
            self._for_in(s, body)
        elif isinstance(s, ir.BreakStatement):
            body.emit("break")
        elif isinstance(s, ir.ContinueStatement):
            body.emit("continue")
        else:
            raise unsupported(f"the statement {type(s).__name__}", s)

    def _if(self, s: ir.IfStatement, body: Body) -> None:
        """``if``; an ``else if`` chain becomes ``elif``s (flat, whatever its length)
        unless a condition needs statements of its own (a call's copy-out)."""
        body.emit(f"if {self.cond(s.condition, body)}:")
        self._branch(s.if_true, body)
        rest = s.if_false
        while isinstance(rest, ir.IfStatement):
            cond, side = self.lowered_apart(rest.condition, body)
            if side:
                break
            body.emit(f"elif {cond}:")
            self._branch(rest.if_true, body)
            rest = rest.if_false
        if rest is not None:
            body.emit("else:")
            self._branch(rest, body)

    def _branch(self, s: ir.Node, body: Body) -> None:
        body.indent += 1
        self.stmt(s, body)
        body.emit("pass")
        body.indent -= 1

    def _for(self, s: ir.ForStatement, body: Body) -> None:
        """``for (init; cond; updates) body`` as a Python ``while`` loop.

        The updates run at the top of every iteration but the first, so that a
        Python ``continue`` (P4 ``continue``) still runs them before the test.
        """
        for init in s.init:
            self.stmt(init, body)
        first = self.tmp("first") if s.updates else None
        if first:
            body.emit(f"{first} = True")
        body.emit("while True:")
        body.indent += 1
        if first:
            body.emit(f"if {first}:")
            body.emit(f"    {first} = False")
            body.emit("else:")
            body.indent += 1
            for u in s.updates:
                self.stmt(u, body)
            body.emit("pass")
            body.indent -= 1
        if s.condition is not None:
            body.emit(f"if not {self.cond(s.condition, body)}:")
            body.emit("    break")
        self.stmt(s.body, body)
        body.emit("pass")
        body.indent -= 1

    def _for_in(self, s: ir.ForInStatement, body: Body) -> None:
        """``for (T v in lo .. hi / stack / list) body`` as a Python ``for`` loop.

        A range's ends and a list's values are evaluated once, before the loop;
        aggregate loop variables get a copy of each element (P4 value semantics).
        """
        var = s.variable
        name = f"l_{python_identifier(var.name)}_{self.fresh_number()}"
        body.scope[id(var)] = name
        coll = s.collection
        aggregate = is_aggregate(var.type)
        if isinstance(coll, ir.Binary) and coll.op == "..":
            lo, hi = self.expr(coll.left, body), self.expr(coll.right, body)
            items = f"range({lo}, ({hi}) + 1)"
        elif isinstance(coll.type, ir.Type_Stack):
            items = f"{self.expr(coll, body)}.e"
        elif getattr(coll, "components", None) is not None:
            parts = []
            for v in coll.components:
                code = self.expr(v, body)
                parts.append(f"{code}._copy()" if aggregate else code)
            items = "(" + "".join(p + ", " for p in parts) + ")"
        elif isinstance(coll.type, ir.Type_Tuple) and not aggregate:
            # a tuple-valued variable: its values as they are before the loop
            items = f"tuple({self.expr(coll, body)})"
        else:
            raise unsupported("a for-in loop over this kind of collection", coll)
        if aggregate:
            item = self.tmp("it")
            body.emit(f"{name} = {self.types.new_expr(var.type)}")
            body.emit(f"for {item} in {items}:")
            body.emit(f"    {name}._assign({item})")
        else:
            body.emit(f"for {name} in {items}:")
        body.indent += 1
        self.stmt(s.body, body)
        body.emit("pass")
        body.indent -= 1

    def _return(self, s: ir.ReturnStatement, body: Body) -> None:
        parts = []
        if s.expression is not None:
            parts.append(self.expr(s.expression, body))
        parts += body.outs
        if not parts:
            body.emit("return")
        elif body.outs or (body.has_retval and len(parts) > 1):
            body.emit("return (" + ", ".join(parts) + ",)")
        else:
            body.emit(f"return {parts[0]}")

    def _switch(self, s: ir.SwitchStatement, body: Body) -> None:
        sw = self.tmp("sw")
        e = s.expression
        action_run = isinstance(e, ir.Member) and e.member == "action_run"
        body.emit(f"{sw} = {self.expr(e, body)}")
        first = True
        pending: list[str] = []
        for case in s.cases:
            if isinstance(case.label, ir.DefaultExpression):
                label = None
            elif action_run:
                act = case.label.decl
                label = repr(act.fqn or act.name)
            else:
                label = self.expr(case.label, body)
            if case.statement is None:
                if label is not None:
                    pending.append(label)
                continue
            if label is None:
                if first:
                    body.emit("if True:")
                else:
                    body.emit("else:")
            else:
                labels = pending + [label]
                cond = " or ".join(f"{sw} == {lb}" for lb in labels)
                body.emit(("if " if first else "elif ") + cond + ":")
            pending = []
            body.indent += 1
            self.stmt(case.statement, body)
            body.emit("pass")
            body.indent -= 1
            first = False

    def assign(self, left: ir.Expression, right: ir.Expression, body: Body) -> None:
        """``left = right`` with P4 value semantics (aggregates are copied into).

        The left-hand side's location is fixed before the right-hand side runs
        (P4-16 8.1): run-time indices are pinned when a side effect could move them.
        """
        parts = run_time_location_parts(left)
        if parts and (may_have_side_effects(right)
                      or any(may_have_side_effects(p) for p in parts)):
            pins = self.pin_location(left, body)
            self._assign(left, right, body)
            self.unpin(pins)
        else:
            self._assign(left, right, body)

    def compound_assign(self, left: ir.Expression, value: ir.Binary, body: Body) -> None:
        """``left op= b`` (``value`` is ``left' op b``, ``left'`` a copy of ``left``):
        the location's run-time parts are evaluated once and read by both copies."""
        parts = run_time_location_parts(left)
        copies = run_time_location_parts(value.left)
        if not parts or len(parts) != len(copies):
            self.assign(left, value, body)
            return
        keys = self.pin_location(left, body)
        for part, copy_part in zip(parts, copies, strict=True):
            self.pins[id(copy_part)] = self.pins[id(part)]
            keys.append(id(copy_part))
        self._assign(left, value, body)
        self.unpin(keys)

    def pin_location(self, lvalue: ir.Expression, body: Body) -> list[int]:
        """Evaluate an lvalue's run-time indices (and next/last) into temporaries now.

        Later lowerings of the same lvalue reuse them until :meth:`unpin`.
        """
        keys = []
        for part in reversed(run_time_location_parts(lvalue)):  # source order
            tmp = self.tmp("ix")
            body.emit(f"{tmp} = {self.expr(part, body)}")
            self.pins[id(part)] = tmp
            keys.append(id(part))
        return keys

    def unpin(self, keys: list[int]) -> None:
        """Forget pinned lvalue parts (the temporaries belong to one statement)."""
        for k in keys:
            self.pins.pop(k, None)

    def _assign(self, left: ir.Expression, right: ir.Expression, body: Body) -> None:
        t = left.type
        if isinstance(left, ir.SliceExpr):
            self._assign_slice(left, self.expr(right, body), body)
            return
        if is_aggregate(t):
            target = self.lvalue(left, body)
            self.assign_to(target, t, right, body, reads_root_of=left)
            return
        if isinstance(t, ir.Type_Tuple):
            body.emit(f"{self.lvalue(left, body)} = list({self.expr(right, body)})")
            return
        value = self.expr(right, body)
        body.emit(f"{self.lvalue(left, body)} = {value}")

    def assign_to(self, target: str, t: Any, right: ir.Expression, body: Body,
                  reads_root_of: ir.Expression | None = None) -> None:
        """Copy an aggregate value into the object ``target`` (the l-value
        ``reads_root_of``, when known, lets a list expression be written in place
        only if it does not read the variable it writes)."""
        if isinstance(right, ir.InvalidHeader):
            body.emit(f"{target}._v = False")
            return
        if isinstance(right, (ir.ListExpression, ir.StructExpression)) and isinstance(
                t, ir.Type_StructLike):
            comps = right.components
            if isinstance(right, ir.StructExpression):
                by_name = {c.name: c.expr for c in comps}
                values = [by_name.get(f.name) for f in t.fields]
            else:
                values = list(comps)
            if reads_root_of is not None and _reads_root(right, reads_root_of):
                # ``s = { s.b, s.a }``: build the whole value before writing any field
                body.emit(f"{target}._assign({self.make_struct(t, values, body)})")
                return
            if isinstance(t, ir.Type_Header):
                body.emit(f"{target}._v = True")
            for f, v in zip(t.fields, values, strict=False):
                if v is None:
                    continue
                if is_aggregate(f.type):
                    self.assign_to(f"{target}.{field_attr(f.name)}", f.type, v, body,
                                   reads_root_of)
                else:
                    body.emit(f"{target}.{field_attr(f.name)} = {self.expr(v, body)}")
            return
        body.emit(f"{target}._assign({self.expr(right, body)})")

    def lvalue(self, e: ir.Expression, body: Body) -> str:
        """Python source of an assignable location."""
        return self.expr(e, body)

    def assign_raw(self, left: ir.Expression, value: str, body: Body) -> None:
        """Assign an already-lowered scalar value to an lvalue expression."""
        if isinstance(left, ir.SliceExpr):
            self._assign_slice(left, value, body)
            return
        body.emit(f"{self.lvalue(left, body)} = {value}")

    def _assign_slice(self, left: ir.SliceExpr, value: str, body: Body) -> None:
        """``x[hi:lo] = value`` (a slice of a slice is a slice of ``x``)."""
        lo, hi = left.lo_value, left.hi_value
        base_e = left.expr
        while isinstance(base_e, ir.SliceExpr):
            lo, hi = lo + base_e.lo_value, hi + base_e.lo_value
            base_e = base_e.expr
        base = self.lvalue(base_e, body)
        bt = base_e.type
        m = ((1 << (hi - lo + 1)) - 1) << lo
        keep = ~m & ((1 << bit_width(bt)) - 1)
        new = f"(({base} & {keep:#x}) | (({value} << {lo}) & {m:#x}))"
        if is_signed(bt):
            new = self.to_signed(new, bt.width)
        body.emit(f"{base} = {new}")


def _root_decl(e: Any) -> Any:
    """The declaration of the variable an l-value path starts from (or None)."""
    while isinstance(e, (ir.Member, ir.ArrayIndex, ir.SliceExpr)):
        e = e.left if isinstance(e, ir.ArrayIndex) else e.expr
    return e.decl if isinstance(e, ir.PathExpression) else None


def _reads_root(value: ir.Expression, lvalue: ir.Expression) -> bool:
    """Whether ``value`` mentions the variable ``lvalue`` writes (or calls anything)."""
    root = _root_decl(lvalue)
    for n in iter_nodes(value):
        if isinstance(n, ir.MethodCallExpression):
            return True
        if isinstance(n, ir.PathExpression) and (root is None or n.decl is root):
            return True
    return False
