"""Registered memory: the buffers the engine may read from and place into.

A :class:`MemoryRegion` pins a Python buffer (a numpy array, a ``bytearray``, a
writable ``memoryview``...) for the engine: the engine receives its address and
length once, and remote peers name it by its ``rkey``. The region keeps the
buffer object alive until it is deregistered, so the engine never writes into
freed memory. :class:`RemoteKey` is what a peer needs to address the region
(key and length); it is small and picklable, to be exchanged out of band.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from netweft.nic_offload import ffi
from netweft.transport.errors import (
    EndpointClosedError,
    InvalidArgumentError,
    OutOfBoundsError,
)

if TYPE_CHECKING:
    from netweft.transport.endpoint import Endpoint


class Access(enum.IntFlag):
    """What a region allows; values match the engine's ``NW_ACCESS_*`` bits."""

    LOCAL = 0x1
    REMOTE_WRITE = 0x2
    REMOTE_READ = 0x4
    REMOTE = LOCAL | REMOTE_WRITE | REMOTE_READ


@dataclass(frozen=True)
class RemoteKey:
    """How a peer addresses a registered region: its key and its length in bytes."""

    rkey: int
    length: int

    def check(self, offset: int, length: int) -> None:
        """Raise :class:`OutOfBoundsError` unless ``[offset, offset+length)`` lies inside."""
        if not in_range(self.length, offset, length):
            check_range("remote region", self.length, offset, length)


def check_range(what: str, size: int, offset: int, length: int) -> None:
    """Raise a clear error unless ``offset``/``length`` are ints and fit inside ``size`` bytes."""
    if in_range(size, offset, length):
        return
    for name, value in (("offset", offset), ("length", length)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidArgumentError(f"{name} must be an int, got {type(value).__name__}")
        if value < 0:
            raise InvalidArgumentError(f"{name} must be >= 0, got {value}")
    if offset + length > size:
        raise OutOfBoundsError(
            f"{what}: bytes [{offset}, {offset + length}) lie outside its {size} bytes")


def in_range(size: int, offset: Any, length: Any) -> bool:
    """The fast path of :func:`check_range` (every post takes it): plain ints inside."""
    return (type(offset) is int and type(length) is int and offset >= 0 and length >= 0
            and offset + length <= size)


def byte_view(obj: Any, *, writable: bool) -> memoryview:
    """``obj`` as a flat, C-contiguous memoryview of bytes, or a clear error."""
    if isinstance(obj, MemoryRegion):
        raise InvalidArgumentError("pass the region itself where a region is expected, "
                                   "or region.view for its bytes")
    try:
        view = memoryview(obj)
    except TypeError:
        raise InvalidArgumentError(
            f"expected a buffer (numpy array, bytearray, memoryview), got {type(obj).__name__}"
        ) from None
    if not view.c_contiguous:
        raise InvalidArgumentError("the buffer must be C-contiguous (use numpy.ascontiguousarray)")
    if writable and view.readonly:
        raise InvalidArgumentError(
            f"the buffer must be writable, but this {type(obj).__name__} is read-only")
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


class MemoryRegion:
    """A buffer registered with an endpoint's engine.

    Create one with :meth:`Endpoint.register`. ``view`` is a byte view of the
    buffer, ``buffer`` the object that was registered (e.g. the numpy array),
    ``rkey`` the key peers use, ``remote()`` the descriptor to hand to them.
    """

    def __init__(self, endpoint: Endpoint, buffer: Any, view: memoryview, rkey: int,
                 access: Access, keepalive: Any) -> None:
        self._endpoint = endpoint
        self.buffer = buffer
        self._view: memoryview | None = view
        self.rkey = rkey
        self.access = access
        self._keepalive = keepalive  # the cffi buffer handle the engine points into
        # Its address as a byte pointer, made once (a cast per post cost ~0.3 us); valid
        # while _keepalive is held, and only used after a check that the region is.
        self._base = ffi.cast("uint8_t *", keepalive)
        self.length = view.nbytes

    @property
    def registered(self) -> bool:
        """True until :meth:`deregister` (or the endpoint's close)."""
        return self._view is not None

    @property
    def view(self) -> memoryview:
        """The registered bytes as a flat memoryview."""
        if self._view is None:
            raise EndpointClosedError(f"memory region rkey={self.rkey:#x} is deregistered")
        return self._view

    def remote(self) -> RemoteKey:
        """The key and length a peer needs to write into or read from this region."""
        if self._view is None:
            raise EndpointClosedError(f"memory region rkey={self.rkey:#x} is deregistered")
        return RemoteKey(self.rkey, self.length)

    def check(self, offset: int, length: int) -> None:
        """Raise :class:`OutOfBoundsError` unless the byte range lies inside the region."""
        if not in_range(self.length, offset, length):  # the message is built only to raise
            check_range(f"memory region rkey={self.rkey:#x}", self.length, offset, length)

    def deregister(self) -> None:
        """Withdraw the region from the engine; later remote accesses fail at the target."""
        if self._view is not None:
            self._endpoint._deregister(self)
            self._drop()

    def _drop(self) -> None:
        self._view = None
        self._keepalive = None
        self._base = None

    def __enter__(self) -> MemoryRegion:
        return self

    def __exit__(self, *exc: object) -> None:
        self.deregister()

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        state = "registered" if self.registered else "deregistered"
        return f"<MemoryRegion rkey={self.rkey:#x} {self.length} bytes {state}>"
