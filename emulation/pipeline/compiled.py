"""Compile a checked program once into Python code, and instantiate it per switch.

:func:`lower_program` generates and ``compile()``s the module source (cached
per :class:`~netweft.p4.compiler.Program`); :func:`instantiate` executes
the code object in a fresh namespace bound to one switch's context, tables
and externs, and returns the six v1model block entry points.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from netweft.emulation.pipeline import runtime
from netweft.emulation.pipeline.codegen import Lowering, TableInfo
from netweft.emulation.pipeline.types import field_attr, is_aggregate
from netweft.emulation.v1model.hash_algorithms import hash_with_offset
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.program import BLOCK_ROLES, Program


@dataclass
class LoweredProgram:
    """The generated code of one program and what a switch needs to run it.

    It holds no reference to the :class:`Program` itself, so that the cache
    (weakly keyed by the program) lets both go together.
    """

    source_path: str
    source: str
    code: Any
    tables: dict[str, TableInfo]
    externs: dict[str, Any]              # global name -> ExternInstance
    value_sets: dict[str, ir.P4ValueSet]
    param_types: dict[str, list[ir.Type]] = field(default_factory=dict)
    field_lists: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)
    no_match_code: int = 0  # error.NoMatch, raised by a select no case matches


_CACHE: weakref.WeakKeyDictionary[Program, LoweredProgram] = weakref.WeakKeyDictionary()
_TRACED_CACHE: weakref.WeakKeyDictionary[Program, LoweredProgram] = weakref.WeakKeyDictionary()


def lower_program(program: Program, trace: bool = False) -> LoweredProgram:
    """Generate and compile the Python code of ``program`` (once per program).

    ``trace``: the code also reports parser states to ``TRACE_STATE`` (a global
    the caller supplies), for a per-packet trace; the default code has no such calls.
    """
    cache = _TRACED_CACHE if trace else _CACHE
    cached = cache.get(program)
    if cached is not None:
        return cached
    missing = [r for r in BLOCK_ROLES if r not in program.blocks]
    if missing:
        raise P4Error(f"the program has no {', '.join(missing)} block (is main a V1Switch?)",
                      program.main.loc if program.main is not None else None)
    try:
        lowered = _lower(program, trace)
    except P4Error:
        raise
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as err:
        raise P4Error(f"internal error in the netweft back end ({type(err).__name__}: {err}); "
                      "please report it with the program",
                      program.main.loc if program.main is not None else None) from err
    cache[program] = lowered
    return lowered


def _lower(program: Program, trace: bool) -> LoweredProgram:
    lw = Lowering(program, trace)
    lw.set_owners()
    wrappers = []
    param_types: dict[str, list[ir.Type]] = {}
    for role in BLOCK_ROLES:
        decl = program.blocks[role].decl
        fname = lw.lower_block(decl)
        cname, slot_of, _ = lw.frame_of(decl)
        params = decl.params
        param_types[role] = [p.type for p in params]
        names = [f"a{i}" for i in range(len(params))]
        lines = [f"def RUN_{role}({', '.join(names)}):", f"    F = {cname}()"]
        for p, n in zip(params, names, strict=True):
            lines.append(f"    F.{slot_of[id(p)]} = {n}")
        if role == "parser":
            lines.append(f"    {fname}(F)")
        else:
            lines += ["    try:", f"        {fname}(F)", "    except ExitBlock:", "        pass"]
        # scalar out/inout parameters are not used by v1model blocks; aggregates are shared
        wrappers.append("\n".join(lines) + "\n")
        for i, t in enumerate(param_types[role]):
            if is_aggregate(t):
                wrappers.append(f"def NEW_{role}_{i}():\n    return {lw.types.new_expr(t)}\n")
    # all tables of the program exist in the control plane, applied or not
    for table in program.tables.values():
        lw.lower_table(table, None)
    source = "\n".join(lw.types.source + lw.chunks + wrappers)
    try:
        code = compile(source, f"<netweft pipeline {program.source_path}>", "exec")
    except SyntaxError as err:  # a back-end bug; say where
        raise P4Error(f"internal error in the netweft back end (generated code: {err}); "
                      "please report it with the program",
                      program.main.loc if program.main is not None else None) from None
    field_lists = _field_lists(program)
    field_lists.update(lw.data_field_lists)
    return LoweredProgram(program.source_path, source, code, lw.tables, lw.externs_by_var,
                          lw.value_sets, param_types, field_lists, lw.ecode("NoMatch"))


def _field_lists(program: Program) -> dict[int, list[tuple[str, ...]]]:
    """``@field_list(n)`` paths in the user metadata struct (ingress parameter 1)."""
    out: dict[int, list[tuple[str, ...]]] = {}
    ingress = program.blocks.get("ingress")
    if ingress is None or len(ingress.decl.params) < 2:
        return out
    meta_t = ingress.decl.params[1].type
    constants = {d.name: d for d in program.ast.objects
                 if isinstance(d, ir.Declaration_Constant)}

    def visit(t: Any, path: tuple[str, ...]) -> None:
        if not isinstance(t, ir.Type_Struct):
            return
        for f in t.fields:
            ann = ir.find_annotation(f, "field_list")
            if ann is not None:
                for a in ann.args:
                    index = _field_list_index(a, constants)
                    if index is not None:
                        out.setdefault(index, []).append(path + (field_attr(f.name),))
            visit(f.type, path + (field_attr(f.name),))

    visit(meta_t, ())
    return out


def _field_list_index(arg: Any, constants: dict[str, ir.Declaration_Constant]) -> int | None:
    """The id a ``@field_list`` argument names: a number, or a constant's name
    (``@field_list(FL_PACKET_IN)`` with ``const int FL_PACKET_IN = 1``)."""
    if isinstance(arg, ir.Constant):
        return arg.value
    if isinstance(arg, ir.PathExpression):
        decl = arg.decl if isinstance(arg.decl, ir.Declaration_Constant) \
            else constants.get(arg.name)
        if decl is not None and isinstance(decl.initializer, ir.Constant):
            return decl.initializer.value
    return None


def _div(a: int, b: int) -> int:
    return a // b if b else 0


def _mod(a: int, b: int) -> int:
    return a % b if b else 0


def _shl(a: int, b: int, width: int, signed: bool) -> int:
    if b >= width:
        return 0
    v = (a << b) & ((1 << width) - 1)
    if signed and v >> (width - 1):
        v -= 1 << width
    return v


RUNTIME_GLOBALS: dict[str, Any] = {
    "ParserReject": runtime.ParserReject,
    "ExitBlock": runtime.ExitBlock,
    "AssertionFailed": runtime.AssertionFailed,
    "PacketCursor": runtime.PacketCursor,
    "HeaderStack": runtime.HeaderStack,
    "union_set_valid": runtime.union_set_valid,
    "union_is_valid": runtime.union_is_valid,
    "union_emit": runtime.union_emit,
    "hash_offset": hash_with_offset,
    "_div": _div,
    "_mod": _mod,
    "_shl": _shl,
}


def instantiate(lowered: LoweredProgram, context: Any, objects: dict[str, Any],
                select_no_match_ends_parsing: bool = False) -> dict[str, Callable[..., Any]]:
    """Execute the code for one switch: ``context`` is ``X``, ``objects`` the tables/externs.

    ``select_no_match_ends_parsing``: a select without a matching case ends parsing
    with no error (BMv2) rather than with ``error.NoMatch`` (P4-16).
    """
    ns: dict[str, Any] = dict(RUNTIME_GLOBALS)
    ns["X"] = context
    ns["SELECT_NO_MATCH"] = None if select_no_match_ends_parsing else lowered.no_match_code
    ns.update(objects)
    exec(lowered.code, ns)  # noqa: S102 - our own generated code
    return ns
