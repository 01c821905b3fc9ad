"""The C engine that plays the NIC, reached through cffi.

``ffi`` and ``lib`` are the compiled module's handles; higher layers
(`netweft.transport`) wrap them in a Python API.
"""

from netweft.nic_offload._engine import ffi, lib

__all__ = ["ffi", "lib", "csum16", "trim"]


def csum16(data: bytes) -> int:
    """RFC 1071 Internet checksum of ``data`` computed by the C engine."""
    return lib.nw_csum16(data, len(data))


def trim(data: bytes) -> bytes | None:
    """What a trimming switch does to a netweft datagram (UDP payload): the first
    ``NW_WIRE_TRIM_KEEP`` (64) bytes with the trimmed mark set (docs/wire.md), or None if
    the packet is not a request that may be trimmed (RUD/ROD and their _CC forms, UUD)."""
    buf = ffi.new("uint8_t[]", bytes(data))
    n = lib.nw_wire_trim(buf, len(data))
    return None if n < 0 else bytes(ffi.buffer(buf, n))
