"""Statements, assignments and calls (actions, sub-blocks, header methods) in C.

Every generated control, parser, action and table-apply function returns an
``int``: 0 to go on, ``NW_RC_EXIT`` when ``exit`` ran (a control) or
``NW_RC_REJECT`` when the parser stopped; callers copy their out/inout
scalars back and then pass a non-zero code up.  Scalar out/inout arguments go
through temporaries (copy-in/copy-out); aggregate ones by pointer, refused
when the callee could observe the aliasing (the Python back end copies then).
"""

from __future__ import annotations

from typing import Any

from netweft.emulation.native.c_body import CBody
from netweft.emulation.native.c_types import (
    c_name,
    field_name,
    is_aggregate,
    is_scalar,
    scalar_width,
    unsupported,
)
from netweft.emulation.pipeline.evaluation_order import (
    may_have_side_effects,
    run_time_location_parts,
)
from netweft.emulation.pipeline.types import bit_width
from netweft.p4.compiler import ir


class CStatementLowering:
    """Mixin of :class:`~netweft.emulation.native.c_codegen.CLowering`."""

    types: Any
    aliases: Any

    def stmt(self, s: ir.Node, body: CBody) -> None:
        """Emit the C of one statement or declaration."""
        if isinstance(s, ir.BlockStatement):
            body.open("")
            for c in s.components:
                self.stmt(c, body)
            body.close()
        elif isinstance(s, ir.AssignmentStatement):
            if getattr(s, "compound_op", None) is not None and isinstance(s.right, ir.Binary) \
                    and not isinstance(s.left, ir.SliceExpr) \
                    and run_time_location_parts(s.left):
                self._compound_assign(s.left, s.right, body)
            else:
                self.assign(s.left, s.right, body)
        elif isinstance(s, ir.MethodCallStatement):
            code = self.call(s.call, body, as_statement=True)
            if code:
                body.emit(f"(void){code};")
        elif isinstance(s, ir.IfStatement):
            body.open(f"if ({self.cond(s.condition, body)})")
            self.stmt(s.if_true, body)
            if s.if_false is not None:
                body.close(" else {")
                body.indent += 1
                self.stmt(s.if_false, body)
            body.close()
        elif isinstance(s, ir.Declaration_Variable):
            name = f"l_{c_name(s.name)}_{self._next()}"
            ctype = self.types.name(s.type)
            body.emit(f"{ctype} {name}; memset(&{name}, 0, sizeof {name});")
            body.scope[id(s)] = name
            if s.initializer is not None:
                self.assign_value(name, s.type, s.initializer, body)
        elif isinstance(s, (ir.Declaration_Constant, ir.EmptyStatement,
                            ir.Declaration_Instance)):
            pass
        elif isinstance(s, ir.ExitStatement):
            body.emit("return NW_RC_EXIT;")
        elif isinstance(s, ir.ReturnStatement):
            if s.expression is not None:
                if body.returns is None:
                    raise unsupported("return with a value here", s)
                self.assign_value("(*ret)", body.returns, s.expression, body)
            body.emit("return 0;")
        elif isinstance(s, ir.SwitchStatement):
            self._switch(s, body)
        elif isinstance(s, ir.ForStatement):
            self._for(s, body)
        elif isinstance(s, ir.ForInStatement):
            self._for_in(s, body)
        elif isinstance(s, ir.BreakStatement):
            body.emit("break;")
        elif isinstance(s, ir.ContinueStatement):
            body.emit("continue;")
        else:
            raise unsupported(f"the statement {type(s).__name__}", s)

    def pin_location(self, e: ir.Expression, body: CBody) -> list[int]:
        """Fix the location of the l-value ``e`` now if it has run-time parts (a stack
        index, next/last): later lowerings of ``e`` (its copy-out) reuse it until
        :meth:`unpin` (P4-16 8.1, as the Python back end pins it)."""
        while isinstance(e, ir.SliceExpr):
            e = e.expr
        if not run_time_location_parts(e):
            return []
        pins = self.__dict__.setdefault("pins", {})
        pins[id(e)] = self.lvalue(e, body)
        return [id(e)]

    def unpin(self, keys: list[int]) -> None:
        pins = self.__dict__.get("pins", {})
        for k in keys:
            pins.pop(k, None)

    def _compound_assign(self, left: ir.Expression, value: ir.Binary, body: CBody) -> None:
        """``left op= b`` (``value`` is ``left' op b``): the location's run-time parts
        (stack indices, next/last) are evaluated once, for both copies."""
        target = self.lvalue(left, body)
        pins = self.__dict__.setdefault("pins", {})
        pins[id(value.left)] = target
        try:
            body.emit(f"{target} = {self.expr(value, body)};")
        finally:
            pins.pop(id(value.left), None)

    def _for(self, s: ir.ForStatement, body: CBody) -> None:
        """``for (init; cond; updates)``: the updates run at the top of every iteration but
        the first, so that ``continue`` runs them too (as the Python back end)."""
        body.open("")
        for init in s.init:
            self.stmt(init, body)
        first = self.tmp("first")
        body.emit(f"int {first} = 1;")
        body.open("for (;;)")
        if s.updates:
            body.open(f"if (!{first})")
            for u in s.updates:
                self.stmt(u, body)
            body.close()
        body.emit(f"{first} = 0;")
        if s.condition is not None:
            body.emit(f"if (!({self.cond(s.condition, body)})) break;")
        self.stmt(s.body, body)
        body.close()
        body.close()

    def _for_in(self, s: ir.ForInStatement, body: CBody) -> None:
        """``for (T v in lo .. hi / stack / list)``: a range's ends and a list's values are
        evaluated once before the loop; the variable gets a copy of each element."""
        var = s.variable
        t = var.type
        coll = s.collection
        ctype = self.types.name(t)
        name = f"l_{c_name(var.name)}_{self._next()}"
        body.open("")
        body.emit(f"{ctype} {name}; memset(&{name}, 0, sizeof {name});")
        body.scope[id(var)] = name
        if isinstance(coll, ir.Binary) and coll.op == "..":
            if is_aggregate(t) or scalar_width(t, coll) > 64:
                raise unsupported("a for-in range over values wider than 64 bits", coll)
            lo, hi = self.in_order([coll.left, coll.right], body)
            signed = isinstance(t, ir.Type_Bits) and t.signed
            lo = self.sx(lo, t, coll) if signed else lo
            hi = self.sx(hi, t, coll) if signed else hi
            i, end = self.tmp("i"), self.tmp("end")
            body.emit(f"__int128 {end} = (__int128)({hi});")
            body.open(f"for (__int128 {i} = (__int128)({lo}); {i} <= {end}; {i}++)")
            body.emit(f"{name} = {self.wrap(f'(uint64_t){i}', t)};")
        else:
            if isinstance(coll.type, ir.Type_Stack):
                items = f"{self.lvalue(coll, body)}.e"
                n = coll.type.size
            elif isinstance(coll, ir.ListExpression) or isinstance(coll.type, ir.Type_Tuple):
                if isinstance(coll, ir.ListExpression):
                    values = self.in_order(list(coll.components), body)
                else:
                    tup = self.pin(self.expr(coll, body), coll.type, body)
                    values = [f"{tup}.c{k}" for k in range(len(coll.type.components))]
                n = len(values)
                items = self.tmp("items")
                body.emit(f"{ctype} {items}[{max(n, 1)}];")
                for k, v in enumerate(values):
                    body.emit(f"{items}[{k}] = {v};")
            else:
                raise unsupported("a for-in loop over this kind of collection", coll)
            k = self.tmp("k")
            body.open(f"for (uint32_t {k} = 0; {k} < {n}u; {k}++)")
            body.emit(f"{name} = {items}[{k}];")
        self.stmt(s.body, body)
        body.close()
        body.close()

    def _switch(self, s: ir.SwitchStatement, body: CBody) -> None:
        e = s.expression
        action_run = isinstance(e, ir.Member) and e.member == "action_run"
        sw = self.tmp("sw")
        body.open("")
        body.emit(f"uint64_t {sw} = {self.expr(e, body)};")
        table = e.expr.target if action_run else None
        first = True
        pending: list[str] = []
        for case in s.cases:
            if isinstance(case.label, ir.DefaultExpression):
                label = None
            elif action_run:
                act = case.label.decl
                label = str(self.action_index(table, act))
            else:
                label = self.expr(case.label, body)
            if case.statement is None:
                if label is not None:
                    pending.append(label)
                continue
            if label is None:
                head = "if (1)" if first else "else"
            else:
                labels = pending + [label]
                test = " || ".join(f"{sw} == {lb}" for lb in labels)
                head = ("if" if first else "else if") + f" ({test})"
            pending = []
            body.open(head)
            self.stmt(case.statement, body)
            body.close()
            first = False
        body.close()

    # ------------------------------------------------------------- assignment

    def assign(self, left: ir.Expression, right: ir.Expression, body: CBody) -> None:
        t = left.type
        if isinstance(left, ir.SliceExpr):
            keys = self.pin_location(left, body)
            self._assign_slice(left, self.expr(right, body), body)
            self.unpin(keys)
            return
        if is_aggregate(t):
            self.assign_value(self.lvalue(left, body), t, right, body)
            return
        if not is_scalar(t):
            raise unsupported(f"assignment of a {type(t).__name__} value", left)
        if run_time_location_parts(left):
            # the location first (P4-16 8.1: a run-time index or next/last is fixed
            # before the right-hand side runs, as the Python back end pins it)
            target = self.lvalue(left, body)
            body.emit(f"{target} = {self.expr(right, body)};")
            return
        value = self.expr(right, body)
        body.emit(f"{self.lvalue(left, body)} = {value};")

    def assign_value(self, target: str, t: Any, right: ir.Expression, body: CBody) -> None:
        """``target = right`` for a C l-value ``target`` of type ``t``."""
        if is_aggregate(t):
            if isinstance(right, ir.InvalidHeader):
                body.emit(self.invalidate(target, t))
                return
            value = self.expr(right, body)
            body.emit(f"{target} = {value};")
            return
        body.emit(f"{target} = {self.expr(right, body)};")

    def assign_raw(self, left: ir.Expression, value: str, body: CBody) -> None:
        """Assign an already-lowered scalar value to an l-value expression."""
        if isinstance(left, ir.SliceExpr):
            self._assign_slice(left, value, body)
            return
        body.emit(f"{self.lvalue(left, body)} = {value};")

    def _assign_slice(self, left: ir.SliceExpr, value: str, body: CBody) -> None:
        lo, hi = left.lo_value, left.hi_value
        base_e = left.expr
        while isinstance(base_e, ir.SliceExpr):
            lo, hi = lo + base_e.lo_value, hi + base_e.lo_value
            base_e = base_e.expr
        bw = bit_width(base_e.type)
        ctype = "nw_u128" if bw > 64 else "uint64_t"
        base = self.lvalue(base_e, body)
        m = ((1 << (hi - lo + 1)) - 1) << lo
        keep = ~m & ((1 << bw) - 1)

        def lit(v: int) -> str:
            if v >= 1 << 64:
                return f"NW_U128({v >> 64:#x}ULL, {v & ((1 << 64) - 1):#x}ULL)"
            return f"({ctype}){v:#x}ULL"

        body.emit(f"{base} = ((({ctype}){base} & {lit(keep)}) | ((({ctype})({value}) << {lo})"
                  f" & {lit(m)}));")

    # ------------------------------------------------------------- calls

    def call(self, c: ir.MethodCallExpression, body: CBody, as_statement: bool = False) -> str:
        kind = c.kind
        args = list(c.bound_args or [])
        if kind == ir.CALL_HEADER:
            return self._call_header(c, body)
        if kind == ir.CALL_PACKET:
            return self.call_packet(c, args, body)
        if kind == ir.CALL_STACK:
            self.stack_call(c, args, body)
            return ""
        if kind == ir.CALL_TABLE_APPLY:
            self.table_call(c, body)
            return ""
        if kind == ir.CALL_ACTION:
            a = c.target
            fname = self.lower_action(a)
            self.call_with_outs(fname, a.params, args, body, ["X", "F"], action=a)
            return ""
        if kind == ir.CALL_FUNCTION:
            fn = self.instance_of(c.target, c)
            fname = self.lower_function(fn)
            if isinstance(fn.return_type, ir.Type_Void):
                self.call_with_outs(fname, fn.params, args, body, ["X"])
                return ""
            ret = self.tmp("ret")
            ctype = self.types.name(fn.return_type)
            body.emit(f"{ctype} {ret}; memset(&{ret}, 0, sizeof {ret});")
            self.call_with_outs(fname, fn.params, args, body, ["X"], tail=[f"&{ret}"])
            return ret
        if kind == ir.CALL_APPLY_INSTANCE:
            self._call_sub_block(c, args, body)
            return ""
        if kind == ir.CALL_EXTERN_FUNCTION:
            return self.extern_function(c, args, body)
        if kind == ir.CALL_EXTERN_METHOD:
            return self.extern_method(c, args, body)
        if kind == ir.CALL_BUILTIN:
            t = getattr(c.instance, "typename", None) or getattr(c.instance, "type", None)
            if isinstance(t, ir.Type_Name) and t.decl is not None:
                t = t.decl
            if c.method_name in ("minSizeInBits", "maxSizeInBits", "sizeInBits"):
                return f"{bit_width(t)}ULL"
            if c.method_name in ("minSizeInBytes", "maxSizeInBytes", "sizeInBytes"):
                return f"{(bit_width(t) + 7) // 8}ULL"
        raise unsupported(f"the call {c.method_name or ''} ({kind})", c)

    def _call_header(self, c: ir.MethodCallExpression, body: CBody) -> str:
        inst = c.instance
        m = c.method_name
        if isinstance(inst.type, ir.Type_HeaderUnion):
            if m == "isValid":
                return self.union_valid(self.lvalue(inst, body), inst.type)
            raise unsupported(f"{m} on a header union", c)
        parent = inst.expr if isinstance(inst, ir.Member) else None
        if m == "setValid" and parent is not None and isinstance(parent.type,
                                                                 ir.Type_HeaderUnion):
            body.emit(self.union_set_valid(self.lvalue(parent, body), parent.type,
                                           inst.member))
            return ""
        obj = self.lvalue(inst, body)
        if m == "isValid":
            return f"((uint64_t){obj}._v)"
        if m == "setValid":
            body.emit(f"{obj}._v = 1;")
            return ""
        if m == "setInvalid":
            body.emit(f"{obj}._v = 0;")
            return ""
        raise unsupported(f"the header method {m}", c)

    def call_with_outs(self, fname: str, params: list[ir.Parameter], args: list[Any],
                       body: CBody, lead: list[str], action: ir.P4Action | None = None,
                       tail: list[str] | None = None) -> None:
        """Call ``fname`` with copy-in/copy-out; a non-zero result is passed up."""
        if self.aliases.needs_copies(params, args, is_aggregate, action):
            raise unsupported("aggregate out/inout arguments that alias (the Python back end "
                              "copies them)", args[0] if args else None)
        pass_args = list(lead)
        outs: list[tuple[ir.Expression, str]] = []
        pinned: list[int] = []   # out/inout locations fixed when evaluated
        later = [any(b is not None and not isinstance(b, ir.DefaultExpression)
                     and may_have_side_effects(b) for b in args[i + 1:])
                 for i in range(len(args))]
        for i, (p, a) in enumerate(zip(params, args, strict=False)):
            dontcare = a is None or isinstance(a, ir.DefaultExpression)
            if not dontcare and p.direction in ("out", "inout"):
                pinned += self.pin_location(a, body)
            if is_aggregate(p.type):
                if dontcare:
                    tmp = self.tmp("c")
                    body.emit(f"{self.types.name(p.type)} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
                    pass_args.append(f"&{tmp}")
                elif p.direction in ("in", ""):
                    tmp = self.tmp("c")
                    body.emit(f"{self.types.name(p.type)} {tmp};")
                    self.assign_value(tmp, p.type, a, body)
                    pass_args.append(f"&{tmp}")
                else:
                    target = self.lvalue(a, body)
                    if p.direction == "out":
                        body.emit(f"memset(&{target}, 0, sizeof {target});")
                    pass_args.append(f"&{target}")
                continue
            if isinstance(p.type, ir.Type_ExternInstance) or not is_scalar(p.type):
                raise unsupported(f"a parameter of type {type(p.type).__name__}", p)
            ctype = self.vt(p.type, p)
            if p.direction in ("out", "inout"):
                tmp = self.tmp("o")
                init = "0" if p.direction == "out" or dontcare else self.expr(a, body)
                body.emit(f"{ctype} {tmp} = {init};")
                pass_args.append(f"&{tmp}")
                if not dontcare:
                    outs.append((a, tmp))
            else:
                value = "0" if dontcare else self.expr(a, body)
                if later[i]:   # read now: a later argument's call may change it
                    value = self.pin(value, p.type, body)
                pass_args.append(value)
        pass_args += tail or []
        rc = self.tmp("rc")
        body.emit(f"int {rc} = {fname}({', '.join(pass_args)});")
        for a, tmp in outs:
            self.assign_raw(a, tmp, body)
        self.unpin(pinned)
        body.emit(f"if ({rc}) return {rc};")

    def _call_sub_block(self, c: ir.MethodCallExpression, args: list[Any], body: CBody) -> None:
        callee = c.target
        if isinstance(callee, ir.Declaration_Instance):
            callee = callee.instantiated
        fname = self.lower_block(callee)
        frame = self.frame_of(callee)
        if self.aliases.needs_copies(callee.params, args, is_aggregate):
            raise unsupported("aggregate out/inout arguments that alias", c)
        fr = self.tmp("fr")
        body.emit(f"{frame.cname} {fr}; memset(&{fr}, 0, sizeof {fr});")
        outs: list[tuple[ir.Expression, str]] = []
        pinned: list[int] = []   # out/inout locations fixed when evaluated
        for p, a in zip(callee.params, args, strict=False):
            slot = frame.slots.get(id(p))
            if a is not None and p.direction in ("out", "inout"):
                pinned += self.pin_location(a, body)
            if isinstance(p.type, ir.Type_ExternInstance):
                name = p.type.extern.name
                if name not in ("packet_in", "packet_out"):
                    raise unsupported(f"passing a {name} to a control or parser", p)
                continue
            if a is None:
                if is_aggregate(p.type):
                    tmp = self.tmp("c")
                    body.emit(f"{self.types.name(p.type)} {tmp}; memset(&{tmp}, 0, sizeof {tmp});")
                    body.emit(f"{fr}.{slot} = &{tmp};")
                continue
            if is_aggregate(p.type):
                if p.direction in ("in", ""):
                    tmp = self.tmp("c")
                    body.emit(f"{self.types.name(p.type)} {tmp};")
                    self.assign_value(tmp, p.type, a, body)
                    body.emit(f"{fr}.{slot} = &{tmp};")
                else:
                    target = self.lvalue(a, body)
                    if p.direction == "out":
                        body.emit(f"memset(&{target}, 0, sizeof {target});")
                    body.emit(f"{fr}.{slot} = (void *)&{target};")
                continue
            if p.direction == "out":
                outs.append((a, f"{fr}.{slot}"))
            else:
                body.emit(f"{fr}.{slot} = {self.expr(a, body)};")
                if p.direction == "inout":
                    outs.append((a, f"{fr}.{slot}"))
        rc = self.tmp("rc")
        body.emit(f"int {rc} = {fname}(X, &{fr});")
        for a, src in outs:
            self.assign_raw(a, src, body)
        self.unpin(pinned)
        body.emit(f"if ({rc}) return {rc};")

    def field_ref(self, base: str, name: str) -> str:
        return f"{base}.{field_name(name)}"
