"""Collective operations over netweft: ``allreduce`` and ``broadcast``
(:mod:`~netweft.transport.collectives.operations`), ring all-reduce over the
transport (:mod:`~netweft.transport.collectives.ring_allreduce`), in-network
aggregation (``aggregation/``) and multicast broadcast (``multicast/``).

``allreduce`` and ``broadcast`` are importable from here (as they were when this
was one module); they load on first use, so importing a submodule (say the
aggregation header's scapy layer) does not load the C engine.
"""

from __future__ import annotations

from typing import Any

__all__ = ["allreduce", "broadcast"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'netweft.transport.collectives' has no attribute {name!r}")
    from netweft.transport.collectives import operations

    return getattr(operations, name)
