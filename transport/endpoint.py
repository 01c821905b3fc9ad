"""Endpoints and peers: the transport's user-facing API.

An :class:`Endpoint` is one transport engine with an address. It registers
memory (:meth:`Endpoint.register`), opens peers (:meth:`Endpoint.connect`, one
packet delivery context per peer and delivery mode), posts receive buffers
(:meth:`Endpoint.post_recv`) and reports finished work on its completion queue
(:attr:`Endpoint.cq`). A :class:`Peer` posts RMA writes, RMA reads and sends.

Every post returns the work request id that its :class:`Completion` carries.
Buffers given to a post are kept alive by the endpoint until that completion
is polled, because the engine reads and writes them in place (zero copy).
Misuse raises at once with a clear message: unregistered or foreign memory,
offsets outside a region, a closed endpoint or peer, wrong argument types.

:meth:`Peer.close` ends a peer's delivery context: its outstanding work
requests complete as cancelled (``Completion.cancelled``; ``check()`` raises
:class:`WorkRequestFailed`), the remote is told to free its side, and the
:class:`Peer` object raises :class:`PeerClosedError` from then on;
``endpoint.connect`` opens a fresh one.

An endpoint (its peers, regions and completion queue) belongs to one Python
thread at a time; on real sockets the packet work runs on the engine's own C
thread regardless.

Endpoints are made by a driver: :meth:`Simulation.endpoint
<netweft.transport.sim.simulation.Simulation.endpoint>` (virtual time) or
:func:`netweft.transport.udp.driver.udp_endpoint` (real UDP sockets).
"""

from __future__ import annotations

import enum
import itertools
from typing import Any

from netweft.nic_offload import ffi, lib
from netweft.transport.completion_queue import (
    Completion,
    CompletionQueue,
    Opcode,
    completions_to_array,
)
from netweft.transport.engine_handle import strerror
from netweft.transport.engine_port import EnginePort
from netweft.transport.errors import (
    EndpointClosedError,
    EngineError,
    InvalidArgumentError,
    PeerClosedError,
    UnregisteredMemoryError,
)
from netweft.transport.memory_region import (
    Access,
    MemoryRegion,
    RemoteKey,
    byte_view,
    check_range,
)
from netweft.transport.reliability_policy import (
    SR,
    AdaptivePolicy,
    Reliability,
    parse_reliability,
)
from netweft.transport.trace import TraceEvent

_OPCODES = {int(op): op for op in Opcode}  # a dict lookup, not an Enum call, per completion


class Mode(enum.IntEnum):
    """Ultra Ethernet delivery modes; values are the engine's ``NW_MODE_*``."""

    RUD = 0  # reliable, unordered delivery (default)
    ROD = 1  # reliable, ordered delivery
    UUD = 2  # unreliable, unordered delivery

    @classmethod
    def parse(cls, value: Mode | str | int) -> Mode:
        """A Mode from itself, its name in any case ("rud") or its value."""
        if isinstance(value, str):
            try:
                return cls[value.upper()]
            except KeyError:
                raise InvalidArgumentError(f"unknown delivery mode {value!r}; "
                                           "use 'rud', 'rod' or 'uud'") from None
        try:
            return cls(value)
        except ValueError:
            raise InvalidArgumentError(f"unknown delivery mode {value!r}") from None


class Peer:
    """A remote endpoint reached through one delivery context with a fixed mode."""

    def __init__(self, endpoint: Endpoint, handle: int, address: tuple[str, int],
                 mode: Mode) -> None:
        self.endpoint = endpoint
        self.handle = handle
        self.address = address
        self.mode = mode
        self._closed = False
        self._reliability = Reliability("sr")
        self._policy: AdaptivePolicy | None = None
        self._code: tuple[int, int] = SR

    @property
    def closed(self) -> bool:
        """True after :meth:`close` (or after the endpoint closed)."""
        return self._closed or self.endpoint.closed

    def close(self) -> None:
        """Close the delivery context: outstanding work completes as cancelled, the
        remote frees its side, and this object refuses further use (idempotent)."""
        self.endpoint._close_peer(self)

    @property
    def reliability(self) -> Reliability:
        """How this PDC repairs loss: sr (default), ec:K,M or adaptive."""
        return self._reliability

    @property
    def code(self) -> tuple[int, int]:
        """The (k, m) code the engine uses for this PDC's next blocks; (0, 0) = none."""
        return self._code

    @property
    def policy(self) -> AdaptivePolicy | None:
        """The adaptive policy (its estimates), when the reliability is ``adaptive``."""
        return self._policy

    def set_reliability(self, reliability: str | Reliability,
                        policy: AdaptivePolicy | None = None) -> None:
        """Choose loss repair for messages posted from now on: ``"sr"`` (selective
        repeat), ``"ec:K,M"`` (K data + M parity packets per block; selective repeat
        repairs what parity cannot) or ``"adaptive"`` (before each message, the code
        with the lowest expected completion time for the measured RTT, rate and loss;
        ``policy`` overrides the default :class:`AdaptivePolicy`). Coding needs RUD."""
        self.endpoint._check_peer(self)
        rel = parse_reliability(reliability)
        if rel.kind != "sr" and self.mode is not Mode.RUD:
            raise InvalidArgumentError(f"reliability {rel} needs a RUD peer; this one is "
                                       f"{self.mode.name} (coding is for RUD only)")
        self._policy = None
        if rel.kind == "adaptive":
            self._policy = policy or AdaptivePolicy(payload=self.endpoint.max_payload)
        self._set_code((rel.k, rel.m) if rel.kind == "ec" else SR)
        self._reliability = rel

    def path(self) -> dict[str, int]:
        """What the engine measures on this PDC: srtt_ns, rttvar_ns, min_rtt_ns, tx_bytes,
        rx_bytes (of those, what the peer reported receiving), data_pkts, retransmits, k, m."""
        self.endpoint._check_peer(self)
        return self.endpoint._port.peer_path(self.handle)

    def _set_code(self, code: tuple[int, int]) -> None:
        if code != self._code:
            self.endpoint._port.peer_set_coding(self.handle, *code)
            self._code = code

    def write(self, local: MemoryRegion, remote: RemoteKey | MemoryRegion, *,
              remote_offset: int = 0, local_offset: int = 0, length: int | None = None,
              wr_id: int | None = None, context: Any = None) -> int:
        """RMA-write ``length`` bytes of ``local`` into the peer's region at ``remote_offset``."""
        return self.endpoint._post_rma(Opcode.WRITE, self, local, remote, remote_offset,
                                       local_offset, length, wr_id, context)

    def write_many(self, local: MemoryRegion, remote: RemoteKey | MemoryRegion,
                   remote_offsets: Any, *, length: int, local_offsets: Any = None,
                   context: Any = None) -> Any:
        """RMA-write ``len(remote_offsets)`` messages of ``length`` bytes in one call:
        message i from ``local`` at ``local_offsets[i]`` (default 0) to ``remote`` at
        ``remote_offsets[i]``. On real sockets they are posted under one lock with one
        wake-up of the I/O thread, which is what small messages at depth need.
        Every range is checked before anything is posted. Returns the ids of the
        writes posted (a numpy uint64 array, in order): all of them, or the first
        ones if the engine's queue filled up (none posted raises QueueFullError)."""
        return self.endpoint._post_writes(self, local, remote, remote_offsets, local_offsets,
                                          length, context)

    def read(self, local: MemoryRegion, remote: RemoteKey | MemoryRegion, *,
             remote_offset: int = 0, local_offset: int = 0, length: int | None = None,
             wr_id: int | None = None, context: Any = None) -> int:
        """RMA-read ``length`` bytes of the peer's region at ``remote_offset`` into ``local``."""
        return self.endpoint._post_rma(Opcode.READ, self, local, remote, remote_offset,
                                       local_offset, length, wr_id, context)

    def send(self, data: Any, *, offset: int = 0, length: int | None = None,
             wr_id: int | None = None, context: Any = None) -> int:
        """Send a message (any bytes-like object or a region) to the peer's posted receives."""
        return self.endpoint._post_send(self, data, offset, length, wr_id, context)

    def __repr__(self) -> str:
        state = " closed" if self.closed else ""
        return (f"<Peer {self.address[0]}:{self.address[1]} {self.mode.name} "
                f"handle={self.handle}{state}>")


class Endpoint:
    """One transport engine at ``address``, driven by ``port`` (a driver's EnginePort)."""

    def __init__(self, port: EnginePort) -> None:
        self._port = port
        self._closed = False
        self._ids = itertools.count(1)
        self._inflight: dict[int, tuple[Opcode, Any, memoryview | None, Any]] = {}
        self._regions: dict[int, MemoryRegion] = {}
        self._peers: dict[tuple[str, int, Mode], Peer] = {}
        self._adaptive: dict[int, tuple[Peer, float, int]] = {}  # wr_id -> (peer, posted, size)
        self.cq = CompletionQueue(self._fetch, port.progress, port.clock, lambda: self._closed,
                                  lambda wr_id: wr_id in self._inflight, self._fetch_batch)

    # ---- state ----
    @property
    def address(self) -> tuple[str, int]:
        """(IPv4 address, UDP port) this endpoint listens on."""
        return self._port.address

    @property
    def max_payload(self) -> int:
        """Payload bytes one packet carries (the MTU minus netweft's headers)."""
        return self._port.max_payload()

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    @property
    def outstanding(self) -> int:
        """Work requests posted whose completions have not been polled yet."""
        return len(self._inflight)

    def _check_open(self) -> None:
        if self._closed:
            raise EndpointClosedError("the endpoint is closed")

    # ---- memory ----
    def register(self, buffer: Any, access: Access = Access.REMOTE) -> MemoryRegion:
        """Register ``buffer`` (numpy array, bytearray, memoryview...) with ``access`` rights."""
        self._check_open()
        access = Access(access)
        writable = bool(access & Access.REMOTE_WRITE)
        view = byte_view(buffer, writable=writable)
        if view.nbytes == 0:
            raise InvalidArgumentError("cannot register an empty buffer")
        # cffi points at the object itself, never at a memoryview: a memoryview that
        # cffi exports from cannot be cleared by the garbage collector.
        handle = ffi.from_buffer(buffer, require_writable=writable)
        rkey = self._port.mr_register(handle, view.nbytes, int(access))
        region = MemoryRegion(self, buffer, view, rkey, access, handle)
        self._regions[rkey] = region
        return region

    def _deregister(self, region: MemoryRegion) -> None:
        if self._closed:
            return
        busy = sum(1 for _, keep, _, _ in self._inflight.values()
                   if keep is region or (isinstance(keep, tuple) and keep[0] is region))
        if busy:
            raise EngineError(lib.NW_EBUSY, f"memory region rkey={region.rkey:#x} is still "
                              f"referenced by {busy} work request(s) in flight; poll their "
                              "completions first")
        self._port.mr_deregister(region.rkey)
        self._regions.pop(region.rkey, None)

    def _own_region(self, region: Any, what: str) -> MemoryRegion:
        if not isinstance(region, MemoryRegion):
            raise UnregisteredMemoryError(
                f"{what} must be a MemoryRegion of this endpoint, got {type(region).__name__}; "
                "register the buffer first with endpoint.register(buffer)")
        if region._endpoint is not self:
            raise UnregisteredMemoryError(f"{what} (rkey={region.rkey:#x}) is registered with "
                                          "another endpoint")
        if not region.registered:
            raise UnregisteredMemoryError(f"{what} (rkey={region.rkey:#x}) is deregistered")
        return region

    # ---- peers ----
    def connect(self, address: tuple[str, int], mode: Mode | str = Mode.RUD) -> Peer:
        """The peer at (ip, port) with delivery ``mode`` (one PDC per address and mode)."""
        self._check_open()
        if (not isinstance(address, tuple) or len(address) != 2
                or not isinstance(address[1], int)):
            raise InvalidArgumentError(f"address must be (ip, port), got {address!r}")
        ip, udp_port = address
        if not 0 < udp_port < 65536:
            raise InvalidArgumentError(f"port must be in 1..65535, got {udp_port}")
        mode = Mode.parse(mode)
        key = (ip, udp_port, mode)
        if key not in self._peers:
            handle = self._port.peer_add(ip, udp_port, int(mode))
            self._peers[key] = Peer(self, handle, (ip, udp_port), mode)
        return self._peers[key]

    def peer(self, handle: int) -> Peer:
        """The :class:`Peer` behind a completion's ``peer`` handle (e.g. to answer a sender)."""
        self._check_open()
        ip, udp_port, mode = self._port.peer_info(handle)
        key = (ip, udp_port, Mode(mode))
        peer = self._peers.get(key)
        if peer is None or peer.handle != handle:
            peer = Peer(self, handle, (ip, udp_port), key[2])
            self._peers[key] = peer
        return peer

    def _close_peer(self, peer: Peer) -> None:
        if not isinstance(peer, Peer) or peer.endpoint is not self:
            raise InvalidArgumentError("peer must come from this endpoint's connect()")
        if peer._closed or self._closed:
            peer._closed = True
            return
        peer._closed = True
        key = (peer.address[0], peer.address[1], peer.mode)
        if self._peers.get(key) is peer:
            del self._peers[key]
        try:
            # The remote may have closed an incoming PDC already and its slot been
            # reused: close the handle only while it still names this peer.
            if self._port.peer_info(peer.handle) != key:
                return
            self._port.peer_close(peer.handle)
        except EngineError as exc:
            if exc.code != lib.NW_ENOPEER:
                raise

    # ---- work requests ----
    def _next_id(self, wr_id: int | None) -> int:
        if wr_id is None:
            wr_id = next(self._ids)
            while wr_id in self._inflight:
                wr_id = next(self._ids)
            return wr_id
        if not isinstance(wr_id, int) or isinstance(wr_id, bool) or not 0 <= wr_id < 2**64:
            raise InvalidArgumentError(f"wr_id must be an int in [0, 2**64), got {wr_id!r}")
        if wr_id in self._inflight:
            raise InvalidArgumentError(f"wr_id {wr_id} is already in flight")
        return wr_id

    def _check_peer(self, peer: Peer) -> None:
        self._check_open()
        if not isinstance(peer, Peer) or peer.endpoint is not self:
            raise InvalidArgumentError("peer must come from this endpoint's connect()")
        if peer._closed:
            raise PeerClosedError(f"peer {peer.address[0]}:{peer.address[1]} "
                                  f"({peer.mode.name}) is closed; use endpoint.connect() "
                                  "for a new one")

    def _post_rma(self, op: Opcode, peer: Peer, local: MemoryRegion,
                  remote: RemoteKey | MemoryRegion, remote_offset: int, local_offset: int,
                  length: int | None, wr_id: int | None, context: Any) -> int:
        self._check_peer(peer)
        write = op is Opcode.WRITE
        if (type(local) is not MemoryRegion or local._endpoint is not self
                or not local.registered):  # the message is built only to raise
            self._own_region(local, f"the local buffer of an RMA {'write' if write else 'read'}")
        region = local
        if isinstance(remote, MemoryRegion):
            remote = remote.remote()
        if not isinstance(remote, RemoteKey):
            raise InvalidArgumentError(f"remote must be a RemoteKey (region.remote()), "
                                       f"got {type(remote).__name__}")
        if length is None:
            if not isinstance(local_offset, int):
                raise InvalidArgumentError("local_offset must be an int")
            length = region.length - local_offset
        region.check(local_offset, length)
        remote.check(remote_offset, length)
        if not write and region.view.readonly:
            raise InvalidArgumentError("the local buffer of an RMA read must be writable")
        wr_id = self._next_id(wr_id)
        ptr = region._base + local_offset
        post = self._port.post_write if write else self._port.post_read
        if write and peer._policy is not None:
            self._before_post(peer, wr_id, length)
        self._inflight[wr_id] = (op, region, None, context)
        try:
            post(peer.handle, wr_id, ptr, length, remote.rkey, remote_offset)
        except BaseException:
            del self._inflight[wr_id]
            self._adaptive.pop(wr_id, None)
            raise
        return wr_id

    def _post_writes(self, peer: Peer, local: MemoryRegion, remote: RemoteKey | MemoryRegion,
                     remote_offsets: Any, local_offsets: Any, length: int,
                     context: Any) -> Any:
        import numpy as np

        self._check_peer(peer)
        region = self._own_region(local, "the local buffer of an RMA write")
        if isinstance(remote, MemoryRegion):
            remote = remote.remote()
        if not isinstance(remote, RemoteKey):
            raise InvalidArgumentError(f"remote must be a RemoteKey (region.remote()), "
                                       f"got {type(remote).__name__}")
        roffs = _offsets("remote_offsets", remote_offsets)
        n = len(roffs)
        loffs = (np.zeros(n, dtype=np.uint64) if local_offsets is None
                 else _offsets("local_offsets", local_offsets))
        if len(loffs) != n:
            raise InvalidArgumentError(f"local_offsets has {len(loffs)} entries, "
                                       f"remote_offsets {n}")
        if n == 0:
            return np.zeros(0, dtype=np.uint64)
        region.check(int(loffs.max()), length)
        remote.check(int(roffs.max()), length)
        if peer._policy is not None:  # adaptive coding decides and times message by message
            return np.array([self._post_rma(Opcode.WRITE, peer, region, remote, int(ro),
                                            int(lo), length, None, context)
                             for ro, lo in zip(roffs, loffs, strict=True)], dtype=np.uint64)
        wr_ids = np.array([self._next_id(None) for _ in range(n)], dtype=np.uint64)
        entry = (Opcode.WRITE, region, None, context)
        for w in wr_ids.tolist():
            self._inflight[w] = entry
        base = ffi.cast("uint8_t *", region._keepalive)
        try:
            post_writes = getattr(self._port, "post_writes", None)
            if post_writes is not None:
                posted = post_writes(peer.handle, wr_ids, base, loffs, length, remote.rkey,
                                     roffs)
            else:  # a driver without a batched post: one at a time, same result
                for w, lo, ro in zip(wr_ids.tolist(), loffs.tolist(), roffs.tolist(),
                                     strict=True):
                    self._port.post_write(peer.handle, w, base + lo, length, remote.rkey, ro)
                posted = n
        except BaseException:
            for w in wr_ids.tolist():
                del self._inflight[w]
            raise
        for w in wr_ids[posted:].tolist():  # refused (queue full): never posted
            del self._inflight[w]
        return wr_ids[:posted]

    def _post_send(self, peer: Peer, data: Any, offset: int, length: int | None,
                   wr_id: int | None, context: Any) -> int:
        self._check_peer(peer)
        if isinstance(data, MemoryRegion):
            region = self._own_region(data, "the buffer of a send")
            view, keep = region.view, region._keepalive
        else:
            view = byte_view(data, writable=False)
            keep = ffi.from_buffer(data)
        if length is None:
            if not isinstance(offset, int):
                raise InvalidArgumentError("offset must be an int")
            length = view.nbytes - offset
        check_range("the send buffer", view.nbytes, offset, length)
        wr_id = self._next_id(wr_id)
        ptr = ffi.cast("uint8_t *", keep) + offset
        self._before_post(peer, wr_id, length)
        self._inflight[wr_id] = (Opcode.SEND, (data, keep), None, context)
        try:
            self._port.post_send(peer.handle, wr_id, ptr, length)
        except BaseException:
            del self._inflight[wr_id]
            self._adaptive.pop(wr_id, None)
            raise
        return wr_id

    def post_recv(self, buffer: Any, *, offset: int = 0, length: int | None = None,
                  wr_id: int | None = None, context: Any = None) -> int:
        """Post a receive buffer (a region or any writable buffer) for one incoming message."""
        self._check_open()
        if isinstance(buffer, MemoryRegion):
            region = self._own_region(buffer, "the receive buffer")
            view, keep = region.view, region._keepalive
            if view.readonly:
                raise InvalidArgumentError("the receive buffer must be writable")
        else:
            view = byte_view(buffer, writable=True)
            keep = ffi.from_buffer(buffer, require_writable=True)
        if length is None:
            if not isinstance(offset, int):
                raise InvalidArgumentError("offset must be an int")
            length = view.nbytes - offset
        check_range("the receive buffer", view.nbytes, offset, length)
        wr_id = self._next_id(wr_id)
        ptr = ffi.cast("uint8_t *", keep) + offset
        self._inflight[wr_id] = (Opcode.RECV, (buffer, keep), view[offset:offset + length],
                                 context)
        try:
            self._port.post_recv(wr_id, ptr, length)
        except BaseException:
            del self._inflight[wr_id]
            raise
        return wr_id

    def _before_post(self, peer: Peer, wr_id: int, length: int) -> None:
        """Adaptive peers: pick the code for this message, and time it."""
        if peer._policy is None:
            return
        peer._set_code(peer._policy.choose(length))
        self._adaptive[wr_id] = (peer, self._port.clock(), length)

    def _observe(self, wr_id: int, status: int) -> None:
        peer, posted, size = self._adaptive.pop(wr_id)
        if status or peer.closed or peer._policy is None:
            return
        peer._policy.observe_path(self._port.peer_path(peer.handle))
        peer._policy.observe_message(size, self._port.clock() - posted)

    # ---- completions ----
    def _fetch_batch(self, max_entries: int) -> Any:
        """Up to ``max_entries`` completions as a numpy record array (no objects made)."""
        poll_array = getattr(self._port, "poll_cq_array", None)
        raw = (poll_array(max_entries) if poll_array is not None
               else completions_to_array(self._port.poll_cq(max_entries)))
        inflight, adaptive = self._inflight, self._adaptive
        wr_ids = raw["wr_id"].tolist()
        if adaptive:
            for w, status in zip(wr_ids, raw["status"].tolist(), strict=True):
                if w in adaptive:
                    self._observe(w, status)
        for w in wr_ids:
            inflight.pop(w, None)
        return raw

    def _fetch(self, max_entries: int) -> list[Completion]:
        out = []
        for raw in self._port.poll_cq(max_entries):
            if raw.wr_id in self._adaptive:
                self._observe(raw.wr_id, raw.status)
            entry = self._inflight.pop(raw.wr_id, None)
            op = _OPCODES.get(raw.opcode) or Opcode(raw.opcode)
            completion = Completion(raw.wr_id, op, raw.status, raw.bytes, raw.peer,
                                    context=entry[3] if entry is not None else None)
            recv_view = entry[2] if entry is not None else None
            if raw.status:
                completion.error = strerror(raw.status)
            elif recv_view is not None:
                completion.data = recv_view[:raw.bytes]
            out.append(completion)
        return out

    # ---- lifecycle ----
    def fileno(self) -> int:
        """A descriptor that is readable while completions wait (real-socket endpoints only).

        Use it with ``select``/``selectors``/asyncio, then :meth:`CompletionQueue.poll`.
        """
        self._check_open()
        event_fd = getattr(self._port, "event_fd", None)
        if event_fd is None:
            raise InvalidArgumentError("a simulated endpoint has no file descriptor; "
                                       "use endpoint.cq.wait(), which runs the simulation")
        return event_fd()

    def stats(self) -> dict[str, int]:
        """The engine's counters (packets, retransmits, drops by reason, ...)."""
        self._check_open()
        return self._port.stats()

    def trace_start(self, capacity: int = 1 << 16) -> None:
        """Record the engine's events (packets, losses, trims, credits, window and rate
        changes) into a ring of ``capacity`` events; the oldest give way when it is full.
        ``trace_start(0)`` stops. Off by default."""
        self._check_open()
        self._port.trace_start(capacity)

    def trace_events(self) -> list[TraceEvent]:
        """The recorded events, oldest first, removed from the ring
        (:mod:`netweft.transport.trace`)."""
        self._check_open()
        return self._port.trace_drain()

    def close(self) -> None:
        """Close every peer (the remotes free their PDCs), then stop the engine; regions are
        dropped and later calls raise EndpointClosedError."""
        if self._closed:
            return
        for peer in list(self._peers.values()):
            try:
                peer.close()
            except EngineError:
                pass  # best effort: the engine stops next anyway
        self._closed = True
        self._port.close()
        for region in self._regions.values():
            region._drop()
        self._regions.clear()
        self._inflight.clear()
        self._adaptive.clear()

    def __enter__(self) -> Endpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Endpoint {self.address[0]}:{self.address[1]} {state}>"


def _offsets(what: str, values: Any) -> Any:
    """A sequence of byte offsets as a contiguous uint64 array, checked >= 0."""
    import numpy as np

    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{what} must be a sequence of ints") from None
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"{what} must be a flat sequence of ints, got {arr.dtype} "
                                   f"with shape {arr.shape}")
    if arr.size and arr.min() < 0:
        raise InvalidArgumentError(f"{what} must be >= 0")
    return np.ascontiguousarray(arr, dtype=np.uint64)
