"""Calls: header and stack methods, actions, functions and sub-block applies,
with copy-in/copy-out of out and inout arguments (also when ``exit`` leaves)."""

from __future__ import annotations

from typing import Any

from netweft.emulation.pipeline.emitter import Body, python_identifier
from netweft.emulation.pipeline.evaluation_order import (
    may_have_side_effects,
    run_time_location_parts,
)
from netweft.emulation.pipeline.lowering_host import LoweringPart
from netweft.emulation.pipeline.types import bit_width, field_attr, is_aggregate, unsupported
from netweft.p4.compiler import ir


class CallLowering(LoweringPart):
    """Calls (actions, functions, externs, methods): a part of
    :class:`~.codegen.Lowering`; what it uses of the other parts is declared by
    :class:`~.lowering_host.LoweringHost`."""

    def call(self, c: ir.MethodCallExpression, body: Body, as_statement: bool = False) -> str:
        """Source for a call: an expression, or "" when it was emitted as statements."""
        kind = c.kind
        args = list(c.bound_args or [])
        if kind == ir.CALL_HEADER:
            return self._call_header(c, body)
        if kind == ir.CALL_STACK:
            inst = self.expr(c.instance, body)
            n = self.expr(args[0], body) if args else "1"
            return f"{inst}.{c.method_name}({n})"
        if kind == ir.CALL_PACKET:
            return self.call_packet(c, args, body)
        if kind == ir.CALL_TABLE_APPLY:
            fname = self.lower_table(c.target, body)
            return f"{fname}(F)"
        if kind == ir.CALL_ACTION:
            return self._call_action(c, args, body, as_statement)
        if kind == ir.CALL_FUNCTION:
            return self._call_function(c, args, body, as_statement)
        if kind == ir.CALL_APPLY_INSTANCE:
            return self._call_sub_block(c, args, body)
        if kind == ir.CALL_EXTERN_FUNCTION:
            from netweft.emulation.pipeline.externs import lower_extern_function
            return lower_extern_function(self, c, args, body)
        if kind == ir.CALL_EXTERN_METHOD:
            from netweft.emulation.pipeline.externs import lower_extern_method
            return lower_extern_method(self, c, args, body)
        if kind == ir.CALL_BUILTIN:
            return self._call_builtin(c, body)
        raise unsupported(f"the call {c.method_name or ''} ({kind})", c)

    def _call_builtin(self, c: ir.MethodCallExpression, body: Body) -> str:
        inst = c.instance
        t = getattr(inst, "typename", None) or getattr(inst, "type", None)
        if t is None:
            raise unsupported(f"{c.method_name} here", c)
        if isinstance(t, ir.Type_Name) and t.decl is not None:
            t = t.decl
        if c.method_name in ("minSizeInBits", "maxSizeInBits", "sizeInBits"):
            return str(bit_width(t))
        if c.method_name in ("minSizeInBytes", "maxSizeInBytes", "sizeInBytes"):
            return str((bit_width(t) + 7) // 8)
        raise unsupported(f"the method {c.method_name}", c)

    def _call_header(self, c: ir.MethodCallExpression, body: Body) -> str:
        inst = c.instance
        obj = self.expr(inst, body)
        m = c.method_name
        if isinstance(inst.type, ir.Type_HeaderUnion):
            if m == "isValid":
                return f"union_is_valid({obj})"
            raise unsupported(f"{m} on a header union", c)
        if m == "isValid":
            return f"{obj}._v"
        parent = inst.expr if isinstance(inst, ir.Member) else None
        if m == "setValid":
            if parent is not None and isinstance(parent.type, ir.Type_HeaderUnion):
                return f"union_set_valid({self.expr(parent, body)}, {field_attr(inst.member)!r})"
            return f"{obj}._v = True"
        if m == "setInvalid":
            return f"{obj}._v = False"
        raise unsupported(f"the header method {m}", c)

    def lower_action(self, a: ir.P4Action, owner: ir.P4Control | None) -> str:
        """Generate (once) the function of an action; returns its name."""
        key = id(a)
        if key in self.action_funcs:
            return self.action_funcs[key]
        fname = "A_" + python_identifier(a.fqn or a.name) + f"_{self.fresh_number()}"
        self.action_funcs[key] = fname
        body = Body()
        if owner is not None:
            self.alias_prologue(owner, body)
        pnames = []
        for p in a.params:
            name = "x_" + python_identifier(p.name)
            pnames.append(name)
            body.scope[id(p)] = name
            if p.direction in ("out", "inout") and not is_aggregate(p.type):
                body.outs.append(name)
            if p.direction == "out" and not is_aggregate(p.type):
                body.emit(f"{name} = {self.types.new_expr(p.type)}")
        if body.outs:
            # exit inside the action still copies the out/inout parameters out
            body.emit("try:")
            body.indent += 1
            self.stmt(a.body, body)
            body.emit("pass")
            body.indent -= 1
            body.emit("except ExitBlock as _x:")
            body.emit("    _x.outs = (" + ", ".join(body.outs) + ",)")
            body.emit("    raise")
            body.emit("return (" + ", ".join(body.outs) + ",)")
        else:
            self.stmt(a.body, body)
        params = ", ".join(["F"] + pnames)
        self.chunks.append(f"def {fname}({params}):\n" + "\n".join(body.lines or ["    pass"])
                           + "\n")
        return fname

    def owner_of_action(self, a: ir.P4Action) -> ir.P4Control | None:
        """The control whose frame action ``a`` uses (None: a top-level action)."""
        return self.action_owner.get(id(a))

    def call_with_outs(self, fname: str, params: list[ir.Parameter], args: list[Any],
                        body: Body, lead: list[str], has_retval: bool = False,
                        tail: list[str] | None = None,
                        action: ir.P4Action | None = None) -> str:
        """A call with copy-in/copy-out of its arguments.

        Scalar out/inout values come back in the returned tuple.  Aggregate
        out/inout arguments are passed by reference unless the callee could
        observe it (see :mod:`~netweft.emulation.pipeline.aliasing`); then they
        are copied into temporaries and copied back in parameter order.
        """
        copies = self.aliases.needs_copies(params, args, is_aggregate, action)
        pins: list[int] = []  # out/inout locations fixed when their argument is evaluated
        effects_after = _side_effects_after(args)
        pass_args = list(lead)
        # copy-out steps in parameter order: ("scalar", arg, index) / ("aggregate", target, tmp)
        steps: list[tuple[str, Any, Any]] = []
        n_scalar = 0
        for i, (p, a) in enumerate(zip(params, args, strict=False)):
            if a is None or isinstance(a, ir.DefaultExpression) and a.dontcare:
                if p.direction in ("out", "inout") and not is_aggregate(p.type):
                    pass_args.append(self.types.new_expr(p.type))
                    n_scalar += 1
                else:
                    pass_args.append(self.types.new_expr(p.type))
                continue
            if p.direction in ("out", "inout") and run_time_location_parts(a):
                pins += self.pin_location(a, body)
            if is_aggregate(p.type):
                if p.direction == "in" or p.direction == "":
                    tmp = self.tmp("c")
                    body.emit(f"{tmp} = {self.types.new_expr(p.type)}")
                    self.assign_to(tmp, p.type, a, body)
                    pass_args.append(tmp)
                elif copies:
                    target = self.tmp("loc")
                    body.emit(f"{target} = {self.lvalue(a, body)}")
                    tmp = self.tmp("c")
                    if p.direction == "out":  # an out value starts uninitialised: invalid
                        body.emit(f"{tmp} = {self.types.new_expr(p.type)}")
                    else:
                        body.emit(f"{tmp} = {target}._copy()")
                    pass_args.append(tmp)
                    steps.append(("aggregate", target, tmp))
                else:
                    target = self.lvalue(a, body)
                    if p.direction == "out":  # an out value starts uninitialised: invalid
                        body.emit(f"{target}._assign({self.types.new_expr(p.type)})")
                    pass_args.append(target)
                continue
            if p.direction == "out":
                pass_args.append(self.types.new_expr(p.type))
                steps.append(("scalar", a, n_scalar))
                n_scalar += 1
            elif p.direction == "inout":
                pass_args.append(self._held(self.expr(a, body), effects_after[i], body))
                steps.append(("scalar", a, n_scalar))
                n_scalar += 1
            else:
                pass_args.append(self._held(self.expr(a, body), effects_after[i], body))
        if copies:  # every argument is evaluated before the call starts
            for i in range(len(lead), len(pass_args)):
                if not pass_args[i].isidentifier():
                    held = self.tmp("a")
                    body.emit(f"{held} = {pass_args[i]}")
                    pass_args[i] = held
        pass_args += tail or []
        call = f"{fname}({', '.join(pass_args)})"
        if not steps:
            self.unpin(pins)
            return call
        r = self.tmp("r")
        base = 1 if has_retval else 0
        if has_retval:
            body.emit(f"{r} = {call}")
        else:
            body.emit("try:")
            body.emit(f"    {r} = {call}")
            body.emit("except ExitBlock as _x:")
            body.indent += 1
            self._copy_out(steps, "_x.outs", 0, body)
            body.emit("raise")
            body.indent -= 1
        self._copy_out(steps, r, base, body)
        self.unpin(pins)
        return f"{r}[0]" if has_retval else ""

    def _held(self, value: str, later_side_effects: bool, body: Body) -> str:
        """``value`` read now into a temporary if a later argument could change it."""
        if not later_side_effects or value.isidentifier():
            return value
        held = self.tmp("a")
        body.emit(f"{held} = {value}")
        return held

    def _copy_out(self, steps: list[tuple[str, Any, Any]], source: str, base: int,
                  body: Body) -> None:
        """Copy out/inout values back, left to right (``source`` holds the scalars)."""
        for kind, a, where in steps:
            if kind == "aggregate":
                body.emit(f"{a}._assign({where})")
            elif a != "_":
                self.assign_raw(a, f"{source}[{base + where}]", body)

    def _call_action(self, c: ir.MethodCallExpression, args: list[Any], body: Body,
                     as_statement: bool) -> str:
        a = c.target
        fname = self.lower_action(a, self.owner_of_action(a))
        return self.call_with_outs(fname, a.params, args, body, ["F"], action=a)

    def _call_function(self, c: ir.MethodCallExpression, args: list[Any], body: Body,
                       as_statement: bool) -> str:
        fn = c.target
        fname = self.lower_function(fn)
        void = isinstance(fn.return_type, ir.Type_Void)
        r = self.call_with_outs(fname, fn.params, args, body, [], has_retval=not void)
        return r

    def lower_function(self, fn: ir.Function) -> str:
        """Generate (once) the Python function of a P4 function; returns its name."""
        key = id(fn)
        if key in self.function_funcs:
            return self.function_funcs[key]
        fname = "P_" + python_identifier(fn.name) + f"_{self.fresh_number()}"
        self.function_funcs[key] = fname
        body = Body()
        body.has_retval = not isinstance(fn.return_type, ir.Type_Void)
        pnames = []
        for p in fn.params:
            name = "x_" + python_identifier(p.name)
            pnames.append(name)
            body.scope[id(p)] = name
            if p.direction in ("out", "inout") and not is_aggregate(p.type):
                body.outs.append(name)
        self.stmt(fn.body, body)
        if body.outs:
            lead = ["None"] if body.has_retval else []
            body.emit("return (" + ", ".join(lead + body.outs) + ",)")
        self.chunks.append(f"def {fname}({', '.join(pnames)}):\n"
                           + "\n".join(body.lines or ["    pass"]) + "\n")
        return fname

    def _call_sub_block(self, c: ir.MethodCallExpression, args: list[Any], body: Body) -> str:
        """``inst.apply(args)``: a fresh frame, copy-in, the call, copy-out in order."""
        callee = c.target
        if isinstance(callee, ir.Declaration_Instance):
            callee = callee.instantiated
        fname = self.lower_block(callee)
        cname, slot_of, _ = self.frame_of(callee)
        copies = self.aliases.needs_copies(callee.params, args, is_aggregate)
        fr = self.tmp("fr")
        body.emit(f"{fr} = {cname}()")
        outs: list[tuple[str, Any, str]] = []  # ("scalar", arg, slot) / ("aggregate", loc, slot)
        pins: list[int] = []  # scalar out/inout locations fixed when evaluated (in order)
        for p, a in zip(callee.params, args, strict=False):
            slot = slot_of[id(p)]
            if a is not None and p.direction in ("out", "inout") and not is_aggregate(p.type) \
                    and run_time_location_parts(a):
                pins += self.pin_location(a, body)
            if a is None:
                body.emit(f"{fr}.{slot} = {self.types.new_expr(p.type)}")
                continue
            if is_aggregate(p.type) or isinstance(p.type, ir.Type_ExternInstance):
                if is_aggregate(p.type) and p.direction in ("in", ""):
                    tmp = self.tmp("c")
                    body.emit(f"{tmp} = {self.types.new_expr(p.type)}")
                    self.assign_to(tmp, p.type, a, body)
                    body.emit(f"{fr}.{slot} = {tmp}")
                elif copies and is_aggregate(p.type):
                    target = self.tmp("loc")
                    body.emit(f"{target} = {self.lvalue(a, body)}")
                    if p.direction == "out":
                        body.emit(f"{fr}.{slot} = {self.types.new_expr(p.type)}")
                    else:
                        body.emit(f"{fr}.{slot} = {target}._copy()")
                    outs.append(("aggregate", target, slot))
                else:
                    target = self.lvalue(a, body)
                    if is_aggregate(p.type) and p.direction == "out":
                        body.emit(f"{target}._assign({self.types.new_expr(p.type)})")
                    body.emit(f"{fr}.{slot} = {target}")
                continue
            if p.direction == "out":
                body.emit(f"{fr}.{slot} = {self.types.new_expr(p.type)}")
                outs.append(("scalar", a, slot))
            else:
                body.emit(f"{fr}.{slot} = {self.expr(a, body)}")
                if p.direction == "inout":
                    outs.append(("scalar", a, slot))
        if not outs:
            body.emit(f"{fname}({fr})")
            self.unpin(pins)
            return ""
        body.emit("try:")  # copy-out also when exit leaves the sub-control
        body.emit(f"    {fname}({fr})")
        body.emit("finally:")
        body.indent += 1
        for kind, a, slot in outs:
            if kind == "aggregate":
                body.emit(f"{a}._assign({fr}.{slot})")
            else:
                self.assign_raw(a, f"{fr}.{slot}", body)
        body.indent -= 1
        self.unpin(pins)
        return ""


def _side_effects_after(args: list[Any]) -> list[bool]:
    """For each argument: could a later argument's evaluation have a side effect?"""
    result = [False] * len(args)
    seen = False
    for i in range(len(args) - 1, -1, -1):
        result[i] = seen
        a = args[i]
        if a is not None and not isinstance(a, ir.DefaultExpression) \
                and may_have_side_effects(a):
            seen = True
    return result
