"""Table applies in C: the key bytes, the lookup, the default action, action dispatch,
direct counters and meters, action selectors.

The key is written big-endian, each field in (width + 7) / 8 bytes, in key
order (the layout the control plane in :mod:`.objects` writes entries in);
``selector`` keys are not part of it. The action of the hit entry (or the
default) runs with its action data from the entry: one ``uint64_t`` per
parameter, two (high, low) above 64 bits. A hit counts the entry's direct
counter, executes its direct meter (the colour ``direct_meter.read``
returns) and, in a ``support_timeout`` table, counts the entry's hits (the
idle-timeout sweep reads them; a miss counts nothing, as in the Python back end); an entry pointing at a selector group runs the member its selector
keys hash to, as the Python back end (:mod:`netweft.emulation.v1model.action_profiles`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netweft.emulation.native.c_body import CBody
from netweft.emulation.native.c_types import c_name, is_scalar, scalar_width, unsupported
from netweft.emulation.v1model.idle_timeout import supports_idle_timeout
from netweft.p4.compiler import ir


@dataclass
class NativeTableInfo:
    """What the switch needs to drive one C table from Python."""

    fqn: str
    index: int
    decl: ir.P4Table
    keys: list[tuple[str, str, int]]            # (p4c key name, match kind, width)
    actions: list[str]                          # action fqns; position = C action id
    action_params: dict[str, list[tuple[str, int]]]
    action_flags: dict[str, tuple[bool, bool]]  # (default only, table only)
    direct_counter: bool = False
    direct_meter: str | None = None             # its MeterType ("packets", "bytes")
    profile: str | None = None                  # the action profile/selector instance
    selector: tuple[str, int] | None = None     # (HashAlgorithm, output width)
    idle_timeout: bool = False                  # support_timeout: entries count their hits

    @property
    def key_bytes(self) -> int:
        return sum((w + 7) // 8 for _n, _k, w in self.keys) or 1


def arg_slots(width: int) -> int:
    """``uint64_t`` slots an action argument of ``width`` bits takes."""
    return 2 if width > 64 else 1


class CTableLowering:
    """Mixin of :class:`~netweft.emulation.native.c_codegen.CLowering`."""

    types: Any
    chunks: list[str]
    protos: list[str]

    def action_index(self, table: ir.P4Table, action: ir.P4Action) -> int:
        self.lower_table(table)
        info = self.tables[table.fqn or table.name]
        return info.actions.index(action.fqn or action.name)

    def table_call(self, c: ir.MethodCallExpression, body: CBody) -> tuple[str, str]:
        """Apply a table; returns the C names of its hit flag and action id."""
        fname = self.lower_table(c.target)
        hit, act = self.tmp("hit"), self.tmp("act")
        body.emit(f"uint64_t {hit} = 0, {act} = 0;")
        rc = self.tmp("rc")
        body.emit(f"int {rc} = {fname}(X, F, &{hit}, &{act}); if ({rc}) return {rc};")
        return hit, act

    def action_wrapper(self, a: ir.P4Action, afn: str, ref: ir.ActionRef, owner: Any,
                       data: list[str]) -> str:
        """``W_...(X, Fv, args)``: calls action ``a`` with the directional arguments its
        reference in a table's actions list binds (copy-in/copy-out, in the table's
        control) and the control-plane data ``data`` (C expressions over ``args``)."""
        wname = f"W_{afn}_{self._next()}"
        body = CBody()
        if owner is not None:
            fr = self.frame_of(owner)
            body.emit(f"{fr.cname} *F = ({fr.cname} *)Fv; (void)F;")
            self.bind_frame(owner, body)
        e = ref.expression
        if isinstance(e, ir.MethodCallExpression):
            bound = list(e.bound_args) if e.bound_args is not None else [x.expr for x in e.args]
        else:
            bound = list(ref.args or [])
        directional = [p for p in a.params if p.direction]
        args = list(bound[:len(directional)])
        args += [None] * (len(directional) - len(args))
        self.call_with_outs(afn, directional, args, body, ["X", "Fv"], action=a, tail=data)
        body.emit("(void)args; return 0;")
        sig = f"static int {wname}(nw_ctx_t *X, void *Fv, const uint64_t *args)"
        self.protos.append(sig + ";")
        self.chunks.append(sig + " {\n" + "\n".join(body.lines) + "\n}\n")
        return wname

    def lower_table(self, t: ir.P4Table) -> str:
        key = id(t)
        if key in self.table_funcs:
            return self.table_funcs[key]
        fqn = t.fqn or t.name
        profile, selector = self.table_implementation(t)
        fname = "TA_" + c_name(fqn) + f"_{self._next()}"
        self.table_funcs[key] = fname
        index = len(self.tables)
        owner = self._table_owner.get(key)
        body = CBody()
        if owner is not None:
            fr = self.frame_of(owner)
            body.emit(f"{fr.cname} *F = ({fr.cname} *)Fv; (void)F;")
            self.bind_frame(owner, body)
        keys: list[tuple[str, str, int]] = []
        match_keys = [k for k in t.keys or [] if k.match_kind != "selector"]
        selector_keys = [k for k in t.keys or [] if k.match_kind == "selector"]
        if selector_keys and selector is None:
            raise unsupported(f"table {fqn}: selector keys without an action_selector", t)
        kb = sum(((scalar_width(k.expression.type, k) + 7) // 8) for k in match_keys) or 1
        body.emit(f"uint8_t key[{kb}]; memset(key, 0, sizeof key);")
        off = 0
        for k in match_keys:
            if k.match_kind not in ("exact", "lpm", "ternary", "range", "optional"):
                raise unsupported(f"table {fqn}: match kind {k.match_kind}", k)
            kt = k.expression.type
            if not is_scalar(kt):
                raise unsupported(f"table {fqn}: a key of type {type(kt).__name__}", k)
            w = scalar_width(kt, k)
            nb = (w + 7) // 8
            value = self.expr(k.expression, body)
            fn = "nw_be_put128" if w > 64 else "nw_be_put64"
            body.emit(f"{fn}(key + {off}, {value}, {nb});")
            keys.append((k.name, k.match_kind, w))
            off += nb
        refs = list(t.action_refs or [])
        default = t.default_action
        if default is not None and all(r.action is not default.action_ref.action for r in refs):
            refs.append(default.action_ref)
        actions: list[str] = []
        params: dict[str, list[tuple[str, int]]] = {}
        flags: dict[str, tuple[bool, bool]] = {}
        info = NativeTableInfo(fqn, index, t, keys, actions, params, flags,
                               t.counters is not None, self.direct_meter_type(t), profile,
                               selector, supports_idle_timeout(t))
        select = self.selector_hash(selector, selector_keys, body) if selector else ""
        self.tables[fqn] = info
        cases = []
        for n, ref in enumerate(refs):
            a = ref.action
            afqn = a.fqn or a.name
            directional = [p for p in a.params if p.direction]
            if directional and ref not in (t.action_refs or []):
                raise unsupported(f"table {fqn}: the default action {a.name} with directional "
                                  "parameters", ref)
            afn = self.lower_action(a)
            actions.append(afqn)
            plist = []
            call_args = ["X", "Fv"]
            slot = 0
            for p in a.params:
                if p.direction:
                    continue
                if not is_scalar(p.type):
                    raise unsupported("an action parameter that is not a bit string", p)
                w = scalar_width(p.type, p)
                plist.append((p.name, w))
                if w > 64:
                    call_args.append(f"NW_U128(args[{slot}], args[{slot + 1}])")
                else:
                    call_args.append(f"args[{slot}]")
                slot += arg_slots(w)
            if slot > 16:
                raise unsupported(f"action {a.name}: more than 16 words of action data", a)
            params[afqn] = plist
            flags[afqn] = (ref.default_only, ref.table_only)
            if directional:
                # the arguments bound in the actions list, then the control-plane data
                afn = self.action_wrapper(a, afn, ref, owner, call_args[2:])
                call_args = ["X", "Fv", "args"]
            cases.append(f"    case {n}: return {afn}({', '.join(call_args)});")
        body.emit(f"nw_table_t *T = &X->P->tables[{index}];")
        body.emit("nw_entry_t *e = nw_table_lookup(T, key);")
        body.emit("uint32_t a; const uint64_t *args;")
        body.emit("if (e) { a = e->action; args = e->args; *hit = 1; } "
                  "else { a = T->default_action; args = T->default_args; *hit = 0; }")
        if info.direct_counter:
            body.emit("if (e && e->direct) { e->direct->counter[0] += 1; "
                      "e->direct->counter[1] += X->ilen; }")
        if info.idle_timeout:
            body.emit("if (e && e->direct) e->direct->hits += 1;")
        if info.direct_meter is not None:
            body.emit("X->dmeter = e && e->direct ? nw_meter_execute(&e->direct->meter, X->now, "
                      "X->ilen) : NW_GREEN;")
        if select:
            body.emit("if (e && e->group) {")
            body.emit("    if (!e->group->n) { X->empty_group = 1; return NW_RC_EXIT; }")
            body.emit(f"    const nw_member_t *mb = &e->group->members[({select}) % "
                      "e->group->n];")
            body.emit("    a = mb->action; args = mb->args;")
            body.emit("}")
        body.emit("*act = a; (void)args;")
        body.emit("switch (a) {")
        body.lines += cases
        body.emit("default: return 0;")
        body.emit("}")
        sig = f"static int {fname}(nw_ctx_t *X, void *Fv, uint64_t *hit, uint64_t *act)"
        self.protos.append(sig + ";")
        self.chunks.append(sig + " {\n" + "\n".join(body.lines) + "\n}\n")
        return fname

    # ------------------------------------------------------------- direct resources, selectors

    def table_implementation(self, t: ir.P4Table) -> tuple[str | None, tuple[str, int] | None]:
        """``(profile instance name, (algorithm, output width) of a selector)`` of a table."""
        from netweft.emulation.native.c_externs import _algorithm
        from netweft.emulation.switch import _const

        decl = t.implementation_instance
        if decl is None:
            if t.implementation is not None:
                raise unsupported(f"table {t.fqn or t.name}: an implementation that is not an "
                                  "action_profile or action_selector instance", t)
            return None, None
        inst = self.prog.externs.get(decl.fqn)
        if inst is None:    # as the Python back end: a profile without groups
            return decl.fqn or t.fqn or t.name, None
        if inst.extern_type == "action_profile":
            return decl.fqn, None
        if inst.extern_type != "action_selector":
            raise unsupported(f"table {t.fqn or t.name}: implementation {inst.extern_type}", t)
        width = int(_const(inst.args[2])) if len(inst.args) > 2 else 0
        return decl.fqn, (_algorithm(inst.args[0]), width)

    def direct_meter_type(self, t: ir.P4Table) -> str | None:
        """The MeterType of a table's direct meter, None without one."""
        if t.meters is None:
            return None
        from netweft.emulation.switch import _enum_name
        from netweft.emulation.v1model.meters import METER_TYPES

        inst = self.prog.externs.get(t.meters.fqn)
        return _enum_name(inst.args[0], METER_TYPES) if inst is not None else "bytes"

    def selector_hash(self, selector: tuple[str, int], keys: list[Any], body: CBody) -> str:
        """Pack the selector keys (BMv2's field list) and return the C of the masked hash."""
        from netweft.emulation.native.c_externs import algorithm_call

        algo, width = selector
        widths = [scalar_width(k.expression.type, k) for k in keys]
        if sum(widths) > 8 * 4096:
            raise unsupported("selector keys longer than 4096 bytes", keys[0])
        body.emit(f"X->bits.nbits = 0; memset(X->bits.buf, 0, {(sum(widths) + 7) // 8 or 1});")
        for k, w in zip(keys, widths, strict=True):
            value = self.expr(k.expression, body)
            put = "nw_bits_put128" if w > 64 else "nw_bits_put64"
            body.emit(f"{put}(&X->bits, {value}, {w});")
        raw = algorithm_call(algo, "X->bits.buf", "((X->bits.nbits + 7) / 8)")
        if width and width < 64:
            return f"({raw} & {(1 << width) - 1:#x}ULL)"
        return raw
