"""Name resolution, type checking with widths and constant folding over the IR.

One pass annotates the parser's IR in place (see ``ir`` for what is set).
Controls and parsers are checked per instantiation on a deep copy of their
declaration, with constructor parameters bound to the folded arguments, so
that each instance has its own tables and actions with p4c control-plane
names. Controls and parsers that are never instantiated are checked once on
a throw-away copy so that their errors are still reported.

Expressions, tables and calls are checked by the ``ExpressionChecker``
(``expressions.py``), ``TableChecker`` (``tables.py``) and ``CallChecker``
(``calls.py``) mixins of :class:`TypeChecker`; what they share is declared by
:class:`~netweft.p4.compiler.checker_host.CheckerHost`.
"""

from __future__ import annotations

import copy
import dataclasses

from netweft.p4.compiler import ir
from netweft.p4.compiler.calls import SIZE_METHODS, CallChecker
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.expressions import ExpressionChecker
from netweft.p4.compiler.folded import bits_type as _bits
from netweft.p4.compiler.naming import expression_text, qualified_name
from netweft.p4.compiler.program import ExternInstance, Program
from netweft.p4.compiler.scopes import Scope, did_you_mean
from netweft.p4.compiler.tables import TableChecker
from netweft.p4.compiler.typesys import (
    same_type,
    type_str,
)


def _flat_bits_struct(t: ir.Type_Struct) -> bool:
    """A struct of fixed-width bit fields only (allowed inside headers)."""
    for f in t.fields:
        ft = f.type
        if isinstance(ft, ir.Type_Struct):
            if not _flat_bits_struct(ft):
                return False
        elif not isinstance(ft, (ir.Type_Bits, ir.Type_Boolean, ir.Type_SerEnum)):
            return False
    return True


class TypeChecker(ExpressionChecker, TableChecker, CallChecker):
    """Checks one parsed program and fills a :class:`Program`.

    Its parts (the bases) use each other through
    :class:`~netweft.p4.compiler.checker_host.CheckerHost`, which a TypeChecker is."""

    def __init__(self, ast: ir.P4Program, result: Program) -> None:
        self.ast = ast
        self.result = result
        self.globals = Scope(kind="global")
        self.errors: dict[str, ir.Declaration_ID] = {}
        self.match_kinds: dict[str, ir.Declaration_ID] = {}
        self.node_stack: list[ir.Node] = [ast]
        self.struct_done: set[int] = set()
        self.struct_specs: dict[tuple, ir.Type_StructLike] = {}  # generic struct instances
        self.struct_busy: set[int] = set()
        self.return_types: list[ir.Type | None] = []
        self.registering = True
        self.pristine: dict[int, ir.Node] = {}
        self.instantiated: set[int] = set()
        self.current_parser_states: list[dict[str, ir.ParserState]] = []
        self.action_depth = 0  # > 0 while checking an action body
        self.loop_depth = 0  # > 0 while checking the body of a for loop

    # ------------------------------------------------------------ helpers
    def err(self, msg: str, node: ir.Node | None = None) -> P4Error:
        """A P4Error at ``node`` (else at the node being checked), for the caller to raise."""
        loc = node.loc if node is not None else self.current_loc()
        return P4Error(msg, loc)

    def current_loc(self):
        for n in reversed(self.node_stack):
            if n.loc.line:
                return n.loc
        return self.ast.loc

    def lookup_type_decl(self, name: str, scope: Scope, node: ir.Node) -> ir.Node:
        """The declaration of the type ``name`` in ``scope`` (an error suggesting close names)."""
        d = scope.lookup(name)
        if d is None:
            raise self.err(f"unknown type '{name}'"
                           f"{did_you_mean(name, scope.visible_names())}", node)
        return d

    # ------------------------------------------------------------ types
    def canon(self, t: ir.Type, scope: Scope) -> ir.Type:
        """The canonical type for a type in source (see ir docstring)."""
        if isinstance(t, ir.Type_Bits):
            if t.width_expr is not None:
                w = self.const_int(t.width_expr, scope, "bit width")
                if w < 0 or (t.signed and w < 1) or w > 1 << 16:
                    raise self.err(f"invalid width {w} for {'int' if t.signed else 'bit'}", t)
                r = _bits(w, t.signed)
                r.loc = t.loc
                return r
            return t
        if isinstance(t, ir.Type_Varbits):
            if t.size_expr is not None:
                n = self.const_int(t.size_expr, scope, "varbit size")
                if n < 0 or n > 1 << 16:
                    raise self.err(f"invalid varbit size {n}", t)
                return ir.Type_Varbits(size=n, loc=t.loc)
            return t
        if isinstance(t, ir.Type_Name):
            d = self.lookup_type_decl(t.name, scope, t)
            t.decl = d
            return self.canon_decl(d, scope, t)
        if isinstance(t, ir.Type_Specialized):
            d = self.lookup_type_decl(t.base.name, scope, t)
            t.base.decl = d
            args = [self.canon(a, scope) for a in t.args]
            if isinstance(d, ir.Type_Extern):
                if len(args) != len(d.type_params):
                    raise self.err(f"extern '{d.name}' expects {len(d.type_params)} type "
                                   f"arguments, got {len(args)}", t)
                return ir.Type_ExternInstance(extern=d, type_args=args, loc=t.loc)
            if isinstance(d, (ir.Type_Parser, ir.Type_Control, ir.Type_Package)):
                return ir.Type_Specialized(base=t.base, args=args, loc=t.loc)
            if isinstance(d, ir.Type_StructLike) and d.type_params:
                return self.specialize_struct(d, args, t)
            raise self.err(f"type '{t.base.name}' is not generic", t)
        if isinstance(t, ir.Type_Stack):
            elem = self.canon(t.element, scope)
            if not isinstance(elem, (ir.Type_Header, ir.Type_HeaderUnion)):
                raise self.err(f"header stack elements must be headers, not {type_str(elem)}",
                               t)
            size = self.const_int(t.size_expr, scope, "stack size") \
                if t.size_expr is not None else t.size
            if size <= 0:
                raise self.err(f"header stack size must be positive, got {size}", t)
            return ir.Type_Stack(element=elem, size=size, loc=t.loc)
        if isinstance(t, ir.Type_List):
            return ir.Type_List(element=self.canon(t.element, scope), loc=t.loc)
        if isinstance(t, ir.Type_Tuple):
            return ir.Type_Tuple(components=[self.canon(c, scope) for c in t.components],
                                 loc=t.loc)
        if isinstance(t, (ir.Type_StructLike, ir.Type_Enum, ir.Type_SerEnum)):
            return self.canon_decl(t, scope, t)
        return t

    def canon_decl(self, d: ir.Node, scope: Scope, use: ir.Node) -> ir.Type:
        if isinstance(d, ir.Type_Typedef | ir.Type_Newtype):
            cached = getattr(d, "_canon", None)
            if cached is None:
                if id(d) in self.struct_busy:
                    raise self.err(f"recursive type definition of '{d.name}'", d)
                self.struct_busy.add(id(d))
                try:
                    cached = self.canon(d.type, self.globals if self._is_global(d) else scope)
                finally:
                    self.struct_busy.discard(id(d))
                d._canon = cached  # type: ignore[attr-defined]
            return cached
        if isinstance(d, ir.Type_StructLike):
            if d.type_params:
                raise self.err(f"generic type '{d.name}' needs type arguments "
                               f"({d.name}<...>)", use)
            self.ensure_struct(d)
            return d
        if isinstance(d, ir.Type_SerEnum):
            self.ensure_ser_enum(d)
            return d
        if isinstance(d, ir.Type_Enum):
            return d
        if isinstance(d, ir.Type_Extern):
            if d.type_params:
                return ir.Type_ExternInstance(extern=d, type_args=[], loc=use.loc)
            return ir.Type_ExternInstance(extern=d, type_args=[], loc=use.loc)
        if isinstance(d, (ir.Type_Parser, ir.Type_Control, ir.Type_Package, ir.P4Control,
                          ir.P4Parser)):
            return d  # type: ignore[return-value]
        if isinstance(d, ir.Type):
            return d  # bound type variable or builtin
        raise self.err(f"'{getattr(d, 'name', '?')}' is not a type", use)

    def _is_global(self, d: ir.Node) -> bool:
        return any(d in decls for decls in self.globals.names.values())

    def specialize_struct(self, d: ir.Type_StructLike, args: list[ir.Type],
                          use: ir.Node) -> ir.Type_StructLike:
        """``S<bit<8>>`` for ``struct S<T>``: one checked copy per distinct argument list,
        named like ``S<bit<8>>``."""
        if len(args) != len(d.type_params):
            raise self.err(f"'{d.name}' expects {len(d.type_params)} type arguments, "
                           f"got {len(args)}", use)
        key = (id(d), tuple(type_str(a) for a in args))
        cache = self.struct_specs
        if key in cache:
            return cache[key]
        spec = copy.deepcopy(self.pristine_of(d))
        spec.name = f"{d.name}<{', '.join(type_str(a) for a in args)}>"
        spec.type_params = []
        scope = Scope(self.globals, kind="generic")
        for tv, a in zip(d.type_params, args, strict=True):
            scope.names[tv.name] = [a]
        for f in spec.fields:
            if f.declared_type is None:
                f.declared_type = f.type
            f.type = self.canon(f.type, scope)
        cache[key] = spec
        self.ensure_struct(spec)
        return spec

    def ensure_struct(self, d: ir.Type_StructLike) -> None:
        if id(d) in self.struct_done:
            return
        if id(d) in self.struct_busy:
            raise self.err(f"type '{d.name}' contains itself", d)
        self.struct_busy.add(id(d))
        try:
            seen: set[str] = set()
            varbits = 0
            for f in d.fields:
                if f.name in seen:
                    raise self.err(f"duplicate field '{f.name}' in '{d.name}'", f)
                seen.add(f.name)
                if f.declared_type is None:
                    f.declared_type = f.type
                f.type = self.canon(f.type, self.globals)
                ft = f.type
                if isinstance(d, ir.Type_Header):
                    if isinstance(ft, ir.Type_Varbits):
                        varbits += 1
                    elif not (isinstance(ft, (ir.Type_Bits, ir.Type_Boolean, ir.Type_SerEnum))
                              or (isinstance(ft, ir.Type_Struct) and _flat_bits_struct(ft))):
                        raise self.err(f"header field '{f.name}' has type {type_str(ft)}; "
                                       "header fields must be bit<W>, int<W>, varbit<W>, "
                                       "bool, a serializable enum or a struct of those", f)
                elif isinstance(d, ir.Type_HeaderUnion):
                    if not isinstance(ft, ir.Type_Header):
                        raise self.err(f"header_union field '{f.name}' must be a header, not "
                                       f"{type_str(ft)}", f)
                elif isinstance(ft, (ir.Type_InfInt, ir.Type_String, ir.Type_Void,
                                     ir.Type_List)):
                    raise self.err(f"struct field '{f.name}' cannot have type {type_str(ft)}",
                                   f)
            if varbits > 1:
                raise self.err(f"header '{d.name}' has more than one varbit field", d)
        finally:
            self.struct_busy.discard(id(d))
        self.struct_done.add(id(d))

    def ensure_ser_enum(self, d: ir.Type_SerEnum) -> None:
        if id(d) in self.struct_done:
            return
        self.struct_done.add(id(d))
        u = self.canon(d.underlying, self.globals)
        if not isinstance(u, ir.Type_Bits):
            raise self.err(f"the underlying type of enum '{d.name}' must be bit<W> or int<W>",
                           d)
        d.underlying = u
        for m in d.members:
            v = self.expr(m.value_expr, self.globals, u)
            v = self.convert(v, u, f"value of enum member '{m.name}'")
            if not isinstance(v, ir.Constant):
                raise self.err(f"enum member '{m.name}' needs a compile-time constant value", m)
            m.value_expr = v
            m.value = v.value

    def subst(self, t: ir.Type, bindings: dict[str, ir.Type]) -> ir.Type:
        """``t`` with its type variables replaced by their ``bindings``."""
        if isinstance(t, ir.Type_Var):
            return bindings.get(t.name, t)
        if isinstance(t, ir.Type_Tuple):
            return ir.Type_Tuple(components=[self.subst(c, bindings) for c in t.components])
        if isinstance(t, ir.Type_List):
            return ir.Type_List(element=self.subst(t.element, bindings))
        if isinstance(t, ir.Type_Stack):
            return ir.Type_Stack(element=self.subst(t.element, bindings), size=t.size)
        if isinstance(t, ir.Type_ExternInstance):
            return ir.Type_ExternInstance(extern=t.extern,
                                          type_args=[self.subst(a, bindings)
                                                     for a in t.type_args])
        return t

    def unify(self, param: ir.Type, arg: ir.Type, bindings: dict[str, ir.Type]) -> bool:
        """Bind the type variables of ``param`` so that it matches ``arg``; False if it cannot."""
        if isinstance(param, ir.Type_Var):
            bound = bindings.get(param.name)
            if bound is None or isinstance(bound, ir.Type_InfInt):
                bindings[param.name] = arg
                return True
            return same_type(bound, arg) or isinstance(arg, ir.Type_InfInt)
        if isinstance(param, ir.Type_List) and isinstance(arg, ir.Type_Tuple):
            return all(self.unify(param.element, a, bindings) for a in arg.components)
        if isinstance(param, ir.Type_List) and isinstance(arg, ir.Type_List):
            return self.unify(param.element, arg.element, bindings)
        if isinstance(param, ir.Type_Tuple) and isinstance(arg, ir.Type_Tuple):
            return len(param.components) == len(arg.components) and all(
                self.unify(p, a, bindings)
                for p, a in zip(param.components, arg.components, strict=True))
        if isinstance(param, ir.Type_ExternInstance) and isinstance(arg, ir.Type_ExternInstance):
            return param.extern is arg.extern and all(
                self.unify(p, a, bindings)
                for p, a in zip(param.type_args, arg.type_args, strict=False))
        return same_type(param, arg)

    def type_var_scope(self, names: list[ir.Type_Var]) -> Scope:
        s = Scope(self.globals, kind="generic")
        for tv in names:
            s.names[tv.name] = [ir.Type_Var(name=tv.name, loc=tv.loc)]
        return s

    def canon_params(self, params: list[ir.Parameter], scope: Scope) -> None:
        for p in params:
            if not getattr(p, "_canon_done", False):
                if p.declared_type is None:
                    p.declared_type = p.type
                p.type = self.canon(p.type, scope)
                p._canon_done = True  # type: ignore[attr-defined]
                if p.direction and isinstance(p.type, ir.Type_InfInt):
                    raise self.err(f"{p.name}: parameters with type int must be directionless "
                                   "(int values exist only at compile time)", p)
                if p.default is not None:
                    p.default = self.convert(self.expr(p.default, scope, p.type), p.type,
                                             f"default value of '{p.name}'")

    # ------------------------------------------------------------ constants
    def const_int(self, e: ir.Expression, scope: Scope, what: str) -> int:
        v = self.expr(e, scope)
        if isinstance(v, ir.Constant):
            return v.value
        raise self.err(f"{what} must be a compile-time constant integer", e)

    # ------------------------------------------------------------ top level
    def check(self) -> None:
        for obj in self.ast.objects:
            self.node_stack.append(obj)
            try:
                self.top_level(obj)
            finally:
                self.node_stack.pop()
        # controls/parsers that no instance used: check a copy for errors
        self.registering = False
        for obj in self.ast.objects:
            if isinstance(obj, (ir.P4Control, ir.P4Parser)) and id(obj) not in self.instantiated:
                self.node_stack.append(obj)
                try:
                    if obj.ctor_params:
                        self.check_unused_with_ctor_params(obj)
                    else:
                        self.specialize(obj, None, [], self.globals, obj)
                finally:
                    self.node_stack.pop()
        self.registering = True

    def check_unused_with_ctor_params(self, decl: ir.P4Control | ir.P4Parser) -> None:
        """Check a control/parser that no instance uses and that has constructor
        parameters: each parameter stands for an unknown value of its type. Errors that
        only a real argument could avoid (a constant needed) are skipped, and generic
        ones wait for their type arguments."""
        if decl.type_params:
            return
        try:
            self.specialize(decl, None, [], self.globals, decl, placeholder_ctor_args=True)
        except P4Error as err:
            if "constant" not in str(err):
                raise

    def declare_global(self, name: str, node: ir.Node) -> None:
        self.globals.declare(name, node)

    def top_level(self, obj: ir.Node) -> None:
        r = self.result
        if isinstance(obj, ir.Declaration_Errors):
            for m in obj.members:
                if m.name in self.errors:
                    raise self.err(f"duplicate error '{m.name}'", m)
                m.value = len(self.errors)
                self.errors[m.name] = m
                r.errors.append(m.name)
        elif isinstance(obj, ir.Declaration_MatchKind):
            for m in obj.members:
                if m.name in self.match_kinds:
                    raise self.err(f"duplicate match_kind '{m.name}'", m)
                m.value = len(self.match_kinds)
                self.match_kinds[m.name] = m
                r.match_kinds.append(m.name)
                self.declare_global(m.name, m)
        elif isinstance(obj, ir.Type_Header):
            self.declare_global(obj.name, obj)
            self.ensure_struct(obj)
            r.header_types[obj.name] = obj
        elif isinstance(obj, ir.Type_HeaderUnion):
            self.declare_global(obj.name, obj)
            self.ensure_struct(obj)
            r.header_union_types[obj.name] = obj
        elif isinstance(obj, ir.Type_Struct):
            self.declare_global(obj.name, obj)
            if not obj.type_params:
                self.ensure_struct(obj)
            r.struct_types[obj.name] = obj
        elif isinstance(obj, ir.Type_Enum):
            self.declare_global(obj.name, obj)
            names = [m.name for m in obj.members]
            if len(set(names)) != len(names):
                raise self.err(f"duplicate member in enum '{obj.name}'", obj)
            for i, m in enumerate(obj.members):
                m.value = i
            r.enum_types[obj.name] = obj
        elif isinstance(obj, ir.Type_SerEnum):
            self.declare_global(obj.name, obj)
            self.ensure_ser_enum(obj)
            r.enum_types[obj.name] = obj
        elif isinstance(obj, (ir.Type_Typedef, ir.Type_Newtype)):
            self.declare_global(obj.name, obj)
            self.canon_decl(obj, self.globals, obj)
        elif isinstance(obj, ir.Type_Extern):
            self.declare_global(obj.name, obj)
            for m in obj.methods:
                s = self.type_var_scope(obj.type_params + m.type.type_params)
                self.canon_params(m.type.params, s)
                if m.type.return_type is not None:
                    m.type.return_type = self.canon(m.type.return_type, s)
        elif isinstance(obj, ir.Method):
            self.declare_global(obj.name, obj)
            s = self.type_var_scope(obj.type.type_params)
            self.canon_params(obj.type.params, s)
            if obj.type.return_type is not None:
                obj.type.return_type = self.canon(obj.type.return_type, s)
        elif isinstance(obj, (ir.Type_Parser, ir.Type_Control, ir.Type_Package)):
            self.declare_global(obj.name, obj)
            s = self.type_var_scope(obj.type_params)
            self.canon_params(obj.params, s)
        elif isinstance(obj, ir.Declaration_Constant):
            self.check_constant(obj, self.globals)
            self.declare_global(obj.name, obj)
        elif isinstance(obj, ir.P4Action):
            self.declare_global(obj.name, obj)
            self.check_action(obj, self.globals, None)
        elif isinstance(obj, ir.Function):
            self.declare_global(obj.name, obj)
            self.check_function(obj, self.globals)
        elif isinstance(obj, (ir.P4Control, ir.P4Parser)):
            self.declare_global(obj.name, obj)
        elif isinstance(obj, ir.Declaration_Instance):
            base = obj.type.base if isinstance(obj.type, ir.Type_Specialized) else obj.type
            if isinstance(base, ir.Type_Name) and isinstance(
                    self.globals.lookup(base.name), (ir.P4Control, ir.P4Parser)):
                raise self.err(f"{obj.name}: cannot instantiate at top-level (instantiate "
                               f"{base.name} inside the control or parser that applies it)",
                               obj)
            self.declare_global(obj.name, obj)
            self.check_instance(obj, self.globals, None)
        elif isinstance(obj, ir.Declaration_Variable):
            raise self.err("variables cannot be declared at the top level "
                           "(use 'const' for constants)", obj)
        else:
            raise self.err(f"unsupported top-level declaration {type(obj).__name__}", obj)

    def check_constant(self, c: ir.Declaration_Constant, scope: Scope) -> None:
        t = self.canon(c.type, scope)
        c.type = t
        v = self.convert(self.expr(c.initializer, scope, t), t,
                         f"initializer of constant '{c.name}'")
        if not self.is_compile_time(v):
            raise self.err(f"the initializer of constant '{c.name}' is not a compile-time "
                           "constant", c.initializer)
        c.initializer = v

    def is_compile_time(self, e: ir.Expression) -> bool:
        """Whether ``e`` is a compile-time known value (constants, enum members, ...)."""
        if isinstance(e, (ir.Constant, ir.BoolLiteral, ir.StringLiteral)):
            return True
        if isinstance(e, ir.Member) and isinstance(e.decl, (ir.Declaration_ID,
                                                            ir.SerEnumMember)):
            return True
        if isinstance(e, ir.ListExpression):
            return all(self.is_compile_time(c) for c in e.components)
        if isinstance(e, ir.StructExpression):
            return all(self.is_compile_time(c.expr) for c in e.components)
        if isinstance(e, ir.Cast):
            return self.is_compile_time(e.expr)
        if isinstance(e, ir.InvalidHeader):
            return True
        return False

    # ------------------------------------------------------------ instances
    def check_instance(self, d: ir.Declaration_Instance, scope: Scope,
                       prefix: str | None) -> None:
        """Check an instantiation (extern, control, parser) named under ``prefix``."""
        t = d.type
        base = t.base if isinstance(t, ir.Type_Specialized) else t
        if not isinstance(base, ir.Type_Name):
            raise self.err(f"cannot instantiate type {type_str(t)}", d)
        target = self.lookup_type_decl(base.name, scope, t)
        base.decl = target
        while isinstance(target, ir.Type_Typedef):  # typedef register<bit<8>> R; R(4) r;
            t = target.type
            base = t.base if isinstance(t, ir.Type_Specialized) else t
            if not isinstance(base, ir.Type_Name):
                raise self.err(f"cannot instantiate type {type_str(t)}", d)
            target = self.lookup_type_decl(base.name, scope, t)
            base.decl = target
        if isinstance(target, ir.Type_Package):
            d.fqn = d.name
            return  # the architecture pass resolves package instances
        if isinstance(target, ir.Type_Extern):
            fqn = qualified_name(prefix, d, d.name)
            d.fqn = fqn
            type_args = [self.canon(a, scope) for a in t.args] \
                if isinstance(t, ir.Type_Specialized) else []
            bindings: dict[str, ir.Type] = {}
            if type_args:
                if len(type_args) != len(target.type_params):
                    raise self.err(f"extern '{target.name}' expects {len(target.type_params)} "
                                   f"type arguments, got {len(type_args)}", d)
                bindings = {tp.name: ta for tp, ta in zip(target.type_params, type_args,
                                                          strict=True)}
            ctors = [m for m in target.methods if m.name == target.name]
            if not ctors:
                raise self.err(f"extern '{target.name}' has no constructor", d)
            ctor = self.pick_overload(ctors, d.args, f"constructor of '{target.name}'", d)
            bound = self.bind_args(ctor.type.params, d.args, scope, bindings,
                                   f"constructor of '{target.name}'", d)
            for p, a in zip(ctor.type.params, bound, strict=True):
                if a is not None and not self.is_compile_time(a) and not (
                        isinstance(a, ir.PathExpression)
                        and isinstance(a.decl, ir.Declaration_Instance)):
                    raise self.err(f"constructor argument '{p.name}' must be a compile-time "
                                   "constant", a)
            type_args = [bindings.get(tp.name, ir.Type_Var(name=tp.name))
                         for tp in target.type_params]
            for tp, ta in zip(target.type_params, type_args, strict=True):
                if isinstance(ta, ir.Type_Var):
                    raise self.err(f"cannot infer type argument '{tp.name}' of extern "
                                   f"'{target.name}'; write {target.name}<...>(...)", d)
            d.extern = ir.Type_ExternInstance(extern=target, type_args=type_args, loc=d.loc)
            d.bound_args = bound
            if d.initializer is not None:
                self.check_abstract_impls(d, scope)
            if self.registering and prefix is not None or (self.registering and scope is
                                                           self.globals):
                self.result.externs[fqn] = ExternInstance(fqn, target.name, type_args, bound, d)
            return
        if isinstance(target, (ir.P4Control, ir.P4Parser)):
            fqn = qualified_name(prefix, d, d.name)
            d.fqn = fqn
            targs = [self.canon(a, scope) for a in t.args] \
                if isinstance(t, ir.Type_Specialized) else None
            d.instantiated = self.specialize(target, fqn, d.args, scope, d, targs)
            return
        raise self.err(f"'{base.name}' cannot be instantiated", d)

    def check_abstract_impls(self, d: ir.Declaration_Instance, scope: Scope) -> None:
        for f in d.initializer.components if d.initializer else []:
            if isinstance(f, ir.Function):
                s = Scope(scope, kind="instance")
                s.names["this"] = [d]
                self.check_function(f, s)
            else:
                raise self.err("only abstract method implementations may appear in an "
                               "instance initializer", f)

    def pristine_of(self, decl: ir.Node) -> ir.Node:
        return self.pristine.setdefault(id(decl), copy.deepcopy(decl))

    def specialize(self, decl: ir.P4Control | ir.P4Parser, fqn: str | None,
                   args: list[ir.Argument], call_scope: Scope, site: ir.Node,
                   type_args: list[ir.Type] | None = None,
                   placeholder_ctor_args: bool = False) -> ir.P4Control | ir.P4Parser:
        """Check a fresh copy of ``decl`` for one instantiation named ``fqn``
        (``type_args`` bind a generic control's or parser's type parameters;
        ``placeholder_ctor_args``: no arguments, each constructor parameter is a
        read-only value of its type)."""
        self.instantiated.add(id(decl))
        spec = copy.deepcopy(self.pristine_of(decl))
        spec.fqn = fqn
        scope = Scope(self.globals, kind="control")
        if type_args is not None and len(type_args) != len(spec.type_params):
            raise self.err(f"'{spec.name}' expects {len(spec.type_params)} type arguments, "
                           f"got {len(type_args)}", site)
        for i, tv in enumerate(spec.type_params):
            bound_type = type_args[i] if type_args is not None else None
            scope.names[tv.name] = [bound_type if bound_type is not None
                                    else ir.Type_Var(name=tv.name, loc=tv.loc)]
        # constructor parameters bound to the (folded) arguments
        self.canon_params(spec.ctor_params, scope)
        what = f"constructor of '{spec.name}'"
        if placeholder_ctor_args:
            for p in spec.ctor_params:
                p.direction = ""
                scope.names[p.name] = [p]
            bound = []
        else:
            bound = self.bind_args(spec.ctor_params, args, call_scope, {}, what, site)
        for p, a in zip(spec.ctor_params if bound else [], bound, strict=True):
            if isinstance(a, ir.PathExpression) and isinstance(a.decl, ir.Declaration_Instance):
                scope.names[p.name] = [a.decl]
            elif isinstance(a, ir.ConstructorCallExpression):
                scope.names[p.name] = [a.instantiated]
            elif a is not None and self.is_compile_time(a):
                scope.names[p.name] = [ir.Declaration_Constant(name=p.name, type=p.type,
                                                               initializer=a, loc=p.loc)]
            else:
                raise self.err(f"constructor argument for '{p.name}' must be a compile-time "
                               "constant", a or site)
        self.canon_params(spec.params, scope)
        for p in spec.params:
            scope.declare(p.name, p)
        self.node_stack.append(spec)
        try:
            if isinstance(spec, ir.P4Control):
                self.check_control_body(spec, scope)
            else:
                self.check_parser_body(spec, scope)
        finally:
            self.node_stack.pop()
        return spec

    def check_locals(self, locals_: list[ir.Node], scope: Scope, prefix: str | None) -> None:
        for loc_decl in locals_:
            self.node_stack.append(loc_decl)
            try:
                if isinstance(loc_decl, ir.Declaration_Constant):
                    self.check_constant(loc_decl, scope)
                    scope.declare(loc_decl.name, loc_decl)
                elif isinstance(loc_decl, ir.Declaration_Variable):
                    self.check_variable(loc_decl, scope)
                elif isinstance(loc_decl, ir.Declaration_Instance):
                    self.check_instance(loc_decl, scope, prefix)
                    scope.declare(loc_decl.name, loc_decl)
                elif isinstance(loc_decl, ir.P4Action):
                    scope.declare(loc_decl.name, loc_decl)
                    self.check_action(loc_decl, scope, prefix)
                elif isinstance(loc_decl, ir.P4Table):
                    scope.declare(loc_decl.name, loc_decl)
                    self.check_table(loc_decl, scope, prefix)
                elif isinstance(loc_decl, ir.P4ValueSet):
                    scope.declare(loc_decl.name, loc_decl)
                    self.check_value_set(loc_decl, scope, prefix)
                else:
                    raise self.err(f"unexpected declaration {type(loc_decl).__name__}", loc_decl)
            finally:
                self.node_stack.pop()

    def check_control_body(self, c: ir.P4Control, scope: Scope) -> None:
        self.check_locals(c.locals, scope, c.fqn or c.name)
        self.return_types.append(None)
        try:
            c.body = self.block(c.body, Scope(scope))
        finally:
            self.return_types.pop()

    def check_parser_body(self, p: ir.P4Parser, scope: Scope) -> None:
        states: dict[str, ir.ParserState] = {}
        for s in p.states:
            if s.name in ("accept", "reject"):
                raise self.err(f"state '{s.name}' is built in and cannot be declared", s)
            if s.name in states:
                raise self.err(f"duplicate state '{s.name}'", s)
            states[s.name] = s
        if "start" not in states:
            raise self.err(f"parser '{p.name}' has no 'start' state", p)
        for b in ("accept", "reject"):
            st = ir.ParserState(name=b, builtin=True, loc=p.loc)
            p.states.append(st)
            states[b] = st
        self.check_locals(p.locals, scope, p.fqn or p.name)
        self.current_parser_states.append(states)
        self.return_types.append(None)
        try:
            for s in p.states:
                if s.builtin:
                    continue
                self.node_stack.append(s)
                try:
                    ss = Scope(scope)
                    s.components = [self.statement(c, ss) for c in s.components]
                    if s.select_expression is None:
                        # P4-16 (12.5): a state with no transition statement goes to reject
                        s.select_expression = ir.PathExpression(name="reject", loc=s.loc)
                    s.select_expression = self.transition(s.select_expression, ss, states)
                finally:
                    self.node_stack.pop()
        finally:
            self.current_parser_states.pop()
            self.return_types.pop()
        reached = _reachable_states(states["start"])
        if states["accept"] not in reached and states["reject"] not in reached:
            raise self.err(f"parser {p.name}: Parser never reaches accept or reject state "
                           "(every path from start loops)", p)

    def transition(self, e: ir.Expression, scope: Scope,
                   states: dict[str, ir.ParserState]) -> ir.Expression:
        if isinstance(e, ir.PathExpression):
            st = states.get(e.name)
            if st is None:
                raise self.err(f"unknown parser state '{e.name}'"
                               f"{did_you_mean(e.name, states)}", e)
            e.decl = st
            e.type = ir.Type_State()
            return e
        assert isinstance(e, ir.SelectExpression)
        comps = [self.expr(c, scope) for c in e.select.components]
        for c in comps:
            if isinstance(c.type, ir.Type_InfInt):
                raise self.err("select expression needs a width (cast the integer)", c)
        e.select.components = comps
        key_types = [c.type for c in comps]
        e.select.type = ir.Type_Tuple(components=key_types)
        e.type = ir.Type_State()
        for case in e.cases:
            self.node_stack.append(case)
            try:
                for n in _source_nodes(case.keyset):
                    if isinstance(n, ir.MethodCallExpression) and not (
                            isinstance(n.method, ir.Member) and n.method.member in SIZE_METHODS):
                        raise self.err(f"{expression_text(n)}: no function calls allowed in "
                                       "this context (a select case must be a compile-time "
                                       "keyset)", n)
                case.keyset = self.keyset(case.keyset, key_types, scope, "select case")
                st = states.get(case.state.name)
                if st is None:
                    raise self.err(f"unknown parser state '{case.state.name}'"
                                   f"{did_you_mean(case.state.name, states)}", case.state)
                case.state.decl = st
                case.state.type = ir.Type_State()
            finally:
                self.node_stack.pop()
        return e

    def keyset(self, k: ir.Expression, key_types: list[ir.Type], scope: Scope,
               what: str) -> ir.Expression:
        """Check one select case's keyset against the key types."""
        if isinstance(k, ir.DefaultExpression):
            k.type = ir.Type_Dontcare()
            return k
        if len(key_types) != 1:
            if isinstance(k, ir.PathExpression):
                d = scope.lookup(k.name)
                if isinstance(d, ir.P4ValueSet):
                    return self.value_set_ref(k, d, ir.Type_Tuple(components=key_types))
            if not isinstance(k, ir.ListExpression) or len(k.components) != len(key_types):
                raise self.err(f"{what} needs {len(key_types)} keysets in parentheses", k)
            k.components = [self.keyset(c, [t], scope, what)
                            for c, t in zip(k.components, key_types, strict=True)]
            k.type = ir.Type_Tuple(components=[c.type for c in k.components])
            return k
        kt = key_types[0]
        if isinstance(k, ir.PathExpression):
            d = scope.lookup(k.name)
            if isinstance(d, ir.P4ValueSet):
                return self.value_set_ref(k, d, kt)
        if isinstance(k, ir.Binary) and k.op in ("&&&", ".."):
            left = self.keyset_operand(k.left, kt, scope, what)
            right = self.keyset_operand(k.right, kt, scope, what)
            if not isinstance(kt, (ir.Type_Bits, ir.Type_InfInt, ir.Type_SerEnum)):
                raise self.err(f"'{k.op}' needs bit<W> or int<W> operands, not "
                               f"{type_str(kt)}", k)
            k.left, k.right = left, right
            k.type = ir.Type_Set(element=kt)
            return k
        return self.keyset_operand(k, kt, scope, what)

    def keyset_operand(self, e: ir.Expression, kt: ir.Type, scope: Scope,
                       what: str) -> ir.Expression:
        """A keyset value of key type ``kt``; for a serializable-enum key, a value of the
        enum's underlying bit<W> is accepted too (as p4c does, e.g. ``v &&& mask``)."""
        v = self.expr(e, scope, kt)
        if isinstance(kt, ir.Type_SerEnum) and isinstance(v.type, ir.Type_Bits) and \
                same_type(v.type, kt.underlying):
            return v
        if isinstance(kt, ir.Type_SerEnum) and isinstance(v.type, ir.Type_InfInt):
            return self.convert(v, kt.underlying, f"{what} keyset")
        return self.convert(v, kt, f"{what} keyset")

    def value_set_ref(self, k: ir.PathExpression, d: ir.P4ValueSet,
                      kt: ir.Type) -> ir.Expression:
        k.decl = d
        et = d.element_type
        if isinstance(et, ir.Type_Struct):
            # a struct element matches the select keys field by field (one key: one field)
            comps = [f.type for f in et.fields]
            keys = kt.components if isinstance(kt, ir.Type_Tuple) else [kt]
            ok = len(comps) == len(keys) and all(
                same_type(a, b) for a, b in zip(comps, keys, strict=True))
        else:
            ok = same_type(et, kt)
        if not ok:
            raise self.err(f"value_set '{d.name}' has type {type_str(et)} but the select key "
                           f"has type {type_str(kt)}", k)
        k.type = ir.Type_Set(element=et)
        return k

    def check_value_set(self, v: ir.P4ValueSet, scope: Scope, prefix: str | None) -> None:
        v.element_type = self.canon(v.element_type, scope)
        v.size = self.const_int(v.size_expr, scope, "value_set size")
        v.fqn = qualified_name(prefix, v, v.name)
        if self.registering:
            self.result.value_sets[v.fqn] = v

    def check_variable(self, d: ir.Declaration_Variable, scope: Scope) -> None:
        t = self.canon(d.type, scope)
        if isinstance(t, (ir.Type_Void, ir.Type_String, ir.Type_InfInt)):
            raise self.err(f"variable '{d.name}' cannot have type {type_str(t)}", d)
        if isinstance(t, ir.Type_List):
            raise self.err(f"variable '{d.name}': list<T> values are compile-time only "
                           "(use a const, a tuple or a header stack)", d)
        d.type = t
        if d.initializer is not None:
            d.initializer = self.convert(self.expr(d.initializer, scope, t), t,
                                         f"initializer of '{d.name}'")
        scope.declare(d.name, d)

    # ------------------------------------------------------------ actions/functions
    def check_action(self, a: ir.P4Action, scope: Scope, prefix: str | None) -> None:
        a.fqn = qualified_name(prefix, a, a.name)
        s = Scope(scope, kind="action")
        self.canon_params(a.params, scope)
        seen_directionless = False
        for p in a.params:
            if p.direction == "":
                seen_directionless = True
            elif seen_directionless:
                raise self.err(f"action '{a.name}': directional parameter '{p.name}' must come "
                               "before directionless (control-plane) parameters", p)
            s.declare(p.name, p)
        self.return_types.append(None)
        self.action_depth += 1
        try:
            a.body = self.block(a.body, s)
        finally:
            self.return_types.pop()
            self.action_depth -= 1
        if self.registering:
            self.result.actions.setdefault(a.fqn, a)

    def check_function(self, f: ir.Function, scope: Scope) -> None:
        s = Scope(scope, kind="function")
        for tv in f.type_params:
            s.names[tv.name] = [ir.Type_Var(name=tv.name, loc=tv.loc)]
        f.return_type = self.canon(f.return_type, s)
        self.canon_params(f.params, s)
        for p in f.params:
            s.declare(p.name, p)
        self.return_types.append(f.return_type)
        try:
            f.body = self.block(f.body, s)
        finally:
            self.return_types.pop()

    # ------------------------------------------------------------ statements
    def block(self, b: ir.BlockStatement, scope: Scope) -> ir.BlockStatement:
        s = Scope(scope)
        b.components = [self.statement(c, s) for c in b.components]
        return b

    def statement(self, st: ir.Node, scope: Scope) -> ir.Node:
        self.node_stack.append(st)
        try:
            return self._statement(st, scope)
        finally:
            self.node_stack.pop()

    def _statement(self, st: ir.Node, scope: Scope) -> ir.Node:
        if isinstance(st, ir.BlockStatement):
            return self.block(st, scope)
        if isinstance(st, ir.AssignmentStatement):
            left = self.expr(st.left, scope)
            self.require_lvalue(left, "assign to")
            st.left = left
            st.right = self.convert(self.expr(st.right, scope, left.type), left.type,
                                    "assignment")
            return st
        if isinstance(st, ir.MethodCallStatement):
            call = self.expr(st.call, scope)
            if isinstance(call, ir.BoolLiteral) and isinstance(st.call.method, ir.PathExpression) \
                    and st.call.method.name == "static_assert":
                return ir.EmptyStatement(loc=st.loc)  # checked and folded away
            if not isinstance(call, ir.MethodCallExpression):
                raise self.err("expression statement must be a method call", st)
            st.call = call
            return st
        if isinstance(st, ir.IfStatement):
            st.condition = self.convert(self.expr(st.condition, scope, ir.Type_Boolean()),
                                        ir.Type_Boolean(), "if condition")
            st.if_true = self.statement(st.if_true, Scope(scope))
            if st.if_false is not None:
                st.if_false = self.statement(st.if_false, Scope(scope))
            return st
        if isinstance(st, ir.SwitchStatement):
            return self.switch(st, scope)
        if isinstance(st, (ir.ExitStatement, ir.ReturnStatement)) and self.in_parser_state():
            word = "exit" if isinstance(st, ir.ExitStatement) else "return"
            raise self.err(f"'{word}' is not allowed in a parser (use a transition)", st)
        if isinstance(st, (ir.ExitStatement, ir.EmptyStatement)):
            return st
        if isinstance(st, ir.ReturnStatement):
            rt = self.return_types[-1] if self.return_types else None
            if st.expression is not None:
                if rt is None or isinstance(rt, ir.Type_Void):
                    raise self.err("return with a value outside a function returning a value",
                                   st)
                st.expression = self.convert(self.expr(st.expression, scope, rt), rt, "return")
            elif rt is not None and not isinstance(rt, ir.Type_Void):
                raise self.err(f"return needs a value of type {type_str(rt)}", st)
            return st
        if isinstance(st, ir.Declaration_Variable):
            self.check_variable(st, scope)
            return st
        if isinstance(st, ir.Declaration_Constant):
            self.check_constant(st, scope)
            scope.declare(st.name, st)
            return st
        if isinstance(st, ir.Declaration_Instance):
            raise self.err("instantiations are not allowed inside blocks", st)
        if isinstance(st, (ir.ForStatement, ir.ForInStatement)):
            if self.in_parser_state():
                raise self.err("for loops are not allowed in parser states", st)
            self.loop_depth += 1
            try:
                if isinstance(st, ir.ForStatement):
                    return self.for_statement(st, scope)
                return self.for_in_statement(st, scope)
            finally:
                self.loop_depth -= 1
        if isinstance(st, (ir.BreakStatement, ir.ContinueStatement)):
            if not self.loop_depth:
                word = "break" if isinstance(st, ir.BreakStatement) else "continue"
                raise self.err(f"'{word}' outside a for loop", st)
            return st
        raise self.err(f"unsupported statement {type(st).__name__}", st)

    def for_statement(self, st: ir.ForStatement, scope: Scope) -> ir.ForStatement:
        s = Scope(scope)
        st.init = [self.statement(c, s) for c in st.init]
        if st.condition is not None:
            st.condition = self.convert(self.expr(st.condition, s, ir.Type_Boolean()),
                                        ir.Type_Boolean(), "for-loop condition")
        st.updates = [self.statement(c, s) for c in st.updates]
        st.body = self.statement(st.body, Scope(s))
        return st

    def for_in_statement(self, st: ir.ForInStatement, scope: Scope) -> ir.ForInStatement:
        s = Scope(scope)
        var = st.variable
        var.type = self.canon(var.type, s)
        coll = st.collection
        if isinstance(coll, ir.Binary) and coll.op == "..":
            if not isinstance(var.type, ir.Type_Bits):
                raise self.err("a for-in range needs a bit<W> or int<W> loop variable, not "
                               f"{type_str(var.type)}", var)
            coll.left = self.convert(self.expr(coll.left, s, var.type), var.type,
                                     "for-in range start")
            coll.right = self.convert(self.expr(coll.right, s, var.type), var.type,
                                      "for-in range end")
            coll.type = ir.Type_Set(element=var.type)
        else:
            coll = self.expr(coll, s)
            ct = coll.type
            if isinstance(ct, ir.Type_Stack):
                if not same_type(ct.element, var.type):
                    raise self.err(f"loop variable of type {type_str(var.type)} cannot take "
                                   f"the elements of {type_str(ct)}", var)
            elif isinstance(ct, ir.Type_List):
                if not same_type(ct.element, var.type):
                    raise self.err(f"loop variable of type {type_str(var.type)} cannot take "
                                   f"the elements of {type_str(ct)}", var)
            elif isinstance(ct, ir.Type_Tuple):
                coll = self.convert(coll, ir.Type_Tuple(components=[var.type] * len(
                    ct.components)), "for-in list") if not all(
                    same_type(c, var.type) for c in ct.components) else coll
            else:
                raise self.err("a for-in loop needs a range 'a .. b', a header stack or a "
                               f"list, not {type_str(ct)}", coll)
        st.collection = coll
        s.declare(var.name, var)
        st.body = self.statement(st.body, Scope(s))
        return st

    def in_parser_state(self) -> bool:
        """True while checking statements of a parser state (not a function body)."""
        return bool(self.current_parser_states) and self.return_types[-1:] == [None] \
            and self.action_depth == 0

    def switch(self, st: ir.SwitchStatement, scope: Scope) -> ir.SwitchStatement:
        e = self.expr(st.expression, scope)
        st.expression = e
        et = e.type
        labels: set = set()
        for i, case in enumerate(st.cases):
            self.node_stack.append(case)
            try:
                lab = case.label
                if isinstance(lab, ir.DefaultExpression):
                    if i != len(st.cases) - 1:
                        raise self.err("'default' must be the last switch label", lab)
                    lab.type = ir.Type_Dontcare()
                elif isinstance(et, ir.Type_ActionEnum):
                    if not isinstance(lab, ir.PathExpression):
                        raise self.err("switch labels on action_run must be action names", lab)
                    refs = [r for r in et.table.action_refs if r.action.name == lab.name]
                    if not refs:
                        raise self.err(f"'{lab.name}' is not an action of table "
                                       f"'{et.table.name}'", lab)
                    lab.decl = refs[0].action
                    lab.type = et
                    key = id(refs[0].action)
                    if key in labels:
                        raise self.err(f"duplicate switch label '{lab.name}'", lab)
                    labels.add(key)
                else:
                    if not isinstance(et, (ir.Type_Bits, ir.Type_Enum, ir.Type_SerEnum,
                                           ir.Type_Error)):
                        raise self.err(f"cannot switch on a value of type {type_str(et)}", e)
                    v = self.convert(self.expr(lab, scope, et), et, "switch label")
                    if not self.is_compile_time(v):
                        raise self.err("switch labels must be compile-time constants", lab)
                    case.label = v
                if case.statement is not None:
                    case.statement = self.block(case.statement, scope)
                elif i == len(st.cases) - 1:
                    raise self.err("the last switch case needs a block", case)
            finally:
                self.node_stack.pop()
        return st

    def require_lvalue(self, e: ir.Expression, what: str) -> None:
        """Fail unless ``e`` may be written (``what``: the use, as "assign to")."""
        root = e
        while True:
            if isinstance(root, ir.Member):
                if root.decl is not None:
                    raise self.err(f"cannot {what} a constant", e)
                if isinstance(root.expr.type, ir.Type_Stack) and root.member in (
                        "last", "lastIndex", "size"):
                    if root.member != "last":
                        raise self.err(f"cannot {what} '{root.member}'", e)
                root = root.expr
            elif isinstance(root, (ir.ArrayIndex,)):
                root = root.left
            elif isinstance(root, ir.SliceExpr):
                root = root.expr
            else:
                break
        if isinstance(root, ir.PathExpression):
            d = root.decl
            if isinstance(d, ir.Declaration_Variable):
                return
            if isinstance(d, ir.Parameter):
                if d.direction in ("out", "inout"):
                    return
                kind = "an 'in' parameter" if d.direction == "in" else \
                    "a directionless parameter"
                raise self.err(f"cannot {what} '{d.name}': it is {kind}", e)
            raise self.err(f"cannot {what} '{root.name}': not a variable", e)
        raise self.err(f"cannot {what} this expression (not an l-value)", e)


def _source_nodes(e: ir.Node):
    """``e`` and the nodes below it (source children: annotated back-references, which
    do not compare, are not followed)."""
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        for f in dataclasses.fields(n):
            if not f.compare:
                continue
            value = getattr(n, f.name)
            if isinstance(value, ir.Node):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ir.Node))


def _reachable_states(start: ir.ParserState) -> list[ir.ParserState]:
    """The states a checked parser can reach from ``start`` (p4c: RemoveUnreachableStates)."""
    seen = [start]
    work = [start]
    while work:
        st = work.pop()
        sel = st.select_expression
        if isinstance(sel, ir.PathExpression):
            targets = [sel.decl]
        elif isinstance(sel, ir.SelectExpression):
            targets = [c.state.decl for c in sel.cases]
        else:
            targets = []
        for t in targets:
            if isinstance(t, ir.ParserState) and all(t is not x for x in seen):
                seen.append(t)
                work.append(t)
    return seen
