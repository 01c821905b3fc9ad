"""The BMv2 target profile: what ``p4c-bm2-ss`` / ``simple_switch`` refuse that netweft runs.

netweft's embedded switch accepts a few constructs that p4c's BMv2 back end (or
its front end, for v1model) refuses, so a program validated on netweft could
fail to deploy.  :func:`check_bmv2` lists them as :class:`Diagnostic` s, with
p4c's message text first:

- a table applied at more than one place in a control whose continuations
  differ (p4c-bm2-ss: "Program is not supported by this target, because table
  ... has multiple successors"; BMv2's simple_switch.md: a table may be applied
  at most once per control).  p4c builds a control-flow graph in which every
  statement of an apply block is a node (statements become synthesised
  tables); two applications of the same table are accepted only if their
  successors are the same nodes.  Here the successor of ``t.apply();`` is the
  next statement to run (through the ends of blocks, ``if`` branches, switch
  cases and inlined sub-controls); ``if (t.apply().hit)`` and
  ``switch (t.apply().action_run)`` have one successor per outcome.
- a priority inside ``const entries`` (p4c's front end: "Table with 'const'
  entries cannot have priorities"); the older ``@priority(n)`` entry annotation
  is only a warning there (p4c-bm2-ss and netweft both rank by it);
- the deprecated v1model externs ``clone3``, ``resubmit(data)`` and
  ``recirculate(data)``: declared in v1model.p4, but p4c-bm2-ss has no
  converter for them any more ("clone3: unknown extern function");
- a ``clone``/``clone_preserving_field_list`` of type I2E outside ingress or
  E2E outside egress ("'clone(I2E, ...) not invoked in ingress");
- ``for (T v in ...)`` loops ("BMV2 does not support for-in loops"), ``switch``
  statements in actions, select ranges whose ends are not constants;
- a read of a ``register<S>`` whose ``S`` is a struct or header ("writing to a
  structure is not supported on this target"), a table applied inside an
  action's argument ("table invocation in action argument");
- a table property (``key``, ``size`` ...) whose name is also a parameter of
  its control, apply or constructor parameter (p4c's front end: "declaration of
  'key' shadows a parameter 'key'", an error since p4c treats a property as a
  declaration); a warning only when the name is another declaration in scope,
  a control local or a top-level name ("'key' shadows 'key'"; p4c compiles it).

Errors are what p4c-bm2-ss refuses; ``netweft p4check --target bmv2`` and
``netweft-p4c`` refuse a program with any error.  The embedded switch runs such
programs and warns once per program.  docs/bmv2-differences.md lists every
known difference, including the run-time ones this module cannot see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import SourceLoc
from netweft.p4.compiler.naming import expression_text
from netweft.p4.compiler.program import Program

ERROR = "error"
WARNING = "warning"

# v1model externs p4c-bm2-ss no longer converts, and what replaces each
DEPRECATED_EXTERNS = {
    "clone3": "clone_preserving_field_list",
    "resubmit": "resubmit_preserving_field_list",
    "recirculate": "recirculate_preserving_field_list",
}

_TABLE_PROPERTIES = ("key", "actions", "entries", "default_action", "size", "implementation",
                     "counters", "meters", "support_timeout", "largest_priority_wins",
                     "priority_delta")


@dataclass(frozen=True)
class Diagnostic:
    """One finding: ``str()`` is ``file:line:col: message`` (warnings say so)."""

    severity: str  # ERROR or WARNING
    message: str
    loc: SourceLoc
    construct: str  # short name of the construct, e.g. "table applied twice"

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def __str__(self) -> str:
        prefix = "warning: " if self.severity == WARNING else ""
        return f"{self.loc}: {prefix}{self.message}"


def check_bmv2(program: Program) -> list[Diagnostic]:
    """Everything in ``program`` that p4c-bm2-ss refuses (errors) or warns about, in
    source order."""
    found = (_tables_with_multiple_successors(program) + _const_entry_priorities(program)
             + _deprecated_externs(program) + _clones_outside_their_block(program)
             + _for_in_loops(program) + _switches_in_actions(program)
             + _non_constant_select_ranges(program)
             + _struct_register_reads(program) + _table_applies_in_action_arguments(program)
             + _shadowing_table_properties(program))
    return sorted(found, key=lambda d: (d.loc.file, d.loc.line, d.loc.col))


def bmv2_errors(program: Program) -> list[Diagnostic]:
    """Only the findings that make p4c-bm2-ss refuse the program."""
    return [d for d in check_bmv2(program) if d.is_error]


# ---------------------------------------------------------------- tables applied twice

_END = ("end",)


class _Successors:
    """Walks a block's control flow, inlining sub-controls, and records for every
    table application its successors (p4c's CFG edges)."""

    def __init__(self) -> None:
        self.sites: dict[int, list[tuple[Any, ir.Node, ir.P4Table]]] = {}

    def walk(self, stmts: list[ir.Node], ctx: tuple[int, ...], cont: Any) -> None:
        for i, s in enumerate(stmts):
            self.statement(s, ctx, self.first(stmts[i + 1:], ctx, cont))

    def first(self, stmts: list[ir.Node], ctx: tuple[int, ...], cont: Any) -> Any:
        """The CFG node that runs first in ``stmts`` (``cont`` if none does)."""
        for s in stmts:
            if isinstance(s, ir.BlockStatement):
                inner = self.first(s.components, ctx, None)
                if inner is not None:
                    return inner
                continue
            if isinstance(s, (ir.EmptyStatement, ir.Declaration_Constant,
                              ir.Declaration_Instance)):
                continue
            if isinstance(s, ir.Declaration_Variable) and s.initializer is None:
                continue
            call = s.call if isinstance(s, ir.MethodCallStatement) else None
            if call is not None and call.kind == ir.CALL_APPLY_INSTANCE:
                inner = self.first(call.target.body.components, ctx + (id(call),), None)
                if inner is not None:
                    return inner
                continue
            return (id(s), ctx)
        return cont

    def branch(self, s: ir.Node | None, ctx: tuple[int, ...], cont: Any) -> Any:
        return self.first([s], ctx, cont) if s is not None else cont

    def record(self, call: ir.MethodCallExpression, successors: Any) -> None:
        table = call.target
        self.sites.setdefault(id(table), []).append((successors, call, table))

    def statement(self, s: ir.Node, ctx: tuple[int, ...], cont: Any) -> None:
        if isinstance(s, ir.BlockStatement):
            self.walk(s.components, ctx, cont)
        elif isinstance(s, ir.IfStatement):
            applied = _table_apply_in(s.condition)
            if applied is not None:
                outcome = _outcome_test(s.condition)
                taken = self.branch(s.if_true, ctx, cont)
                other = self.branch(s.if_false, ctx, cont)
                if outcome is None:  # a condition combining more than the table's result
                    self.record(applied, ("expression", id(s), ctx))
                else:
                    self.record(applied, (outcome, taken, other))
                self._other_applies(s.condition, applied, ctx)
            self.statement(s.if_true, ctx, cont)
            if s.if_false is not None:
                self.statement(s.if_false, ctx, cont)
        elif isinstance(s, ir.SwitchStatement):
            applied = _table_apply_in(s.expression)
            if applied is not None:
                edges = []
                pending: list[str] = []
                for case in s.cases:
                    label = "default" if isinstance(case.label, ir.DefaultExpression) \
                        else getattr(case.label, "name", str(id(case.label)))
                    pending.append(label)
                    if case.statement is not None:  # fall-through labels share a body
                        target = self.branch(case.statement, ctx, cont)
                        edges += [(label, target) for label in pending]
                        pending = []
                edges += [(label, cont) for label in pending]
                self.record(applied, ("switch", tuple(edges), cont))
            for case in s.cases:
                if case.statement is not None:
                    self.statement(case.statement, ctx, cont)
        elif isinstance(s, ir.MethodCallStatement):
            call = s.call
            if call.kind == ir.CALL_TABLE_APPLY:
                self.record(call, ("next", cont))
            elif call.kind == ir.CALL_APPLY_INSTANCE and isinstance(call.target, ir.P4Control):
                self.walk(call.target.body.components, ctx + (id(call),), cont)
            else:
                self._other_applies(s, None, ctx)
        elif isinstance(s, (ir.ForStatement, ir.ForInStatement)):
            body = s.body
            self.statement(body, ctx, self.first([body], ctx, cont))
        else:
            self._other_applies(s, None, ctx)

    def _other_applies(self, node: ir.Node, seen: ir.Node | None, ctx: tuple[int, ...]) -> None:
        """Table applications inside expressions: each is its own successor set."""
        for n in _nodes(node):
            if isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_TABLE_APPLY \
                    and n is not seen:
                self.record(n, ("expression", id(n), ctx))


def _nodes(node: Any) -> Iterator[ir.Node]:
    """``node`` and the IR nodes below it (source children, not annotations/back-references)."""
    stack = [node]
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(reversed(n))
            continue
        if not isinstance(n, ir.Node) or id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        for f in reversed(dataclasses.fields(n)):
            if f.compare and f.name != "annotations":
                value = getattr(n, f.name)
                if isinstance(value, (ir.Node, list)):
                    stack.append(value)


def _table_apply_in(e: ir.Expression) -> ir.MethodCallExpression | None:
    """The first table application in a condition or switch expression."""
    for n in _nodes(e):
        if isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_TABLE_APPLY:
            return n
    return None


def _outcome_test(cond: ir.Expression) -> str | None:
    """``hit``/``miss`` for ``t.apply().hit`` / ``.miss`` / ``!t.apply().hit``, else None."""
    negate = False
    while isinstance(cond, ir.Unary) and cond.op == "!":
        negate = not negate
        cond = cond.expr
    if isinstance(cond, ir.Member) and isinstance(cond.expr, ir.MethodCallExpression) \
            and cond.expr.kind == ir.CALL_TABLE_APPLY and cond.member in ("hit", "miss"):
        hit = (cond.member == "hit") != negate
        return "hit" if hit else "miss"
    return None


def _normalise(successors: Any) -> Any:
    """``if (t.apply().miss) A else B`` has the edges of ``if (t.apply().hit) B else A``."""
    if isinstance(successors, tuple) and successors and successors[0] == "miss":
        return ("hit", successors[2], successors[1])
    return successors


def _tables_with_multiple_successors(program: Program) -> list[Diagnostic]:
    out = []
    for role, block in program.blocks.items():
        if not isinstance(block.decl, ir.P4Control):
            continue
        walker = _Successors()
        walker.walk(block.decl.body.components, (), _END)
        for sites in walker.sites.values():
            distinct = {_normalise(s) for s, _, _ in sites}
            if len(distinct) < 2:
                continue
            table = sites[0][2]
            first, second = sites[0][1], sites[1][1]
            out.append(Diagnostic(
                ERROR,
                f"Program is not supported by this target, because table {table.fqn or table.name}"
                f" has multiple successors (it is applied at {first.loc} and at {second.loc} of "
                f"{role}; BMv2's simple_switch applies a table at most once per control: apply "
                "it once, or use a second table)",
                second.loc, "table applied more than once"))
    return out


# ---------------------------------------------------------------- const entries with priorities

def _const_entry_priorities(program: Program) -> list[Diagnostic]:
    out = []
    for table in program.tables.values():
        if not table.entries_const:
            continue
        for entry in table.entries or []:
            annotation = ir.find_annotation(entry, "priority")
            if annotation is not None:
                out.append(Diagnostic(
                    WARNING,
                    "The @priority annotation on Entry is not part of the P4 specification, "
                    "nor of the P4Runtime specification, and will be ignored (p4c's "
                    "front-end warning; p4c-bm2-ss still writes the annotation into the BMv2 "
                    "JSON of table "
                    f"{table.fqn or table.name}, where the smaller number wins, as on "
                    "netweft; P4Runtime's entries for the table do not carry it)",
                    annotation.loc if annotation.loc.line else entry.loc,
                    "@priority on a const entry"))
                continue
            if entry.priority_expr is not None:
                out.append(Diagnostic(
                    ERROR,
                    f"Table with 'const' entries cannot have priorities (table "
                    f"{table.fqn or table.name}: p4c ranks const entries by their order; "
                    "drop the priority, or make the entries non-const)",
                    entry.priority_expr.loc if entry.priority_expr.loc.line else entry.loc,
                    "priority in const entries"))
                break  # p4c reports the first entry with a priority
    return out


# ---------------------------------------------------------------- deprecated externs

def _reachable(program: Program, roles: tuple[str, ...] | None = None) -> Iterator[ir.Node]:
    """Every node of the code the program runs (in the blocks of ``roles``, or all):
    its blocks, with the sub-controls, sub-parsers, functions and actions they call or
    their tables name (once each)."""
    work: list[Any] = [b.decl for r, b in program.blocks.items() if roles is None or r in roles]
    done: set[int] = set()
    while work:
        decl = work.pop()
        if id(decl) in done:
            continue
        done.add(id(decl))
        for n in _nodes(decl):
            yield n
            if isinstance(n, ir.MethodCallExpression) and n.kind in (
                    ir.CALL_APPLY_INSTANCE, ir.CALL_FUNCTION, ir.CALL_ACTION) \
                    and isinstance(n.target, (ir.P4Control, ir.P4Parser, ir.Function,
                                              ir.P4Action)):
                work.append(n.target)
            elif isinstance(n, ir.ActionRef) and isinstance(n.action, ir.P4Action):
                work.append(n.action)


def _deprecated_externs(program: Program) -> list[Diagnostic]:
    out = []
    seen: set[int] = set()
    for n in _reachable(program):
        if isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_EXTERN_FUNCTION \
                and n.method_name in DEPRECATED_EXTERNS and id(n) not in seen:
            seen.add(id(n))
            out.append(Diagnostic(
                ERROR,
                f"{n.method_name}: unknown extern function (p4c-bm2-ss no longer compiles "
                f"v1model's deprecated {n.method_name}; use "
                f"{DEPRECATED_EXTERNS[n.method_name]} with a @field_list index)",
                n.loc, f"deprecated extern {n.method_name}"))
    return out


# ---------------------------------------------------------------- for-in loops

def _for_in_loops(program: Program) -> list[Diagnostic]:
    """p4c-bm2-ss's midend (CheckUnsupported) refuses ``for (T v in ...)``."""
    return [Diagnostic(ERROR, "BMV2 does not support for-in loops (write a counting "
                              "'for (init; cond; update)' loop instead)", n.loc, "for-in loop")
            for n in _reachable(program) if isinstance(n, ir.ForInStatement)]


# ---------------------------------------------------------------- switch statements in actions

def _switches_in_actions(program: Program) -> list[Diagnostic]:
    """p4c-bm2-ss's midend (EliminateSwitch): no ``switch`` in an action, nor in a
    function an action calls (functions are inlined into the action)."""
    out = []
    seen: set[int] = set()
    actions = [n for n in _reachable(program) if isinstance(n, ir.P4Action)]
    for action in actions:
        work: list[Any] = [action.body]
        done: set[int] = set()
        while work:
            body = work.pop()
            if id(body) in done:
                continue
            done.add(id(body))
            for n in _nodes(body):
                if isinstance(n, ir.SwitchStatement) and id(n) not in seen:
                    seen.add(id(n))
                    out.append(Diagnostic(
                        ERROR, "switch statements not supported in actions on this target "
                               f"(in action {action.name}; use if/else)", n.loc,
                        "switch statement in an action"))
                elif isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_FUNCTION \
                        and isinstance(n.target, ir.Function):
                    work.append(n.target.body)
    return out


# ---------------------------------------------------------------- select ranges

def _non_constant_select_ranges(program: Program) -> list[Diagnostic]:
    """p4c-bm2-ss's midend (ReplaceSelectRange) turns ``lo .. hi`` select cases into
    masks, so both ends must be compile-time constants."""
    out = []
    for n in _reachable(program):
        if not isinstance(n, ir.SelectCase):
            continue
        keysets = n.keyset.components if isinstance(n.keyset, ir.ListExpression) \
            else [n.keyset]
        for k in keysets:
            if isinstance(k, ir.Binary) and k.op == "..":
                for end in (k.left, k.right):
                    if not isinstance(end, ir.Constant):
                        out.append(Diagnostic(
                            ERROR, "Range boundaries must be a compile-time constants. "
                                   "(a select range's ends must be constants for BMv2)",
                            end.loc, "non-constant select range"))
    return out


# ---------------------------------------------------------------- registers of structs

def _struct_register_reads(program: Program) -> list[Diagnostic]:
    """p4c-bm2-ss: a BMv2 register cell is a bit string, so ``register<S>`` with a
    struct or header ``S`` cannot be read ("writing to a structure is not supported on
    this target", at the read's result argument)."""
    out = []
    for n in _reachable(program):
        if not (isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_EXTERN_METHOD
                and n.method_name == "read" and n.bound_args):
            continue
        inst = getattr(n.instance, "decl", None)
        ext = getattr(inst, "extern", None)
        if ext is None or ext.extern.name != "register" or not ext.type_args \
                or not isinstance(ext.type_args[0], ir.Type_StructLike):
            continue
        result = n.bound_args[0]
        out.append(Diagnostic(
            ERROR, f"{expression_text(result)}: writing to a structure is not supported on "
                   f"this target (register '{inst.name}' holds {ext.type_args[0].name}; "
                   "BMv2 registers hold bit<W> values)", result.loc, "register of a struct"))
    return out


# ---------------------------------------------------------------- tables applied in arguments

def _table_applies_in_action_arguments(program: Program) -> list[Diagnostic]:
    """p4c-bm2-ss: an action's argument (in a call or a table's action list) cannot
    apply a table ("table invocation in action argument")."""
    out = []
    seen: set[int] = set()
    for n in _reachable(program):
        if isinstance(n, ir.ActionRef) and isinstance(n.expression, ir.MethodCallExpression):
            args = n.expression.args
        elif isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_ACTION:
            args = n.args
        else:
            continue
        for a in args:
            apply = _table_apply_in(a)
            if apply is not None and id(apply) not in seen:
                seen.add(id(apply))
                out.append(Diagnostic(
                    ERROR, f"{expression_text(apply)}: table invocation in action argument "
                           "(apply the table before, into a local variable)", apply.loc,
                    "table applied in an action argument"))
    return out


# ---------------------------------------------------------------- clones in the wrong block

_CLONES = ("clone", "clone_preserving_field_list", "clone3")


def _clones_outside_their_block(program: Program) -> list[Diagnostic]:
    """p4c-bm2-ss: a clone of type I2E only in ingress, E2E only in egress."""
    out = []
    for role, wanted in (("ingress", "E2E"), ("egress", "I2E")):
        seen: set[int] = set()
        for n in _reachable(program, (role,)):
            if not (isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_EXTERN_FUNCTION
                    and n.method_name in _CLONES and n.bound_args and id(n) not in seen):
                continue
            seen.add(id(n))
            kind = n.bound_args[0]
            if isinstance(kind, ir.Member) and kind.member == wanted:
                block = "ingress" if wanted == "I2E" else "egress"
                out.append(Diagnostic(
                    ERROR,
                    f"'{n.method_name}({wanted}, ...) not invoked in {block} (p4c-bm2-ss: "
                    f"a {wanted} clone is only supported in the {block} control; this call "
                    f"runs in {role})", n.loc, f"{wanted} clone in {role}"))
    return out


# ---------------------------------------------------------------- shadowing table properties

def _parameter_names(node: Any) -> set[str]:
    params = list(getattr(node, "params", []) or []) + list(getattr(node, "ctor_params", [])
                                                            or [])
    return {p.name for p in params}


def _local_names(node: Any) -> set[str]:
    names = (getattr(d, "name", None) for d in getattr(node, "locals", []) or [])
    return {name for name in names if isinstance(name, str)}


def _shadowing_table_properties(program: Program) -> list[Diagnostic]:
    top = {getattr(d, "name", None) for d in program.ast.objects}
    out = []
    controls = [n for n in _reachable(program) if isinstance(n, ir.P4Control)]
    seen: set[tuple[str, int, int]] = set()
    for control in controls:
        parameters = _parameter_names(control)
        enclosing = parameters | _local_names(control) | {n for n in top if isinstance(n, str)}
        for d in control.locals:
            if not isinstance(d, ir.P4Table):
                continue
            for prop in d.properties:
                if prop.name not in _TABLE_PROPERTIES or prop.name not in enclosing:
                    continue
                key = (prop.loc.file, prop.loc.line, prop.loc.col)
                if key in seen:
                    continue
                seen.add(key)
                if prop.name in parameters:
                    out.append(Diagnostic(
                        ERROR,
                        f"declaration of '{prop.name}' shadows a parameter '{prop.name}' "
                        f"(p4c refuses a property of table {d.name} named as a parameter of "
                        f"control {control.name}; rename the parameter)",
                        prop.loc, f"table property '{prop.name}' shadows a parameter"))
                    continue
                out.append(Diagnostic(
                    WARNING,
                    f"'{prop.name}' shadows '{prop.name}' (p4c's shadowing warning: table "
                    f"{d.name}'s property {prop.name} has the name of a declaration in scope; "
                    "rename that one to silence it)",
                    prop.loc, f"'{prop.name}' shadowed by a table property"))
    return out
