"""Table applies: key tuples, lookup, default action, direct counters and meters,
action selectors, and wrappers binding directional action arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netweft.emulation.pipeline.emitter import Body, python_identifier
from netweft.emulation.pipeline.lowering_host import LoweringPart
from netweft.emulation.pipeline.types import bit_width
from netweft.emulation.v1model.idle_timeout import supports_idle_timeout
from netweft.p4.compiler import ir


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


class TableLowering(LoweringPart):
    """Table applies: a part of :class:`~.codegen.Lowering`; what it uses of
    the other parts is declared by :class:`~.lowering_host.LoweringHost`."""

    def lower_table(self, t: ir.P4Table, body: Body | None = None) -> str:
        """Generate (once) the apply function of a table; returns its name."""
        key = id(t)
        if key in self.table_funcs:
            return self.table_funcs[key]
        owner = self.table_owner.get(key)
        fqn = t.fqn or t.name
        var = "TBL_" + python_identifier(fqn)
        fname = "TA_" + python_identifier(fqn) + f"_{self.fresh_number()}"
        self.table_funcs[key] = fname
        tb = Body()
        if owner is not None:
            self.alias_prologue(owner, tb)
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
            key_exprs.append(self.unsigned(self.expr(k.expression, tb), kt))
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
            afn = self.lower_action(a, self.owner_of_action(a))
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
        if supports_idle_timeout(t):     # the P4Runtime server's idle-timeout sweep reads it
            tb.emit("    e.hits += 1")
        if t.counters is not None:
            tb.emit("    c = e.counter")
            tb.emit("    c[0] += 1")
            tb.emit("    c[1] += X.ilen")
        if t.meters is not None:
            tb.emit("    X.dmeter = e.meter.execute(X.now, X.ilen) if e.meter else 0")
        if selector:
            sel = ", ".join(f"({self.unsigned(x, kt)}, {bit_width(kt)})" for x, kt in selector)
            tb.emit("if b.__class__ is not tuple:")
            tb.emit(f"    b = b.select(({sel},))")
        tb.emit("b[0](F, *b[1])")
        tb.emit("return (hit, b[2])")
        self.chunks.append(f"def {fname}(F):\n" + "\n".join(tb.lines) + "\n")
        return fname

    def _action_wrapper(self, a: ir.P4Action, afn: str, ref: ir.ActionRef,
                        owner: ir.P4Control | None) -> str:
        wname = f"W_{afn}_{self.fresh_number()}"
        body = Body()
        if owner is not None:
            self.alias_prologue(owner, body)
        bound = self._ref_args(ref)
        directional = [p for p in a.params if p.direction]
        cp = [p for p in a.params if not p.direction]
        cp_names = [f"c{i}" for i in range(len(cp))]
        args = list(bound[:len(directional)])
        while len(args) < len(directional):
            args.append(None)
        call = self.call_with_outs(afn, directional, args, body, ["F"], tail=cp_names,
                                    action=a)
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
