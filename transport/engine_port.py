"""The interface between an :class:`~netweft.transport.endpoint.Endpoint` and its driver.

An endpoint owns no socket and no clock: it forwards work requests to an
``EnginePort``, which runs the C engine somewhere (in virtual time in a
simulation, on a UDP socket in a C I/O thread for real runs). Pointers are
cffi ``void *`` values; the endpoint keeps the Python objects they point into
alive until their completions are polled.
"""

from __future__ import annotations

from typing import Any, Protocol


class RawCompletion(Protocol):
    """What a port returns from ``poll_cq``: the fields of ``nw_completion_t``."""

    wr_id: int
    opcode: int
    status: int
    bytes: int
    peer: int


class EnginePort(Protocol):
    """Operations a driver offers; each raises ``TransportError`` subclasses on failure."""

    address: tuple[str, int]

    def max_payload(self) -> int: ...
    def mr_register(self, ptr: Any, length: int, access: int) -> int: ...
    def mr_deregister(self, rkey: int) -> None: ...
    def peer_add(self, ip: str, port: int, mode: int) -> int: ...
    def post_write(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                   roffset: int) -> None: ...
    def post_read(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                  roffset: int) -> None: ...
    def post_send(self, peer: int, wr_id: int, buf: Any, length: int) -> None: ...
    def post_recv(self, wr_id: int, buf: Any, cap: int) -> None: ...
    def poll_cq(self, max_entries: int) -> list[RawCompletion]: ...
    def progress(self, deadline: float | None) -> bool: ...
    def clock(self) -> float: ...
    def stats(self) -> dict[str, int]: ...
    def close(self) -> None: ...
