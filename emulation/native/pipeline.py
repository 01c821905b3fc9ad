"""A program's native pipeline: generated (once per program), compiled (once per
source, cached on disk), instantiated per switch with its control-plane objects.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from netweft.emulation.native.build import DEFAULT_FLAGS, BuildError, Library, build
from netweft.emulation.native.c_program import GeneratedProgram, generate
from netweft.emulation.native.objects import (
    NativeCounterArray,
    NativeMatchTable,
    NativeRegisterArray,
)
from netweft.emulation.native.value_sets import NativeValueSet
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.program import Program

__all__ = ["BuildError", "NativePipeline", "generated", "NativeUnavailable"]

_GENERATED: weakref.WeakKeyDictionary[Program, GeneratedProgram] = weakref.WeakKeyDictionary()


class NativeUnavailable(Exception):
    """The native back end cannot run this program here; ``str()`` says why in one line."""


def generated(program: Program) -> GeneratedProgram:
    """The C of ``program`` (generated once per program object)."""
    cached = _GENERATED.get(program)
    if cached is None:
        cached = generate(program)
        _GENERATED[program] = cached
    return cached


@dataclass
class NativePipeline:
    """One switch's instance of a compiled program and its control-plane objects."""

    library: Library
    pointer: Any
    generated: GeneratedProgram
    tables: dict[str, NativeMatchTable]
    registers: dict[str, NativeRegisterArray]
    counters: dict[str, NativeCounterArray]
    lock: Any    # an RLock: one packet or one control-plane update in C at a time
    value_sets: dict[str, NativeValueSet] = field(default_factory=dict)

    @classmethod
    def load(cls, program: Program, seed: int = 0, select_no_match_ends_parsing: bool = False,
             flags: tuple[str, ...] = DEFAULT_FLAGS) -> NativePipeline:
        """Generate, compile (or reuse the cached build) and instantiate ``program``.

        Raises :class:`NativeUnavailable` with the cause: a construct the C back end
        does not cover (with its file:line:col) or a missing/failing C compiler.
        """
        try:
            gen = generated(program)
        except P4Error as err:
            raise NativeUnavailable(str(err)) from None
        try:
            library = build(gen.source, flags)
        except BuildError as err:
            raise NativeUnavailable(str(err)) from None
        ffi, lib = library.ffi, library.lib
        raw = lib.nw_pipeline_new(seed & 0xFFFFFFFFFFFFFFFF)
        if raw == ffi.NULL:
            raise MemoryError("the native pipeline could not be allocated")
        pointer = ffi.gc(raw, lib.nw_pipeline_free)
        if select_no_match_ends_parsing:
            lib.nw_pipeline_set_select_no_match(pointer, -1)
        lock = threading.RLock()
        tables = {fqn: NativeMatchTable(info, ffi, lib, pointer, lock)
                  for fqn, info in gen.tables.items()}
        registers = {}
        for i, (name, size, width, signed) in enumerate(gen.registers):
            registers[name] = NativeRegisterArray(name, size, width, signed, ffi,
                                                  lib.nw_pipeline_register(pointer, i))
        counters = {}
        for i, (name, size, ctype) in enumerate(gen.counters):
            counters[name] = NativeCounterArray(name, size, ctype, ffi,
                                                lib.nw_pipeline_counter(pointer, i))
        value_sets = {name: NativeValueSet(name, size, widths, i, lib, pointer, lock)
                      for i, (name, size, widths) in enumerate(gen.value_sets)}
        return cls(library, pointer, gen, tables, registers, counters, lock, value_sets)
