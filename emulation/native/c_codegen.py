"""Lowering of the typed IR into C: the generator object and its per-program state.

:class:`CLowering` combines the expression, statement, block, table and
extern lowerings (one mixin each, as :mod:`netweft.emulation.pipeline` does
for Python); :mod:`.c_program` assembles the translation unit around what it
generated.  Anything it does not cover raises a :class:`P4Error` naming the
construct and its file:line:col (see :func:`.c_types.unsupported`).
"""

from __future__ import annotations

from typing import Any

from netweft.emulation.native.c_aggregates import CAggregateLowering
from netweft.emulation.native.c_blocks import CBlockLowering, Frame
from netweft.emulation.native.c_expressions import CExpressionLowering
from netweft.emulation.native.c_externs import CExternLowering
from netweft.emulation.native.c_flow import CFlowLowering
from netweft.emulation.native.c_statements import CStatementLowering
from netweft.emulation.native.c_tables import CTableLowering, NativeTableInfo
from netweft.emulation.native.c_types import CTypes, scalar_width, unsupported
from netweft.emulation.pipeline.aliasing import AliasAnalysis
from netweft.p4.compiler import ir
from netweft.p4.compiler.program import Program


class CLowering(CExpressionLowering, CStatementLowering, CBlockLowering, CTableLowering,
                CExternLowering, CAggregateLowering, CFlowLowering):
    """Generates the C of one program."""

    def __init__(self, program: Program) -> None:
        self.prog = program
        self.types = CTypes()
        self.aliases = AliasAnalysis()
        self.chunks: list[str] = []
        self.protos: list[str] = []
        self.frame_defs: list[str] = []
        self._n = 0
        self.emit_bytes = 0
        self.frames: dict[int, Frame] = {}
        self.block_funcs: dict[int, str] = {}
        self.action_funcs: dict[int, str] = {}
        self.function_funcs: dict[int, str] = {}
        self.table_funcs: dict[int, str] = {}
        self.tables: dict[str, NativeTableInfo] = {}
        self.errors = {name: i for i, name in enumerate(program.errors)}
        # id(Declaration_Instance) -> (kind, index, size, width)
        self.externs: dict[int, tuple[str, int, int, int]] = {}
        self.registers: list[tuple[str, int, int, bool]] = []   # (name, size, width, signed)
        self.counters: list[tuple[str, int, str]] = []          # (name, size, type)
        self.value_sets: list[tuple[str, int, list[int]]] = []  # (name, size, widths)
        self.meters: list[tuple[str, int, str]] = []            # (name, size, type)
        self._set_externs()
        # (block, member, stride) per register: where its cells live (register_layout)
        self.register_layout = register_layout(self.registers)
        self._set_owners()

    def tmp(self, prefix: str = "t") -> str:
        self._n += 1
        return f"_{prefix}{self._n}"

    def _next(self) -> int:
        self._n += 1
        return self._n

    def ecode(self, name: str) -> int:
        return self.errors.get(name, 0)

    def _set_externs(self) -> None:
        from netweft.emulation.switch import _const, _enum_name
        from netweft.emulation.v1model.counters import COUNTER_TYPES
        for inst in self.prog.externs.values():
            kind = inst.extern_type
            if kind == "register":
                t = inst.type_args[0] if inst.type_args else None
                width = scalar_width(t, inst.decl) if t is not None else 32
                if width > 128:
                    raise unsupported(f"register {inst.name} of {width}-bit cells", inst.decl)
                size = int(_const(inst.args[0]))
                self.externs[id(inst.decl)] = ("register", len(self.registers), size, width)
                self.registers.append((inst.name, size, width,
                                       isinstance(t, ir.Type_Bits) and t.signed))
            elif kind == "counter":
                size = int(_const(inst.args[0]))
                ctype = _enum_name(inst.args[1], COUNTER_TYPES)
                self.externs[id(inst.decl)] = ("counter", len(self.counters), size, 0)
                self.counters.append((inst.name, size, ctype))
            elif not self.set_stateful_extern(inst):
                raise unsupported(f"the extern {kind} ({inst.name})", inst.decl)

    def _set_owners(self) -> None:
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


def register_layout(registers: list[tuple[str, int, int, bool]]) -> list[tuple[int, int, int]]:
    """Where each register's cells live: ``(block, member, stride)`` per register, cell
    ``j`` at word ``j * stride + member`` of allocation ``block``.

    Registers of one control (the same name up to the last dot) with cells of at most
    64 bits and the same size share a block, their cells interleaved: what a packet
    reads and writes at one index of all of them is adjacent in memory (aggregation.p4's
    lane registers, one per lane, all at the slot's index: K cache lines a packet with
    a block each, K / 8 interleaved).  Any other register has a block of its own
    (stride 1).  Nothing outside the generated C and NativeRegisterArray sees it."""
    groups: dict[tuple[str, int], list[int]] = {}
    for i, (name, size, width, _signed) in enumerate(registers):
        if width <= 64 and size > 0:
            groups.setdefault((name.rpartition(".")[0], size), []).append(i)
    layout: list[tuple[int, int, int]] = [(-1, 0, 1)] * len(registers)
    block = 0
    for i in range(len(registers)):
        if layout[i][0] >= 0:
            continue
        name, size, width, _signed = registers[i]
        members = groups.get((name.rpartition(".")[0], size), [i]) if width <= 64 else [i]
        if i not in members:
            members = [i]
        for m, r in enumerate(members):
            layout[r] = (block, m, len(members))
        block += 1
    return layout
