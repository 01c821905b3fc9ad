"""Parser value sets of a native pipeline, with the Python back end's interface.

:class:`NativeValueSet` *is* a :class:`~netweft.emulation.v1model.value_sets.ValueSet`
(same validation and member forms) that also writes its members through to
the C pipeline, so ``SoftSwitch.value_set_add`` and the P4Runtime server's
``ValueSetEntry`` (which replaces ``members`` as a whole) drive both back
ends alike.  Updates hold the pipeline's locks, as table updates do.
"""

from __future__ import annotations

from typing import Any

from netweft.emulation.native.objects import PipelineLock
from netweft.emulation.v1model.value_sets import ValueSet

_LOW64 = (1 << 64) - 1


class NativeValueSet(ValueSet):
    """A value set whose members also live in the pipeline's C value set ``index``."""

    def __init__(self, name: str, size: int, widths: list[int], index: int, lib: Any,
                 pipeline: Any, lock: Any) -> None:
        self._index, self._lib, self._pipe = index, lib, pipeline
        self._lock = PipelineLock(lock, lib, pipeline)
        self._members: list[tuple[int, int]] = []
        super().__init__(name, size, widths)

    @property
    def members(self) -> list[tuple[int, int]]:
        """The ``(value, mask)`` members; assigning a list replaces them all."""
        return self._members

    @members.setter
    def members(self, members: list[tuple[int, int]]) -> None:
        self._members = list(members)
        with self._lock:
            self._lib.nw_vset_clear(self._pipe, self._index)
            for value, mask in self._members:
                self._push(value, mask)

    def add(self, value: object, mask: object = None) -> None:
        before = len(self._members)
        super().add(value, mask)
        with self._lock:
            for v, m in self._members[before:]:
                self._push(v, m)

    def _push(self, value: int, mask: int) -> None:
        rc = self._lib.nw_vset_add(self._pipe, self._index, value >> 64, value & _LOW64,
                                   mask >> 64, mask & _LOW64)
        if rc != 0:
            raise MemoryError(f"value set {self.name}: the native pipeline refused a member")
