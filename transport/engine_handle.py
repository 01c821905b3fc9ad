"""One C engine instance (``nw_engine_t``) with its errors turned into exceptions.

:func:`make_config` builds an ``nw_config_t`` from the engine's defaults and
keyword overrides (unknown names and values the engine rejects raise
:class:`InvalidArgumentError`). :class:`EngineHandle` owns an engine and calls it
directly: it is the single-threaded, sans-IO view used by the simulation.
:func:`raise_for` maps the engine's negative ``NW_E*`` codes to the API's
exception classes; the UDP driver uses it too.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

from netweft.nic_offload import ffi, lib
from netweft.transport.errors import (
    EndpointClosedError,
    EngineError,
    InvalidArgumentError,
    OutOfBoundsError,
    QueueFullError,
    TransportError,
    UnregisteredMemoryError,
)

_EXCEPTIONS: dict[int, type[TransportError]] = {
    lib.NW_EINVAL: InvalidArgumentError,
    lib.NW_EAGAIN: QueueFullError,
    lib.NW_ENOKEY: UnregisteredMemoryError,
    lib.NW_ERANGE: OutOfBoundsError,
    lib.NW_ECLOSED: EndpointClosedError,
}


def strerror(code: int, errno: int = 0) -> str:
    """What a negative ``NW_E*`` code means, in words: the engine's one table
    (``nw_strerror``), and for a failed system call (``NW_ESYS``, ``NW_EPERM``) the
    system's words for ``errno`` when the caller has it."""
    text = ffi.string(lib.nw_strerror(code)).decode()
    if errno and code in (lib.NW_ESYS, lib.NW_EPERM):
        text += f": {os.strerror(errno)}"
    return text


def raise_for(code: int, what: str) -> int:
    """Return ``code`` if it is >= 0, else raise the matching exception naming ``what``."""
    if code >= 0:
        return code
    cls = _EXCEPTIONS.get(code)
    if cls is None:
        raise EngineError(code, f"{what}: {strerror(code)}")
    raise cls(f"{what}: {strerror(code)}")


def ip_to_int(ip: str) -> int:
    """Dotted IPv4 to the engine's host-order integer, with a clear error."""
    try:
        return int(ipaddress.IPv4Address(ip))
    except (ipaddress.AddressValueError, ValueError):
        raise InvalidArgumentError(f"not an IPv4 address: {ip!r}") from None


def int_to_ip(value: int) -> str:
    """The engine's host-order integer as a dotted IPv4 address."""
    return str(ipaddress.IPv4Address(value))


#: Congestion-control modes by name (``make_config(cc_mode="nscc")``); docs/congestion.md.
CC_MODES: dict[str, int] = {
    "none": lib.NW_CC_MODE_NONE,
    "nscc": lib.NW_CC_MODE_NSCC,
    "rccc": lib.NW_CC_MODE_RCCC,
    "nscc+rccc": lib.NW_CC_MODE_NSCC_RCCC,
    "dcqcn": lib.NW_CC_MODE_DCQCN,
}


def cc_mode_value(mode: str | int) -> int:
    """The ``NW_CC_MODE_*`` number of a congestion-control mode given by name or number."""
    if isinstance(mode, str):
        value = CC_MODES.get(mode.strip().lower())
        if value is None:
            raise InvalidArgumentError(f"unknown congestion-control mode {mode!r}; known: "
                                       f"{', '.join(CC_MODES)}")
        return value
    if isinstance(mode, int) and not isinstance(mode, bool) and mode in CC_MODES.values():
        return mode
    raise InvalidArgumentError(f"cc_mode must be one of {', '.join(CC_MODES)}, got {mode!r}")


def config_fields() -> list[str]:
    """Names of every ``nw_config_t`` field."""
    return [name for name, _ in ffi.typeof("nw_config_t").fields]


def make_config(**overrides: Any) -> Any:
    """An ``nw_config_t *`` with the engine's defaults plus ``overrides``, checked by the engine."""
    cfg = ffi.new("nw_config_t *")
    lib.nw_config_default(cfg)
    known = set(config_fields())
    for name, value in overrides.items():
        if name not in known:
            raise InvalidArgumentError(f"unknown engine setting {name!r}; known: "
                                       f"{', '.join(sorted(known))}")
        if name == "local_ip" and isinstance(value, str):
            value = ip_to_int(value)
        if name == "cc_mode":
            value = cc_mode_value(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidArgumentError(f"engine setting {name} must be an int >= 0, got {value!r}")
        try:
            setattr(cfg, name, value)
        except OverflowError:
            raise InvalidArgumentError(f"engine setting {name}={value} is out of range") from None
    problem = lib.nw_config_check(cfg)
    if problem != ffi.NULL:
        raise InvalidArgumentError(f"bad engine configuration: {ffi.string(problem).decode()}")
    return cfg


def stats_dict(stats: Any) -> dict[str, int]:
    """An ``nw_stats_t`` as a plain dict of counters."""
    return {name: int(getattr(stats, name)) for name, _ in ffi.typeof("nw_stats_t").fields}


def peer_info(engine: Any, peer: int) -> tuple[str, int, int]:
    """(ip, port, mode) of a peer handle of ``engine``."""
    ip, port, mode = ffi.new("uint32_t *"), ffi.new("uint16_t *"), ffi.new("uint8_t *")
    raise_for(lib.nw_peer_info(engine, peer, ip, port, mode), f"peer handle {peer}")
    return int_to_ip(int(ip[0])), int(port[0]), int(mode[0])


def peer_path(engine: Any, peer: int) -> dict[str, int]:
    """What ``nw_peer_path`` measures on a peer's PDC (RTT, bytes sent and received, code)."""
    out = ffi.new("nw_path_stats_t *")
    raise_for(lib.nw_peer_path(engine, peer, out), f"peer handle {peer}")
    return {name: int(getattr(out, name)) for name, _ in ffi.typeof("nw_path_stats_t").fields}


class EngineHandle:
    """Owns one ``nw_engine_t`` and calls it from the current thread only."""

    def __init__(self, cfg: Any) -> None:
        engine = lib.nw_engine_new(cfg)
        if engine == ffi.NULL:
            raise EngineError(lib.NW_ENOMEM, "the engine could not be created (out of memory?)")
        self.ptr = ffi.gc(engine, lib.nw_engine_free)
        self.mtu = int(cfg.mtu)
        self._out_buf = ffi.new("uint8_t[]", self.mtu)
        self._dest = ffi.new("nw_dest_t *")
        self._cq = ffi.new("nw_completion_t[]", 256)

    def max_payload(self) -> int:
        """Payload bytes one packet carries."""
        return int(lib.nw_max_payload(self.ptr))

    def mr_register(self, ptr: Any, length: int, access: int) -> int:
        rkey = ffi.new("uint32_t *")
        raise_for(lib.nw_mr_register(self.ptr, ptr, length, access, rkey), "register memory")
        return int(rkey[0])

    def mr_deregister(self, rkey: int) -> None:
        raise_for(lib.nw_mr_deregister(self.ptr, rkey), f"deregister rkey {rkey:#x}")

    def peer_add(self, ip: str, port: int, mode: int) -> int:
        out = ffi.new("uint32_t *")
        raise_for(lib.nw_peer_add(self.ptr, ip_to_int(ip), port, mode, out),
                  f"add peer {ip}:{port}")
        return int(out[0])

    def peer_info(self, peer: int) -> tuple[str, int, int]:
        return peer_info(self.ptr, peer)

    def peer_close(self, peer: int) -> None:
        raise_for(lib.nw_peer_close(self.ptr, peer), f"close peer handle {peer}")

    def peer_set_coding(self, peer: int, k: int, m: int) -> None:
        raise_for(lib.nw_peer_set_coding(self.ptr, peer, k, m), f"set coding {k},{m}")

    def peer_path(self, peer: int) -> dict[str, int]:
        return peer_path(self.ptr, peer)

    def post_write(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                   roffset: int) -> None:
        raise_for(lib.nw_post_write(self.ptr, peer, wr_id, local, length, rkey, roffset),
                  "post RMA write")

    def post_read(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                  roffset: int) -> None:
        raise_for(lib.nw_post_read(self.ptr, peer, wr_id, local, length, rkey, roffset),
                  "post RMA read")

    def post_send(self, peer: int, wr_id: int, buf: Any, length: int) -> None:
        raise_for(lib.nw_post_send(self.ptr, peer, wr_id, buf, length), "post send")

    def post_recv(self, wr_id: int, buf: Any, cap: int) -> None:
        raise_for(lib.nw_post_recv(self.ptr, wr_id, buf, cap), "post receive")

    def poll_cq(self, max_entries: int) -> list[Any]:
        n = lib.nw_poll_cq(self.ptr, self._cq, min(max_entries, 256))
        return [_RawCompletion(self._cq[i]) for i in range(n)]

    def input(self, data: bytes, src_ip: int, src_port: int, now_ns: int, ecn: int = 0) -> int:
        """Hand one received UDP payload to the engine; ``ecn`` is the IP header's ECN
        codepoint (``lib.NW_ECN_CE`` = 3 for a packet a queue marked)."""
        return int(lib.nw_input_ecn(self.ptr, data, len(data), src_ip, src_port, ecn, now_ns))

    def output(self, now_ns: int) -> tuple[bytes, int, int, int, int] | None:
        """The next packet due: (payload, dst ip, dst port, src port, ECN codepoint), or None.

        The ECN codepoint is ``lib.NW_ECN_ECT0`` (2) on data packets of ECN-using modes
        (NSCC, DCQCN), else 0: a queue model may mark the former CE."""
        n = lib.nw_output(self.ptr, self._out_buf, self.mtu, self._dest, now_ns)
        if n <= 0:
            raise_for(n, "engine output")
            return None
        d = self._dest
        return (bytes(ffi.buffer(self._out_buf, n)), int(d.ip), int(d.port), int(d.src_port),
                int(d.ecn))

    def next_deadline(self) -> int | None:
        t = int(lib.nw_next_deadline(self.ptr))
        return None if t == 0xFFFFFFFFFFFFFFFF else t

    def on_time(self, now_ns: int) -> None:
        lib.nw_on_time(self.ptr, now_ns)

    def stats(self) -> dict[str, int]:
        out = ffi.new("nw_stats_t *")
        lib.nw_stats_get(self.ptr, out)
        return stats_dict(out)

    def trace_start(self, capacity: int) -> None:
        """Record events into a ring of ``capacity`` events (0 stops tracing)."""
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 0:
            raise InvalidArgumentError(f"trace capacity must be an int >= 0, got {capacity!r}")
        raise_for(lib.nw_trace_start(self.ptr, capacity), f"trace with capacity {capacity}")


class _RawCompletion:
    """A copy of one ``nw_completion_t`` (the C array is reused)."""

    __slots__ = ("wr_id", "bytes", "status", "peer", "opcode", "mode")

    def __init__(self, c: Any) -> None:
        self.wr_id = int(c.wr_id)
        self.bytes = int(c.bytes)
        self.status = int(c.status)
        self.peer = int(c.peer)
        self.opcode = int(c.opcode)
        self.mode = int(c.mode)
