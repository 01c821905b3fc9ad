"""Tuple-space index for prioritised tables whose keys are all maskable.

Entries of a table with ternary, lpm, optional and exact keys are grouped
by their *mask tuple* (as in Open vSwitch's classifier): within a group a
masked key is a dictionary probe, so a lookup costs one probe per distinct
mask tuple instead of one comparison per entry.  Groups are visited from
the highest priority they hold down, and the search stops once no group
left can beat the best hit.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable
from typing import Any


class MaskedIndex:
    """Entries (with ``priority`` and ``seq``) indexed by ``(masks, masked values)``."""

    def __init__(self, order_key: Callable[[Any], tuple[int, int]]) -> None:
        self._order_key = order_key
        # [masks, {masked values: entries best first}, highest priority in the group]
        self._groups: list[list[Any]] = []

    def add(self, masks: tuple[int, ...], values: tuple[int, ...], entry: Any) -> None:
        """Index ``entry`` under its masks and (already masked) values."""
        for group in self._groups:
            if group[0] == masks:
                insort(group[1].setdefault(values, []), entry, key=self._order_key)
                group[2] = max(group[2], entry.priority)
                break
        else:
            self._groups.append([masks, {values: [entry]}, entry.priority])
        self._groups.sort(key=lambda g: -g[2])

    def contains(self, masks: tuple[int, ...], values: tuple[int, ...], priority: int) -> bool:
        """Whether an entry with exactly this match and priority is indexed."""
        for group in self._groups:
            if group[0] == masks:
                return any(e.priority == priority for e in group[1].get(values, ()))
        return False

    def lookup(self, key: tuple[int, ...]) -> Any:
        """The best matching entry (largest priority, then earliest), or None."""
        best = None
        for masks, table, top in self._groups:
            if best is not None and top < best.priority:
                break
            hit = table.get(tuple([k & m for k, m in zip(key, masks, strict=True)]))
            if hit is not None:
                entry = hit[0]
                if best is None or self._order_key(entry) < self._order_key(best):
                    best = entry
        return best
