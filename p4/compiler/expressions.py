"""Expressions: implicit conversions, typed initialisers, operator typing with
P4's width rules and constant folding (a mixin of the type checker)."""

from __future__ import annotations

import copy
from collections.abc import Callable

from netweft.p4.compiler import arith, ir
from netweft.p4.compiler.calls import HEADER_METHODS
from netweft.p4.compiler.checker_host import CheckerPart
from netweft.p4.compiler.folded import bits_type as _bits
from netweft.p4.compiler.folded import typed_bool as _bool
from netweft.p4.compiler.folded import typed_constant as _const
from netweft.p4.compiler.p4info_types import newtype_of
from netweft.p4.compiler.scopes import Scope, did_you_mean
from netweft.p4.compiler.typesys import contains_type_var, is_numeric, same_type, type_str

ARITH_OPS = ("+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^")
COMPARE_OPS = ("<", "<=", ">", ">=")
EQUALITY_OPS = ("==", "!=")


class ExpressionChecker(CheckerPart):
    """Expression checks: a part of :class:`~.typecheck.TypeChecker`; what it uses of
    the other parts is declared by :class:`~.checker_host.CheckerHost`."""

    # ------------------------------------------------------------ conversions
    def convert(self, e: ir.Expression, target: ir.Type | None, what: str) -> ir.Expression:
        """Implicitly convert ``e`` to ``target`` (P4's rules) or fail."""
        src = e.type
        if target is None or src is None or same_type(src, target):
            return e
        if isinstance(target, ir.Type_Var) or contains_type_var(target):
            return e
        if isinstance(e, ir.DefaultExpression):
            return e
        if isinstance(src, ir.Type_InfInt) and isinstance(target, ir.Type_Bits):
            if isinstance(e, ir.Constant):
                return _const(arith.wrap(e.value, target.width, target.signed), target, e.loc,
                              e.base)
            c = ir.Cast(dest_type=target, expr=e, loc=e.loc)
            c.type = target
            return c
        if isinstance(src, ir.Type_SerEnum) and isinstance(target, ir.Type_Bits) and \
                same_type(src.underlying, target):
            c = ir.Cast(dest_type=target, expr=e, loc=e.loc)
            c.type = target
            return c
        if isinstance(target, ir.Type_Set):
            return self.convert(e, target.element, what)
        if isinstance(target, ir.Type_List) and isinstance(e, ir.ListExpression):
            e.components = [self.convert(c, target.element, what) for c in e.components]
            e.type = target
            return e
        if isinstance(src, (ir.P4Control, ir.P4Parser)) and \
                self._block_prototype(target) is not None:
            self._check_block_matches(e, src, target, what)
            return e
        if isinstance(e, (ir.ListExpression, ir.StructExpression, ir.InvalidHeader)) and \
                isinstance(target, (ir.Type_StructLike, ir.Type_Tuple, ir.Type_Stack)):
            return self.typed_initializer(e, target, what)
        if isinstance(src, ir.Type_Bits) and isinstance(target, ir.Type_Bits):
            raise self.err(f"{what}: cannot implicitly convert {type_str(src)} to "
                           f"{type_str(target)} (widths/signedness differ; use a cast)", e)
        raise self.err(f"{what}: type mismatch: expected {type_str(target)}, "
                       f"got {type_str(src)}", e)

    @staticmethod
    def _block_prototype(t: ir.Type) -> ir.Type_Control | ir.Type_Parser | None:
        """The control/parser prototype named by ``t`` (``ct`` or ``ct<T>``), or None."""
        base = t.base.decl if isinstance(t, ir.Type_Specialized) else t
        return base if isinstance(base, (ir.Type_Control, ir.Type_Parser)) else None

    def _check_block_matches(self, e: ir.Expression, block: ir.P4Control | ir.P4Parser,
                             target: ir.Type, what: str) -> None:
        """An instance of ``block`` passed where the prototype ``target`` is expected:
        same kind, and apply parameters with the same directions and types."""
        proto = self._block_prototype(target)
        assert proto is not None
        kind = "parser" if isinstance(proto, ir.Type_Parser) else "control"
        if isinstance(block, ir.P4Parser) != (kind == "parser"):
            raise self.err(f"{what}: expected a {kind} of type {proto.name}, "
                           f"got '{block.name}'", e)
        if len(block.params) != len(proto.params):
            raise self.err(f"{what}: '{block.name}' has {len(block.params)} apply parameters, "
                           f"{proto.name} has {len(proto.params)}", e)
        targs = target.args if isinstance(target, ir.Type_Specialized) else []
        sub = {tp.name: ta for tp, ta in zip(proto.type_params, targs, strict=False)}
        for mine, theirs in zip(block.params, proto.params, strict=True):
            expected = theirs.type
            if isinstance(expected, ir.Type_Var):
                expected = sub.get(expected.name, expected)
            if mine.direction != theirs.direction or not (
                    isinstance(expected, ir.Type_Var) or same_type(mine.type, expected)):
                raise self.err(f"{what}: parameter '{mine.name}' of '{block.name}' does not "
                               f"match '{theirs.name}' of {proto.name} (direction or type "
                               "differs)", e)

    def typed_initializer(self, e: ir.Expression, target: ir.Type, what: str) -> ir.Expression:
        if isinstance(e, ir.InvalidHeader):
            if not isinstance(target, (ir.Type_Header, ir.Type_HeaderUnion)):
                raise self.err(f"{{#}} needs a header type, not {type_str(target)}", e)
            e.type = target
            return e
        if isinstance(target, ir.Type_Tuple):
            if isinstance(e, ir.StructExpression) and e.default_rest and not e.components:
                e = ir.ListExpression(components=[], loc=e.loc, default_rest=True)
            if not isinstance(e, ir.ListExpression) or not self._list_length_ok(
                    e, len(target.components)):
                raise self.err(f"{what}: expected a list of {len(target.components)} values", e)
            e.components = [self.convert(c, t, what)
                            for c, t in zip(e.components, target.components, strict=False)]
            e.components += [self.default_value(t, e.loc)
                             for t in target.components[len(e.components):]]
            e.type = target
            return e
        if isinstance(target, ir.Type_Stack):
            if isinstance(e, ir.StructExpression) and e.default_rest and not e.components:
                e = ir.ListExpression(components=[], loc=e.loc, default_rest=True)
            if not isinstance(e, ir.ListExpression) or not self._list_length_ok(e, target.size):
                raise self.err(f"{what}: expected a list of {target.size} headers", e)
            e.components = [self.convert(c, target.element, what) for c in e.components]
            e.components += [self.default_value(target.element, e.loc)
                             for _ in range(target.size - len(e.components))]
            e.type = target
            return e
        assert isinstance(target, ir.Type_StructLike)
        if isinstance(e, ir.ListExpression):
            if not self._list_length_ok(e, len(target.fields)):
                raise self.err(f"{what}: '{target.name}' has {len(target.fields)} fields but "
                               f"the list has {len(e.components)} values", e)
            named = [ir.NamedExpression(name=f.name, expr=c, loc=c.loc)
                     for f, c in zip(target.fields, e.components, strict=False)]
            e = ir.StructExpression(type_name=None, components=named, loc=e.loc,
                                    default_rest=e.default_rest)
        assert isinstance(e, ir.StructExpression)
        given = {c.name: c for c in e.components}
        for c in e.components:
            if target.field_named(c.name) is None:
                raise self.err(f"'{target.name}' has no field '{c.name}'", c)
        ordered = []
        for f in target.fields:
            c = given.get(f.name)
            if c is None and e.default_rest:
                c = ir.NamedExpression(name=f.name, expr=self.default_value(f.type, e.loc),
                                       loc=e.loc)
            if c is None:
                raise self.err(f"{what}: field '{f.name}' of '{target.name}' is not "
                               "initialised", e)
            if c.expr.type is None:
                c.expr = self.expr(c.expr, Scope(self.globals), f.type)
            c.expr = self.convert(c.expr, f.type, f"field '{f.name}'")
            ordered.append(c)
        e.components = ordered
        e.type = target
        return e

    @staticmethod
    def _list_length_ok(e: ir.ListExpression, n: int) -> bool:
        return len(e.components) == n or (e.default_rest and len(e.components) <= n)

    def default_value(self, t: ir.Type, loc) -> ir.Expression:
        """The P4 default value of type ``t`` as a typed expression (for ``...``)."""
        if isinstance(t, ir.Type_Bits):
            return _const(0, t, loc)
        if isinstance(t, ir.Type_Boolean):
            return _bool(False, loc)
        if isinstance(t, (ir.Type_Error, ir.Type_Enum)):
            tn = ir.TypeNameExpression(typename=t, loc=loc)
            tn.type = t
            decl = self.errors["NoError"] if isinstance(t, ir.Type_Error) else t.members[0]
            m = ir.Member(expr=tn, member=decl.name, loc=loc)
            m.decl, m.type = decl, t
            return m
        if isinstance(t, ir.Type_SerEnum):
            c = ir.Cast(dest_type=t, expr=_const(0, t.underlying, loc), loc=loc)
            c.type = t
            return c
        if isinstance(t, (ir.Type_Header, ir.Type_HeaderUnion)):
            h = ir.InvalidHeader(loc=loc)
            h.type = t
            return h
        if isinstance(t, ir.Type_Struct):
            s = ir.StructExpression(type_name=None, loc=loc, components=[
                ir.NamedExpression(name=f.name, expr=self.default_value(f.type, loc), loc=loc)
                for f in t.fields])
            s.type = t
            return s
        if isinstance(t, (ir.Type_Stack, ir.Type_Tuple)):
            elems = [t.element] * t.size if isinstance(t, ir.Type_Stack) else t.components
            lst = ir.ListExpression(components=[self.default_value(x, loc) for x in elems],
                                    loc=loc)
            lst.type = t
            return lst
        raise self.err(f"type {type_str(t)} has no default value for '...'")

    # ------------------------------------------------------------ expressions
    def expr(self, e: ir.Expression, scope: Scope,
             expected: ir.Type | None = None) -> ir.Expression:
        """Check ``e``; returns the (possibly replaced, folded) expression."""
        self.node_stack.append(e)
        try:
            handler: Callable = getattr(self, "_e_" + type(e).__name__, None)  # type: ignore
            if handler is None:
                raise self.err(f"unsupported expression {type(e).__name__}", e)
            r = handler(e, scope, expected)
            if r.type is None:
                raise self.err("internal: expression without type", e)
            return r
        finally:
            self.node_stack.pop()

    def _e_Constant(self, e: ir.Constant, scope: Scope, expected):
        if e.type is None:
            e.type = ir.Type_InfInt()
        elif isinstance(e.type, ir.Type_Bits):
            e.value = arith.wrap(e.value, e.type.width, e.type.signed)
        if isinstance(e.type, ir.Type_InfInt) and isinstance(expected, ir.Type_Bits):
            return self.convert(e, expected, "literal")
        return e

    def _e_BoolLiteral(self, e, scope, expected):
        e.type = ir.Type_Boolean()
        return e

    def _e_StringLiteral(self, e, scope, expected):
        e.type = ir.Type_String()
        return e

    def _e_DefaultExpression(self, e, scope, expected):
        e.type = expected if expected is not None else ir.Type_Dontcare()
        return e

    def _e_InvalidHeader(self, e, scope, expected):
        if isinstance(expected, (ir.Type_Header, ir.Type_HeaderUnion)):
            e.type = expected
            return e
        raise self.err("cannot infer the header type of {#} here", e)

    def _e_ThisExpression(self, e, scope, expected):
        d = scope.lookup("this")
        if not isinstance(d, ir.Declaration_Instance):
            raise self.err("'this' is only allowed in abstract method implementations", e)
        e.type = d.extern
        return e

    def _e_PathExpression(self, e: ir.PathExpression, scope: Scope, expected):
        found = self.globals.lookup_all(e.name) if e.top_level else scope.lookup_all(e.name)
        if not found:
            raise self.err(f"undeclared name '{e.name}'"
                           f"{did_you_mean(e.name, scope.visible_names())}", e)
        d = found[0]
        e.decl = d
        if isinstance(d, ir.Declaration_Constant):
            v = d.initializer
            if isinstance(v, ir.Constant):
                return _const(v.value, v.type, e.loc)
            if isinstance(v, ir.BoolLiteral):
                return _bool(v.value, e.loc)
            if isinstance(v, ir.ListExpression) and isinstance(v.type, ir.Type_List):
                return copy.deepcopy(v)  # list<T> constants are compile-time values
            e.type = d.type
            return e
        if isinstance(d, (ir.Parameter, ir.Declaration_Variable)):
            e.type = d.type
            return e
        if isinstance(d, ir.Declaration_Instance):
            if d.extern is not None:
                e.type = d.extern
            elif d.instantiated is not None:
                e.type = d.instantiated
            else:
                raise self.err(f"'{e.name}' cannot be used as a value", e)
            return e
        if isinstance(d, (ir.P4Control, ir.P4Parser)) and d.fqn is not None:
            e.type = d
            return e
        if isinstance(d, ir.P4Table):
            e.type = ir.Type_Table(table=d)
            return e
        if isinstance(d, ir.P4Action):
            e.type = ir.Type_Action(action=d)
            return e
        if isinstance(d, ir.Declaration_ID) and d.name in self.match_kinds and \
                self.match_kinds[d.name] is d:
            e.type = ir.Type_MatchKind()
            return e
        if isinstance(d, ir.P4ValueSet):
            e.type = ir.Type_Set(element=d.element_type)
            return e
        if isinstance(d, ir.ParserState):
            e.type = ir.Type_State()
            return e
        if isinstance(d, (ir.Method, ir.Function)):
            raise self.err(f"'{e.name}' is a function; call it with (...)", e)
        if isinstance(d, ir.Type) or isinstance(d, (ir.P4Control, ir.P4Parser)):
            t = ir.TypeNameExpression(typename=ir.Type_Name(name=e.name, loc=e.loc), loc=e.loc)
            return self._e_TypeNameExpression(t, scope, expected)
        raise self.err(f"'{e.name}' cannot be used as a value", e)

    def _e_TypeNameExpression(self, e: ir.TypeNameExpression, scope: Scope, expected):
        e.type = self.canon(e.typename, scope)
        e.typename = e.type
        return e

    def _e_Member(self, e: ir.Member, scope: Scope, expected):
        if isinstance(e.expr, ir.TypeNameExpression) or (
                isinstance(e.expr, ir.PathExpression) and
                isinstance(scope.lookup(e.expr.name), (ir.Type_Enum, ir.Type_SerEnum,
                                                       ir.Type_Typedef))):
            obj = self.expr(e.expr, scope)
            e.expr = obj
            t = obj.type
            if isinstance(obj, ir.TypeNameExpression):
                if isinstance(t, ir.Type_Error):
                    m = self.errors.get(e.member)
                    if m is None:
                        raise self.err(f"unknown error '{e.member}'"
                                       f"{did_you_mean(e.member, self.errors)}", e)
                    e.decl = m
                    e.type = ir.Type_Error()
                    return e
                if isinstance(t, ir.Type_Enum):
                    for m in t.members:
                        if m.name == e.member:
                            e.decl = m
                            e.type = t
                            return e
                    raise self.err(f"enum '{t.name}' has no member '{e.member}'"
                                   f"{did_you_mean(e.member, [x.name for x in t.members])}", e)
                if isinstance(t, ir.Type_SerEnum):
                    for sm in t.members:
                        if sm.name == e.member:
                            e.decl = sm
                            e.type = t
                            return e
                    raise self.err(f"enum '{t.name}' has no member '{e.member}'"
                                   f"{did_you_mean(e.member, [x.name for x in t.members])}", e)
                raise self.err(f"type {type_str(t)} has no member '{e.member}'", e)
        obj = self.expr(e.expr, scope)
        e.expr = obj
        t = obj.type
        name = e.member
        if isinstance(t, ir.Type_StructLike):
            f = t.field_named(name)
            if f is None:
                if isinstance(t, (ir.Type_Header, ir.Type_HeaderUnion)) and \
                        name in HEADER_METHODS:
                    raise self.err(f"'{name}' is a method; call it as {name}()", e)
                raise self.err(f"'{type_str(t)}' has no field '{name}'"
                               f"{did_you_mean(name, [x.name for x in t.fields])}", e)
            e.type = f.type
            return e
        if isinstance(t, ir.Type_Stack):
            if name in ("next", "last", "lastIndex") and not self.current_parser_states:
                raise self.err(f"'{name}' of a header stack may only be used in a parser", e)
            if name in ("next", "last"):
                e.type = t.element
                return e
            if name in ("lastIndex", "nextIndex"):
                e.type = _bits(32)
                return e
            if name == "size":
                return _const(t.size, _bits(32), e.loc)
            raise self.err(f"header stack has no member '{name}'", e)
        if isinstance(t, ir.Type_TableApplyResult):
            if name in ("hit", "miss"):
                e.type = ir.Type_Boolean()
                return e
            if name == "action_run":
                e.type = ir.Type_ActionEnum(table=t.table)
                return e
            raise self.err(f"table apply result has no member '{name}' "
                           "(use hit, miss or action_run)", e)
        raise self.err(f"cannot access member '{name}' of a value of type {type_str(t)}", e)

    def _e_ArrayIndex(self, e: ir.ArrayIndex, scope: Scope, expected):
        left = self.expr(e.left, scope)
        e.left = left
        idx = self.expr(e.index, scope)
        t = left.type
        # p4c accepts signed run-time indices too (a negative one is out of bounds), and
        # values of a serializable enum (their underlying integer)
        if not isinstance(idx.type, (ir.Type_Bits, ir.Type_InfInt, ir.Type_SerEnum)):
            raise self.err(f"array index must be an integer, not {type_str(idx.type)}", idx)
        e.index = idx
        if isinstance(t, ir.Type_Stack):
            if isinstance(idx, ir.Constant) and not 0 <= idx.value < t.size:
                raise self.err(f"index {idx.value} out of bounds for a stack of size {t.size}",
                               idx)
            e.type = t.element
            return e
        if isinstance(t, ir.Type_Tuple):
            if not isinstance(idx, ir.Constant) or not 0 <= idx.value < len(t.components):
                raise self.err("tuple index must be a constant within bounds", idx)
            e.type = t.components[idx.value]
            return e
        raise self.err(f"cannot index a value of type {type_str(t)}", e)

    def _e_SliceExpr(self, e: ir.SliceExpr, scope: Scope, expected):
        inner = self.expr(e.expr, scope)
        e.expr = inner
        t = inner.type
        hi = self.expr(e.hi, scope)
        lo = self.expr(e.lo, scope)
        if not isinstance(hi, ir.Constant) or not isinstance(lo, ir.Constant):
            raise self.err("slice bounds must be compile-time constants", e)
        e.hi, e.lo = hi, lo
        if isinstance(t, ir.Type_SerEnum):
            t = t.underlying
        if isinstance(t, ir.Type_InfInt) and isinstance(inner, ir.Constant):
            width = None
        elif isinstance(t, ir.Type_Bits):
            width = t.width
        else:
            raise self.err(f"cannot slice a value of type {type_str(t)}", e)
        if lo.value < 0 or hi.value < lo.value or (width is not None and hi.value >= width):
            raise self.err(f"invalid slice [{hi.value}:{lo.value}] of {type_str(t)}", e)
        e.hi_value, e.lo_value = hi.value, lo.value
        rt = _bits(hi.value - lo.value + 1)
        if isinstance(inner, ir.Constant):
            return _const(arith.slice_bits(inner.value, width, hi.value, lo.value), rt, e.loc)
        e.type = rt
        return e

    def _e_Unary(self, e: ir.Unary, scope: Scope, expected):
        op = e.op
        if op == "!":
            inner = self.convert(self.expr(e.expr, scope, ir.Type_Boolean()), ir.Type_Boolean(),
                                 "operand of '!'")
            if isinstance(inner, ir.BoolLiteral):
                return _bool(not inner.value, e.loc)
            e.expr = inner
            e.type = ir.Type_Boolean()
            return e
        inner = self.expr(e.expr, scope, expected if is_numeric(expected or ir.Type_Void())
                          else None)
        t = inner.type
        if op in ("-", "+"):
            if not is_numeric(t):
                raise self.err(f"'{op}' needs a numeric operand, not {type_str(t)}", e)
            if op == "+":
                return inner
            if isinstance(inner, ir.Constant):
                w = t.width if isinstance(t, ir.Type_Bits) else None
                s = t.signed if isinstance(t, ir.Type_Bits) else True
                return _const(arith.negate(inner.value, w, s), t, e.loc)
        elif op == "~":
            if isinstance(t, ir.Type_InfInt) and isinstance(expected, ir.Type_Bits):
                inner = self.convert(inner, expected, "operand of '~'")
                t = inner.type
            if not isinstance(t, ir.Type_Bits):
                raise self.err(f"'~' needs a bit<W> or int<W> operand, not {type_str(t)}", e)
            if isinstance(inner, ir.Constant):
                return _const(arith.complement(inner.value, t.width, t.signed), t, e.loc)
        e.expr = inner
        e.type = t
        return e

    def _unify_numeric(self, e: ir.Binary, left: ir.Expression, right: ir.Expression,
                       what: str) -> tuple[ir.Expression, ir.Expression, ir.Type]:
        lt, rt = left.type, right.type
        if isinstance(lt, ir.Type_SerEnum):
            left = self.convert(left, lt.underlying, what)
            lt = left.type
        if isinstance(rt, ir.Type_SerEnum):
            right = self.convert(right, rt.underlying, what)
            rt = right.type
        if not is_numeric(lt) or not is_numeric(rt):
            bad = lt if not is_numeric(lt) else rt
            raise self.err(f"operands of '{e.op}' must be numeric, not {type_str(bad)}", e)
        if isinstance(lt, ir.Type_InfInt) and isinstance(rt, ir.Type_Bits):
            left = self.convert(left, rt, what)
            return left, right, rt
        if isinstance(rt, ir.Type_InfInt) and isinstance(lt, ir.Type_Bits):
            right = self.convert(right, lt, what)
            return left, right, lt
        if not same_type(lt, rt):
            raise self.err(f"operands of '{e.op}' have different types: {type_str(lt)} and "
                           f"{type_str(rt)} (P4 has no implicit width conversion; use a cast)",
                           e)
        return left, right, lt

    def _e_Binary(self, e: ir.Binary, scope: Scope, expected):
        op = e.op
        if op in ("&&&", ".."):
            raise self.err(f"'{op}' is only allowed in select cases and table entries", e)
        if op in ("&&", "||"):
            b = ir.Type_Boolean()
            left = self.convert(self.expr(e.left, scope, b), b, f"operand of '{op}'")
            right = self.convert(self.expr(e.right, scope, b), b, f"operand of '{op}'")
            if isinstance(left, ir.BoolLiteral) and isinstance(right, ir.BoolLiteral):
                v = left.value and right.value if op == "&&" else left.value or right.value
                return _bool(v, e.loc)
            e.left, e.right = left, right
            e.type = b
            return e
        # integer-literal results take the expected width at the use site
        num_expected = expected if isinstance(expected, ir.Type_Bits) and op in ARITH_OPS \
            else None
        left = self.expr(e.left, scope, None)
        written_right = e.right  # as written: a cast to bit<S> may fold away below
        right = self.expr(e.right, scope, None)
        if op == "++":
            lt, rt = left.type, right.type
            if isinstance(lt, ir.Type_SerEnum):
                left = self.convert(left, lt.underlying, "'++'")
                lt = left.type
            if isinstance(rt, ir.Type_SerEnum):
                right = self.convert(right, rt.underlying, "'++'")
                rt = right.type
            if not isinstance(lt, ir.Type_Bits) or not isinstance(rt, ir.Type_Bits):
                bad = lt if not isinstance(lt, ir.Type_Bits) else rt
                raise self.err(f"operands of '++' must be bit<W> or int<W> with known widths, "
                               f"not {type_str(bad)}", e)
            t = _bits(lt.width + rt.width, lt.signed)
            if isinstance(left, ir.Constant) and isinstance(right, ir.Constant):
                return _const(arith.concat(left.value, lt.width, right.value, rt.width,
                                           lt.signed), t, e.loc)
            e.left, e.right, e.type = left, right, t
            return e
        if op in ("<<", ">>"):
            lt, rt = left.type, right.type
            if not is_numeric(lt):
                raise self.err(f"left operand of '{op}' must be numeric, not {type_str(lt)}", e)
            if not is_numeric(rt) or (isinstance(rt, ir.Type_Bits) and rt.signed):
                raise self.err(f"shift amount must be an unsigned integer, not {type_str(rt)}",
                               e)
            if isinstance(right, ir.Constant) and right.value < 0:
                raise self.err("shift amount must not be negative", right)
            newtype = _declared_newtype(right) if right is written_right else None
            if newtype is not None:  # p4c: a 'type' is not bit<S>, even over bit<S>
                raise self.err(f"the right operand of '{op}' must be bit<S> or a non-negative "
                               f"compile-time constant, not {newtype.name} (a 'type' "
                               f"declaration; cast it to {type_str(rt)})", right)
            if isinstance(lt, ir.Type_InfInt):
                if isinstance(expected, ir.Type_Bits):
                    left = self.convert(left, expected, f"operand of '{op}'")
                    lt = left.type
                elif not isinstance(right, ir.Constant):
                    raise self.err(f"'{op}' of an integer literal by a non-constant amount "
                                   "needs a width (cast the literal)", e)
            if isinstance(left, ir.Constant) and isinstance(right, ir.Constant):
                w = lt.width if isinstance(lt, ir.Type_Bits) else None
                s = lt.signed if isinstance(lt, ir.Type_Bits) else True
                try:
                    v = arith.binary(op, left.value, right.value, w, s)
                except arith.ArithError as exc:
                    raise self.err(str(exc), e) from None
                return _const(v, lt, e.loc)
            e.left, e.right, e.type = left, right, lt
            return e
        if op in EQUALITY_OPS:
            lt, rt = left.type, right.type
            if is_numeric(lt) or is_numeric(rt) or isinstance(lt, ir.Type_SerEnum) or \
                    isinstance(rt, ir.Type_SerEnum):
                if isinstance(lt, ir.Type_SerEnum) and isinstance(rt, ir.Type_SerEnum):
                    if lt is not rt:
                        raise self.err(f"cannot compare {type_str(lt)} with {type_str(rt)}", e)
                elif isinstance(lt, ir.Type_SerEnum) and isinstance(rt, ir.Type_InfInt):
                    right = self.convert(right, lt.underlying, "comparison")
                    left = self.convert(left, lt.underlying, "comparison")
                elif isinstance(rt, ir.Type_SerEnum) and isinstance(lt, ir.Type_InfInt):
                    left = self.convert(left, rt.underlying, "comparison")
                    right = self.convert(right, rt.underlying, "comparison")
                else:
                    left, right, _ = self._unify_numeric(e, left, right, "comparison")
            else:
                if isinstance(left, (ir.ListExpression, ir.StructExpression)) and \
                        not isinstance(right, (ir.ListExpression, ir.StructExpression)):
                    left = self.convert(left, rt, "comparison")
                elif isinstance(right, (ir.ListExpression, ir.StructExpression)):
                    right = self.convert(right, lt, "comparison")
                if not same_type(left.type, right.type):
                    raise self.err(f"cannot compare {type_str(left.type)} with "
                                   f"{type_str(right.type)}", e)
                # varbit values compare widths and values; stacks element by element
                if isinstance(left.type, ir.Type_ExternInstance):
                    raise self.err(f"values of type {type_str(left.type)} cannot be compared",
                                   e)
            if isinstance(left, ir.Constant) and isinstance(right, ir.Constant):
                return _bool((left.value == right.value) == (op == "=="), e.loc)
            if isinstance(left, ir.BoolLiteral) and isinstance(right, ir.BoolLiteral):
                return _bool((left.value == right.value) == (op == "=="), e.loc)
            e.left, e.right, e.type = left, right, ir.Type_Boolean()
            return e
        left, right, t = self._unify_numeric(e, left, right, f"operand of '{op}'")
        if op in COMPARE_OPS:
            if isinstance(left, ir.Constant) and isinstance(right, ir.Constant):
                return _bool(bool(arith.binary(op, left.value, right.value, None, True)), e.loc)
            e.left, e.right, e.type = left, right, ir.Type_Boolean()
            return e
        if op in ("/", "%"):
            if isinstance(t, ir.Type_Bits) and t.signed:
                raise self.err(f"'{op}' is not supported on signed int<{t.width}> values", e)
            if isinstance(right, ir.Constant) and right.value == 0:
                raise self.err("division by zero", e)
        if op in ("|+|", "|-|") and isinstance(t, ir.Type_InfInt):
            raise self.err(f"saturating '{op}' needs operands with a width", e)
        if isinstance(t, ir.Type_InfInt) and not (isinstance(left, ir.Constant)
                                                 and isinstance(right, ir.Constant)):
            raise self.err(f"cannot infer the width of '{op}' on integer literals", e)
        if isinstance(left, ir.Constant) and isinstance(right, ir.Constant):
            w = t.width if isinstance(t, ir.Type_Bits) else None
            s = t.signed if isinstance(t, ir.Type_Bits) else True
            try:
                v = arith.binary(op, left.value, right.value, w, s)
            except arith.ArithError as exc:
                raise self.err(str(exc), e) from None
            c = _const(v, t, e.loc)
            if isinstance(t, ir.Type_InfInt) and isinstance(num_expected, ir.Type_Bits):
                return self.convert(c, num_expected, f"result of '{op}'")
            return c
        e.left, e.right, e.type = left, right, t
        return e

    def _e_Mux(self, e: ir.Mux, scope: Scope, expected):
        b = ir.Type_Boolean()
        cond = self.convert(self.expr(e.cond, scope, b), b, "condition of '?:'")
        e1 = self.expr(e.e1, scope, expected)
        e2 = self.expr(e.e2, scope, expected)
        if isinstance(e1.type, ir.Type_InfInt) and not isinstance(e2.type, ir.Type_InfInt):
            e1 = self.convert(e1, e2.type, "'?:'")
        elif isinstance(e2.type, ir.Type_InfInt) and not isinstance(e1.type, ir.Type_InfInt):
            e2 = self.convert(e2, e1.type, "'?:'")
        elif isinstance(e1.type, ir.Type_InfInt) and isinstance(expected, ir.Type_Bits):
            e1 = self.convert(e1, expected, "'?:'")
            e2 = self.convert(e2, expected, "'?:'")
        if not same_type(e1.type, e2.type):
            raise self.err(f"the branches of '?:' have different types: {type_str(e1.type)} "
                           f"and {type_str(e2.type)}", e)
        if isinstance(cond, ir.BoolLiteral):
            return e1 if cond.value else e2
        if isinstance(e1.type, ir.Type_InfInt):
            raise self.err("cannot infer the width of '?:' on integer literals", e)
        e.cond, e.e1, e.e2, e.type = cond, e1, e2, e1.type
        return e

    def _e_Cast(self, e: ir.Cast, scope: Scope, expected):
        target = self.canon(e.dest_type, scope)
        e.dest_type = target
        if isinstance(e.expr, (ir.ListExpression, ir.StructExpression, ir.InvalidHeader)):
            inner = self.expr(e.expr, scope, target) if not isinstance(
                e.expr, (ir.ListExpression, ir.StructExpression)) else e.expr
            if isinstance(inner, (ir.ListExpression, ir.StructExpression)):
                inner = self._initializer_for(inner, target, scope)
            return self.convert(inner, target, "cast")
        inner = self.expr(e.expr, scope, None)
        src = inner.type
        if same_type(src, target):
            return inner
        ok = False
        if isinstance(target, ir.Type_Bits):
            ok = isinstance(src, (ir.Type_Bits, ir.Type_InfInt, ir.Type_SerEnum)) or (
                isinstance(src, ir.Type_Boolean) and target.width == 1 and not target.signed)
        elif isinstance(target, ir.Type_Boolean):
            ok = (isinstance(src, ir.Type_Bits) and src.width == 1 and not src.signed) or (
                isinstance(inner, ir.Constant) and inner.value in (0, 1))
        elif isinstance(target, ir.Type_SerEnum):
            ok = isinstance(src, (ir.Type_Bits, ir.Type_InfInt))
        elif isinstance(target, ir.Type_InfInt):
            ok = isinstance(inner, ir.Constant)
        if not ok:
            raise self.err(f"cannot cast {type_str(src)} to {type_str(target)}", e)
        if isinstance(inner, ir.Constant):
            if isinstance(target, ir.Type_Bits):
                return _const(arith.cast(inner.value, target.width, target.signed), target,
                              e.loc)
            if isinstance(target, ir.Type_Boolean):
                return _bool(bool(inner.value & 1), e.loc)
            if isinstance(target, ir.Type_InfInt):
                return _const(inner.value, target, e.loc)
        if isinstance(inner, ir.BoolLiteral) and isinstance(target, ir.Type_Bits):
            return _const(int(inner.value), target, e.loc)
        e.expr = inner
        e.type = target
        return e

    def _initializer_for(self, e: ir.Expression, target: ir.Type,
                         scope: Scope) -> ir.Expression:
        """Check a list/struct initializer against an expected aggregate type."""
        if isinstance(target, ir.Type_StructLike):
            if isinstance(e, ir.ListExpression):
                if not self._list_length_ok(e, len(target.fields)):
                    raise self.err(f"'{target.name}' has {len(target.fields)} fields but the "
                                   f"list has {len(e.components)} values", e)
                e.components = [self.expr(c, scope, f.type)
                                for c, f in zip(e.components, target.fields, strict=False)]
            else:
                for c in e.components:
                    f = target.field_named(c.name)
                    if f is None:
                        raise self.err(f"'{target.name}' has no field '{c.name}'", c)
                    c.expr = self.expr(c.expr, scope, f.type)
            e.type = ir.Type_Dontcare()
            return e
        if isinstance(target, ir.Type_Tuple) and isinstance(e, ir.ListExpression):
            if not self._list_length_ok(e, len(target.components)):
                raise self.err(f"expected a list of {len(target.components)} values", e)
            e.components = [self.expr(c, scope, t)
                            for c, t in zip(e.components, target.components, strict=False)]
            e.type = ir.Type_Dontcare()
            return e
        if isinstance(target, ir.Type_Stack) and isinstance(e, ir.ListExpression):
            e.components = [self.expr(c, scope, target.element) for c in e.components]
            e.type = ir.Type_Dontcare()
            return e
        return self.expr(e, scope)

    def _e_ListExpression(self, e: ir.ListExpression, scope: Scope, expected):
        if isinstance(expected, (ir.Type_StructLike, ir.Type_Tuple, ir.Type_Stack)):
            e2 = self._initializer_for(e, expected, scope)
            return self.convert(e2, expected, "initializer")
        if isinstance(expected, ir.Type_List) and not e.default_rest:
            e.components = [self.expr(c, scope, expected.element) for c in e.components]
            e.type = ir.Type_Tuple(components=[c.type for c in e.components])
            return self.convert(e, expected, "list")
        if e.default_rest:
            raise self.err("cannot infer the type of this '...' initializer here", e)
        e.components = [self.expr(c, scope) for c in e.components]
        e.type = ir.Type_Tuple(components=[c.type for c in e.components])
        return e

    def _e_StructExpression(self, e: ir.StructExpression, scope: Scope, expected):
        target = expected
        if e.type_name is not None:
            target = self.canon(e.type_name, scope)
        if isinstance(target, ir.Type_StructLike):
            e2 = self._initializer_for(e, target, scope)
            return self.convert(e2, target, "initializer")
        if isinstance(target, (ir.Type_Tuple, ir.Type_Stack)) and e.default_rest \
                and not e.components:
            e.type = ir.Type_Dontcare()
            return self.convert(e, target, "initializer")
        raise self.err("cannot infer the type of this structure initializer "
                       "(write (Type){...})", e)

    def _e_ConstructorCallExpression(self, e: ir.ConstructorCallExpression, scope: Scope,
                                     expected):
        t = e.ctor_type
        base = t.base if isinstance(t, ir.Type_Specialized) else t
        d = self.lookup_type_decl(getattr(base, "name", "?"), scope, e)
        if isinstance(d, (ir.P4Control, ir.P4Parser)):
            fqn = d.name
            targs = [self.canon(a, scope) for a in t.args] \
                if isinstance(t, ir.Type_Specialized) else None
            e.instantiated = self.specialize(d, fqn, e.args, scope, e, targs)
            e.type = e.instantiated
            return e
        if isinstance(d, ir.Type_Extern):
            inst = ir.Declaration_Instance(name=d.name, type=t, args=e.args, loc=e.loc)
            self.check_instance(inst, scope, None)
            e.type = inst.extern
            return e
        raise self.err(f"'{getattr(base, 'name', '?')}' cannot be constructed here", e)

    def _e_SelectExpression(self, e, scope, expected):
        raise self.err("select expressions are only allowed in parser transitions", e)


def _declared_newtype(e: ir.Expression) -> ir.Type_Newtype | None:
    """The ``type`` declaration (through typedefs) of the field or parameter ``e``
    reads, when it was declared with one: expressions carry the underlying type."""
    declared = None
    if isinstance(e, ir.Member) and isinstance(getattr(e.expr, "type", None),
                                               ir.Type_StructLike):
        field = next((f for f in e.expr.type.fields if f.name == e.member), None)
        declared = field.declared_type if field is not None else None
    elif isinstance(e, ir.PathExpression) and isinstance(e.decl, ir.Parameter):
        declared = e.decl.declared_type
    return newtype_of(declared)
