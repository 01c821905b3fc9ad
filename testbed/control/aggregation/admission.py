"""Admission of aggregation jobs to a switch's slot pool (sans-IO).

Every job holds a contiguous range of the switch's ``AGG_SLOTS`` slots for its
lifetime (docs/aggregation.md); several jobs share the switch side by side.
A new job asks for ``size`` slots (its window) and gets the lowest free range
that fits (first fit), or is refused: then its workers all-reduce by ring over
the transport (docs/collectives.md, "Jobs that share the switch"). Ranges go
back to the pool when a job is removed, so the pool is read from the jobs the
switch holds, never kept apart from them.
"""

from __future__ import annotations

from collections.abc import Iterable

from netweft.testbed.control.aggregation.job import AggregationConfigError


class AdmissionRefused(AggregationConfigError):
    """No free range of the slots a job asked for: the job must run without the switch."""


def free_base(slots: int, taken: Iterable[tuple[int, int]], size: int) -> int:
    """The lowest ``base`` with ``base .. base+size-1`` inside ``0 .. slots-1`` and clear
    of every (base, size) range in ``taken``; raises :class:`AdmissionRefused`."""
    if size < 1:
        raise AggregationConfigError(f"a job needs at least one slot, asked for {size}")
    base = 0
    for start, length in sorted(taken):
        if start - base >= size:
            return base
        base = max(base, start + length)
    if slots - base >= size:
        return base
    used = sum(length for _, length in taken)
    raise AdmissionRefused(f"no {size} free consecutive slots: {used} of {slots} in use")
