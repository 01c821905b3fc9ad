"""Lowering of the typed IR into Python source: expressions, statements, blocks.

Every control and parser becomes a Python function taking a *frame* (a
generated ``__slots__`` object holding the block's parameters and
block-level variables); actions and table applies are module-level
functions taking the same frame.  Header, union, struct and stack values
are objects assigned by copying into them; scalars are ints and bools with
P4's width rules applied at each operation.  Out/inout scalar parameters of
actions, functions and sub-blocks are returned as a tuple and assigned by
the caller (copy-in/copy-out).

The generated module refers to a few globals that
:mod:`netweft.emulation.pipeline.compiled` provides: the runtime helpers,
the per-switch context ``X`` (time, packet length, clone/resubmit requests,
digests ...), and the table and extern objects (``T_*``, ``E_*``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from netweft.emulation.p4 import ir
from netweft.emulation.p4.errors import P4Error
from netweft.emulation.p4.program import Program
from netweft.emulation.pipeline.types import (
    TypeClasses,
    bit_width,
    is_aggregate,
    is_signed,
    unsupported,
)

PARSER_STEP_LIMIT = 4096  # state transitions per parse before error.ParserTimeout


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


@dataclass
class TableInfo:
    """What the switch needs to build one table: names, keys, actions, entries."""

    fqn: str
    var: str
    decl: ir.P4Table
    keys: list[tuple[str, str, int]]
    actions: dict[str, str]           # action fqn -> generated callable name
    action_params: dict[str, list[tuple[str, int]]]
    action_flags: dict[str, tuple[bool, bool]]
    selector_keys: int = 0


@dataclass
class Body:
    """A Python function being written."""

    lines: list[str] = field(default_factory=list)
    indent: int = 1
    scope: dict[int, str] = field(default_factory=dict)
    outs: list[str] = field(default_factory=list)   # names returned as out values
    has_retval: bool = False
    frame: str = "F"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)


class Lowering:
    """Generates the Python module for one program."""

    def __init__(self, program: Program) -> None:
        self.prog = program
        self.types = TypeClasses()
        self.chunks: list[str] = []
        self._n = 0
        self.frames: dict[int, tuple[str, dict[int, str], dict[int, str]]] = {}
        self.block_funcs: dict[int, str] = {}
        self.action_funcs: dict[int, str] = {}
        self.function_funcs: dict[int, str] = {}
        self.table_funcs: dict[int, str] = {}
        self.tables: dict[str, TableInfo] = {}
        self.extern_vars: dict[int, str] = {}
        self.externs_by_var: dict[str, Any] = {}
        self.value_set_vars: dict[int, str] = {}
        self.value_sets: dict[str, ir.P4ValueSet] = {}
        self.field_lists: dict[int, list[tuple[str, ...]]] = {}
        self.errors = {name: i for i, name in enumerate(program.errors)}
        self.data_field_lists: dict[int, list[tuple[str, ...]]] = {}
        for inst in program.externs.values():
            var = "E_" + _ident(inst.name)
            self.extern_vars[id(inst.decl)] = var
            self.externs_by_var[var] = inst
        for name, vs in program.value_sets.items():
            var = "VS_" + _ident(name)
            self.value_set_vars[id(vs)] = var
            self.value_sets[var] = vs

    # ------------------------------------------------------------------ helpers

    def tmp(self, prefix: str = "t") -> str:
        self._n += 1
        return f"_{prefix}{self._n}"

    def ecode(self, name: str) -> int:
        return self.errors.get(name, 0)

    # ------------------------------------------------------------------ entry

    def lower_block(self, decl: ir.P4Control | ir.P4Parser) -> str:
        """Generate (once) the function of a control/parser; returns its name."""
        key = id(decl)
        if key in self.block_funcs:
            return self.block_funcs[key]
        fname = "B_" + _ident(decl.fqn or decl.name) + f"_{len(self.block_funcs)}"
        self.block_funcs[key] = fname
        frame, scalar_slots, aggregate_slots = self.frame_of(decl)
        body = Body()
        self._prologue(decl, body)
        if isinstance(decl, ir.P4Control):
            for loc in decl.locals:
                self._block_local(loc, body, decl)
            self.stmt(decl.body, body)
        else:
            for loc in decl.locals:
                self._block_local(loc, body, decl)
            self._parser_states(decl, body)
        self._finish_outs(body, decl.params)
        self.chunks.append(f"def {fname}(F):\n" + "\n".join(body.lines or ["    pass"]) + "\n")
        return fname

    def frame_of(self, decl: ir.P4Control | ir.P4Parser
                 ) -> tuple[str, dict[int, str], dict[int, str]]:
        """The frame class of a block: slots for its parameters and block-level variables."""
        key = id(decl)
        if key in self.frames:
            return self.frames[key]
        cname = "Fr_" + _ident(decl.fqn or decl.name) + f"_{len(self.frames)}"
        slots: list[str] = []
        slot_of: dict[int, str] = {}
        for p in decl.params:
            slot_of[id(p)] = "p_" + p.name
            slots.append("p_" + p.name)
        for loc in decl.locals:
            if isinstance(loc, ir.Declaration_Variable):
                slot_of[id(loc)] = "v_" + loc.name
                slots.append("v_" + loc.name)
        self.chunks.append(f"class {cname}:\n    __slots__ = {tuple(slots)!r}\n")
        self.frames[key] = (cname, slot_of, {})
        return self.frames[key]

    def _prologue(self, decl: ir.P4Control | ir.P4Parser, body: Body) -> None:
        _cname, slot_of, _ = self.frame_of(decl)
        for p in decl.params:
            slot = slot_of[id(p)]
            if is_aggregate(p.type) or isinstance(p.type, ir.Type_ExternInstance):
                name = "a_" + p.name
                body.emit(f"{name} = F.{slot}")
                body.scope[id(p)] = name
            else:
                body.scope[id(p)] = f"F.{slot}"
        for loc in decl.locals:
            if isinstance(loc, ir.Declaration_Variable):
                slot = slot_of[id(loc)]
                body.scope[id(loc)] = f"F.{slot}"

    def _alias_prologue(self, decl: ir.P4Control | ir.P4Parser, body: Body) -> None:
        """Prologue for actions/table applies: aliases of the frame, no initialisation."""
        _cname, slot_of, _ = self.frame_of(decl)
        for p in decl.params:
            slot = slot_of[id(p)]
            if is_aggregate(p.type) or isinstance(p.type, ir.Type_ExternInstance):
                name = "a_" + p.name
                body.emit(f"{name} = F.{slot}")
                body.scope[id(p)] = name
            else:
                body.scope[id(p)] = f"F.{slot}"
        for loc in decl.locals:
            if isinstance(loc, ir.Declaration_Variable):
                slot = slot_of[id(loc)]
                if is_aggregate(loc.type):
                    name = "l_" + loc.name
                    body.emit(f"{name} = F.{slot}")
                    body.scope[id(loc)] = name
                else:
                    body.scope[id(loc)] = f"F.{slot}"

    def _block_local(self, loc: ir.Node, body: Body, decl: ir.Node) -> None:
        if isinstance(loc, ir.Declaration_Variable):
            target = body.scope[id(loc)]
            init = self._initial(loc, body)
            body.emit(f"{target} = {init}")
            if is_aggregate(loc.type):
                name = "l_" + loc.name
                body.emit(f"{name} = {target}")
                body.scope[id(loc)] = name
        # constants are folded; actions/tables/instances are generated on use

    def _initial(self, var: ir.Declaration_Variable, body: Body) -> str:
        t = var.type
        if var.initializer is None:
            return self.types.new_expr(t)
        if is_aggregate(t):
            tmp = self.tmp("init")
            body.emit(f"{tmp} = {self.types.new_expr(t)}")
            self.assign_to(tmp, t, var.initializer, body)
            return tmp
        return self.expr(var.initializer, body)

    def _finish_outs(self, body: Body, params: list[ir.Parameter]) -> None:
        pass  # blocks keep out values in their frame; the caller reads them back

    # ------------------------------------------------------------------ parsers

    def _parser_states(self, decl: ir.P4Parser, body: Body) -> None:
        states = [s for s in decl.states if not s.builtin]
        index = {id(s): i for i, s in enumerate(states)}
        start = decl.state("start")
        if start is None:
            raise P4Error(f"parser {decl.name} has no start state", decl.loc)
        order = [start] + [s for s in states if s is not start]
        body.emit(f"s = {index[id(start)]}")
        body.emit(f"steps = {PARSER_STEP_LIMIT}")
        body.emit("while True:")
        body.indent += 1
        # a parser that loops without consuming input must not hang the switch
        body.emit("steps -= 1")
        body.emit("if steps < 0:")
        body.emit(f"    raise ParserReject({self.ecode('ParserTimeout')})")
        for n, st in enumerate(order):
            body.emit(("if" if n == 0 else "elif") + f" s == {index[id(st)]}:  # {st.name}")
            body.indent += 1
            for comp in st.components:
                self.stmt(comp, body)
            self._transition(st, body, index)
            body.indent -= 1
        body.indent -= 1

    def _goto(self, target: Any, body: Body, index: dict[int, int]) -> None:
        if isinstance(target, ir.ParserState) and target.builtin or target is None:
            name = getattr(target, "name", "accept")
            if name == "accept":
                body.emit("return")
            else:
                body.emit("raise ParserReject(None)")
            return
        if not isinstance(target, ir.ParserState):
            raise unsupported("a transition to something that is not a state", target)
        body.emit(f"s = {index[id(target)]}")
        body.emit("continue")

    def _transition(self, st: ir.ParserState, body: Body, index: dict[int, int]) -> None:
        sel = st.select_expression
        if sel is None:
            body.emit("raise ParserReject(None)")
            return
        if isinstance(sel, ir.PathExpression):
            self._goto(sel.decl, body, index)
            return
        if not isinstance(sel, ir.SelectExpression):
            raise unsupported("this transition form", sel)
        keys = []
        for comp in sel.select.components:
            k = self.tmp("k")
            body.emit(f"{k} = {self.expr(comp, body)}")
            keys.append((k, comp.type))
        first = True
        for case in sel.cases:
            cond = self._keyset_test(case.keyset, keys, body)
            if cond == "True":
                if first:
                    self._goto(case.state.decl, body, index)
                    return
                body.emit("else:")
            else:
                body.emit(("if " if first else "elif ") + cond + ":")
            body.indent += 1
            self._goto(case.state.decl, body, index)
            body.indent -= 1
            first = False
            if cond == "True":
                return
        if not first:
            body.emit("else:")
            body.indent += 1
        body.emit(f"raise ParserReject({self.ecode('NoMatch')})")
        if not first:
            body.indent -= 1

    def _keyset_test(self, ks: ir.Expression, keys: list[tuple[str, Any]], body: Body) -> str:
        if isinstance(ks, ir.DefaultExpression):
            return "True"
        if isinstance(ks, ir.PathExpression) and isinstance(ks.decl, ir.P4ValueSet):
            # a value set over several keys matches their concatenation
            var = self.value_set_vars.get(id(ks.decl)) or self._value_set_var(ks.decl)
            concat = "0"
            for k, t in keys:
                w = bit_width(t) if not isinstance(t, ir.Type_Boolean) else 1
                concat = f"(({concat} << {w}) | {self._unsigned(k, t)})"
            return f"{var}.match(({concat},))"
        if len(keys) > 1:
            comps = ks.components if isinstance(ks, ir.ListExpression) else None
            if comps is None or len(comps) != len(keys):
                raise unsupported("a select keyset of the wrong arity", ks)
            tests = [self._keyset_one(c, k, t, body) for c, (k, t) in zip(comps, keys,
                                                                          strict=True)]
            tests = [t for t in tests if t != "True"]
            return " and ".join(tests) if tests else "True"
        if isinstance(ks, ir.ListExpression) and len(ks.components) == 1:
            ks = ks.components[0]
        return self._keyset_one(ks, keys[0][0], keys[0][1], body)

    def _value_set_var(self, vs: ir.P4ValueSet) -> str:
        var = "VS_" + _ident(vs.fqn or vs.name)
        self.value_set_vars[id(vs)] = var
        self.value_sets[var] = vs
        return var

    def _unsigned(self, value: str, t: Any) -> str:
        if isinstance(t, ir.Type_Boolean):
            return f"(1 if {value} else 0)"
        if is_signed(t):
            return f"({value} & {(1 << t.width) - 1:#x})"
        return value

    def _keyset_one(self, ks: ir.Expression, k: str, t: Any, body: Body) -> str:
        if isinstance(ks, ir.DefaultExpression):
            return "True"
        if isinstance(ks, ir.Binary) and ks.op == "&&&":
            v = self.expr(ks.left, body)
            m = self.expr(ks.right, body)
            return f"({self._unsigned(k, t)} & {m}) == ({v} & {m})"
        if isinstance(ks, ir.Binary) and ks.op == "..":
            return f"{self.expr(ks.left, body)} <= {k} <= {self.expr(ks.right, body)}"
        if isinstance(ks, ir.PathExpression) and isinstance(ks.decl, ir.P4ValueSet):
            var = self.value_set_vars.get(id(ks.decl)) or self._value_set_var(ks.decl)
            return f"{var}.match(({self._unsigned(k, t)},))"
        return f"{k} == {self.expr(ks, body)}"

    # ------------------------------------------------------------------ statements

    def stmt(self, s: ir.Node, body: Body) -> None:
        if isinstance(s, ir.BlockStatement):
            if not s.components:
                body.emit("pass")
            for c in s.components:
                self.stmt(c, body)
        elif isinstance(s, ir.AssignmentStatement):
            self.assign(s.left, s.right, body)
        elif isinstance(s, ir.MethodCallStatement):
            code = self.call(s.call, body, as_statement=True)
            if code:
                body.emit(code)
        elif isinstance(s, ir.IfStatement):
            body.emit(f"if {self.cond(s.condition, body)}:")
            body.indent += 1
            self.stmt(s.if_true, body)
            body.emit("pass")
            body.indent -= 1
            if s.if_false is not None:
                body.emit("else:")
                body.indent += 1
                self.stmt(s.if_false, body)
                body.emit("pass")
                body.indent -= 1
        elif isinstance(s, ir.Declaration_Variable):
            name = f"l_{_ident(s.name)}_{self._next()}"
            init = self._initial(s, body)
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
        else:
            raise unsupported(f"the statement {type(s).__name__}", s)

    def _next(self) -> int:
        self._n += 1
        return self._n

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

    # ------------------------------------------------------------------ assignment

    def assign(self, left: ir.Expression, right: ir.Expression, body: Body) -> None:
        t = left.type
        if isinstance(left, ir.SliceExpr):
            base = self.lvalue(left.expr, body)
            bt = left.expr.type
            lo, hi = left.lo_value, left.hi_value
            m = ((1 << (hi - lo + 1)) - 1) << lo
            v = self.expr(right, body)
            new = f"(({base} & {~m & ((1 << bit_width(bt)) - 1):#x}) | (({v} << {lo}) & {m:#x}))"
            if is_signed(bt):
                new = self._to_signed(new, bt.width)
            body.emit(f"{base} = {new}")
            return
        if is_aggregate(t):
            target = self.lvalue(left, body)
            self.assign_to(target, t, right, body)
            return
        if isinstance(t, ir.Type_Tuple):
            body.emit(f"{self.lvalue(left, body)} = list({self.expr(right, body)})")
            return
        value = self.expr(right, body)
        body.emit(f"{self.lvalue(left, body)} = {value}")

    def assign_to(self, target: str, t: Any, right: ir.Expression, body: Body) -> None:
        """Copy an aggregate value into the object ``target``."""
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
            if isinstance(t, ir.Type_Header):
                body.emit(f"{target}._v = True")
            for f, v in zip(t.fields, values, strict=False):
                if v is None:
                    continue
                if is_aggregate(f.type):
                    self.assign_to(f"{target}.{f.name}", f.type, v, body)
                else:
                    body.emit(f"{target}.{f.name} = {self.expr(v, body)}")
            return
        body.emit(f"{target}._assign({self.expr(right, body)})")

    def lvalue(self, e: ir.Expression, body: Body) -> str:
        return self.expr(e, body)

    # ------------------------------------------------------------------ expressions

    def cond(self, e: ir.Expression, body: Body) -> str:
        return self.expr(e, body)

    def _mask(self, t: Any) -> int:
        return (1 << t.width) - 1

    def _to_signed(self, x: str, w: int) -> str:
        half = 1 << (w - 1)
        return f"((({x}) & {(1 << w) - 1:#x}) ^ {half:#x}) - {half:#x}"

    def wrap(self, x: str, t: Any) -> str:
        """Apply the width rule of ``t`` to the Python int expression ``x``."""
        if isinstance(t, ir.Type_Bits):
            if t.signed:
                return f"({self._to_signed(x, t.width)})"
            return f"(({x}) & {self._mask(t):#x})"
        return f"({x})"

    def expr(self, e: ir.Expression, body: Body) -> str:
        method = getattr(self, "_e_" + type(e).__name__, None)
        if method is None:
            raise unsupported(f"the expression {type(e).__name__}", e)
        return method(e, body)

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
            return self.value_set_vars.get(id(d)) or self._value_set_var(d)
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
        return f"{base}.{e.member}"

    def _e_ArrayIndex(self, e: ir.ArrayIndex, body: Body) -> str:
        base = self.expr(e.left, body)
        if isinstance(e.left.type, ir.Type_Stack):
            if isinstance(e.index, ir.Constant):
                if not 0 <= e.index.value < e.left.type.size:
                    raise P4Error(f"index {e.index.value} is outside the stack of "
                                  f"{e.left.type.size}", e.loc)
                return f"{base}.e[{e.index.value}]"
            return f"{base}.at({self.expr(e.index, body)})"
        return f"{base}[{self.expr(e.index, body)}]"

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
        a = self.expr(e.left, body)
        b = self.expr(e.right, body)
        if op == "&&":
            return f"({a} and {b})"
        if op == "||":
            return f"({a} or {b})"
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
            ua = self._unsigned(a, lt)
            ub = self._unsigned(b, rt)
            r = f"(({ua} << {wr}) | {ub})"
            if is_signed(t):
                return f"({self._to_signed(r, t.width)})"
            return r
        raise unsupported(f"the operator {op} outside a keyset", e)

    def _e_Mux(self, e: ir.Mux, body: Body) -> str:
        return f"({self.expr(e.e1, body)} if {self.expr(e.cond, body)} else " \
               f"{self.expr(e.e2, body)})"

    def _e_Cast(self, e: ir.Cast, body: Body) -> str:
        dst = e.dest_type
        if isinstance(dst, ir.Type_StructLike) and isinstance(e.expr, ir.ListExpression):
            return self._make_struct(dst, list(e.expr.components), body)
        if isinstance(dst, ir.Type_StructLike) and isinstance(e.expr, ir.StructExpression):
            by_name = {c.name: c.expr for c in e.expr.components}
            return self._make_struct(dst, [by_name.get(f.name) for f in dst.fields], body)
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
                return f"({self._to_signed(x, dst.width)})"
            return f"({x} & {self._mask(dst):#x})"
        if isinstance(dst, ir.Type_Boolean):
            if isinstance(src, ir.Type_Boolean):
                return x
            return f"({x} != 0)"
        return x

    def _e_ListExpression(self, e: ir.ListExpression, body: Body) -> str:
        t = e.type
        if isinstance(t, ir.Type_StructLike):
            return self._make_struct(t, list(e.components), body)
        return "[" + ", ".join(self.expr(c, body) for c in e.components) + "]"

    def _e_StructExpression(self, e: ir.StructExpression, body: Body) -> str:
        t = e.type
        if not isinstance(t, ir.Type_StructLike):
            raise unsupported("a struct expression without a struct type", e)
        by_name = {c.name: c.expr for c in e.components}
        return self._make_struct(t, [by_name.get(f.name) for f in t.fields], body)

    def _make_struct(self, t: ir.Type_StructLike, values: list[Any], body: Body) -> str:
        cname = self.types.class_name(t)
        args = []
        for f, v in zip(t.fields, values, strict=False):
            args.append(self.types.new_expr(f.type) if v is None else self.expr(v, body))
        return f"{cname}._make({', '.join(args)})"

    def _e_InvalidHeader(self, e: ir.InvalidHeader, body: Body) -> str:
        return self.types.new_expr(e.type)

    def _e_MethodCallExpression(self, e: ir.MethodCallExpression, body: Body) -> str:
        return self.call(e, body)

    def _e_DefaultExpression(self, e: ir.DefaultExpression, body: Body) -> str:
        return "0"

    def _e_TypeNameExpression(self, e: ir.TypeNameExpression, body: Body) -> str:
        raise unsupported("a type name used as a value", e)

    # ------------------------------------------------------------------ calls

    def call(self, c: ir.MethodCallExpression, body: Body, as_statement: bool = False) -> str:
        kind = c.kind
        args = list(c.bound_args or [])
        if kind == ir.CALL_HEADER:
            return self._call_header(c, body)
        if kind == ir.CALL_STACK:
            inst = self.expr(c.instance, body)
            n = self.expr(args[0], body) if args else "1"
            return f"{inst}.{c.method_name}({n})"
        if kind == ir.CALL_PACKET:
            return self._call_packet(c, args, body)
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
                return f"union_set_valid({self.expr(parent, body)}, {inst.member!r})"
            return f"{obj}._v = True"
        if m == "setInvalid":
            return f"{obj}._v = False"
        raise unsupported(f"the header method {m}", c)

    def _call_packet(self, c: ir.MethodCallExpression, args: list[Any], body: Body) -> str:
        cur = self.expr(c.instance, body)
        m = c.method_name
        short = self.ecode("PacketTooShort")
        if m == "extract":
            target_e = args[0]
            if isinstance(target_e, ir.Member) and target_e.member == "next" and isinstance(
                    target_e.expr.type, ir.Type_Stack):
                h = self.tmp("h")
                stack = self.expr(target_e.expr, body)
                body.emit(f"{h} = {stack}.next_for_extract({self.ecode('StackOutOfBounds')})")
            else:
                h = self.expr(target_e, body)
            if len(args) > 1 and args[1] is not None:
                vlen = self.expr(args[1], body)
                body.emit(f"{h}._extract({cur}, {short}, {vlen}, "
                          f"{self.ecode('HeaderTooShort')})")
            else:
                body.emit(f"{h}._extract({cur}, {short})")
            if isinstance(target_e, ir.Member) and isinstance(target_e.expr.type,
                                                              ir.Type_HeaderUnion):
                body.emit(f"union_set_valid({self.expr(target_e.expr, body)}, "
                          f"{target_e.member!r})")
            return ""
        if m == "lookahead":
            t = (c.type_args_resolved or [c.type])[0]
            if isinstance(t, ir.Type_Name) and t.decl is not None:
                t = t.decl
            w = bit_width(t)
            if isinstance(t, ir.Type_Header):
                h = self.tmp("la")
                body.emit(f"{h} = {self.types.class_name(t)}()")
                body.emit(f"{h}._extract(PacketCursor({cur}.data[{cur}.pos:]), {short})")
                return h
            v = f"{cur}.peek_bits({w}, {short})"
            if isinstance(t, ir.Type_Boolean):
                return f"({v} != 0)"
            if is_signed(t):
                return f"({self._to_signed(v, w)})"
            return v
        if m == "advance":
            return f"{cur}.advance_bits({self.expr(args[0], body)}, {short})"
        if m == "length":
            return f"{cur}.len"
        if m == "emit":
            self._emit_value(cur, args[0], args[0].type, body)
            return ""
        raise unsupported(f"packet method {m}", c)

    def _emit_value(self, out: str, e: Any, t: Any, body: Body, ref: str | None = None) -> None:
        ref = ref if ref is not None else self.expr(e, body)
        if isinstance(t, ir.Type_Header):
            body.emit(f"{ref}._emit({out})")
        elif isinstance(t, ir.Type_HeaderUnion):
            body.emit(f"union_emit({ref}, {out})")
        elif isinstance(t, ir.Type_Stack):
            body.emit(f"for _eh in {ref}.e:")
            body.emit(f"    _eh._emit({out})")
        elif isinstance(t, ir.Type_Struct):
            for f in t.fields:
                self._emit_value(out, None, f.type, body, f"{ref}.{f.name}")
        else:
            raise unsupported("emit of a value that is not a header, union, stack or struct",
                              e if e is not None else t)

    # -- actions

    def lower_action(self, a: ir.P4Action, owner: ir.P4Control | None) -> str:
        key = id(a)
        if key in self.action_funcs:
            return self.action_funcs[key]
        fname = "A_" + _ident(a.fqn or a.name) + f"_{self._next()}"
        self.action_funcs[key] = fname
        body = Body()
        if owner is not None:
            self._alias_prologue(owner, body)
        pnames = []
        for p in a.params:
            name = "x_" + _ident(p.name)
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

    def _owner_of_action(self, a: ir.P4Action) -> ir.P4Control | None:
        return self._action_owner.get(id(a))

    def _call_with_outs(self, fname: str, params: list[ir.Parameter], args: list[Any],
                        body: Body, lead: list[str], has_retval: bool = False,
                        tail: list[str] | None = None) -> str:
        pass_args = list(lead)
        outs: list[tuple[str, Any]] = []
        for p, a in zip(params, args, strict=False):
            if a is None or isinstance(a, ir.DefaultExpression) and a.dontcare:
                if p.direction in ("out", "inout") and not is_aggregate(p.type):
                    pass_args.append(self.types.new_expr(p.type))
                    outs.append(("_", p))
                else:
                    pass_args.append(self.types.new_expr(p.type))
                continue
            if is_aggregate(p.type):
                if p.direction == "in" or p.direction == "":
                    tmp = self.tmp("c")
                    body.emit(f"{tmp} = {self.types.new_expr(p.type)}")
                    self.assign_to(tmp, p.type, a, body)
                    pass_args.append(tmp)
                else:
                    target = self.lvalue(a, body)
                    if p.direction == "out":  # an out value starts uninitialised: invalid
                        body.emit(f"{target}._assign({self.types.new_expr(p.type)})")
                    pass_args.append(target)
                continue
            if p.direction == "out":
                pass_args.append(self.types.new_expr(p.type))
                outs.append((a, p))
            elif p.direction == "inout":
                pass_args.append(self.expr(a, body))
                outs.append((a, p))
            else:
                pass_args.append(self.expr(a, body))
        pass_args += tail or []
        call = f"{fname}({', '.join(pass_args)})"
        if not outs:
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
            self._assign_outs(outs, "_x.outs", 0, body)
            body.emit("raise")
            body.indent -= 1
        self._assign_outs(outs, r, base, body)
        return f"{r}[0]" if has_retval else ""

    def _assign_outs(self, outs: list[tuple[Any, Any]], source: str, base: int,
                     body: Body) -> None:
        for i, (a, _p) in enumerate(outs):
            if a == "_":
                continue
            self.assign_raw(a, f"{source}[{base + i}]", body)

    def assign_raw(self, left: ir.Expression, value: str, body: Body) -> None:
        """Assign an already-lowered scalar value to an lvalue expression."""
        if isinstance(left, ir.SliceExpr):
            base = self.lvalue(left.expr, body)
            bt = left.expr.type
            lo, hi = left.lo_value, left.hi_value
            m = ((1 << (hi - lo + 1)) - 1) << lo
            new = f"(({base} & {~m & ((1 << bit_width(bt)) - 1):#x}) | (({value} << {lo}) & {m:#x}))"
            if is_signed(bt):
                new = self._to_signed(new, bt.width)
            body.emit(f"{base} = {new}")
            return
        body.emit(f"{self.lvalue(left, body)} = {value}")

    def _call_action(self, c: ir.MethodCallExpression, args: list[Any], body: Body,
                     as_statement: bool) -> str:
        a = c.target
        fname = self.lower_action(a, self._owner_of_action(a))
        return self._call_with_outs(fname, a.params, args, body, ["F"])

    def _call_function(self, c: ir.MethodCallExpression, args: list[Any], body: Body,
                       as_statement: bool) -> str:
        fn = c.target
        fname = self.lower_function(fn)
        void = isinstance(fn.return_type, ir.Type_Void)
        r = self._call_with_outs(fname, fn.params, args, body, [], has_retval=not void)
        return r

    def lower_function(self, fn: ir.Function) -> str:
        key = id(fn)
        if key in self.function_funcs:
            return self.function_funcs[key]
        fname = "P_" + _ident(fn.name) + f"_{self._next()}"
        self.function_funcs[key] = fname
        body = Body()
        body.has_retval = not isinstance(fn.return_type, ir.Type_Void)
        pnames = []
        for p in fn.params:
            name = "x_" + _ident(p.name)
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
        callee = c.target
        if isinstance(callee, ir.Declaration_Instance):
            callee = callee.instantiated
        fname = self.lower_block(callee)
        cname, slot_of, _ = self.frame_of(callee)
        fr = self.tmp("fr")
        body.emit(f"{fr} = {cname}()")
        outs = []
        for p, a in zip(callee.params, args, strict=False):
            slot = slot_of[id(p)]
            if a is None:
                body.emit(f"{fr}.{slot} = {self.types.new_expr(p.type)}")
                continue
            if is_aggregate(p.type) or isinstance(p.type, ir.Type_ExternInstance):
                if is_aggregate(p.type) and p.direction in ("in", ""):
                    tmp = self.tmp("c")
                    body.emit(f"{tmp} = {self.types.new_expr(p.type)}")
                    self.assign_to(tmp, p.type, a, body)
                    body.emit(f"{fr}.{slot} = {tmp}")
                else:
                    target = self.lvalue(a, body)
                    if is_aggregate(p.type) and p.direction == "out":
                        body.emit(f"{target}._assign({self.types.new_expr(p.type)})")
                    body.emit(f"{fr}.{slot} = {target}")
                continue
            if p.direction == "out":
                body.emit(f"{fr}.{slot} = {self.types.new_expr(p.type)}")
                outs.append((a, slot))
            else:
                body.emit(f"{fr}.{slot} = {self.expr(a, body)}")
                if p.direction == "inout":
                    outs.append((a, slot))
        if not outs:
            body.emit(f"{fname}({fr})")
            return ""
        body.emit("try:")  # copy-out also when exit leaves the sub-control
        body.emit(f"    {fname}({fr})")
        body.emit("finally:")
        body.indent += 1
        for a, slot in outs:
            self.assign_raw(a, f"{fr}.{slot}", body)
        body.indent -= 1
        return ""

    # -- tables

    def lower_table(self, t: ir.P4Table, body: Body) -> str:
        key = id(t)
        if key in self.table_funcs:
            return self.table_funcs[key]
        owner = self._table_owner.get(key)
        fqn = t.fqn or t.name
        var = "T_" + _ident(fqn)
        fname = "TA_" + _ident(fqn) + f"_{self._next()}"
        self.table_funcs[key] = fname
        tb = Body()
        if owner is not None:
            self._alias_prologue(owner, tb)
        keys = []
        key_exprs = []
        selector = []
        for k in t.keys or []:
            kt = k.expression.type
            width = bit_width(kt) if not isinstance(kt, ir.Type_Boolean) else 1
            if k.match_kind == "selector":
                selector.append((self.expr(k.expression, tb), kt))
                continue
            keys.append((k.name, k.match_kind, width))
            key_exprs.append(self._unsigned(self.expr(k.expression, tb), kt))
        actions: dict[str, str] = {}
        params: dict[str, list[tuple[str, int]]] = {}
        flags: dict[str, tuple[bool, bool]] = {}
        refs = list(t.action_refs or [])
        default = t.default_action
        if default is not None and all(r.action is not default.action_ref.action for r in refs):
            refs.append(default.action_ref)
        for ref in refs:
            a = ref.action
            afqn = a.fqn or a.name
            afn = self.lower_action(a, self._owner_of_action(a))
            directional = [p for p in a.params if p.direction]
            if directional and ref in (t.action_refs or []):
                afn = self._action_wrapper(a, afn, ref, owner)
            actions[afqn] = afn
            params[afqn] = [(p.name, bit_width(p.type)) for p in a.params if not p.direction]
            flags[afqn] = (ref.default_only, ref.table_only)
        info = TableInfo(fqn, var, t, keys, actions, params, flags, len(selector))
        self.tables[fqn] = info
        tup = "(" + "".join(f"{k}, " for k in key_exprs) + ")"
        tb.emit(f"e = {var}.lookup({tup})")
        tb.emit("if e is None:")
        tb.emit(f"    b = {var}.default_bound")
        tb.emit("    hit = False")
        if t.meters is not None:
            tb.emit("    X.dmeter = 0")
        tb.emit("else:")
        tb.emit("    b = e.bound")
        tb.emit("    hit = True")
        if t.counters is not None:
            tb.emit("    c = e.counter")
            tb.emit("    c[0] += 1")
            tb.emit("    c[1] += X.ilen")
        if t.meters is not None:
            tb.emit("    X.dmeter = e.meter.execute(X.now, X.ilen) if e.meter else 0")
        if selector:
            sel = ", ".join(f"({self._unsigned(x, kt)}, {bit_width(kt)})" for x, kt in selector)
            tb.emit("if b.__class__ is not tuple:")
            tb.emit(f"    b = b.select(({sel},))")
        tb.emit("b[0](F, *b[1])")
        tb.emit("return (hit, b[2])")
        self.chunks.append(f"def {fname}(F):\n" + "\n".join(tb.lines) + "\n")
        return fname

    def _action_wrapper(self, a: ir.P4Action, afn: str, ref: ir.ActionRef,
                        owner: ir.P4Control | None) -> str:
        wname = f"W_{afn}_{self._next()}"
        body = Body()
        if owner is not None:
            self._alias_prologue(owner, body)
        bound = self._ref_args(ref)
        directional = [p for p in a.params if p.direction]
        cp = [p for p in a.params if not p.direction]
        cp_names = [f"c{i}" for i in range(len(cp))]
        args = list(bound[:len(directional)])
        while len(args) < len(directional):
            args.append(None)
        call = self._call_with_outs(afn, directional, args, body, ["F"], tail=cp_names)
        if call:
            body.emit(call)
        self.chunks.append(f"def {wname}({', '.join(['F'] + cp_names)}):\n"
                           + "\n".join(body.lines or ["    pass"]) + "\n")
        return wname

    def _ref_args(self, ref: ir.ActionRef) -> list[Any]:
        e = ref.expression
        if isinstance(e, ir.MethodCallExpression):
            if e.bound_args is not None:
                return list(e.bound_args)
            return [a.expr for a in e.args]
        return list(ref.args or [])

    def set_owners(self) -> None:
        """Map every action and table to the control whose frame it uses."""
        self._action_owner: dict[int, ir.P4Control] = {}
        self._table_owner: dict[int, ir.P4Control] = {}
        seen: set[int] = set()

        def visit(decl: Any) -> None:
            if id(decl) in seen:
                return
            seen.add(id(decl))
            for loc in getattr(decl, "locals", []):
                if isinstance(loc, ir.P4Action) and isinstance(decl, ir.P4Control):
                    self._action_owner[id(loc)] = decl
                elif isinstance(loc, ir.P4Table) and isinstance(decl, ir.P4Control):
                    self._table_owner[id(loc)] = decl
                elif isinstance(loc, ir.Declaration_Instance) and loc.instantiated is not None:
                    visit(loc.instantiated)

        for block in self.prog.blocks.values():
            visit(block.decl)

    def data_field_list(self, e: ir.Expression) -> int:
        """A field-list id for the data argument of clone3/resubmit/recirculate(data).

        Metadata fields are recorded as paths from the user metadata struct;
        ``standard_metadata`` fields as paths starting with ``"@sm"``.
        """
        user_meta = None
        ingress = self.prog.blocks.get("ingress")
        if ingress is not None and len(ingress.decl.params) > 1:
            user_meta = ingress.decl.params[1].type
        comps = e.components if isinstance(e, (ir.ListExpression,
                                                ir.StructExpression)) else [e]
        paths: list[tuple[str, ...]] = []
        for c in comps:
            c = c.expr if isinstance(c, ir.NamedExpression) else c
            path: list[str] = []
            node = c
            while isinstance(node, ir.Member):
                path.insert(0, node.member)
                node = node.expr
            root_t = getattr(node, "type", None)
            if not isinstance(node, ir.PathExpression) or not path:
                raise unsupported("a preserved field that is not a metadata field", c)
            if root_t is user_meta:
                paths.append(tuple(path))
            elif getattr(root_t, "name", "") == "standard_metadata_t":
                paths.append(("@sm", *path))
            else:
                raise unsupported("a preserved field that is not a metadata field", c)
        index = 1_000_000 + len(self.data_field_lists)
        self.data_field_lists[index] = paths
        return index
