"""Checking of P4 tables: keys, action lists, default actions, entries with
their priorities, sizes and extern properties (a mixin of the type checker)."""

from __future__ import annotations

import copy

from netweft.p4.compiler import ir
from netweft.p4.compiler.checker_host import CheckerPart
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.naming import expression_text, key_name, qualified_name, start_loc
from netweft.p4.compiler.scopes import Scope, did_you_mean
from netweft.p4.compiler.typesys import type_str

KNOWN_TABLE_PROPERTIES = ("key", "actions", "default_action", "entries", "size",
                          "implementation", "counters", "meters", "largest_priority_wins",
                          "priority_delta")


class TableChecker(CheckerPart):
    """Table checks: a part of :class:`~.typecheck.TypeChecker`; what it uses of
    the other parts is declared by :class:`~.checker_host.CheckerHost`."""

    def check_table(self, t: ir.P4Table, scope: Scope, prefix: str | None) -> None:
        """Check a table's properties and fill its keys, actions, entries and fqn."""
        t.fqn = qualified_name(prefix, t, t.name)
        t.keys, t.action_refs, t.entries = [], [], []
        t.other_properties = {}
        seen: set[str] = set()
        for prop in t.properties:
            if prop.name in seen:
                raise self.err(f"table '{t.name}' has property '{prop.name}' twice", prop)
            seen.add(prop.name)
        key_prop = t.property("key")
        if key_prop is not None:
            for k in key_prop.value:
                self.node_stack.append(k)
                try:
                    source_text = expression_text(k.expression)
                    k.expression = self.expr(k.expression, scope)
                    k.name = ir.name_annotation(k) or key_name(k.expression)
                    if k.name is None:
                        raise P4Error(f"{source_text}: Complex key expression requires a "
                                      "@name annotation (its control-plane name)",
                                      start_loc(k.expression))
                    kt = k.expression.type
                    if k.match_kind not in self.match_kinds:
                        raise self.err(f"unknown match kind '{k.match_kind}'"
                                       f"{did_you_mean(k.match_kind, self.match_kinds)}", k)
                    if k.match_kind != "selector" and not isinstance(
                            kt, (ir.Type_Bits, ir.Type_Boolean, ir.Type_SerEnum, ir.Type_Error,
                                 ir.Type_Enum)):
                        raise self.err(f"table key '{k.name}' has type {type_str(kt)}; keys "
                                       "must be bit<W>, int<W>, bool, error or enums", k)
                    if k.match_kind in ("lpm", "range", "ternary") and not isinstance(
                            kt, (ir.Type_Bits, ir.Type_SerEnum)):
                        raise self.err(f"'{k.match_kind}' keys must be bit<W> or int<W>", k)
                    t.keys.append(k)
                finally:
                    self.node_stack.pop()
            lpm = [k for k in t.keys if k.match_kind == "lpm"]
            if len(lpm) > 1:
                raise self.err(f"table '{t.name}' has more than one lpm key", lpm[1])
        actions_prop = t.property("actions")
        if actions_prop is None:
            raise self.err(f"table '{t.name}' has no 'actions' property", t)
        for ref in actions_prop.value:
            self.action_ref(ref, scope, partial=True)
            if any(r.action is ref.action for r in t.action_refs):
                raise self.err(f"action '{ref.action.name}' listed twice in table '{t.name}'",
                               ref)
            t.action_refs.append(ref)
        dprop = t.property("default_action")
        if dprop is not None:
            ref = dprop.value
            self.action_ref(ref, scope, partial=False)
            listed = [r for r in t.action_refs if r.action is ref.action]
            if not listed:
                raise self.err(f"default action '{ref.action.name}' is not in the actions of "
                               f"table '{t.name}'", ref)
            if listed[0].table_only:
                raise self.err(f"action '{ref.action.name}' is @tableonly and cannot be the "
                               "default action", ref)
            t.default_action = ir.DefaultAction(action_ref=ref, is_const=dprop.is_const,
                                                loc=dprop.loc)
        else:
            noaction = self.globals.lookup("NoAction")
            if isinstance(noaction, ir.P4Action):
                ref = ir.ActionRef(expression=ir.PathExpression(name="NoAction", loc=t.loc),
                                   loc=t.loc)
                ref.action = noaction
                ref.args = []
                ref.expression.decl = noaction
                t.default_action = ir.DefaultAction(action_ref=ref, is_const=False, loc=t.loc)
                if not any(r.action is noaction for r in t.action_refs):
                    # as p4c: the implicit default action joins the list as @defaultonly
                    listed = ir.ActionRef(expression=ref.expression, loc=t.loc,
                                          annotations=[ir.Annotation(name="defaultonly",
                                                                     loc=t.loc)])
                    listed.action = noaction
                    listed.args = []
                    t.action_refs.append(listed)
        eprop = t.property("entries")
        if eprop is not None and key_prop is not None and \
                t.properties.index(eprop) < t.properties.index(key_prop):
            raise self.err("entries: Entries list must be after table key (move the "
                           "'entries' property below 'key')", eprop)
        if eprop is not None:
            t.entries_const = eprop.is_const
            self.check_entries(t, eprop.value, scope)
        sprop = t.property("size")
        if sprop is not None:
            sprop.value = self.expr(sprop.value, scope)
            if not isinstance(sprop.value, ir.Constant) or sprop.value.value < 0:
                raise self.err("table size must be a non-negative integer constant", sprop)
            t.size = sprop.value.value
        iprop = t.property("implementation")
        if iprop is not None:
            t.implementation = iprop.value
            t.implementation_instance = self.table_extern_property(
                t, iprop, scope, prefix, ("action_profile", "action_selector"))
        cprop = t.property("counters")
        if cprop is not None:
            t.counters = self.table_extern_property(t, cprop, scope, prefix,
                                                    ("direct_counter", "counter"))
        mprop = t.property("meters")
        if mprop is not None:
            t.meters = self.table_extern_property(t, mprop, scope, prefix,
                                                  ("direct_meter", "meter"))
        for prop in t.properties:
            if prop.name not in KNOWN_TABLE_PROPERTIES:
                if isinstance(prop.value, ir.Expression):
                    prop.value = self.expr(prop.value, scope)
                t.other_properties[prop.name] = prop
        if self.registering:
            self.result.tables[t.fqn] = t

    def table_extern_property(self, t: ir.P4Table, prop: ir.Property, scope: Scope,
                              prefix: str | None, kinds: tuple[str, ...]):
        v = prop.value
        if isinstance(v, ir.ConstructorCallExpression):
            inst = ir.Declaration_Instance(name=t.name, type=v.ctor_type, args=v.args,
                                           loc=v.loc)
            inst.annotations = [a for a in t.annotations if a.name == "name"]
            self.check_instance(inst, scope, prefix)
            v.instantiated = None
            v.type = inst.extern
            decl = inst
        elif isinstance(v, ir.PathExpression):
            decl = scope.lookup(v.name)
            if not isinstance(decl, ir.Declaration_Instance) or decl.extern is None:
                raise self.err(f"table property '{prop.name}' must name an extern instance", v)
            v.decl = decl
            v.type = decl.extern
        else:
            raise self.err(f"table property '{prop.name}' must be an extern instance", v)
        if decl.extern.extern.name not in kinds:
            raise self.err(f"table property '{prop.name}' needs one of {', '.join(kinds)}, "
                           f"not {decl.extern.extern.name}", v)
        return decl

    def action_ref(self, ref: ir.ActionRef, scope: Scope, partial: bool) -> None:
        e = ref.expression
        args: list[ir.Argument] = []
        if isinstance(e, ir.MethodCallExpression):
            args = e.args
            path = e.method
        else:
            path = e
        if not isinstance(path, ir.PathExpression):
            raise self.err("expected an action name", e)
        d = self.globals.lookup(path.name) if path.top_level else scope.lookup(path.name)
        if not isinstance(d, ir.P4Action):
            if d is None:
                raise self.err(f"unknown action '{path.name}'"
                               f"{did_you_mean(path.name, scope.visible_names())}", path)
            raise self.err(f"'{path.name}' is not an action", path)
        path.decl = d
        path.type = ir.Type_Action(action=d)
        ref.action = d
        if partial:
            directional = [p for p in d.params if p.direction != ""]
            if isinstance(e, ir.MethodCallExpression) or directional:
                if len(args) != len(directional):
                    raise self.err(f"action '{d.name}' in a table needs arguments for its "
                                   f"{len(directional)} directional parameters, got {len(args)}",
                                   e)
                ref.args = self.bind_args(directional, args, scope, {}, f"action '{d.name}'", e)
            else:
                ref.args = []
        else:
            texts = [expression_text(a.expr) for a in args]
            ref.args = self.bind_args(d.params, args, scope, {}, f"action '{d.name}'", e)
            for p, value in zip(d.params, ref.args, strict=False):
                if not p.direction and value is not None and not self.is_compile_time(value):
                    given = next((t for a, t in zip(args, texts, strict=True)
                                  if a.expr is value), expression_text(value))
                    raise self.err(f"{given}: action argument must be a compile-time "
                                   f"constant (parameter '{p.name}' of '{d.name}' in a table)",
                                   value)
        if isinstance(e, ir.MethodCallExpression):
            e.kind = ir.CALL_ACTION
            e.target = d
            e.method_name = d.name
            e.bound_args = ref.args
            e.type = ir.Type_Void()

    def table_bool_property(self, t: ir.P4Table, name: str, default: bool,
                            scope: Scope) -> bool:
        prop = t.property(name)
        if prop is None:
            return default
        v = self.expr(prop.value, scope)
        if not isinstance(v, ir.BoolLiteral):
            raise self.err(f"table property '{name}' must be true or false", prop)
        prop.value = v
        return v.value

    def check_entries(self, t: ir.P4Table, entries: list[ir.Entry], scope: Scope) -> None:
        key_types = [k.expression.type for k in t.keys]
        needs_priority = any(k.match_kind in ("ternary", "range", "optional") for k in t.keys)
        largest_wins = self.table_bool_property(t, "largest_priority_wins", True, scope)
        t.largest_priority_wins = largest_wins
        delta = 1
        dprop = t.property("priority_delta")
        if dprop is not None:
            dv = self.expr(dprop.value, scope)
            if not isinstance(dv, ir.Constant) or dv.value < 1:
                raise self.err("priority_delta must be a positive integer constant", dprop)
            dprop.value = dv
            delta = dv.value
        if entries and not t.keys:
            raise self.err(f"table '{t.name}' has entries but no key", entries[0])
        legacy: list[ir.Entry] = []  # entries with p4c's older @priority(n) annotation
        for entry in entries:
            self.node_stack.append(entry)
            try:
                if len(entry.keys) != len(key_types):
                    if len(entry.keys) == 1 and isinstance(entry.keys[0], ir.DefaultExpression):
                        entry.keys = [copy.copy(entry.keys[0]) for _ in key_types]
                    else:
                        raise self.err(f"entry has {len(entry.keys)} keys but table "
                                       f"'{t.name}' has {len(key_types)}", entry)
                new_keys = []
                for k, kt, ke in zip(entry.keys, key_types, t.keys, strict=True):
                    nk = self.keyset(k, [kt], scope, "entry")
                    if isinstance(nk, ir.Binary) and nk.op == ".." and ke.match_kind != "range":
                        raise self.err(f"a range keyset needs a 'range' key, "
                                       f"not '{ke.match_kind}'", nk)
                    if ke.match_kind == "lpm":
                        _check_lpm_mask(nk, kt)
                    if ke.match_kind == "optional" and isinstance(nk, ir.Binary) \
                            and nk.op == "&&&":
                        raise P4Error(f"{expression_text(nk)} invalid key expression (an "
                                      "'optional' key takes a value or default, no mask)",
                                      start_loc(nk))
                    new_keys.append(nk)
                entry.keys = new_keys
                self.action_ref(entry.action, scope, partial=False)
                listed = [r for r in t.action_refs if r.action is entry.action.action]
                if not listed:
                    raise self.err(f"action '{entry.action.action.name}' is not in the actions "
                                   f"of table '{t.name}'", entry.action)
                if listed[0].default_only:
                    raise self.err(f"action '{entry.action.action.name}' is @defaultonly and "
                                   "cannot be used in entries", entry.action)
                prio_ann = ir.find_annotation(entry, "priority")
                if entry.priority_expr is None and prio_ann is not None and prio_ann.args:
                    entry.priority_expr = prio_ann.args[0]  # older p4c: @priority(n)
                    legacy.append(entry)
                elif prio_ann is not None and prio_ann.args:
                    raise self.err("an entry cannot have both '@priority(n)' and "
                                   "'priority ='", entry)
                if entry.priority_expr is not None:
                    pv = self.expr(entry.priority_expr, scope)
                    if not isinstance(pv, ir.Constant) or pv.value < 0:
                        raise self.err("entry priority must be a non-negative constant",
                                       entry.priority_expr)
                    entry.priority_expr = pv
                    entry.priority = pv.value
                t.entries.append(entry)
            finally:
                self.node_stack.pop()
        explicit = [e for e in t.entries if e.priority_expr is not None and e not in legacy]
        if explicit and not needs_priority:
            key_prop = t.property("key")
            raise self.err("key match type does not require priorities, but some are "
                           f"specified (table '{t.name}' has only exact/lpm keys: drop the "
                           "'priority =')", key_prop if key_prop is not None else explicit[0])
        if legacy:
            self.legacy_priorities(t, legacy, largest_wins)
        else:
            self.assign_priorities(t.entries, largest_wins, delta, needs_priority)

    def legacy_priorities(self, t: ir.P4Table, legacy: list[ir.Entry],
                          largest_wins: bool) -> None:
        """Priorities of a table using p4c's older ``@priority(n)`` entry annotation.

        That annotation predates the specification's ``priority =`` syntax and follows
        BMv2: the *smaller* number wins, and an entry without one gets its 1-based
        position. Unless the table says ``largest_priority_wins = false`` (the same
        convention), the numbers are mirrored so that ``Entry.priority`` keeps the
        specification's default meaning (larger wins) with the same ranking.
        """
        if len(legacy) != len(t.entries) and any(
                e.priority_expr is not None for e in t.entries if e not in legacy):
            raise self.err("a table cannot mix '@priority(n)' entries with 'priority ='",
                           legacy[0])
        ranks = [e.priority if e in legacy else j + 1 for j, e in enumerate(t.entries)]
        if not largest_wins:
            for e, r in zip(t.entries, ranks, strict=True):
                e.priority = r
            return
        top = max(ranks)
        for e, r in zip(t.entries, ranks, strict=True):
            e.priority = top + 1 - r

    def assign_priorities(self, entries: list[ir.Entry], largest_wins: bool, delta: int,
                          needs_priority: bool) -> None:
        """Entry priorities as the P4-16 specification computes them (section "Entry
        priorities"): all implicit -> numbered by position; otherwise the first entry
        must be explicit and the others continue from the previous one by ``delta``."""
        if not entries:
            return
        if all(e.priority_expr is None for e in entries):
            if not needs_priority:
                return
            n = len(entries)
            for j, e in enumerate(entries):
                e.priority = 1 + ((n - 1 - j) if largest_wins else j) * delta
            return
        if entries[0].priority_expr is None:
            raise self.err("when some entries have a priority, the first entry must have "
                           "one too", entries[0])
        p = entries[0].priority
        for e in entries[1:]:
            if e.priority_expr is not None:
                p = e.priority
            else:
                p = p - delta if largest_wins else p + delta
                if p < 0:
                    raise self.err(f"implicit entry priority {p} is negative", e)
                e.priority = p


def _check_lpm_mask(keyset: ir.Expression, key_type: ir.Type) -> None:
    """An lpm entry's ``value &&& mask`` needs a prefix mask (ones, then zeros)."""
    if not (isinstance(keyset, ir.Binary) and keyset.op == "&&&"
            and isinstance(keyset.right, ir.Constant) and isinstance(keyset.left, ir.Constant)):
        return
    width = getattr(key_type, "width", None)
    if width is None:
        return
    mask = keyset.right.value & ((1 << width) - 1)
    zeros = width if mask == 0 else (mask & -mask).bit_length() - 1
    if zeros + bin(mask).count("1") != width:
        raise P4Error(f"{keyset.left.value} &&& {keyset.right.value} invalid mask for LPM "
                      "key (an lpm mask is a prefix: ones followed by zeros)",
                      start_loc(keyset))
