"""The UDP socket driver: an endpoint whose engine runs on the C I/O thread.

:func:`udp_endpoint` binds a UDP socket, creates an engine for that address and
starts the engine's I/O driver (``nw_io_start``): a pthread that moves packets
with batched ``recvmmsg``/``sendmmsg`` (UDP GSO/GRO where offered) and runs the
engine's timers, without the GIL. Python only posts work and collects
completions through the driver's locked wrappers; a blocking wait releases the
GIL inside ``nw_io_wait_cq``.

``loss`` (a probability) makes the receive socket drop that share of arriving
datagrams with a kernel socket filter (see :mod:`netweft.transport.udp.socket_loss`),
which is how netweft injects loss on a real path, since this kernel has no netem.
"""

from __future__ import annotations

import os
import socket
import time
import weakref
from typing import Any

from netweft.nic_offload import ffi, lib
from netweft.transport.completion_queue import completions_to_array
from netweft.transport.endpoint import Endpoint
from netweft.transport.engine_handle import (
    _RawCompletion,
    ip_to_int,
    make_config,
    peer_info,
    peer_path,
    raise_for,
    stats_dict,
    strerror,
)
from netweft.transport.errors import EndpointClosedError, EngineError, InvalidArgumentError
from netweft.transport.trace import TraceEvent, drain
from netweft.transport.udp.socket_loss import attach_loss

TX_MODES = {"socket": 0, "ports": 1, "raw": 2, "packet": 3}
# How the application's threads meet the I/O thread (see io_driver.h, and the
# README's "Choosing an I/O mode"): "thread" hands every post and completion
# over to it; "inline" sends from the posting thread and receives in the waiting
# one; "busy" is inline plus busy polling (thread and waiter spin for busy_poll_us).
IO_MODES = {"thread": 0, "inline": lib.NW_IO_INLINE,
            "busy": lib.NW_IO_INLINE | lib.NW_IO_BUSY_POLL}
_WAIT_SLICE_NS = 200_000_000  # a forever-wait wakes this often so Ctrl-C works
_CLOSE_DRAIN_S = 0.05  # how long close() lets queued packets (CTRL CLOSEs) leave


class UdpNic:
    """The :class:`EnginePort` of an endpoint on a real UDP socket."""

    def __init__(self, bind: tuple[str, int], *, tx: str = "ports", gso: bool = True,
                 gro: bool = True, batch: int = 64, loss: float = 0.0, io: str = "thread",
                 busy_poll_us: int = 50, **engine_settings: int) -> None:
        for name in ("local_ip", "local_port"):
            if name in engine_settings:
                raise InvalidArgumentError(f"{name} comes from the bind address; "
                                           "pass bind=(ip, port) instead")
        if tx not in TX_MODES:
            raise InvalidArgumentError(f"tx must be one of {', '.join(TX_MODES)}, got {tx!r}")
        if io not in IO_MODES:
            raise InvalidArgumentError(f"io must be one of {', '.join(IO_MODES)}, got {io!r}")
        if not isinstance(busy_poll_us, int) or not 1 <= busy_poll_us <= 1_000_000:
            raise InvalidArgumentError(f"busy_poll_us must be an int in 1..1000000, "
                                       f"got {busy_poll_us!r}")
        ip, port = bind
        ip_int = ip_to_int(ip)
        if tx == "packet" and ip_int == 0:
            raise InvalidArgumentError("tx=packet needs the local address of an interface to "
                                       "sit on, not 0.0.0.0")
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._io = None
        try:
            try:
                self._sock.bind((ip, port))
            except OSError as exc:
                raise InvalidArgumentError(f"cannot bind UDP {ip}:{port}: {exc.strerror}") from None
            if loss and tx != "packet":
                attach_loss(self._sock, loss)
            self.address = (ip, self._sock.getsockname()[1])
            cfg = make_config(local_ip=ip_int, local_port=self.address[1], **engine_settings)
            engine = lib.nw_engine_new(cfg)
            if engine == ffi.NULL:
                raise EngineError(lib.NW_ENOMEM, "the engine could not be created")
            self._engine = engine
            iocfg = ffi.new("nw_io_config_t *")
            lib.nw_io_config_default(iocfg)
            iocfg.rx_fd = self._sock.fileno()
            iocfg.tx_mode = TX_MODES[tx]
            iocfg.flags = (lib.NW_IO_GSO if gso else 0) | (lib.NW_IO_GRO if gro and not loss
                                                            else 0)
            iocfg.flags |= IO_MODES[io]
            iocfg.busy_poll_us = busy_poll_us
            iocfg.batch = batch
            iocfg.local_ip = ip_int
            if loss and tx == "packet":
                # Frames come from the ring, not the socket: the driver drops them.
                iocfg.rx_drop_ppm = round(loss * 1_000_000)
                iocfg.rx_drop_seed = int.from_bytes(os.urandom(8), "little") | 1
            err = ffi.new("int32_t *")
            driver = lib.nw_io_start(engine, iocfg, err)
            if driver == ffi.NULL:
                errno = ffi.errno
                lib.nw_engine_free(engine)
                why = strerror(err[0], errno)
                if tx == "packet" and err[0] == lib.NW_EPERM:
                    why = ("tx=packet needs root (CAP_NET_RAW for the packet socket, CAP_BPF "
                           "and CAP_NET_ADMIN for its tcx program)")
                elif tx == "packet" and err[0] == lib.NW_ESYS and errno == 22:  # EINVAL
                    why += " (tx=packet attaches a tcx program: Linux 6.6 or newer)"
                raise EngineError(err[0], f"cannot start the I/O driver on {ip}:{self.address[1]}"
                                          f" (tx={tx}, io={io}): {why}")
            self._io = driver
        except BaseException:
            self._sock.close()
            raise
        # Stop the C thread before any buffer it points into can be freed: on close(),
        # when the endpoint is garbage-collected, and at interpreter exit.
        self._shutdown = weakref.finalize(self, _shutdown, driver, engine, self._sock)
        self.mtu = int(cfg.mtu)
        self._cq = ffi.new("nw_completion_t[]", 256)
        self._ready: list[_RawCompletion] = []

    def _live(self) -> Any:
        if self._io is None:
            raise EndpointClosedError("the endpoint is closed")
        return self._io

    def max_payload(self) -> int:
        """Payload bytes one packet carries."""
        return int(lib.nw_max_payload(self._engine))

    def mr_register(self, ptr: Any, length: int, access: int) -> int:
        rkey = ffi.new("uint32_t *")
        raise_for(lib.nw_io_mr_register(self._live(), ptr, length, access, rkey),
                  "register memory")
        return int(rkey[0])

    def mr_deregister(self, rkey: int) -> None:
        raise_for(lib.nw_io_mr_deregister(self._live(), rkey), f"deregister rkey {rkey:#x}")

    def peer_add(self, ip: str, port: int, mode: int) -> int:
        out = ffi.new("uint32_t *")
        raise_for(lib.nw_io_peer_add(self._live(), ip_to_int(ip), port, mode, out),
                  f"add peer {ip}:{port}")
        return int(out[0])

    def peer_info(self, peer: int) -> tuple[str, int, int]:
        io = self._live()
        lib.nw_io_lock(io)
        try:
            return peer_info(self._engine, peer)
        finally:
            lib.nw_io_unlock(io)

    def peer_set_coding(self, peer: int, k: int, m: int) -> None:
        io = self._live()
        lib.nw_io_lock(io)
        try:
            code = lib.nw_peer_set_coding(self._engine, peer, k, m)
        finally:
            lib.nw_io_unlock(io)
        lib.nw_io_kick(io)
        raise_for(code, f"set coding {k},{m}")

    def peer_path(self, peer: int) -> dict[str, int]:
        io = self._live()
        lib.nw_io_lock(io)
        try:
            return peer_path(self._engine, peer)
        finally:
            lib.nw_io_unlock(io)

    def peer_close(self, peer: int) -> None:
        raise_for(lib.nw_io_peer_close(self._live(), peer), f"close peer handle {peer}")

    def post_write(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                   roffset: int) -> None:
        raise_for(lib.nw_io_post_write(self._live(), peer, wr_id, local, length, rkey, roffset),
                  "post RMA write")

    def post_writes(self, peer: int, wr_ids: Any, local: Any, local_offsets: Any, length: int,
                    rkey: int, roffsets: Any) -> int:
        """Post len(wr_ids) writes under one lock and one wake-up; returns how many."""
        n = raise_for(lib.nw_io_post_writes(
            self._live(), peer, len(wr_ids), ffi.from_buffer("uint64_t[]", wr_ids), local,
            ffi.from_buffer("uint64_t[]", local_offsets), length, rkey,
            ffi.from_buffer("uint64_t[]", roffsets)), "post RMA writes")
        return n

    def poll_cq_array(self, max_entries: int) -> Any:
        """Completions as a numpy record array (one copy of the C array, no objects)."""
        import numpy as np

        from netweft.transport.completion_queue import completion_dtype

        out = []
        if self._ready:  # completions a blocking wait already collected come first
            take, self._ready = self._ready[:max_entries], self._ready[max_entries:]
            out.append(completions_to_array(take))
            max_entries -= len(take)
        if max_entries and self._io is not None:
            n = lib.nw_io_poll_cq(self._io, self._cq, min(max_entries, 256))
            out.append(np.frombuffer(ffi.buffer(self._cq, n * ffi.sizeof("nw_completion_t")),
                                     dtype=completion_dtype()).copy())
        if not out:
            return np.zeros(0, dtype=completion_dtype())
        return out[0] if len(out) == 1 else np.concatenate(out)

    def post_read(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                  roffset: int) -> None:
        raise_for(lib.nw_io_post_read(self._live(), peer, wr_id, local, length, rkey, roffset),
                  "post RMA read")

    def post_send(self, peer: int, wr_id: int, buf: Any, length: int) -> None:
        raise_for(lib.nw_io_post_send(self._live(), peer, wr_id, buf, length), "post send")

    def post_recv(self, wr_id: int, buf: Any, cap: int) -> None:
        raise_for(lib.nw_io_post_recv(self._live(), wr_id, buf, cap), "post receive")

    def poll_cq(self, max_entries: int) -> list[Any]:
        if self._io is None:
            return []
        if not self._ready:
            n = lib.nw_io_poll_cq(self._io, self._cq, 256)
            self._ready = [_RawCompletion(self._cq[i]) for i in range(n)]
        out, self._ready = self._ready[:max_entries], self._ready[max_entries:]
        return out

    def progress(self, deadline: float | None) -> bool:
        """Block (without the GIL) until completions arrive or ``deadline`` passes."""
        io = self._live()
        if self._ready:
            return True
        left = _WAIT_SLICE_NS if deadline is None else int((deadline - time.monotonic()) * 1e9)
        n = lib.nw_io_wait_cq(io, self._cq, 256, max(0, min(left, _WAIT_SLICE_NS)))
        self._ready.extend(_RawCompletion(self._cq[i]) for i in range(n))
        return True

    def clock(self) -> float:
        return time.monotonic()

    def trace_start(self, capacity: int) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 0:
            raise InvalidArgumentError(f"trace capacity must be an int >= 0, got {capacity!r}")
        io = self._live()
        lib.nw_io_lock(io)
        try:
            raise_for(lib.nw_trace_start(self._engine, capacity), "start the event trace")
        finally:
            lib.nw_io_unlock(io)

    def trace_drain(self) -> list[TraceEvent]:
        io = self._live()
        lib.nw_io_lock(io)
        try:
            return drain(self._engine, f"{self.address[0]}:{self.address[1]}")
        finally:
            lib.nw_io_unlock(io)

    def stats(self) -> dict[str, int]:
        engine_stats = ffi.new("nw_stats_t *")
        io_stats = ffi.new("nw_io_stats_t *")
        lib.nw_io_stats_get(self._live(), engine_stats, io_stats)
        out = stats_dict(engine_stats)
        for name, _ in ffi.typeof("nw_io_stats_t").fields:
            out[f"io_{name}"] = int(getattr(io_stats, name))
        return out

    def event_fd(self) -> int:
        """An eventfd that is readable while completions wait (for select/epoll loops)."""
        return int(lib.nw_io_event_fd(self._live()))

    def _drain_output(self, timeout: float) -> None:
        """Give the I/O thread up to ``timeout`` seconds to take what the engine has to
        send (e.g. the CTRL CLOSEs of closed peers) before it is stopped.

        Once the engine has no output left under the lock, the thread finishes the
        transmission it started before it can see the stop flag."""
        end = time.monotonic() + timeout
        while True:
            lib.nw_io_lock(self._io)
            pending = lib.nw_has_output(self._engine)
            lib.nw_io_unlock(self._io)
            if not pending or time.monotonic() >= end:
                return
            lib.nw_io_kick(self._io)
            time.sleep(0.001)

    def close(self) -> None:
        """Stop the I/O thread, free the engine, close the socket (idempotent)."""
        if self._io is not None:
            self._drain_output(_CLOSE_DRAIN_S)
            self._io = None
            self._shutdown()
            self._engine = None


def _shutdown(io: Any, engine: Any, sock: socket.socket) -> None:
    """Stop the I/O thread, free the engine, close the socket (runs once)."""
    lib.nw_io_stop(io)
    lib.nw_engine_free(engine)
    sock.close()


def udp_endpoint(bind: tuple[str, int] = ("127.0.0.1", 0), **options: Any) -> Endpoint:
    """An endpoint on a real UDP socket bound to ``bind`` (port 0 = any free port).

    Options: ``tx`` ("ports": one socket per entropy value so the source port
    varies per packet; "socket": send from the bound socket; "raw": raw IPv4),
    ``io`` ("thread", the default: the I/O thread moves every packet;
    "inline": posts send from the caller's thread and waits receive in the
    waiter's, for one message in flight; "busy": inline plus busy polling for
    ``busy_poll_us``), ``gso``/``gro``, ``batch``, ``loss`` (receive-side
    injected loss probability), and any engine setting (``mtu``, ``window_pkts``,
    ``entropy_base``, ``dst_port``...).
    """
    return Endpoint(UdpNic(bind, **options))
