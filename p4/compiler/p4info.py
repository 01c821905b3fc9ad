"""P4Info of a compiled program, object for object as p4c writes it for v1model.

>>> from netweft.p4.compiler import compile_p4
>>> from netweft.p4.compiler.p4info import build_p4info
>>> info = build_p4info(compile_p4("basic.p4"))     # a p4.config.v1.P4Info message

What p4c's front end does before its P4Runtime serializer, and this module
reproduces on netweft's checked IR:

* sub-controls and sub-parsers are inlined into the package's blocks, their
  objects taking the instance's place among the block's declarations;
* unused declarations are removed: tables never applied, actions that no used
  table lists and no code calls (extern instances stay, used or not);
* global actions used by a control are copied into it, ahead of its own.

Then the serializer's rules (``control-plane/p4RuntimeSerializer.cpp``,
``p4RuntimeArchStandard``): objects in block order, then declaration order; ids
and aliases from :mod:`netweft.p4.compiler.p4info_ids`; ``@hidden`` objects
omitted; duplicate names of one kind are an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from p4.config.v1 import p4info_pb2

from netweft.p4.compiler import ir
from netweft.p4.compiler import p4info_ids as ids
from netweft.p4.compiler.errors import P4Error, SourceLoc
from netweft.p4.compiler.p4info_annotations import (
    add_annotations,
    add_documentation,
    has_annotation,
    key_values,
    set_preamble,
)
from netweft.p4.compiler.p4info_types import (
    TypeInfo,
    _cp_name,
    bytes_of,
    flatten_header,
    type_name,
    type_width,
)
from netweft.p4.compiler.program import Program

DEFAULT_TABLE_SIZE = 1024  # v1model's default (p4c's V1Model::tableAttributes)

_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}

_PROFILE_ANNOTATIONS = ("max_group_size", "selector_size_semantics", "max_member_weight")


def build_p4info(program: Program) -> p4info_pb2.P4Info:
    """The P4Info of ``program`` (raises P4Error ``file:line:col`` where p4c refuses)."""
    return _P4InfoBuilder(program).build()


# ------------------------------------------------------------------ IR traversal


def walk(node) -> Iterator[ir.Node]:
    """Every IR node below ``node`` (itself included) through its structural fields;
    annotated back-references (declarations, targets, types) are not followed, nor
    the dead branch of an ``if`` on a constant."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list | tuple):
            stack.extend(reversed(n))
            continue
        if isinstance(n, dict):
            stack.extend(reversed(list(n.values())))
            continue
        if not isinstance(n, ir.Node):
            continue
        yield n
        if isinstance(n, ir.IfStatement) and isinstance(n.condition, ir.BoolLiteral):
            live = n.if_true if n.condition.value else n.if_false
            if live is not None:  # p4c folds the constant condition away first
                stack.append(live)
            continue
        children = []
        for f in dataclasses.fields(n):
            if not f.compare or f.name == "annotations":
                continue
            v = getattr(n, f.name, None)
            if isinstance(v, ir.Node | list | tuple | dict):
                children.append(v)
        stack.extend(reversed(children))


def _calls(node) -> Iterator[ir.MethodCallExpression]:
    for n in walk(node):
        if isinstance(n, ir.MethodCallExpression):
            yield n


# ------------------------------------------------------------------ the flattened program


@dataclasses.dataclass(eq=False)
class _Block:
    """One package block with its inlined sub-blocks: declarations in p4c's order,
    the bodies whose calls make tables and actions used, and used tables/actions."""

    decl: ir.P4Control | ir.P4Parser
    locals: list[ir.Node]
    bodies: list[ir.Node]
    tables: list[ir.P4Table] = dataclasses.field(default_factory=list)
    actions: list[ir.P4Action] = dataclasses.field(default_factory=list)
    called: set[int] = dataclasses.field(default_factory=set)  # ids of actions called


def _instance_of_apply(call: ir.MethodCallExpression) -> ir.Declaration_Instance | None:
    inst = call.instance
    if isinstance(inst, ir.PathExpression) and isinstance(inst.decl, ir.Declaration_Instance):
        return inst.decl
    return None


def _calls_inlining_actions(root: ir.Node) -> Iterator[ir.MethodCallExpression]:
    """Calls under ``root`` in order, with the calls of each action called from it in
    the place of that call (as after p4c's InlineActions)."""
    for c in _calls(root):
        if c.kind == ir.CALL_ACTION and isinstance(c.target, ir.P4Action):
            yield from _calls_inlining_actions(c.target.body)
        else:
            yield c


def _flatten(decl: ir.P4Control | ir.P4Parser,
             inlined: set[int] | None = None) -> tuple[list[ir.Node], list[ir.Node]]:
    """Declarations and bodies of ``decl`` with applied sub-instances inlined in place
    (direct type invocations become instances at the end, as p4c's
    InstantiateDirectCalls appends them). An instance applied from several places
    (through constructor parameters) is inlined once, where it is first reached."""
    inlined = set() if inlined is None else inlined
    body_nodes: list[ir.Node] = [decl.body] if isinstance(decl, ir.P4Control) else \
        list(decl.states)
    applied: list[ir.Declaration_Instance] = []
    for root in body_nodes + [x for x in decl.locals if isinstance(x, ir.P4Action)]:
        for c in _calls(root):
            if c.kind == ir.CALL_APPLY_INSTANCE:
                inst = _instance_of_apply(c)
                if inst is not None and inst not in applied:
                    applied.append(inst)
    locals_out: list[ir.Node] = []
    bodies: list[ir.Node] = list(body_nodes)
    in_locals = {id(x) for x in decl.locals}
    order = list(decl.locals) + [i for i in applied if id(i) not in in_locals]
    for loc_decl in order:
        if isinstance(loc_decl, ir.Declaration_Instance) and loc_decl.instantiated is not None:
            if loc_decl in applied and id(loc_decl) not in inlined:
                inlined.add(id(loc_decl))
                sub_locals, sub_bodies = _flatten(loc_decl.instantiated, inlined)
                locals_out.extend(sub_locals)
                bodies.extend(sub_bodies)
            continue
        locals_out.append(loc_decl)
    return locals_out, bodies


class _P4InfoBuilder:
    """One P4Info build: flatten the blocks, decide what is used, collect the symbols,
    assign ids, then write the objects in p4c's order."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.info = p4info_pb2.P4Info()
        self.types = TypeInfo(self.info.type_info, program.errors)
        self.symbols = ids.SymbolTable()
        self.global_actions = {id(o) for o in program.ast.objects if isinstance(o, ir.P4Action)}
        self.blocks: list[_Block] = []
        self.touched_type_info = False
        self.origin: dict[tuple[str, str], SourceLoc] = {}  # (kind, name) -> first loc
        self.written: dict[str, list[tuple[str, SourceLoc]]] = {}  # kind -> (name, loc)
        self.digest_names: dict[int, str] = {}  # digest calls on non-struct data
        self.constants = {o.name: o.initializer for o in program.ast.objects
                          if isinstance(o, ir.Declaration_Constant)}

    # ------------------------------------------------------------------ annotations
    def _preamble(self, preamble, ident, name, alias, node, skip=lambda _n: False) -> None:
        set_preamble(preamble, ident, name, alias, node, skip, self.constants)

    def _annotations(self, message, node, skip=lambda _n: False) -> None:
        add_annotations(message, node, skip, self.constants)

    # ------------------------------------------------------------------ driver
    def build(self) -> p4info_pb2.P4Info:
        self._collect_blocks()
        self._collect_symbols()
        self.symbols.assign_ids()
        self._emit()
        if self.touched_type_info:
            self.info.type_info.SetInParent()
        self.info.pkg_info.arch = "v1model"
        self._pkg_info()
        return self.info

    # ------------------------------------------------------------------ usage
    def _collect_blocks(self) -> None:
        seen: set[int] = set()
        for block in self.program.blocks.values():
            if id(block.decl) in seen:
                continue
            seen.add(id(block.decl))
            locals_, bodies = _flatten(block.decl)
            b = _Block(block.decl, locals_, bodies)
            if isinstance(block.decl, ir.P4Control):
                self._used(b)
            self.blocks.append(b)

    def _used(self, b: _Block) -> None:
        """Tables applied and the actions they or the apply block reference, as p4c's
        front end leaves them: actions called only from other actions are inlined
        (InlineActions) and then, like tables never applied, removed
        (RemoveAllUnusedDeclarations); global actions come first in first-use order
        (LocalizeAllActions)."""
        applied: set[int] = set()
        todo: list = list(b.bodies)
        while todo:  # a used table's key may apply another table
            for c in _calls(todo.pop()):
                if c.kind == ir.CALL_TABLE_APPLY and isinstance(c.target, ir.P4Table) \
                        and id(c.target) not in applied:
                    applied.add(id(c.target))
                    todo.append([k.expression for k in c.target.keys or ()])
        b.tables = [t for t in b.locals if isinstance(t, ir.P4Table) and id(t) in applied]
        used: list[ir.P4Action] = []  # first-use order

        def use(a) -> None:
            if isinstance(a, ir.P4Action) and all(a is not u for u in used):
                used.append(a)

        for t in b.tables:
            for ref in t.action_refs or ():
                use(ref.action)
            if t.default_action is not None:
                use(t.default_action.action_ref.action)
            for e in t.entries or ():
                use(e.action.action)
        for body in b.bodies:  # actions called from the apply block stay
            for c in _calls(body):
                if c.kind == ir.CALL_ACTION:
                    use(c.target)
                    b.called.add(id(c.target))
        local_ids = {id(x) for x in b.locals if isinstance(x, ir.P4Action)}
        used_ids = {id(a) for a in used}
        globals_first = [a for a in used if id(a) in self.global_actions]
        own = [a for a in b.locals if isinstance(a, ir.P4Action) and id(a) in used_ids]
        stray = [a for a in used if id(a) not in local_ids and id(a) not in self.global_actions]
        b.actions = globals_first + own + stray

    # ------------------------------------------------------------------ symbols
    def _check_action_names(self) -> None:
        """p4c's DuplicateActionControlPlaneNameCheck: two different actions may not
        share a control-plane name."""
        owner: dict[str, ir.P4Action] = {}
        for b in self.blocks:
            for a in b.actions:
                name = a.fqn or a.name
                other = owner.setdefault(name, a)
                if other is not a:
                    raise P4Error(f"conflicting control plane name: '{name}' is also the "
                                  f"name of the action at {other.loc}", a.loc)

    def _collect_symbols(self) -> None:
        self._check_action_names()
        S = self.symbols
        for ext in self._global_externs():
            self._collect_extern(ext)
        for b in self.blocks:
            for a in b.actions:
                S.add(ids.ACTION, a.fqn or a.name, _id_annotation(a), a.loc)
            if isinstance(b.decl, ir.P4Control):
                for name, _t, loc in self._digest_calls(b):
                    S.add(ids.DIGEST, name, None, loc)
            for d in b.locals:
                if isinstance(d, ir.P4Table) and d in b.tables:
                    S.add(ids.TABLE, d.fqn, _id_annotation(d), d.loc)
                    self._collect_table_properties(d)
                elif isinstance(d, ir.Declaration_Instance) and d.extern is not None:
                    self._collect_extern(d)
                elif isinstance(d, ir.P4ValueSet):
                    S.add(ids.VALUE_SET, d.fqn, _id_annotation(d), d.loc)
        for h in self._controller_headers():
            S.add(ids.CONTROLLER_HEADER, _cp_name(h), _id_annotation(h), h.loc)

    def _global_externs(self) -> list[ir.Declaration_Instance]:
        return [o for o in self.program.ast.objects
                if isinstance(o, ir.Declaration_Instance) and o.extern is not None]

    def _collect_extern(self, d: ir.Declaration_Instance) -> None:
        if _declared_through_typedef(d):
            return
        kind = {
            "counter": ids.COUNTER, "direct_counter": ids.DIRECT_COUNTER,
            "meter": ids.METER, "direct_meter": ids.DIRECT_METER,
            "action_profile": ids.ACTION_PROFILE, "action_selector": ids.ACTION_PROFILE,
            "register": ids.REGISTER,
        }.get(d.extern.extern.name)
        if kind is not None:
            self.symbols.add(kind, d.fqn, _id_annotation(d), d.loc)

    def _collect_table_properties(self, t: ir.P4Table) -> None:
        for prop_name, kind in (("implementation", ids.ACTION_PROFILE),
                                ("counters", ids.DIRECT_COUNTER),
                                ("meters", ids.DIRECT_METER)):
            prop = t.property(prop_name)
            if prop is not None and isinstance(prop.value, ir.ConstructorCallExpression):
                self.symbols.add(kind, self._in_place_name(t, prop), None, prop.loc)

    @staticmethod
    def _in_place_name(t: ir.P4Table, prop: ir.Property) -> str:
        name = ir.name_annotation(prop)
        if name is None:
            raise P4Error(f"Table '{t.fqn}' has an anonymous table property '{prop.name}' "
                          "with no name annotation, which is not supported by P4Runtime",
                          prop.loc)
        return name[1:] if name.startswith(".") else name

    def _controller_headers(self) -> list[ir.Type_Header]:
        return [h for h in self.program.ast.objects
                if isinstance(h, ir.Type_Header) and has_annotation(h, "controller_header")]

    def _digest_calls(self, b: _Block) -> list[tuple[str, ir.Type, SourceLoc]]:
        """v1model ``digest<T>(receiver, data)`` calls in the block's actions, then its
        body, as (name, type, loc): the name is T's control-plane name."""
        calls = [c for a in b.actions for c in _calls_inlining_actions(a.body)]
        calls += [c for body in b.bodies for c in _calls(body)]
        out = []
        for c in calls:
            if c.kind != ir.CALL_EXTERN_FUNCTION or c.method_name != "digest":
                continue
            targs = c.type_args_resolved or []
            if not targs:
                continue
            t = targs[0]
            if isinstance(t, ir.Type_StructLike):
                name = _cp_name(t)
            else:  # p4c: "Cannot find a good name", an auto-generated one
                name = self.digest_names.setdefault(id(c), f"digest_{len(self.digest_names)}")
            out.append((name, t, c.loc))
        return out

    # ------------------------------------------------------------------ emitting
    def _emit(self) -> None:
        for ext in self._global_externs():
            self._extern(ext)
        emitted_actions: set[int] = set()
        emitted_digests: set[int] = set()
        for b in self.blocks:
            if isinstance(b.decl, ir.P4Control):
                self.touched_type_info |= any(
                    c.kind == ir.CALL_EXTERN_FUNCTION
                    for root in [a.body for a in b.actions] + b.bodies for c in _calls(root))
                for a in b.actions:
                    self._action(a, emitted_actions, id(a) in b.called)
                for name, t, loc in self._digest_calls(b):
                    self._digest(name, t, loc, emitted_digests)
        for b in self.blocks:
            for d in b.locals:
                if isinstance(d, ir.P4Table) and d in b.tables:
                    self._table(d)
                elif isinstance(d, ir.Declaration_Instance) and d.extern is not None:
                    self._extern(d)
                elif isinstance(d, ir.P4ValueSet):
                    self._value_set(d)
        for h in self._controller_headers():
            self._controller_header(h)
        self._check_duplicates()

    def _remember(self, kind: str, name: str, loc: SourceLoc) -> None:
        """Note an object written to P4Info, for p4c's duplicate-name check."""
        self.origin.setdefault((kind, name), loc)
        self.written.setdefault(kind, []).append((name, loc))

    def _check_duplicates(self) -> None:
        for kind, entries in self.written.items():
            seen: set[str] = set()
            for name, loc in entries:
                if name in seen:
                    first = self.origin[(kind, name)]
                    where = "" if first == loc else f" (also at {first})"
                    raise P4Error(f"Name '{name}' is used for multiple {kind} objects in the "
                                  f"P4Info message{where}", loc)
                seen.add(name)

    # ---- actions
    def _action(self, a: ir.P4Action, emitted: set[int], called: bool) -> None:
        """An action; one that the apply block calls directly has its parameters bound
        there, and p4c (RemoveActionParameters) drops them all."""
        if has_annotation(a, "hidden"):
            return
        name = a.fqn or a.name
        ident = self.symbols.id_of(ids.ACTION, name)
        if ident in emitted:
            return
        emitted.add(ident)
        self._remember("action", name, a.loc)
        action = self.info.actions.add()
        self._preamble(action.preamble, ident, name, self.symbols.alias(name), a)
        params = [] if called else [p for p in a.params if p.direction == ""]
        for p, pid in zip(params, _field_ids(params), strict=True):
            param = action.params.add(id=pid, name=_cp_name(p))
            self._annotations(param, p)
            add_documentation(param, p)
            t = p.type
            if not isinstance(t, ir.Type_Bits | ir.Type_Boolean | ir.Type_SerEnum |
                              ir.Type_Enum):
                raise P4Error(f"Action parameter {p.name} has a type which is not bit<>, "
                              "int<>, bool, type or serializable enum", p.loc)
            if not isinstance(t, ir.Type_Enum):
                param.bitwidth = type_width(p.declared_type, t)
            self.touched_type_info = True
            self.types.register(p.declared_type, t)
            tn = type_name(p.declared_type)
            if tn is not None:
                param.type_name.name = tn
            elif isinstance(t, ir.Type_Enum):
                param.type_name.name = _cp_name(t)

    # ---- tables
    def _table(self, t: ir.P4Table) -> None:
        if has_annotation(t, "hidden"):
            return
        S = self.symbols
        self._remember("table", t.fqn, t.loc)
        self.touched_type_info = True
        table = self.info.tables.add()
        self._preamble(table.preamble, S.id_of(ids.TABLE, t.fqn), t.fqn, S.alias(t.fqn), t)
        keys = list(t.keys or ())
        for k, kid in zip(keys, _field_ids(keys), strict=True):
            if k.match_kind == "selector":
                continue
            canonical = k.expression.type
            declared = _declared_type(k.expression)
            self.types.register(declared, canonical)
            mf = table.match_fields.add(id=kid, name=k.name)
            self._annotations(mf, k)
            add_documentation(mf, k)
            mf.bitwidth = type_width(declared, canonical)
            if k.match_kind in _MATCH_TYPES:
                mf.match_type = _MATCH_TYPES[k.match_kind]
            else:
                mf.other_match_type = k.match_kind
            tn = type_name(declared)
            if tn is not None:
                mf.type_name.name = tn
        for ref in t.action_refs or ():
            ar = table.action_refs.add(id=S.id_of(ids.ACTION, ref.action.fqn or ref.action.name))
            self._annotations(ar, ref)
            if ref.table_only and ref.default_only:
                raise P4Error(f"Table '{t.fqn}' has an action reference "
                              f"('{ref.action.fqn}') which is annotated with both "
                              "'@tableonly' and '@defaultonly'", ref.loc)
            if ref.table_only:
                ar.scope = p4info_pb2.ActionRef.TABLE_ONLY
            elif ref.default_only:
                ar.scope = p4info_pb2.ActionRef.DEFAULT_ONLY
        if t.default_action is not None:
            dref = t.default_action.action_ref
            did = S.id_of(ids.ACTION, dref.action.fqn or dref.action.name)
            if t.default_action.is_const:
                table.const_default_action_id = did
            table.initial_default_action.action_id = did
            self._default_arguments(table.initial_default_action, dref)
        self._table_properties(t, table)
        size = t.size or 0
        table.size = size if size else DEFAULT_TABLE_SIZE
        timeout = t.other_properties.get("support_timeout") if t.other_properties else None
        if timeout is not None and isinstance(timeout.value, ir.BoolLiteral) \
                and timeout.value.value:
            table.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if t.entries_const and t.property("entries") is not None:
            table.is_const_table = True
        if t.entries:
            table.has_initial_entries = True

    def _default_arguments(self, out: p4info_pb2.Table.InitialDefaultAction,
                           ref: ir.ActionRef) -> None:
        action = ref.action
        params = list(action.params)
        args = list(ref.args or [])
        pairs = [(p, a) for p, a in zip(params, args, strict=False) if p.direction == ""]
        next_id = 1
        for p, a in pairs:
            value = _constant_value(a)
            pid = next_id
            next_id += 1
            if value is None:
                continue
            idann = _id_annotation(p)
            width = type_width(p.declared_type, a.type if a.type is not None else p.type)
            out.arguments.add(param_id=idann if idann is not None else pid,
                              value=bytes_of(value, width))

    def _table_properties(self, t: ir.P4Table, table: p4info_pb2.Table) -> None:
        S = self.symbols
        impl = t.implementation_instance
        if impl is not None:
            prop = t.property("implementation")
            in_place = isinstance(prop.value, ir.ConstructorCallExpression)
            name = self._in_place_name(t, prop) if in_place else impl.fqn
            table.implementation_id = S.id_of(ids.ACTION_PROFILE, name)
            if in_place:
                self._action_profile(impl, name, prop)
        for prop_name, inst, kind, out_kind in (
                ("counters", t.counters, ids.DIRECT_COUNTER, "direct counter"),
                ("meters", t.meters, ids.DIRECT_METER, "direct meter")):
            if inst is None:
                continue
            prop = t.property(prop_name)
            in_place = isinstance(prop.value, ir.ConstructorCallExpression)
            name = self._in_place_name(t, prop) if in_place else inst.fqn
            expected = "direct_counter" if prop_name == "counters" else "direct_meter"
            if inst.extern.extern.name != expected:
                raise P4Error(f"Expected a direct {prop_name[:-1]}: {name}", prop.loc)
            rid = S.id_of(kind, name)
            table.direct_resource_ids.append(rid)
            self._remember(out_kind, name, prop.loc)
            unit = _unit_name(inst)
            anns = None if in_place else inst
            if prop_name == "counters":
                dc = self.info.direct_counters.add()
                self._preamble(dc.preamble, rid, name, S.alias(name), anns)
                dc.spec.unit = _COUNTER_UNITS.get(unit, 0)
                dc.direct_table_id = S.id_of(ids.TABLE, t.fqn)
            else:
                dm = self.info.direct_meters.add()
                self._preamble(dm.preamble, rid, name, S.alias(name), anns)
                dm.spec.unit = _METER_UNITS.get(unit, 0)
                dm.direct_table_id = S.id_of(ids.TABLE, t.fqn)

    # ---- extern instances
    def _extern(self, d: ir.Declaration_Instance) -> None:
        if _declared_through_typedef(d):
            return
        S = self.symbols
        self.touched_type_info = True
        ext = d.extern.extern.name
        name = d.fqn
        if ext in ("counter", "meter"):
            size = _ctor_arg(d, "size")
            unit = _unit_name(d)
            kind = ids.COUNTER if ext == "counter" else ids.METER
            self._remember(ext, name, d.loc)
            msg = self.info.counters.add() if ext == "counter" else self.info.meters.add()
            self._preamble(msg.preamble, S.id_of(kind, name), name, S.alias(name), d)
            units = _COUNTER_UNITS if ext == "counter" else _METER_UNITS
            msg.spec.unit = units.get(unit, 0)
            msg.size = _int_value(size, d, "size")
        elif ext == "register":
            size = _ctor_arg(d, "size")
            self._remember("register", name, d.loc)
            reg = self.info.registers.add()
            self._preamble(reg.preamble, S.id_of(ids.REGISTER, name), name, S.alias(name), d)
            reg.size = _int_value(size, d, "size")
            declared = d.type.args[0] if isinstance(d.type, ir.Type_Specialized) \
                and d.type.args else None
            reg.type_spec.CopyFrom(self.types.convert(declared, d.extern.type_args[0]))
        elif ext in ("action_profile", "action_selector"):
            self._action_profile(d, name, d)

    def _action_profile(self, d: ir.Declaration_Instance, name: str, annotated: ir.Node) -> None:
        S = self.symbols
        self._remember("action profile", name, annotated.loc)
        prof = self.info.action_profiles.add()
        self._preamble(prof.preamble, S.id_of(ids.ACTION_PROFILE, name), name, S.alias(name),
                     annotated, lambda n: n in _PROFILE_ANNOTATIONS)
        selector = d.extern.extern.name == "action_selector"
        prof.with_selector = selector
        prof.size = _int_value(_ctor_arg(d, "size"), d, "size")
        mgs = ir.find_annotation(annotated, "max_group_size")
        if mgs is not None and selector and mgs.args and isinstance(mgs.args[0], ir.Constant):
            prof.max_group_size = mgs.args[0].value
        sem = ir.find_annotation(annotated, "selector_size_semantics")
        if sem is not None and selector:
            v = sem.args[0].value.upper() if sem.args and isinstance(
                sem.args[0], ir.StringLiteral) else ""
            if v == "SUM_OF_WEIGHTS":
                prof.sum_of_weights.SetInParent()
            elif v == "SUM_OF_MEMBERS":
                prof.sum_of_members.SetInParent()
            else:
                raise P4Error('Expected selector_size_semantics value "sum_of_weights" or '
                              f'"sum_of_members", but got {" ".join(sem.body)}', sem.loc)
        mmw = ir.find_annotation(annotated, "max_member_weight")
        if mmw is not None and selector and prof.HasField("sum_of_members") and mmw.args \
                and isinstance(mmw.args[0], ir.Constant):
            prof.sum_of_members.max_member_weight = mmw.args[0].value
        tables = sorted({t.fqn for b in self.blocks for t in b.tables
                         if self._implementation_name(t) == name}, key=lambda n: n.encode())
        for tn in tables:
            prof.table_ids.append(S.id_of(ids.TABLE, tn))

    def _implementation_name(self, t: ir.P4Table) -> str | None:
        prop = t.property("implementation")
        if prop is None or t.implementation_instance is None:
            return None
        if isinstance(prop.value, ir.ConstructorCallExpression):
            return self._in_place_name(t, prop)
        return t.implementation_instance.fqn

    # ---- digests
    def _digest(self, name: str, t: ir.Type, loc: SourceLoc, emitted: set[int]) -> None:
        ident = self.symbols.id_of(ids.DIGEST, name)
        if ident in emitted:
            return
        emitted.add(ident)
        self._remember("digest", name, loc)
        dg = self.info.digests.add()
        self._preamble(dg.preamble, ident, name, self.symbols.alias(name), None)
        dg.type_spec.CopyFrom(self.types.convert(None, t))

    # ---- value sets
    def _value_set(self, v: ir.P4ValueSet) -> None:
        if has_annotation(v, "hidden"):
            return
        S = self.symbols
        self._remember("value set", v.fqn, v.loc)
        vs = self.info.value_sets.add()
        self._preamble(vs.preamble, S.id_of(ids.VALUE_SET, v.fqn), v.fqn, S.alias(v.fqn), v)
        if v.size is None or v.size < 0:
            raise P4Error(f"@size should be a positive integer for declaration {v.name}",
                          v.loc)
        vs.size = v.size
        et = v.element_type
        if isinstance(et, ir.Type_Bits):
            vs.match.add(id=1, bitwidth=et.width, match_type=p4info_pb2.MatchField.EXACT)
        elif isinstance(et, ir.Type_Struct):
            fields = list(et.fields)
            for f, fid in zip(fields, _field_ids(fields), strict=True):
                if not isinstance(f.type, ir.Type_Bits):
                    raise P4Error("Unsupported type argument for Value Set; this version of "
                                  "P4Runtime requires that when the type parameter of a Value "
                                  "Set is a struct, all the fields of the struct must be of "
                                  f"type bit<W>, but {f.name} is not", f.loc)
                m = vs.match.add(id=fid, name=_cp_name(f), bitwidth=f.type.width)
                mann = ir.find_annotation(f, "match")
                if mann is None:
                    m.match_type = p4info_pb2.MatchField.EXACT
                else:
                    mk = mann.body[0] if mann.body else ""
                    if mk in _MATCH_TYPES:
                        m.match_type = _MATCH_TYPES[mk]
                    else:
                        m.other_match_type = mk
                self._annotations(m, f, lambda n: n == "match")
                add_documentation(m, f)
        elif isinstance(et, ir.Type_SerEnum):
            width = et.underlying.width
            for i, mem in enumerate(et.members, start=1):
                vs.match.add(id=i, name=mem.name, bitwidth=width,
                             match_type=p4info_pb2.MatchField.EXACT)
        else:
            raise P4Error(f"{v.name}: Unsupported type argument for Value Set; this version of "
                          "P4Runtime requires the type parameter of a Value Set to be a "
                          "bit<W>, a struct of bit<W> fields, or a serializable enum", v.loc)

    # ---- controller headers
    def _controller_header(self, h: ir.Type_Header) -> None:
        if has_annotation(h, "hidden"):
            return
        a = ir.find_annotation(h, "controller_header")
        if not a.args or not isinstance(a.args[0], ir.StringLiteral):
            raise P4Error("@controller_header needs a string argument", a.loc)
        cname = a.args[0].value
        self._remember("controller packet metadata", cname, h.loc)
        self.touched_type_info = True
        cpm = self.info.controller_packet_metadata.add()
        ident = self.symbols.id_of(ids.CONTROLLER_HEADER, _cp_name(h))
        self._preamble(cpm.preamble, ident, cname, cname, h)
        fields = flatten_header(h)
        leafs = [f for _n, f, _t, _a in fields]
        for (fname, f, ftype, anns), fid in zip(fields, _field_ids(leafs), strict=True):
            if any(x.name == "hidden" for x in anns):
                continue
            md = cpm.metadata.add(id=fid, name=fname)
            holder = ir.StructField(name=f.name, type=ftype, annotations=anns)
            self._annotations(md, holder)
            if not isinstance(ftype, ir.Type_Bits | ir.Type_SerEnum):
                raise P4Error(f"Header field {f.name} has a type which is not bit<>, int<>, "
                              "type, or serializable enum", f.loc)
            md.bitwidth = type_width(f.declared_type, ftype)
            self.types.register(f.declared_type, ftype)
            tn = type_name(f.declared_type)
            if tn is not None:
                md.type_name.name = tn

    # ---- package
    def _pkg_info(self) -> None:
        main = self.program.main
        if main is None:
            return
        pkg = self.info.pkg_info
        a = ir.find_annotation(main, "pkginfo")
        for key, value in (key_values(a) if a is not None else {}).items():
            text = _literal_text(value)
            if key in ("name", "version", "organization", "contact", "url", "arch") \
                    and isinstance(text, str):
                setattr(pkg, key, text)
        p = ir.find_annotation(main, "platform_property")
        for key, value in (key_values(p) if p is not None else {}).items():
            number = _literal_text(value)
            if key in ("multicast_group_table_size", "multicast_group_table_total_replicas",
                       "multicast_group_table_max_replicas_per_entry") \
                    and isinstance(number, int):
                setattr(pkg.platform_properties, key, number)
        self._annotations(pkg, main, lambda n: n in ("pkginfo", "platform_property"))
        add_documentation(pkg, main)


# ------------------------------------------------------------------ small helpers

_COUNTER_UNITS = {"packets": p4info_pb2.CounterSpec.PACKETS,
                  "bytes": p4info_pb2.CounterSpec.BYTES,
                  "packets_and_bytes": p4info_pb2.CounterSpec.BOTH}
_METER_UNITS = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}


def _literal_text(v) -> str | int | None:
    """A string or integer from a parsed literal or a literal token."""
    if isinstance(v, ir.StringLiteral):
        return v.value
    if isinstance(v, ir.Constant):
        return v.value
    if isinstance(v, str):
        if len(v) >= 2 and v.startswith('"') and v.endswith('"'):
            return v[1:-1]
        if v.isdigit():
            return int(v)
    return None


def _declared_through_typedef(d: ir.Declaration_Instance) -> bool:
    """An instance whose type is a typedef name (``typedef register<T> R; R(4) r;``):
    p4c's P4Info generator recognises an extern instance by the extern's own name in
    its declared type, so such instances get no P4Info entry; neither do they here."""
    t = d.type.base if isinstance(d.type, ir.Type_Specialized) else d.type
    return isinstance(t, ir.Type_Name) and isinstance(t.decl, ir.Type_Typedef)


def _id_annotation(node: ir.Node) -> int | None:
    a = ir.find_annotation(node, "id")
    if a is None:
        return None
    if not a.args or not isinstance(a.args[0], ir.Constant):
        raise P4Error("@id needs an integer constant", a.loc)
    return a.args[0].value


def _field_ids(items: list) -> list[int]:
    """p4c's FieldIdAllocator: ``@id`` values first, then 1, 2, ... skipping taken ids
    (an item with ``@id`` still advances the counter)."""
    taken: set[int] = set()
    fixed: dict[int, int] = {}
    for i, it in enumerate(items):
        v = _id_annotation(it)
        if v is None:
            continue
        if v == 0:
            raise P4Error("0 is not a valid @id value", it.loc)
        if v in taken:
            raise P4Error(f"@id {v} is used multiple times", it.loc)
        fixed[i] = v
        taken.add(v)
    out = []
    index = 1
    for i, _it in enumerate(items):
        if i in fixed:
            out.append(fixed[i])
            index += 1
            continue
        while index in taken:
            index += 1
        out.append(index)
        taken.add(index)
    return out


def _declared_type(e: ir.Expression) -> ir.Type | None:
    """The declared (source) type of a key expression, where the IR keeps it."""
    if isinstance(e, ir.Member):
        base = e.expr.type
        if isinstance(base, ir.Type_StructLike):
            f = base.field_named(e.member)
            if f is not None:
                return f.declared_type
    if isinstance(e, ir.PathExpression) and isinstance(e.decl, ir.Parameter):
        return e.decl.declared_type
    return None


def _ctor_arg(d: ir.Declaration_Instance, name: str) -> ir.Expression | None:
    """The constructor argument bound to parameter ``name`` of an extern instance."""
    bound = d.bound_args or []
    ctors = [m for m in d.extern.extern.methods if m.name == d.extern.extern.name
             and len(m.type.params) == len(bound)]
    for ctor in ctors:
        for p, a in zip(ctor.type.params, bound, strict=True):
            if p.name == name:
                return a
    return None


def _unit_name(d: ir.Declaration_Instance) -> str:
    a = _ctor_arg(d, "type")
    if isinstance(a, ir.Member):
        return a.member
    if isinstance(a, ir.PathExpression):
        return a.name
    return ""


def _int_value(e: ir.Expression | None, d: ir.Node, what: str) -> int:
    while isinstance(e, ir.Cast):
        e = e.expr
    if isinstance(e, ir.Constant):
        return e.value
    if isinstance(e, ir.Member) and isinstance(e.decl, ir.SerEnumMember):
        return e.decl.value
    raise P4Error(f"'{getattr(d, 'name', '?')}' has a non-constant {what}", d.loc)


def _constant_value(e: ir.Expression | None) -> int | None:
    while isinstance(e, ir.Cast):
        e = e.expr
    if isinstance(e, ir.Constant):
        return e.value if e.value >= 0 else None
    if isinstance(e, ir.BoolLiteral):
        return int(e.value)
    if isinstance(e, ir.Member) and isinstance(e.decl, ir.SerEnumMember):
        return e.decl.value
    return None
