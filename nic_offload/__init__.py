"""The C engine that plays the NIC, reached through cffi.

``ffi`` and ``lib`` are the compiled module's handles; higher layers
(`netweft.transport`) wrap them in a Python API.
"""

from netweft.nic_offload._engine import ffi, lib

__all__ = ["ffi", "lib", "csum16"]


def csum16(data: bytes) -> int:
    """RFC 1071 Internet checksum of ``data`` computed by the C engine."""
    return lib.nw_csum16(data, len(data))
