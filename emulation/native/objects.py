"""The control-plane face of a native pipeline: tables, registers and counters with the
same Python interface as the Python back end's (:mod:`netweft.emulation.v1model`).

:class:`NativeMatchTable` *is* a :class:`~netweft.emulation.v1model.match_table.MatchTable`
(same validation, normalisation, entry objects and priorities), which also
writes every change through to the C table; registers and counters keep their
cells in the pipeline's C memory, read and written in place.  So the P4Runtime
server, runtime files, ``netweft cli`` and the controllers drive both back ends
alike.  Updates are applied between packets, each whole: the C calls of a
packet and of an update hold the pipeline's lock (a P4Runtime server writes
from its own threads), so an entry is never half-installed when a packet
looks it up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from netweft.emulation.native.c_tables import NativeTableInfo
from netweft.emulation.v1model.counters import CounterArray
from netweft.emulation.v1model.match_table import (
    ActionSpec,
    KeySpec,
    MatchTable,
    TableEntry,
    TableError,
)
from netweft.emulation.v1model.registers import RegisterArray


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


class _Locked:
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
        self._lock = _Locked(lock, lib, pipeline)   # see _Locked
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

    def modify(self, entry: TableEntry, action: str,
               params: Mapping[str, object] | Sequence[object] = ()) -> None:
        super().modify(entry, action, params)
        self._push_action(entry)

    def set_bound(self, entry: TableEntry, action: str, args: tuple[int, ...],
                  bound: Any) -> None:
        super().set_bound(entry, action, args, bound)
        self._push_action(entry)

    def _push_action(self, entry: TableEntry) -> None:
        """The entry's (new) action into the C table."""
        aid, words = entry.bound
        with self._lock:
            rc = self._lib.nw_table_modify(self._pipe, self._info.index, entry.seq, aid,
                                           words, len(words))
        if rc != 0:
            raise TableError(f"table {self.name}: the native table lost an entry")

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
        aid, words = entry.bound
        k = self._info.key_bytes
        pad = bytes(k - len(value))
        rc = self._lib.nw_table_add(self._pipe, self._info.index, entry.seq,
                                    bytes(value) + pad, bytes(mask) + pad, bytes(lo) + pad,
                                    bytes(hi) + pad, rank, entry.seq, aid, words, len(words))
        if rc != 0:
            raise TableError(f"table {self.name}: the native table refused the entry "
                             f"(code {rc})")


class NativeRegisterArray(RegisterArray):
    """A register whose cells are the pipeline's C memory."""

    def __init__(self, name: str, size: int, width: int, signed: bool, ffi: Any,
                 pointer: Any) -> None:
        super().__init__(name, 0, width, signed)
        self.size = size
        self._ffi = ffi
        self.cells = ffi.cast(f"uint64_t(*)[{max(size, 1)}]", pointer)[0]

    def reset(self) -> None:
        self._ffi.memmove(self.cells, bytes(8 * len(self.cells)), 8 * len(self.cells))


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
