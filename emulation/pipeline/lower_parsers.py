"""Parser states, select transitions and the packet_in/packet_out methods."""

from __future__ import annotations

from typing import Any

from netweft.emulation.pipeline.emitter import Body, python_identifier
from netweft.emulation.pipeline.lowering_host import LoweringPart
from netweft.emulation.pipeline.types import bit_width, field_attr, is_signed, unsupported
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

PARSER_STEP_LIMIT = 4096  # state transitions per parse before error.ParserTimeout


class ParserLowering(LoweringPart):
    """Parser states and packet_in/packet_out calls: a part of
    :class:`~.codegen.Lowering`; what it uses of the other parts is declared by
    :class:`~.lowering_host.LoweringHost`."""

    def lower_parser_states(self, decl: ir.P4Parser, body: Body) -> None:
        """Emit a parser's state machine into its block function's ``body``."""
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
            if self.trace:
                body.emit(f"TRACE_STATE({decl.name!r}, {st.name!r})")
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
        # error.NoMatch, or None (parsing ends, no error) in BMv2's behaviour: see instantiate
        body.emit("raise ParserReject(SELECT_NO_MATCH)")
        if not first:
            body.indent -= 1

    def _keyset_test(self, ks: ir.Expression, keys: list[tuple[str, Any]], body: Body) -> str:
        if isinstance(ks, ir.DefaultExpression):
            return "True"
        if isinstance(ks, ir.PathExpression) and isinstance(ks.decl, ir.P4ValueSet):
            # a value set over several keys matches their concatenation
            var = self.value_set_vars.get(id(ks.decl)) or self.value_set_var(ks.decl)
            concat = "0"
            for k, t in keys:
                w = bit_width(t) if not isinstance(t, ir.Type_Boolean) else 1
                concat = f"(({concat} << {w}) | {self.unsigned(k, t)})"
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

    def value_set_var(self, vs: ir.P4ValueSet) -> str:
        """The generated global of a parser value set (recorded for the runtime)."""
        var = "VS_" + python_identifier(vs.fqn or vs.name)
        self.value_set_vars[id(vs)] = var
        self.value_sets[var] = vs
        return var

    def _keyset_one(self, ks: ir.Expression, k: str, t: Any, body: Body) -> str:
        if isinstance(ks, ir.DefaultExpression):
            return "True"
        if isinstance(ks, ir.Binary) and ks.op == "&&&":
            v = self.expr(ks.left, body)
            m = self.expr(ks.right, body)
            return f"({self.unsigned(k, t)} & {m}) == ({v} & {m})"
        if isinstance(ks, ir.Binary) and ks.op == "..":
            return f"{self.expr(ks.left, body)} <= {k} <= {self.expr(ks.right, body)}"
        if isinstance(ks, ir.PathExpression) and isinstance(ks.decl, ir.P4ValueSet):
            var = self.value_set_vars.get(id(ks.decl)) or self.value_set_var(ks.decl)
            return f"{var}.match(({self.unsigned(k, t)},))"
        return f"{k} == {self.expr(ks, body)}"

    def call_packet(self, c: ir.MethodCallExpression, args: list[Any], body: Body) -> str:
        """A ``packet_in``/``packet_out`` method call (extract, lookahead, advance, length,
        emit)."""
        cur = self.expr(c.instance, body)
        m = c.method_name
        short = self.ecode("PacketTooShort")
        if m == "extract":
            target_e = args[0]
            oob = self.ecode("StackOutOfBounds")
            union = None
            if isinstance(target_e, ir.Member) and isinstance(target_e.expr.type,
                                                              ir.Type_HeaderUnion):
                # a union member; the union may itself be stack.next
                parent = target_e.expr
                union = self.tmp("u")
                if self._is_stack_next(parent):
                    body.emit(f"{union} = {self.expr(parent.expr, body)}.next_for_extract({oob})")
                else:
                    body.emit(f"{union} = {self.expr(parent, body)}")
                h = f"{union}.{field_attr(target_e.member)}"
            elif self._is_stack_next(target_e):
                h = self.tmp("h")
                body.emit(f"{h} = {self.expr(target_e.expr, body)}.next_for_extract({oob})")
            elif isinstance(target_e, ir.DefaultExpression):
                # extract<T>(_): parse a T into a scratch header, i.e. skip it
                t = (c.type_args_resolved or [target_e.type])[0]
                if isinstance(t, ir.Type_Name) and t.decl is not None:
                    t = t.decl
                if not isinstance(t, ir.Type_Header):
                    raise unsupported("extract into '_' without a header type", c)
                h = self.tmp("skip")
                body.emit(f"{h} = {self.types.class_name(t)}()")
            else:
                h = self.expr(target_e, body)
            if len(args) > 1 and args[1] is not None:
                vlen = self.expr(args[1], body)
                body.emit(f"{h}._extract({cur}, {short}, {vlen}, "
                          f"{self.ecode('HeaderTooShort')}, "
                          f"{self.ecode('ParserInvalidArgument')})")
            else:
                body.emit(f"{h}._extract({cur}, {short})")
            if union is not None:
                body.emit(f"union_set_valid({union}, {field_attr(target_e.member)!r})")
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
                return f"({self.to_signed(v, w)})"
            return v
        if m == "advance":
            return f"{cur}.advance_bits({self.expr(args[0], body)}, {short})"
        if m == "length":
            return f"{cur}.len"
        if m == "emit":
            self._emit_value(cur, args[0], args[0].type, body)
            return ""
        raise unsupported(f"packet method {m}", c)

    @staticmethod
    def _is_stack_next(e: Any) -> bool:
        return isinstance(e, ir.Member) and e.member == "next" and isinstance(e.expr.type,
                                                                             ir.Type_Stack)

    def _emit_value(self, out: str, e: Any, t: Any, body: Body, ref: str | None = None) -> None:
        ref = ref if ref is not None else self.expr(e, body)
        if isinstance(t, ir.Type_Header):
            fixed = not any(isinstance(f.type, ir.Type_Varbits) for f in t.fields)
            nbytes = bit_width(t) // 8 if fixed else 0
            if fixed and nbytes:  # inline: no call for the (many) invalid headers
                h = self.tmp("eh")
                body.emit(f"{h} = {ref}")
                body.emit(f"if {h}._v:")
                body.emit(f"    {out}.append({h}._bits().to_bytes({nbytes}, 'big'))")
            else:
                body.emit(f"{ref}._emit({out})")
        elif isinstance(t, ir.Type_HeaderUnion):
            body.emit(f"union_emit({ref}, {out})")
        elif isinstance(t, ir.Type_Stack):
            body.emit(f"for _eh in {ref}.e:")
            body.emit(f"    _eh._emit({out})")
        elif isinstance(t, ir.Type_Struct):
            for f in t.fields:
                self._emit_value(out, None, f.type, body, f"{ref}.{field_attr(f.name)}")
        else:
            raise unsupported("emit of a value that is not a header, union, stack or struct",
                              e if e is not None else t)
