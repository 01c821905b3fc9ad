"""Lowering of the typed IR into Python source: expressions, statements, blocks.

Every control and parser becomes a Python function taking a *frame* (a
generated ``__slots__`` object holding the block's parameters and
block-level variables); actions and table applies are module-level
functions taking the same frame.  Header, union, struct and stack values
are objects assigned by copying into them; scalars are ints and bools with
P4's width rules applied at each operation.  Out/inout scalar parameters of
actions, functions and sub-blocks are returned as a tuple and assigned by
the caller (copy-in/copy-out); aggregate ones are passed by reference unless
the callee could observe aliasing (:mod:`~netweft.emulation.pipeline.aliasing`),
in which case they are copied in and back.  ``for`` loops become Python
``while``/``for`` loops.

The generated module refers to a few globals that
:mod:`netweft.emulation.pipeline.compiled` provides: the runtime helpers,
the per-switch context ``X`` (time, packet length, clone/resubmit requests,
digests ...), and the table and extern objects (``T_*``, ``E_*``).
"""

from __future__ import annotations

from typing import Any

from netweft.emulation.pipeline.aliasing import AliasAnalysis
from netweft.emulation.pipeline.emitter import Body, python_identifier
from netweft.emulation.pipeline.lower_calls import CallLowering
from netweft.emulation.pipeline.lower_expressions import ExpressionLowering
from netweft.emulation.pipeline.lower_parsers import ParserLowering
from netweft.emulation.pipeline.lower_statements import StatementLowering
from netweft.emulation.pipeline.lower_tables import TableInfo, TableLowering
from netweft.emulation.pipeline.types import TypeClasses, field_attr, is_aggregate, unsupported
from netweft.p4.compiler import ir
from netweft.p4.compiler.program import Program

__all__ = ["Body", "Lowering", "TableInfo"]


class Lowering(ExpressionLowering, StatementLowering, ParserLowering, CallLowering,
               TableLowering):
    """Generates the Python module for one program.

    Its parts (the bases) use each other through
    :class:`~netweft.emulation.pipeline.lowering_host.LoweringHost`, which a
    Lowering is."""

    def __init__(self, program: Program, trace: bool = False) -> None:
        self.prog = program
        # trace: parser states call TRACE_STATE(parser, state) (packet trace; off: no calls)
        self.trace = trace
        self.types = TypeClasses()
        self.aliases = AliasAnalysis()
        self.chunks: list[str] = []
        self._n = 0
        self.expr_depth = 0  # expressions being lowered, outermost first (see expr())
        # lvalue parts evaluated ahead of time: id(index or next/last node) -> temporary
        self.pins: dict[int, str] = {}
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
        # id(action or table) -> the control whose frame it uses (see set_owners)
        self.action_owner: dict[int, ir.P4Control] = {}
        self.table_owner: dict[int, ir.P4Control] = {}
        for inst in program.externs.values():
            var = "E_" + python_identifier(inst.name)
            self.extern_vars[id(inst.decl)] = var
            self.externs_by_var[var] = inst
        for name, vs in program.value_sets.items():
            var = "VS_" + python_identifier(name)
            self.value_set_vars[id(vs)] = var
            self.value_sets[var] = vs

    def tmp(self, prefix: str = "t") -> str:
        """A fresh Python name for a temporary."""
        self._n += 1
        return f"_{prefix}{self._n}"

    def ecode(self, name: str) -> int:
        """The numeric code of ``error.<name>`` (0 if the program has no such error)."""
        return self.errors.get(name, 0)

    def lower_block(self, decl: ir.P4Control | ir.P4Parser) -> str:
        """Generate (once) the function of a control/parser; returns its name."""
        key = id(decl)
        if key in self.block_funcs:
            return self.block_funcs[key]
        fname = "B_" + python_identifier(decl.fqn or decl.name) + f"_{len(self.block_funcs)}"
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
            self.lower_parser_states(decl, body)
        self.chunks.append(f"def {fname}(F):\n" + "\n".join(body.lines or ["    pass"]) + "\n")
        return fname

    def frame_of(self, decl: ir.P4Control | ir.P4Parser
                 ) -> tuple[str, dict[int, str], dict[int, str]]:
        """The frame class of a block: slots for its parameters and block-level variables."""
        key = id(decl)
        if key in self.frames:
            return self.frames[key]
        cname = "Fr_" + python_identifier(decl.fqn or decl.name) + f"_{len(self.frames)}"
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

    def _bind_params(self, decl: ir.P4Control | ir.P4Parser, body: Body) -> dict:
        """Scope entries for the block's parameters (aggregates aliased to locals)."""
        _cname, slot_of, _ = self.frame_of(decl)
        for p in decl.params:
            slot = slot_of[id(p)]
            if is_aggregate(p.type) or isinstance(p.type, ir.Type_ExternInstance):
                name = "a_" + p.name
                body.emit(f"{name} = F.{slot}")
                body.scope[id(p)] = name
            else:
                body.scope[id(p)] = f"F.{slot}"
        return slot_of

    def _prologue(self, decl: ir.P4Control | ir.P4Parser, body: Body) -> None:
        slot_of = self._bind_params(decl, body)
        for loc in decl.locals:
            if isinstance(loc, ir.Declaration_Variable):
                slot = slot_of[id(loc)]
                body.scope[id(loc)] = f"F.{slot}"

    def alias_prologue(self, decl: ir.P4Control | ir.P4Parser, body: Body) -> None:
        """Prologue for actions/table applies: aliases of the frame, no initialisation."""
        slot_of = self._bind_params(decl, body)
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
            init = self.initial_value(loc, body)
            body.emit(f"{target} = {init}")
            if is_aggregate(loc.type):
                name = "l_" + loc.name
                body.emit(f"{name} = {target}")
                body.scope[id(loc)] = name

    def initial_value(self, var: ir.Declaration_Variable, body: Body) -> str:
        """Python source of a variable's initial value (its type's default if none)."""
        t = var.type
        if var.initializer is None:
            return self.types.new_expr(t)
        if is_aggregate(t):
            tmp = self.tmp("init")
            body.emit(f"{tmp} = {self.types.new_expr(t)}")
            self.assign_to(tmp, t, var.initializer, body)
            return tmp
        return self.expr(var.initializer, body)

    def fresh_number(self) -> int:
        """A number no generated name has used yet."""
        self._n += 1
        return self._n

    def set_owners(self) -> None:
        """Map every action and table to the control whose frame it uses."""
        self.action_owner.clear()
        self.table_owner.clear()
        seen: set[int] = set()

        def visit(decl: Any) -> None:
            if id(decl) in seen:
                return
            seen.add(id(decl))
            for loc in getattr(decl, "locals", []):
                if isinstance(loc, ir.P4Action) and isinstance(decl, ir.P4Control):
                    self.action_owner[id(loc)] = decl
                elif isinstance(loc, ir.P4Table) and isinstance(decl, ir.P4Control):
                    self.table_owner[id(loc)] = decl
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
                path.insert(0, field_attr(node.member))
                node = node.expr
            root_t = getattr(node, "type", None)
            if not isinstance(node, ir.PathExpression) or not path:
                raise unsupported("a preserved field that is not a metadata field", c)
            if root_t is user_meta or (isinstance(root_t, ir.Type_Struct)
                                       and getattr(user_meta, "name", None) == root_t.name):
                paths.append(tuple(path))
            elif getattr(root_t, "name", "") == "standard_metadata_t":
                paths.append(("@sm", *path))
            else:
                raise unsupported("a preserved field that is not a metadata field", c)
        index = 1_000_000 + len(self.data_field_lists)
        self.data_field_lists[index] = paths
        return index
