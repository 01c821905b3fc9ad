"""Checking and classification of calls: overloads, argument binding with
generic type inference, and the ``CALL_*`` kinds of ``MethodCallExpression``
(a mixin of the type checker)."""

from __future__ import annotations

import copy

from netweft.p4.compiler import ir
from netweft.p4.compiler.checker_host import CheckerPart
from netweft.p4.compiler.folded import typed_bool as _bool
from netweft.p4.compiler.folded import typed_constant as _const
from netweft.p4.compiler.naming import expression_text
from netweft.p4.compiler.scopes import Scope, did_you_mean
from netweft.p4.compiler.typesys import (
    bit_width,
    contains_type_var,
    min_size_in_bits,
    same_type,
    type_str,
)

SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")
HEADER_METHODS = ("isValid", "setValid", "setInvalid")
PACKET_EXTERNS = ("packet_in", "packet_out")


class CallChecker(CheckerPart):
    """Call checks: a part of :class:`~.typecheck.TypeChecker`; what it uses of
    the other parts is declared by :class:`~.checker_host.CheckerHost`."""

    def pick_overload(self, candidates: list, args: list[ir.Argument], what: str,
                      site: ir.Node) -> ir.Node:
        """The one of ``candidates`` (overloads of ``what``) the arguments fit, or an error."""
        if len(candidates) == 1:
            return candidates[0]
        n = len(args)
        fits = []
        for c in candidates:
            params = c.type.params if isinstance(c, ir.Method) else c.params
            required = sum(1 for p in params if p.default is None and not p.optional)
            if required <= n <= len(params):
                fits.append(c)
        if len(fits) == 1:
            return fits[0]
        if not fits:
            raise self.err(f"no overload of {what} takes {n} arguments", site)
        exact = [c for c in fits
                 if len(c.type.params if isinstance(c, ir.Method) else c.params) == n]
        if len(exact) == 1:
            return exact[0]
        raise self.err(f"ambiguous call of {what} with {n} arguments", site)

    def bind_args(self, params: list[ir.Parameter], args: list[ir.Argument], scope: Scope,
                  bindings: dict[str, ir.Type], what: str,
                  site: ir.Node) -> list[ir.Expression | None]:
        """The checked argument of each parameter (by position or name; None: not given)."""
        slots: list[ir.Argument | None] = [None] * len(params)
        named_seen = False
        for i, a in enumerate(args):
            if a.name is None:
                if named_seen:
                    raise self.err(f"{what}: positional argument after a named one", a)
                if i >= len(params):
                    raise self.err(f"{what} takes {len(params)} arguments, got {len(args)}", a)
                slots[i] = a
            else:
                named_seen = True
                idx = next((j for j, p in enumerate(params) if p.name == a.name), None)
                if idx is None:
                    raise self.err(f"{what} has no parameter named '{a.name}'", a)
                if slots[idx] is not None:
                    raise self.err(f"{what}: parameter '{a.name}' given twice", a)
                slots[idx] = a
        bound: list[ir.Expression | None] = []
        for p, a in zip(params, slots, strict=True):
            # a type variable bound only by an integer literal so far stays open: a later
            # argument may still bind it to a width (f<T>(in T a, out T b) with f(3, x))
            pt = self.subst(p.type, {k: t for k, t in bindings.items()
                                     if not isinstance(t, ir.Type_InfInt)})
            if a is None:
                if p.default is not None:
                    bound.append(copy.deepcopy(p.default))
                    continue
                if p.optional:
                    bound.append(None)
                    continue
                raise self.err(f"{what}: missing argument for parameter '{p.name}'", site)
            ae = a.expr
            if isinstance(ae, ir.DefaultExpression) and ae.dontcare:
                if p.direction not in ("out", "inout"):
                    raise self.err(f"'_' can only be passed to an out parameter ('{p.name}')",
                                   a)
                ae.type = pt
                bound.append(ae)
                continue
            if p.direction in ("out", "inout"):
                v = self.expr(ae, scope)
                self.require_lvalue(v, f"pass as '{p.direction}' argument '{p.name}' of "
                                       f"{what}:")
                if contains_type_var(pt):
                    if not self.unify(pt, v.type, bindings):
                        raise self.err(f"{what}: argument '{p.name}' has type "
                                       f"{type_str(v.type)}, expected {type_str(pt)}", a)
                elif not same_type(pt, v.type):
                    raise self.err(f"{what}: argument '{p.name}' has type {type_str(v.type)} "
                                   f"but the {p.direction} parameter has type {type_str(pt)}",
                                   a)
                bound.append(v)
                continue
            if contains_type_var(pt):
                v = self.expr(ae, scope)
                if not self.unify(pt, v.type, bindings):
                    raise self.err(f"{what}: argument '{p.name}' has type {type_str(v.type)}, "
                                   f"expected {type_str(self.subst(pt, bindings))}", a)
                pt2 = self.subst(pt, bindings)
                if not contains_type_var(pt2) and not isinstance(v.type, ir.Type_InfInt):
                    v = self.convert(v, pt2, f"{what}, argument '{p.name}'")
                elif isinstance(v.type, ir.Type_InfInt) and isinstance(pt2, ir.Type_Bits):
                    v = self.convert(v, pt2, f"{what}, argument '{p.name}'")
                bound.append(v)
                continue
            v = self.expr(ae, scope, pt)
            v = self.convert(v, pt, f"{what}, argument '{p.name}'")
            bound.append(v)
        # literals bound before their type variable got a width now take that width
        for i, (p, v) in enumerate(zip(params, bound, strict=True)):
            if v is not None and isinstance(v.type, ir.Type_InfInt) and \
                    contains_type_var(p.type):
                pt = self.subst(p.type, bindings)
                if isinstance(pt, ir.Type_Bits):
                    bound[i] = self.convert(v, pt, f"{what}, argument '{p.name}'")
        for a, v in zip(slots, bound, strict=True):
            if a is not None and v is not None:
                a.expr = v
        return bound

    def _e_MethodCallExpression(self, e: ir.MethodCallExpression, scope: Scope, expected):
        m = e.method
        targs = [self.canon(t, scope) for t in e.type_args]
        if isinstance(m, ir.Member):
            return self._member_call(e, m, targs, scope, expected)
        if isinstance(m, ir.PathExpression):
            found = self.globals.lookup_all(m.name) if m.top_level else scope.lookup_all(m.name)
            if not found:
                raise self.err(f"undeclared name '{m.name}'"
                               f"{did_you_mean(m.name, scope.visible_names())}", m)
            d = found[0]
            m.decl = d
            if isinstance(d, ir.Method):
                cands = [x for x in found if isinstance(x, ir.Method)]
                meth = self.pick_overload(cands, e.args, f"'{m.name}'", e)
                m.decl = meth
                call = self._finish_method(e, meth, targs, scope, ir.CALL_EXTERN_FUNCTION,
                                           None, {})
                if meth.name == "static_assert" and self._is_global_decl(meth):
                    return self._static_assert(call)
                return call
            if isinstance(d, ir.Function):
                cands = [x for x in found if isinstance(x, ir.Function)]
                fn = self.pick_overload(cands, e.args, f"'{m.name}'", e)
                m.decl = fn
                bindings: dict[str, ir.Type] = {}
                if targs:
                    if len(targs) != len(fn.type_params):
                        raise self.err(f"'{fn.name}' expects {len(fn.type_params)} type "
                                       "arguments", e)
                    bindings = {tp.name: ta for tp, ta in zip(fn.type_params, targs,
                                                              strict=True)}
                e.bound_args = self.bind_args(fn.params, e.args, scope, bindings,
                                              f"function '{fn.name}'", e)
                e.kind = ir.CALL_FUNCTION
                e.target = fn
                e.method_name = fn.name
                e.type_args_resolved = [bindings.get(tp.name, tp) for tp in fn.type_params]
                e.type = self.subst(fn.return_type, bindings)
                m.type = e.type
                return e
            if isinstance(d, ir.P4Action):
                if targs:
                    raise self.err("actions take no type arguments", e)
                if self.in_parser_state():
                    raise self.err(f"{expression_text(e)}: Action calls are not allowed "
                                   "within parsers (call a function instead)", e)
                e.bound_args = self.bind_args(d.params, e.args, scope, {}, f"action '{d.name}'",
                                              e)
                e.kind = ir.CALL_ACTION
                e.target = d
                e.method_name = d.name
                e.type = ir.Type_Void()
                m.type = ir.Type_Action(action=d)
                return e
            raise self.err(f"'{m.name}' is not a function, action or method", m)
        raise self.err("this expression cannot be called", e)

    def _member_call(self, e: ir.MethodCallExpression, m: ir.Member, targs: list[ir.Type],
                     scope: Scope, expected):
        name = m.member
        if name in SIZE_METHODS:
            if isinstance(m.expr, ir.TypeNameExpression) or (
                    isinstance(m.expr, ir.PathExpression) and isinstance(
                        scope.lookup(m.expr.name), ir.Type)):
                tn = m.expr.typename if isinstance(m.expr, ir.TypeNameExpression) else \
                    ir.Type_Name(name=m.expr.name, loc=m.expr.loc)
                t = self.canon(tn, scope)
            else:
                t = self.expr(m.expr, scope).type
            bits = min_size_in_bits(t) if name.startswith("min") else bit_width(t)
            if bits is None:
                raise self.err(f"{name}() is not defined for {type_str(t)}", e)
            value = bits if name.endswith("Bits") else (bits + 7) // 8
            return _const(value, ir.Type_InfInt(), e.loc)
        obj = self.expr(m.expr, scope)
        if isinstance(obj, ir.TypeNameExpression) and name == "apply" and \
                isinstance(obj.type, (ir.P4Control, ir.P4Parser)):
            obj = self._direct_invocation(obj.type, m.expr, scope)
        m.expr = obj
        t = obj.type
        e.instance = obj
        e.method_name = name
        if isinstance(t, ir.Type_Table):
            if name != "apply":
                raise self.err(f"tables only have an apply() method, not '{name}'", e)
            if e.args:
                raise self.err("table apply() takes no arguments", e)
            if self.action_depth:
                raise self.err(f"table '{t.table.name}' cannot be applied inside an action", e)
            e.kind = ir.CALL_TABLE_APPLY
            e.target = t.table
            e.bound_args = []
            e.type = ir.Type_TableApplyResult(table=t.table)
            m.type = e.type
            return e
        if isinstance(t, (ir.Type_Header, ir.Type_HeaderUnion)) and name in HEADER_METHODS:
            if isinstance(t, ir.Type_HeaderUnion) and name != "isValid":
                raise self.err(f"header unions have no '{name}' method", e)
            if e.args:
                raise self.err(f"{name}() takes no arguments", e)
            if name != "isValid":
                self.require_lvalue(obj, f"call {name}() on")
            e.kind = ir.CALL_HEADER
            e.bound_args = []
            e.type = ir.Type_Boolean() if name == "isValid" else ir.Type_Void()
            m.type = e.type
            return e
        if isinstance(t, ir.Type_Stack) and name in ("push_front", "pop_front"):
            if len(e.args) != 1:
                raise self.err(f"{name}() takes one argument (the count)", e)
            n = self.expr(e.args[0].expr, scope)
            if not isinstance(n, ir.Constant) or n.value < 0:
                raise self.err(f"the count of {name}() must be a non-negative constant", n)
            self.require_lvalue(obj, f"call {name}() on")
            e.args[0].expr = n
            e.kind = ir.CALL_STACK
            e.bound_args = [n]
            e.type = ir.Type_Void()
            m.type = e.type
            return e
        if isinstance(t, ir.Type_ExternInstance):
            ext = t.extern
            cands = [x for x in ext.methods if x.name == name and x.name != ext.name]
            if not cands:
                raise self.err(f"extern '{ext.name}' has no method '{name}'"
                               f"{did_you_mean(name, [x.name for x in ext.methods])}", m)
            meth = self.pick_overload(cands, e.args, f"'{ext.name}.{name}'", e)
            bindings = {tp.name: ta for tp, ta in zip(ext.type_params, t.type_args,
                                                      strict=False)}
            kind = ir.CALL_PACKET if ext.name in PACKET_EXTERNS else ir.CALL_EXTERN_METHOD
            return self._finish_method(e, meth, targs, scope, kind, obj, bindings)
        proto = t.base.decl if isinstance(t, ir.Type_Specialized) else t
        if isinstance(proto, (ir.Type_Control, ir.Type_Parser)) and name == "apply":
            # a constructor parameter of control/parser type, seen while checking an
            # unused control on its own (real instances bind it to the argument)
            e.kind = ir.CALL_APPLY_INSTANCE
            e.target = proto
            e.bound_args = self.bind_args(proto.params, e.args, scope, {},
                                          f"'{proto.name}.apply'", e)
            e.type = ir.Type_Void()
            m.type = e.type
            return e
        if isinstance(t, (ir.P4Control, ir.P4Parser)) and name == "apply":
            e.kind = ir.CALL_APPLY_INSTANCE
            e.target = t
            e.bound_args = self.bind_args(t.params, e.args, scope, {}, f"'{t.name}.apply'", e)
            e.type = ir.Type_Void()
            m.type = e.type
            return e
        raise self.err(f"a value of type {type_str(t)} has no method '{name}'", m)

    def _is_global_decl(self, d: ir.Node) -> bool:
        return any(d is x for x in self.globals.lookup_all(getattr(d, "name", "")))

    def _static_assert(self, call: ir.MethodCallExpression) -> ir.BoolLiteral:
        """``static_assert(check[, message])``: fail compilation if ``check`` is false;
        the call folds to ``true``."""
        check = call.bound_args[0]
        if not isinstance(check, ir.BoolLiteral):
            raise self.err("static_assert needs a compile-time constant condition", check)
        if not check.value:
            msg = call.bound_args[1] if len(call.bound_args) > 1 else None
            text = msg.value if isinstance(msg, ir.StringLiteral) else "condition is false"
            raise self.err(f"static_assert failed: {text}", call)
        return _bool(True, call.loc)

    def _direct_invocation(self, decl: ir.P4Control | ir.P4Parser, site: ir.Expression,
                           scope: Scope) -> ir.PathExpression:
        """``C.apply(...)`` on a control/parser type: an anonymous instance named like the
        type inside the enclosing block (P4-16 "direct type invocation"), as p4c does."""
        if decl.ctor_params:
            raise self.err(f"'{decl.name}' has constructor parameters; instantiate it "
                           "before applying it", site)
        prefix = next((n.fqn for n in reversed(self.node_stack)
                       if isinstance(n, (ir.P4Control, ir.P4Parser)) and n.fqn), None)
        inst = ir.Declaration_Instance(name=decl.name, type=ir.Type_Name(name=decl.name,
                                                                          loc=site.loc),
                                       args=[], loc=site.loc)
        self.check_instance(inst, scope, prefix)
        path = ir.PathExpression(name=decl.name, loc=site.loc)
        path.decl = inst
        path.type = inst.instantiated
        return path

    def _finish_method(self, e: ir.MethodCallExpression, meth: ir.Method,
                       targs: list[ir.Type], scope: Scope, kind: str, instance,
                       bindings: dict[str, ir.Type]):
        bindings = dict(bindings)
        mtp = meth.type.type_params
        if targs:
            if len(targs) != len(mtp):
                raise self.err(f"'{meth.name}' expects {len(mtp)} type arguments, got "
                               f"{len(targs)}", e)
            for tp, ta in zip(mtp, targs, strict=True):
                if not isinstance(ta, ir.Type_Dontcare):
                    bindings[tp.name] = ta
        what = f"'{meth.name}'"
        e.bound_args = self.bind_args(meth.type.params, e.args, scope, bindings, what, e)
        e.kind = kind
        e.target = meth
        e.instance = instance
        e.method_name = meth.name
        e.type_args_resolved = [bindings.get(tp.name, ir.Type_Var(name=tp.name)) for tp in mtp]
        rt = meth.type.return_type or ir.Type_Void()
        rt = self.subst(rt, bindings)
        if contains_type_var(rt):
            raise self.err(f"cannot infer the result type of '{meth.name}'; give type "
                           "arguments (e.g. lookahead<bit<8>>())", e)
        e.type = rt
        e.method.type = rt
        if kind == ir.CALL_PACKET and meth.name == "extract" and e.bound_args:
            ht = e.bound_args[0].type
            if not isinstance(ht, ir.Type_Header):
                raise self.err(f"extract() needs a header, not {type_str(ht)}", e)
            if len(e.bound_args) == 1 and any(isinstance(f.type, ir.Type_Varbits)
                                              for f in ht.fields):
                raise self.err("extract() of a header with a varbit field needs the "
                               "varbit size argument", e)
        if kind == ir.CALL_PACKET and meth.name == "lookahead" and bit_width(rt) is None:
            raise self.err(f"lookahead<{type_str(rt)}>() needs a fixed-size type", e)
        return e
