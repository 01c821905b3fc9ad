"""Controls, parsers (states, select, packet_in/packet_out) and actions as C functions.

A control or parser becomes ``static int B_...(nw_ctx_t *X, Fr_... *F)``; its
*frame* holds pointers to its aggregate parameters, its scalar parameters by
value and its block-level variables.  Actions take the owner's frame (as
``void *``), then their parameters.  The parser's cursor is ``X->pos`` into
``X->data[0..X->len)``; every read is bounds-checked and a short frame takes
``error.PacketTooShort`` as in BMv2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from netweft.emulation.native.c_body import CBody
from netweft.emulation.native.c_generics import specialise, type_key
from netweft.emulation.native.c_types import (
    c_name,
    field_name,
    header_varbit,
    is_aggregate,
    is_scalar,
    is_signed,
    scalar_width,
    unsupported,
)
from netweft.emulation.pipeline.types import bit_width
from netweft.p4.compiler import ir

PARSER_STEP_LIMIT = 4096  # as the Python back end: then error.ParserTimeout


@dataclass
class Frame:
    cname: str
    slots: dict[int, str] = field(default_factory=dict)


class CBlockLowering:
    """Mixin of :class:`~netweft.emulation.native.c_codegen.CLowering`."""

    types: Any
    chunks: list[str]
    protos: list[str]

    # ------------------------------------------------------------- frames

    def frame_of(self, decl: ir.P4Control | ir.P4Parser) -> Frame:
        key = id(decl)
        if key in self.frames:
            return self.frames[key]
        cname = "Fr_" + c_name(decl.fqn or decl.name) + f"_{len(self.frames)}"
        fr = Frame(cname)
        self.frames[key] = fr
        lines = [f"typedef struct {cname} {{"]
        for p in decl.params:
            if isinstance(p.type, ir.Type_ExternInstance):
                continue
            slot = "p_" + c_name(p.name)
            fr.slots[id(p)] = slot
            if is_aggregate(p.type):
                lines.append(f"    {self.types.name(p.type)} *{slot};")
            elif is_scalar(p.type):
                lines.append(f"    {self.vt(p.type, p)} {slot};")
            else:
                raise unsupported(f"a block parameter of type {type(p.type).__name__}", p)
        for loc in decl.locals:
            if isinstance(loc, ir.Declaration_Variable):
                slot = "v_" + c_name(loc.name)
                fr.slots[id(loc)] = slot
                lines.append(f"    {self.types.name(loc.type)} {slot};")
            elif isinstance(loc, ir.P4ValueSet):
                self.value_set_index(loc)
        lines.append("    int _unused;")
        lines.append(f"}} {cname};")
        self.frame_defs.append("\n".join(lines) + "\n")
        return fr

    def bind_frame(self, decl: ir.P4Control | ir.P4Parser, body: CBody) -> None:
        """Scope entries for a block's parameters and variables, through ``F``."""
        fr = self.frame_of(decl)
        for p in decl.params:
            slot = fr.slots.get(id(p))
            if slot is None:
                continue
            body.scope[id(p)] = f"(*F->{slot})" if is_aggregate(p.type) else f"F->{slot}"
        for loc in decl.locals:
            if isinstance(loc, ir.Declaration_Variable):
                body.scope[id(loc)] = f"F->{fr.slots[id(loc)]}"

    # ------------------------------------------------------------- blocks

    def lower_block(self, decl: ir.P4Control | ir.P4Parser) -> str:
        key = id(decl)
        if key in self.block_funcs:
            return self.block_funcs[key]
        fname = "B_" + c_name(decl.fqn or decl.name) + f"_{len(self.block_funcs)}"
        self.block_funcs[key] = fname
        fr = self.frame_of(decl)
        self.protos.append(f"static int {fname}(nw_ctx_t *X, {fr.cname} *F);")
        body = CBody(kind="parser" if isinstance(decl, ir.P4Parser) else "control")
        self.bind_frame(decl, body)
        for loc in decl.locals:
            if isinstance(loc, ir.Declaration_Variable) and loc.initializer is not None:
                self.assign_value(body.scope[id(loc)], loc.type, loc.initializer, body)
        if isinstance(decl, ir.P4Control):
            self.stmt(decl.body, body)
            body.emit("return 0;")
        else:
            self._parser_states(decl, body)
        self.chunks.append(f"static int {fname}(nw_ctx_t *X, {fr.cname} *F) {{\n"
                           + "\n".join(body.lines) + "\n}\n")
        return fname

    # ------------------------------------------------------------- actions

    def lower_action(self, a: ir.P4Action) -> str:
        key = id(a)
        if key in self.action_funcs:
            return self.action_funcs[key]
        fname = "A_" + c_name(a.fqn or a.name) + f"_{self._next()}"
        self.action_funcs[key] = fname
        owner = self._action_owner.get(key)
        body = CBody()
        if owner is not None:
            fr = self.frame_of(owner)
            body.emit(f"{fr.cname} *F = ({fr.cname} *)Fv; (void)F;")
            self.bind_frame(owner, body)
        params = ["nw_ctx_t *X", "void *Fv"]
        for p in a.params:
            name = "x_" + c_name(p.name)
            if is_aggregate(p.type):
                params.append(f"{self.types.name(p.type)} *{name}")
                body.scope[id(p)] = f"(*{name})"
            elif is_scalar(p.type):
                ctype = self.vt(p.type, p)
                if p.direction in ("out", "inout"):
                    params.append(f"{ctype} *{name}")
                    body.scope[id(p)] = f"(*{name})"
                else:
                    params.append(f"{ctype} {name}")
                    body.scope[id(p)] = name
            else:
                raise unsupported(f"an action parameter of type {type(p.type).__name__}", p)
        sig = f"static int {fname}({', '.join(params)})"
        self.protos.append(sig + ";")
        self.stmt(a.body, body)
        body.emit("(void)X; return 0;")
        self.chunks.append(sig + " {\n" + "\n".join(body.lines) + "\n}\n")
        return fname

    # ------------------------------------------------------------- functions

    def lower_function(self, fn: ir.Function) -> str:
        """``static int P_...(X, params[, ret *])``: a P4 function; ``return e`` stores
        into ``*ret``."""
        key = id(fn)
        if key in self.function_funcs:
            return self.function_funcs[key]
        if fn.type_params:
            raise unsupported(f"the generic function {fn.name} without its type arguments",
                              fn)
        fname = "P_" + c_name(fn.name) + f"_{self._next()}"
        self.function_funcs[key] = fname
        body = CBody(kind="function")
        params = ["nw_ctx_t *X"]
        for p in fn.params:
            name = "x_" + c_name(p.name)
            if is_aggregate(p.type):
                params.append(f"{self.types.name(p.type)} *{name}")
                body.scope[id(p)] = f"(*{name})"
            elif is_scalar(p.type):
                ctype = self.vt(p.type, p)
                if p.direction in ("out", "inout"):
                    params.append(f"{ctype} *{name}")
                    body.scope[id(p)] = f"(*{name})"
                else:
                    params.append(f"{ctype} {name}")
                    body.scope[id(p)] = name
            else:
                raise unsupported(f"a function parameter of type {type(p.type).__name__}", p)
        if not isinstance(fn.return_type, ir.Type_Void):
            params.append(f"{self.types.name(fn.return_type)} *ret")
            body.returns = fn.return_type
        sig = f"static int {fname}({', '.join(params)})"
        self.protos.append(sig + ";")
        self.stmt(fn.body, body)
        body.emit("(void)X; return 0;")
        self.chunks.append(sig + " {\n" + "\n".join(body.lines) + "\n}\n")
        return fname

    def instance_of(self, fn: ir.Function, c: ir.MethodCallExpression) -> ir.Function:
        """The function a call runs: a generic one specialised to the call's type
        arguments (once per distinct instantiation)."""
        if not fn.type_params:
            return fn
        targs = list(c.type_args_resolved or [])
        if len(targs) != len(fn.type_params) or any(isinstance(t, ir.Type_Var)
                                                     for t in targs):
            raise unsupported(f"the generic function {fn.name} without its type arguments", c)
        cache = self.__dict__.setdefault("_instances", {})
        key = (id(fn), tuple(type_key(t) for t in targs))
        if key not in cache:
            cache[key] = specialise(fn, targs)
        return cache[key]

    # ------------------------------------------------------------- parsers

    def _parser_states(self, decl: ir.P4Parser, body: CBody) -> None:
        start = decl.state("start")
        if start is None:
            raise unsupported(f"parser {decl.name} without a start state", decl)
        states = [start] + [s for s in decl.states if not s.builtin and s is not start]
        body.emit(f"int steps = {PARSER_STEP_LIMIT};")
        for st in states:
            body.emit(f"S_{c_name(st.name)}: ;")
            body.emit("if (--steps < 0) { X->perr = "
                      f"{self.ecode('ParserTimeout')}; return NW_RC_REJECT; }}")
            body.open("")
            for comp in st.components:
                self.stmt(comp, body)
            self._transition(st, body)
            body.close()

    def _goto(self, target: Any, body: CBody) -> None:
        if target is None or isinstance(target, ir.ParserState) and target.builtin:
            if getattr(target, "name", "accept") == "accept":
                body.emit("return 0;")
            else:
                body.emit("X->perr = -1; return NW_RC_REJECT;")
            return
        if not isinstance(target, ir.ParserState):
            raise unsupported("a transition to something that is not a state", target)
        body.emit(f"goto S_{c_name(target.name)};")

    def _transition(self, st: ir.ParserState, body: CBody) -> None:
        sel = st.select_expression
        if sel is None:
            body.emit("X->perr = -1; return NW_RC_REJECT;")
            return
        if isinstance(sel, ir.PathExpression):
            self._goto(sel.decl, body)
            return
        if not isinstance(sel, ir.SelectExpression):
            raise unsupported("this transition form", sel)
        keys = []
        for comp in sel.select.components:
            k = self.tmp("k")
            body.emit(f"{self.vt(comp.type, comp)} {k} = {self.expr(comp, body)};")
            keys.append((k, comp.type))
        for case in sel.cases:
            test = self._keyset_test(case.keyset, keys, body)
            if test == "1":
                self._goto(case.state.decl, body)
                return
            body.open(f"if ({test})")
            self._goto(case.state.decl, body)
            body.close()
        # no case matched: error.NoMatch (P4-16), or (BMv2) parsing stops without an error
        body.emit("X->perr = X->select_no_match; return NW_RC_REJECT;")

    def value_set_index(self, vs: ir.P4ValueSet) -> int:
        """The index of a parser value set in the pipeline's ``vsets`` (registered once;
        ``self.value_sets`` lists them: name, size, field widths)."""
        index = self.__dict__.setdefault("_value_set_index", {})
        if id(vs) not in index:
            widths = [bit_width(t) for t in _flat_types(vs.element_type)]
            if sum(widths) > 128:
                raise unsupported(f"the value set {vs.name} over more than 128 bits", vs)
            index[id(vs)] = len(self.value_sets)
            self.value_sets.append((vs.fqn or vs.name, vs.size or 0, widths))
        return index[id(vs)]

    def _value_set_test(self, vs: ir.P4ValueSet, keys: list[tuple[str, Any]]) -> str:
        """A select key (several keys concatenated, the first most significant) in
        value set ``vs``."""
        concat = "(nw_u128)0"
        total = 0
        for k, t in keys:
            w = bit_width(t) if not isinstance(t, ir.Type_Boolean) else 1
            concat = f"(({concat} << {w}) | (nw_u128)({k}))"
            total += w
        if total > 128:
            raise unsupported("a value set over select keys of more than 128 bits", vs)
        return f"nw_vset_match(&X->P->vsets[{self.value_set_index(vs)}], {concat})"

    def _keyset_test(self, ks: ir.Expression, keys: list[tuple[str, Any]],
                     body: CBody) -> str:
        if isinstance(ks, ir.DefaultExpression):
            return "1"
        if isinstance(ks, ir.PathExpression) and isinstance(ks.decl, ir.P4ValueSet):
            return self._value_set_test(ks.decl, keys)
        if len(keys) > 1:
            comps = ks.components if isinstance(ks, ir.ListExpression) else None
            if comps is None or len(comps) != len(keys):
                raise unsupported("a select keyset of the wrong arity", ks)
            tests = [self._keyset_one(c, k, body, t) for c, (k, t) in zip(comps, keys,
                                                                          strict=True)]
            tests = [t for t in tests if t != "1"]
            return " && ".join(tests) if tests else "1"
        if isinstance(ks, ir.ListExpression) and len(ks.components) == 1:
            ks = ks.components[0]
        return self._keyset_one(ks, keys[0][0], body, keys[0][1])

    def _keyset_one(self, ks: ir.Expression, k: str, body: CBody,
                    t: Any = None) -> str:
        if isinstance(ks, ir.DefaultExpression):
            return "1"
        if isinstance(ks, ir.PathExpression) and isinstance(ks.decl, ir.P4ValueSet):
            return self._value_set_test(ks.decl, [(k, t)])
        if isinstance(ks, ir.Binary) and ks.op == "&&&":
            v = self.expr(ks.left, body)
            m = self.expr(ks.right, body)
            return f"(({k} & {m}) == ({v} & {m}))"
        if isinstance(ks, ir.Binary) and ks.op == "..":
            return f"({self.expr(ks.left, body)} <= {k} && {k} <= {self.expr(ks.right, body)})"
        return f"({k} == {self.expr(ks, body)})"

    def _need(self, nbytes: str, body: CBody) -> None:
        """Reject with PacketTooShort unless ``nbytes`` more bytes are there."""
        body.emit(f"if ((uint64_t)X->len - X->pos < (uint64_t)({nbytes})) {{ X->perr = "
                  f"{self.ecode('PacketTooShort')}; return NW_RC_REJECT; }}")

    def call_packet(self, c: ir.MethodCallExpression, args: list[Any], body: CBody) -> str:
        m = c.method_name
        if m == "extract":
            target_e = args[0]
            if len(args) > 1 and args[1] is not None:
                return self._extract_varbit(target_e, args[1], body, c)
            if isinstance(target_e, ir.DefaultExpression):
                t = (c.type_args_resolved or [target_e.type])[0]
                if isinstance(t, ir.Type_Name) and t.decl is not None:
                    t = t.decl
                if not isinstance(t, ir.Type_Header):
                    raise unsupported("extract into '_' without a header type", c)
                sname = self.types.name(t)
                self._need(f"{sname}_BYTES", body)
                body.emit(f"X->pos += {sname}_BYTES;")
                return ""
            t = target_e.type
            if not isinstance(t, ir.Type_Header):
                raise unsupported("extract into something that is not a header", c)
            sname = self.types.name(t)
            if header_varbit(t) is not None:
                raise unsupported("extract of a varbit header without its length", c)
            h, valid = self.extract_target(target_e, body)
            self._need(f"{sname}_BYTES", body)
            body.emit(f"{sname}_extract(&{h}, X->data + X->pos); {valid} "
                      f"X->pos += {sname}_BYTES;")
            return ""
        if m == "lookahead":
            t = (c.type_args_resolved or [c.type])[0]
            if isinstance(t, ir.Type_Name) and t.decl is not None:
                t = t.decl
            if isinstance(t, ir.Type_Header):
                return self._lookahead_header(t, body)
            w = scalar_width(t, c)
            nbytes = (w + 7) // 8
            self._need(str(nbytes), body)
            fn = "nw_rd128" if w > 64 else "nw_rd64"
            v = f"{fn}(X->data + X->pos, 0, {w})"
            if isinstance(t, ir.Type_Boolean):
                return f"({v} != 0)"
            return v
        if m == "advance":
            nbits = self.tmp("adv")
            body.emit(f"uint64_t {nbits} = {self.expr(args[0], body)};")
            self._need(f"({nbits} + 7) / 8", body)
            body.emit(f"X->pos += (uint32_t)(({nbits} + 7) / 8);")
            return ""
        if m == "length":
            return "((uint64_t)X->len)"
        if m == "emit":
            self._emit_value(args[0], args[0].type, body, None)
            return ""
        raise unsupported(f"packet method {m}", c)

    def _lookahead_header(self, t: ir.Type_Header, body: CBody) -> str:
        """``lookahead<H>()``: a valid copy of the header at the cursor (a varbit field
        empty, as the Python back end extracts it), the cursor left where it is."""
        sname = self.types.name(t)
        h = self.tmp("la")
        body.emit(f"{sname} {h}; memset(&{h}, 0, sizeof {h});")
        self._need(f"{sname}_BYTES", body)
        extra = ", 0u" if header_varbit(t) is not None else ""
        body.emit(f"{sname}_extract(&{h}, X->data + X->pos{extra}); {h}._v = 1;")
        return h

    def _extract_varbit(self, target_e: Any, length: Any, body: CBody, c: Any) -> str:
        """``extract(h, nbits)``: as BMv2, a length beyond the field's size is
        HeaderTooShort and a header that is not whole bytes ParserInvalidArgument."""
        t = target_e.type
        var = header_varbit(t) if isinstance(t, ir.Type_Header) else None
        if var is None:
            raise unsupported("extract with a length into a header without a varbit field", c)
        sname = self.types.name(t)
        h, valid = self.extract_target(target_e, body)
        vlen = self.tmp("vlen")
        body.emit(f"uint64_t {vlen} = {self.expr(length, body)};")
        if is_signed(length.type):
            body.emit(f"if ({self.sx(vlen, length.type, length)} < 0) {{ X->perr = "
                      f"{self.ecode('HeaderTooShort')}; return NW_RC_REJECT; }}")
        body.emit(f"if ({vlen} > {var.type.size}u) {{ X->perr = "
                  f"{self.ecode('HeaderTooShort')}; return NW_RC_REJECT; }}")
        body.emit(f"if ({vlen} % 8u) {{ X->perr = {self.ecode('ParserInvalidArgument')}; "
                  "return NW_RC_REJECT; }")
        self._need(f"{sname}_BYTES + {vlen} / 8u", body)
        body.emit(f"{sname}_extract(&{h}, X->data + X->pos, (uint32_t)({vlen} / 8u)); "
                  f"{valid} X->pos += {sname}_BYTES + (uint32_t)({vlen} / 8u);")
        return ""

    def _emit_value(self, e: Any, t: Any, body: CBody, ref: str | None) -> None:
        ref = ref if ref is not None else self.lvalue(e, body)
        if isinstance(t, ir.Type_Header):
            sname = self.types.name(t)
            self.emit_bytes += (bit_width(t) + 7) // 8
            body.emit(f"if ({ref}._v) X->out_len += {sname}_emit(&{ref}, X->out + X->out_len);")
        elif isinstance(t, (ir.Type_Struct, ir.Type_HeaderUnion)):
            for f in t.fields:
                self._emit_value(None, f.type, body, f"{ref}.{field_name(f.name)}")
        elif isinstance(t, ir.Type_Stack):
            for i in range(t.size):
                self._emit_value(None, t.element, body, f"{ref}.e[{i}]")
        else:
            raise unsupported("emit of a value that is not a header or a struct of headers",
                              e if e is not None else t)


def _flat_types(t: Any) -> list[Any]:
    """The scalar types of a value set's element type, in order (as the switch's)."""
    if isinstance(t, ir.Type_StructLike):
        return [x for f in t.fields for x in _flat_types(f.type)]
    return [t]
