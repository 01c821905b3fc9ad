"""The control-plane face of a native pipeline: tables, registers, counters, meters,
direct counters and meters, action profiles and selectors with the same Python
interface as the Python back end's (:mod:`netweft.emulation.v1model`).

:class:`NativeMatchTable` *is* a :class:`~netweft.emulation.v1model.match_table.MatchTable`
(same validation, normalisation, entry objects and priorities), which also
writes every change through to the C table; registers and counters keep their
cells in the pipeline's C memory, read and written in place.  So the P4Runtime
server, runtime files, ``netweft cli`` and the controllers drive both back ends
alike.  A table entry (:class:`NativeTableEntry`) keeps its direct counter,
meter and hit count in C memory it owns, and writes a change of its action (or selector
group) through; a selector group (:class:`NativeSelectorGroup`) writes its
members through.  Updates are applied between packets, each whole: the C calls of a
packet and of an update hold the pipeline's lock (a P4Runtime server writes
from its own threads), so an entry is never half-installed when a packet
looks it up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from netweft.emulation.native.c_tables import NativeTableInfo
from netweft.emulation.v1model.action_profiles import ActionProfile, SelectorGroup
from netweft.emulation.v1model.counters import CounterArray
from netweft.emulation.v1model.match_table import (
    ActionSpec,
    KeySpec,
    MatchTable,
    TableEntry,
    TableError,
)
from netweft.emulation.v1model.meters import GREEN, Meter, MeterArray
from netweft.emulation.v1model.registers import RegisterArray

_MAX_RATES = 4        # nw_meter_t (runtime/nw_meters.h)
_MAX_ARGS = 16        # NW_MAX_ARGS (runtime/nw_selectors.h)


def _be(value: int, nbytes: int) -> bytes:
    return value.to_bytes(nbytes, "big")


def action_words(args: Sequence[int], widths: Sequence[int]) -> list[int]:
    """Action data as the C table holds it: one word per argument, two above 64 bits."""
    out: list[int] = []
    for v, w in zip(args, widths, strict=True):
        if w > 64:
            out += [v >> 64, v & 0xFFFFFFFFFFFFFFFF]
        else:
            out.append(v)
    return out


class PipelineLock:
    """Both locks of a pipeline: Python's (packets the Python driver runs) and the C
    mutex (``nw_pipeline_lock``, taken by a C packet loop around its passes)."""

    def __init__(self, lock: Any, lib: Any, pipeline: Any) -> None:
        self._lock, self._lib, self._pipe = lock, lib, pipeline

    def __enter__(self) -> None:
        self._lock.acquire()
        self._lib.nw_pipeline_lock(self._pipe)

    def __exit__(self, *exc: object) -> None:
        self._lib.nw_pipeline_unlock(self._pipe)
        self._lock.release()


class NativeMatchTable(MatchTable):
    """A :class:`MatchTable` whose entries also live in a C table of the pipeline."""

    def __init__(self, info: NativeTableInfo, ffi: Any, lib: Any, pipeline: Any,
                 lock: Any) -> None:
        keys = [KeySpec(name, kind, width) for name, kind, width in info.keys]
        actions = [ActionSpec(a, tuple(info.action_params[a]), *info.action_flags[a])
                   for a in info.actions]
        self._info = info
        self._ffi, self._lib, self._pipe = ffi, lib, pipeline
        self._lock = PipelineLock(lock, lib, pipeline)   # see PipelineLock
        self._action_ids = {a: i for i, a in enumerate(info.actions)}
        self._widths = {a: [w for _n, w in info.action_params[a]] for a in info.actions}
        super().__init__(info.fqn, keys, actions, self._bind_native, info.decl.size)
        offs, lens, pos = [], [], 0
        for _name, kind, width in info.keys:
            nb = (width + 7) // 8
            if kind == "range":
                offs.append(pos)
                lens.append(nb)
            pos += nb
        if offs:
            if lib.nw_table_set_ranges(pipeline, info.index, len(offs), offs, lens) != 0:
                raise TableError(f"table {info.fqn}: too many range keys for the native "
                                 "back end")

    def _bind_native(self, action: str, args: tuple[int, ...]) -> tuple[int, list[int]]:
        return self._action_ids[action], action_words(args, self._widths[action])

    # -- write-through ---------------------------------------------------------------

    def _index(self, entry: TableEntry) -> None:
        super()._index(entry)
        with self._lock:
            self._push(entry)

    def _rebuild(self) -> None:
        with self._lock:       # no packet sees the table half rebuilt
            self._lib.nw_table_remove_all(self._pipe, self._info.index)
            super()._rebuild()     # re-indexes (and so re-pushes) every entry left

    def _new_entry(self, match: tuple[Any, ...], action: str, args: tuple[int, ...],
                   priority: int, seq: int, bound: Any) -> TableEntry:
        return NativeTableEntry(self, match, action, args, priority, seq, bound)

    def new_direct(self) -> Any:
        """C memory for one entry's direct counter, meter and hit count (None: the table
        has no direct resource and does not support idle timeouts)."""
        info = self._info
        if not info.direct_counter and info.direct_meter is None and not info.idle_timeout:
            return None
        direct = self._ffi.new("nw_direct_t *")
        direct.meter.bytes = int(self._info.direct_meter == "bytes")
        return direct

    def retarget(self, entry: NativeTableEntry) -> None:
        """Write an installed entry's (new) action or selector group through to C."""
        aid, words, group = self._target(entry.bound)
        with self._lock:
            rc = self._lib.nw_table_set_target(self._pipe, self._info.index, entry.seq, aid,
                                               words, len(words), group)
        if rc == -2:
            raise TableError(f"table {self.name}: the native table refused the action")

    def _target(self, bound: Any) -> tuple[int, list[int], Any]:
        if isinstance(bound, NativeSelectorGroup):
            return 0, [], bound.c_group
        aid, words = bound
        return aid, words, self._ffi.NULL

    def set_default(self, action: str, params: Mapping[str, object] | Sequence[object] = (),
                    const: bool = False, force: bool = False) -> None:
        super().set_default(action, params, const, force)
        aid, words = self.default_bound
        with self._lock:
            self._lib.nw_table_default(self._pipe, self._info.index, aid, words, len(words))

    def _push(self, entry: TableEntry) -> None:
        value, mask, lo, hi = bytearray(), bytearray(), bytearray(), bytearray()
        rank = 0
        for m, spec in zip(entry.match, self.keys, strict=True):
            w = spec.width
            nb = (w + 7) // 8
            full = (1 << w) - 1
            kind = spec.match_kind
            v = mk = low = high = 0
            if kind == "exact":
                v, mk = m[0], full
            elif kind == "lpm":
                v, plen = m
                mk = full ^ ((1 << (w - plen)) - 1)
                rank = plen
            elif kind == "ternary":
                v, mk = m
            elif kind == "optional":
                if m is not None:
                    v, mk = m[0], full
            elif kind == "range":
                low, high = m
            value += _be(v & mk, nb)
            mask += _be(mk, nb)
            lo += _be(low, nb)
            hi += _be(high, nb)
        if self.needs_priority or self._lpm_index is None:
            rank = entry.priority
        aid, words, group = self._target(entry.bound)
        k = self._info.key_bytes
        pad = bytes(k - len(value))
        direct = getattr(entry, "direct", None) or self._ffi.NULL
        rc = self._lib.nw_table_add_ext(self._pipe, self._info.index, entry.seq,
                                        bytes(value) + pad, bytes(mask) + pad, bytes(lo) + pad,
                                        bytes(hi) + pad, rank, entry.seq, aid, words,
                                        len(words), direct, group)
        if rc != 0:
            raise TableError(f"table {self.name}: the native table refused the entry "
                             f"(code {rc})")
        if isinstance(entry, NativeTableEntry):
            entry.installed = True


class DirectCounterCells:
    """An entry's ``[packets, bytes]`` in C memory, used as the Python back end's list
    (written under the pipeline lock: a packet's count is never lost in a write)."""

    __slots__ = ("_cells", "_lock")

    def __init__(self, cells: Any, lock: Any) -> None:
        self._cells, self._lock = cells, lock

    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Any:
        return iter((int(self._cells[0]), int(self._cells[1])))

    def __getitem__(self, i: int | slice) -> Any:
        return list(self)[i]

    def __setitem__(self, i: int | slice, value: Any) -> None:
        cells = list(self)
        cells[i] = value
        if len(cells) != 2:
            raise ValueError("a direct counter is [packets, bytes]")
        with self._lock:
            self._cells[0], self._cells[1] = int(cells[0]), int(cells[1])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, DirectCounterCells)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


class NativeTableEntry(TableEntry):
    """A :class:`TableEntry` of a native table: its direct counter, meter and (in a
    ``support_timeout`` table) hit count are C memory (they survive the table's
    rebuilds), and a new action or selector group given to ``bound`` is written
    through to the C entry.  In a table without them the counter, meter and hits are
    plain Python values, as in the Python back end."""

    def __init__(self, table: NativeMatchTable, *fields: Any) -> None:
        self.__dict__.update(_table=table, installed=False, _bound=None, _attached=False,
                             _plain_counter=[0, 0], _plain_meter=None, _plain_hits=0)
        self.direct = table.new_direct()
        self._meter = None if self.direct is None else NativeMeter(
            table._info.direct_meter or "bytes", table._ffi.addressof(self.direct, "meter"),
            self.direct, table._lock)
        super().__init__(*fields)

    @property   # type: ignore[override]
    def bound(self) -> Any:
        return self._bound

    @bound.setter
    def bound(self, value: Any) -> None:
        old = self._bound    # kept alive (a selector group's C memory) until C lets go
        self._bound = value
        if self.installed:
            self._table.retarget(self)
        del old

    @property   # type: ignore[override]
    def counter(self) -> Any:
        if self.direct is None:
            return self._plain_counter
        return DirectCounterCells(self.direct.counter, self._table._lock)

    @counter.setter
    def counter(self, value: Any) -> None:
        packets, nbytes = value
        if self.direct is None:
            self._plain_counter = [int(packets), int(nbytes)]
            return
        DirectCounterCells(self.direct.counter, self._table._lock)[:] = [packets, nbytes]

    @property   # type: ignore[override]
    def hits(self) -> int:
        """Lookups this entry won (support_timeout tables: C counts them).  Read under
        the pipeline lock, as a C packet loop's thread bumps the count."""
        if self.direct is None:
            return self._plain_hits
        with self._table._lock:
            return int(self.direct.hits)

    @hits.setter
    def hits(self, value: int) -> None:
        if self.direct is None:
            self._plain_hits = int(value)
            return
        with self._table._lock:
            self.direct.hits = int(value)

    @property   # type: ignore[override]
    def meter(self) -> Meter | None:
        if self._meter is None:
            return self._plain_meter
        return self._meter if self._attached else None

    @meter.setter
    def meter(self, value: Meter | None) -> None:
        """None: no meter (GREEN); a Meter: this entry's meter takes its rates (fresh)."""
        if self._meter is None:       # no direct meter in C: nothing reads it
            self._plain_meter = value
            return
        if value is self._meter:
            self._attached = True
            return
        self._meter.unset()
        if value is not None and value.configured:
            self._meter.set_rates(value.get_rates())
        self._attached = value is not None


class NativeMeter(Meter):
    """A :class:`Meter` whose rates and buckets are a C ``nw_meter_t`` (configured under
    the pipeline lock ``lock``: no packet sees a meter half configured)."""

    __slots__ = ("_c", "_owner", "_lock")

    def __init__(self, meter_type: str, cmeter: Any, owner: Any = None,
                 lock: Any = None) -> None:
        self.meter_type = meter_type
        self._c = cmeter
        self._owner = owner   # the C memory's owner, kept alive with this view
        self._lock = lock if lock is not None else contextlib.nullcontext()
        cmeter.bytes = int(meter_type == "bytes")

    @property
    def configured(self) -> bool:
        return self._c.nrates > 0

    def unset(self) -> None:
        """Back to unconfigured: every packet GREEN."""
        with self._lock:
            self._c.nrates = 0

    def set_rates(self, rates: Sequence[tuple[float, int]]) -> None:
        for (r1, _), (r2, _) in zip(rates, rates[1:], strict=False):
            if r1 > r2:
                raise ValueError("meter rates must be given from smaller to larger")
        if len(rates) > _MAX_RATES:
            raise ValueError(f"a meter takes at most {_MAX_RATES} rates")
        c = self._c
        n = len(rates)
        with self._lock:
            for i, (rate, burst) in enumerate(rates):   # larger rate first, as Meter keeps them
                r = c.rate[n - 1 - i]
                r.info_rate, r.burst = float(rate), int(burst)
                r.tokens, r.tokens_last, r.color = int(burst), 0, i + 1
            c.nrates = n

    def get_rates(self) -> list[tuple[float, int]]:
        c = self._c
        return [(c.rate[i].info_rate, int(c.rate[i].burst))
                for i in reversed(range(c.nrates))]

    def execute(self, now_us: int, size: int, pre_color: int = GREEN) -> int:
        """As :meth:`Meter.execute` (the C pipeline runs its own copy, nw_meter_execute)."""
        c = self._c
        units = 1 if self.meter_type == "packets" else size
        color = GREEN
        for i in range(c.nrates):
            r = c.rate[i]
            since_init = int(now_us * r.info_rate)
            fresh = since_init - r.tokens_last
            r.tokens_last = since_init
            r.tokens = min(r.tokens + fresh, r.burst)
            if r.tokens < units:
                color = r.color
                break
            r.tokens -= units
        return max(pre_color, color)


class NativeMeterArray(MeterArray):
    """A meter whose cells are the pipeline's C memory (``nw_meter_t[size]``)."""

    def __init__(self, name: str, size: int, meter_type: str, pointer: Any,
                 lock: Any = None) -> None:
        self.name, self.size, self.meter_type = name, size, meter_type
        self.meters = [NativeMeter(meter_type, pointer + i, None, lock) for i in range(size)]


class NativeSelectorGroup(SelectorGroup):
    """A :class:`SelectorGroup` whose members (``(action id, action words)``) are also a
    C ``nw_group_t`` the table entries pointing at the group use."""

    def __init__(self, members: list[Any], hash_fn: Any, output_width: int, ffi: Any,
                 lib: Any, lock: Any) -> None:
        self._ffi, self._lib, self._lock = ffi, lib, lock
        self.c_group = ffi.gc(lib.nw_group_new(), lib.nw_group_free)
        if self.c_group == ffi.NULL:
            raise MemoryError("the native selector group could not be allocated")
        self._members: list[Any] = []
        super().__init__(members, hash_fn, output_width)

    @property
    def members(self) -> list[Any]:
        return self._members

    @members.setter
    def members(self, members: list[Any]) -> None:
        n = len(members)
        actions = self._ffi.new("uint32_t[]", max(n, 1))
        nargs = self._ffi.new("uint32_t[]", max(n, 1))
        args = self._ffi.new("uint64_t[]", max(n, 1) * _MAX_ARGS)
        for i, (aid, words) in enumerate(members):
            actions[i], nargs[i] = aid, len(words)
            for j, w in enumerate(words):
                args[i * _MAX_ARGS + j] = w
        with self._lock:
            rc = self._lib.nw_group_set(self.c_group, n, actions, nargs, args)
        if rc != 0:
            raise TableError(f"the native selector group refused its members (code {rc})")
        self._members = list(members)


class NativeActionProfile(ActionProfile):
    """An :class:`ActionProfile` whose selector groups are :class:`NativeSelectorGroup`."""

    def __init__(self, name: str, hash_fn: Any, output_width: int, ffi: Any, lib: Any,
                 lock: Any) -> None:
        super().__init__(name, hash_fn, output_width)
        self._ffi, self._lib, self._lock = ffi, lib, lock

    def _native_group(self, bound: list[Any]) -> NativeSelectorGroup:
        if not self.is_selector:
            raise ValueError(f"{self.name} is an action profile, not a selector: no groups")
        return NativeSelectorGroup(bound, self._hash, self._width, self._ffi, self._lib,
                                   self._lock)

    def add_group(self, member_ids: list[int]) -> int:
        group = self._native_group([self.member(m)[2] for m in member_ids])
        gid = self._next_group
        self._next_group += 1
        self._groups[gid] = group
        return gid

    def new_group(self, bound_members: list[Any]) -> SelectorGroup:
        return self._native_group(bound_members)


class WideRegisterCells:
    """Cells of 65 to 128 bits: two ``uint64_t`` each (low word first, an ``unsigned
    __int128`` in C), read and written as Python ints."""

    def __init__(self, words: Any, size: int) -> None:
        self._words, self._size = words, size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, i: int) -> int:
        return int(self._words[2 * i]) | int(self._words[2 * i + 1]) << 64

    def __setitem__(self, i: int, value: int) -> None:
        self._words[2 * i] = value & 0xFFFFFFFFFFFFFFFF
        self._words[2 * i + 1] = (value >> 64) & 0xFFFFFFFFFFFFFFFF


class InterleavedRegisterCells:
    """Cells of at most 64 bits, ``stride`` words apart: a register whose cells the
    generated C interleaves with its control's other registers of the same size
    (c_codegen.register_layout)."""

    def __init__(self, words: Any, size: int, stride: int) -> None:
        self._words, self._size, self._stride = words, size, stride

    def __len__(self) -> int:
        return self._size

    def _word(self, i: int) -> int:
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError("register index out of range")
        return i * self._stride

    def __getitem__(self, i: int) -> int:
        return int(self._words[self._word(i)])

    def __setitem__(self, i: int, value: int) -> None:
        self._words[self._word(i)] = value & 0xFFFFFFFFFFFFFFFF

    def __iter__(self):
        return (int(self._words[i * self._stride]) for i in range(self._size))


class NativeRegisterArray(RegisterArray):
    """A register whose cells are the pipeline's C memory (``stride`` words apart)."""

    def __init__(self, name: str, size: int, width: int, signed: bool, ffi: Any,
                 pointer: Any, stride: int = 1) -> None:
        super().__init__(name, 0, width, signed)
        self.size = size
        self._ffi = ffi
        self._words = 2 if width > 64 else 1
        self._stride = stride
        if stride > 1:
            words = ffi.cast(f"uint64_t(*)[{(max(size, 1) - 1) * stride + 1}]", pointer)[0]
            self._memory = words
            self.cells = InterleavedRegisterCells(words, size, stride)
            return
        words = ffi.cast(f"uint64_t(*)[{max(size, 1) * self._words}]", pointer)[0]
        self._memory = words
        self.cells = WideRegisterCells(words, size) if width > 64 else words

    def reset(self) -> None:
        if self._stride > 1:   # only this register's cells: the others' lie between them
            for i in range(self.size):
                self._memory[i * self._stride] = 0
            return
        n = 8 * len(self._memory)
        self._ffi.memmove(self._memory, bytes(n), n)


class NativeCounterArray(CounterArray):
    """A counter whose ``[packets, bytes]`` cells are the pipeline's C memory."""

    def __init__(self, name: str, size: int, counter_type: str, ffi: Any,
                 pointer: Any) -> None:
        super().__init__(name, 0, counter_type)
        self.size = size
        self._ffi = ffi
        self.cells = ffi.cast(f"uint64_t(*)[{max(size, 1)}][2]", pointer)[0]

    def reset(self) -> None:
        n = 16 * len(self.cells)
        self._ffi.memmove(self.cells, bytes(n), n)
