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
    NativeActionProfile,
    NativeCounterArray,
    NativeMatchTable,
    NativeMeterArray,
    NativeRegisterArray,
    PipelineLock,
)
from netweft.emulation.native.value_sets import NativeValueSet
from netweft.emulation.v1model.action_profiles import ActionProfile
from netweft.emulation.v1model.hash_algorithms import CrcConfig, HashAlgorithms
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
    meters: dict[str, NativeMeterArray]
    value_sets: dict[str, NativeValueSet] = field(default_factory=dict)

    @property
    def direct_meter_types(self) -> dict[str, str]:
        """Table -> MeterType of its direct meter, for the tables that have one."""
        return {fqn: info.direct_meter for fqn, info in self.generated.tables.items()
                if info.direct_meter is not None}

    def action_profiles(self, algorithms: HashAlgorithms) -> dict[str, ActionProfile]:
        """Table -> its action profile or selector (one object per instance, shared by
        the tables it implements), as the Python back end builds them."""
        by_instance: dict[str, NativeActionProfile] = {}
        out: dict[str, ActionProfile] = {}
        ffi, lib = self.library.ffi, self.library.lib
        for fqn, table in self.tables.items():
            info = self.generated.tables[fqn]
            if info.profile is None:
                continue
            prof = by_instance.get(info.profile)
            if prof is None:
                algo, width = info.selector if info.selector else (None, 0)
                prof = NativeActionProfile(info.profile,
                                           algorithms.get(algo) if algo else None, width,
                                           ffi, lib, table._lock)
                by_instance[info.profile] = prof
            out[fqn] = prof
        return out

    def set_crc(self, config: CrcConfig) -> None:
        """Configure ``crc16_custom`` (a 16-bit config) or ``crc32_custom`` (32 bits)."""
        with self.lock:
            rc = self.library.lib.nw_pipeline_set_crc(
                self.pointer, config.width, config.polynomial, config.initial_remainder,
                config.final_xor_value, int(config.data_reflected),
                int(config.remainder_reflected))
        if rc != 0:
            raise ValueError(f"no custom CRC of width {config.width}")

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
        strides = gen.register_strides or [1] * len(gen.registers)
        for i, (name, size, width, signed) in enumerate(gen.registers):
            registers[name] = NativeRegisterArray(name, size, width, signed, ffi,
                                                  lib.nw_pipeline_register(pointer, i),
                                                  strides[i])
        counters = {}
        for i, (name, size, ctype) in enumerate(gen.counters):
            counters[name] = NativeCounterArray(name, size, ctype, ffi,
                                                lib.nw_pipeline_counter(pointer, i))
        locked = PipelineLock(lock, lib, pointer)
        meters = {name: NativeMeterArray(name, size, mtype, lib.nw_pipeline_meter(pointer, i),
                                         locked)
                  for i, (name, size, mtype) in enumerate(gen.meters)}
        value_sets = {name: NativeValueSet(name, size, widths, i, lib, pointer, lock)
                      for i, (name, size, widths) in enumerate(gen.value_sets)}
        return cls(library, pointer, gen, tables, registers, counters, lock, meters,
                   value_sets)
