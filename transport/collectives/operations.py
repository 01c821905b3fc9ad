"""The collectives' front door: ``allreduce(array, group)`` and ``broadcast``.

For ``allreduce`` the group says how: a :class:`~netweft.transport.collectives.
aggregation.udp.SwitchGroup` sums in the switch (in-network aggregation,
quantized to block-wise fixed point, within the bound of
:mod:`netweft.transport.collectives.aggregation.quantization`); a
:class:`~netweft.transport.collectives.ring_allreduce.RingGroup` sums by ring
all-reduce over netweft's transport (float32 additions). Every worker of the group calls it with
its own array of the same shape and gets the element-wise sum. ``broadcast``
copies the root's array to every member of a :class:`~netweft.transport.
collectives.multicast.broadcast.MulticastGroup` over the fabric's multicast.
"""

from __future__ import annotations

import numpy as np

from netweft.transport.collectives.aggregation.udp import SwitchGroup
from netweft.transport.collectives.multicast.broadcast import MulticastGroup
from netweft.transport.collectives.ring_allreduce import RingGroup, ring_allreduce
from netweft.transport.errors import InvalidArgumentError


def allreduce(array: np.ndarray, group: SwitchGroup | RingGroup,
              timeout: float | None = 60.0) -> np.ndarray:
    """The element-wise sum over the group's workers of their float32 ``array``."""
    array = np.asarray(array)
    if array.dtype != np.float32:
        raise InvalidArgumentError(f"allreduce takes float32 arrays, got {array.dtype}")
    if isinstance(group, SwitchGroup):
        return group.allreduce(array, deadline=timeout)
    if isinstance(group, RingGroup):
        return ring_allreduce(array, group, timeout=timeout)
    raise InvalidArgumentError(f"group must be a SwitchGroup or a RingGroup, got "
                               f"{type(group).__name__}")


def broadcast(array: np.ndarray, group: MulticastGroup, root: int = 0,
              timeout: float | None = 60.0) -> np.ndarray:
    """The root's ``array`` on every member of ``group`` (each member calls it with an
    array of the same shape and dtype; receivers' arrays are overwritten and returned)."""
    if not isinstance(group, MulticastGroup):
        raise InvalidArgumentError(f"group must be a MulticastGroup, got "
                                   f"{type(group).__name__}")
    return group.broadcast(array, root, timeout)
