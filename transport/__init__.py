"""The transport's Python API over the C engine, its drivers, and what is built on it.

The core is at the top (endpoints, memory regions, completion queues, the engine
handle, the reliability policy, traces, errors); beside it ``udp/`` (the
real-network driver), ``sim/`` (the simulator), ``wire/`` (scapy layers and the
Wireshark dissector) and ``collectives/`` (all-reduce by ring or in the switch
in ``aggregation/``, broadcast over ``multicast/``).

The API's names are importable from here; they load on first use (so that
importing one submodule, e.g. the scapy layers, does not load the C engine):

    from netweft.transport import Simulation, udp_endpoint, Mode, Access

Modules that moved keep their old names for one release (:mod:`moved_modules`).
"""

from __future__ import annotations

import importlib
from typing import Any

from netweft.transport import moved_modules

moved_modules.install()

_EXPORTS = {
    "Endpoint": "endpoint", "Peer": "endpoint", "Mode": "endpoint",
    "MemoryRegion": "memory_region", "RemoteKey": "memory_region", "Access": "memory_region",
    "Completion": "completion_queue", "CompletionQueue": "completion_queue",
    "Opcode": "completion_queue",
    "Simulation": "sim.simulation", "Impairments": "sim.wire", "Link": "sim.wire",
    "udp_endpoint": "udp.driver",
    "TransportError": "errors", "InvalidArgumentError": "errors",
    "EndpointClosedError": "errors", "PeerClosedError": "errors",
    "UnregisteredMemoryError": "errors",
    "OutOfBoundsError": "errors", "QueueFullError": "errors", "EngineError": "errors",
    "CompletionTimeout": "errors", "WorkRequestFailed": "errors",
    "allreduce": "collectives.operations", "broadcast": "collectives.operations",
    "RingGroup": "collectives.ring_allreduce", "SwitchGroup": "collectives.aggregation.udp",
    "MulticastGroup": "collectives.multicast.broadcast",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'netweft.transport' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"netweft.transport.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
