"""The traffic manager: per-port strict-priority queues between ingress and egress.

Sans-IO, as BMv2 ``simple_switch``'s egress buffers with ``--priority-queues N``:

- every egress port has ``N`` queues (1 to 8); ingress picks one with
  ``standard_metadata.priority`` (``N - 1`` is served first, ``0`` last: strict
  priority); a priority of ``N`` or more is dropped, as ``simple_switch`` does;
- each queue holds at most ``depth_packets`` packets (BMv2's default 64) and,
  optionally, ``depth_bytes`` bytes: a packet that does not fit is dropped at
  the tail (counted as ``queue_full``);
- each queue may have a service rate (``rate_pps`` as BMv2's
  ``set_queue_rate``, and/or ``rate_bps``): consecutive departures from it are
  spaced by the packet's service time;
- the port's transmitter (the link's rate, :class:`LinkDirection`) sends one
  frame at a time: the next packet leaves when the previous frame's last bit
  has gone.

Times are nanoseconds passed in by the caller; the v1model queueing metadata is
filled in microseconds as BMv2 fills it: ``enq_timestamp`` when the packet was
queued, ``enq_qdepth`` the port's packets (all its priority queues) before it,
``deq_timedelta`` the microseconds it waited, ``deq_qdepth`` the port's packets
left behind it, ``qid`` = ``N - 1 - priority``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from netweft.emulation.links.link_model import NS_PER_S, LinkDirection
from netweft.emulation.v1model.simple_switch import QueuedPacket, QueueMetadata

MAX_PRIORITY_QUEUES = 8
DEFAULT_DEPTH = 64       # simple_switch's default queue depth, in packets

__all__ = ["DEFAULT_DEPTH", "Departure", "MAX_PRIORITY_QUEUES", "QueueConfig",
           "TrafficManager"]


@dataclass
class QueueConfig:
    """Limits of one queue: depth (packets, optionally bytes) and service rate."""

    depth_packets: int = DEFAULT_DEPTH
    depth_bytes: int | None = None
    rate_pps: float | None = None
    rate_bps: float | None = None

    def __post_init__(self) -> None:
        if self.depth_packets < 0:
            raise ValueError(f"queue depth must be >= 0 packets, got {self.depth_packets}")
        if self.depth_bytes is not None and self.depth_bytes < 0:
            raise ValueError(f"queue depth must be >= 0 bytes, got {self.depth_bytes}")
        for name in ("rate_pps", "rate_bps"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"queue {name} must be positive, got {value}")


class Departure(NamedTuple):
    """A packet leaving its queue: what egress needs, and when it left."""

    time: int
    packet: QueuedPacket
    queue: QueueMetadata


class _Queue:
    __slots__ = ("entries", "bytes", "config", "eligible_at", "_ns_per_packet", "_ns_per_byte")

    def __init__(self, config: QueueConfig) -> None:
        self.entries: deque[tuple[QueuedPacket, int, int]] = deque()
        self.bytes = 0
        self.eligible_at = 0
        self.configure(config)

    def configure(self, config: QueueConfig) -> None:
        self.config = config
        self._ns_per_packet = NS_PER_S / config.rate_pps if config.rate_pps else 0.0
        self._ns_per_byte = 8 * NS_PER_S / config.rate_bps if config.rate_bps else 0.0

    def service_ns(self, length: int) -> int:
        return int(max(self._ns_per_packet, length * self._ns_per_byte) + 0.5)


class _Port:
    __slots__ = ("number", "queues", "count", "free_at", "link")

    def __init__(self, number: int, queues: list[_Queue], link: LinkDirection | None) -> None:
        self.number = number
        self.queues = queues          # index = priority; the highest index is served first
        self.count = 0
        self.free_at = 0
        self.link = link

    def ready_at(self) -> int:
        """When the next packet may leave (the port has packets)."""
        t = -1
        for q in self.queues:
            if q.entries and (t < 0 or q.eligible_at < t):
                t = q.eligible_at
        return t if t > self.free_at else self.free_at


@dataclass
class TrafficManager:
    """Egress queues of one switch; ports appear on first use with the default queues."""

    priority_queues: int = 1
    default_queue: QueueConfig = field(default_factory=QueueConfig)
    drops: dict[str, int] = field(default_factory=lambda: {"queue_full": 0, "priority": 0})

    def __post_init__(self) -> None:
        if not 1 <= self.priority_queues <= MAX_PRIORITY_QUEUES:
            raise ValueError(f"priority queues must be 1..{MAX_PRIORITY_QUEUES}, "
                             f"got {self.priority_queues}")
        self._ports: dict[int, _Port] = {}
        self._active: dict[int, _Port] = {}     # ports holding packets
        self._port_queue: dict[int, QueueConfig] = {}
        self._queue: dict[tuple[int, int], QueueConfig] = {}
        self._links: dict[int, LinkDirection] = {}
        self._cached: tuple[int, _Port] | None = None   # (time, port) of the next departure

    # ------------------------------------------------------------------ configuration

    def set_link(self, port: int, link: LinkDirection | None) -> None:
        """Use ``link`` (its rate) as ``port``'s transmitter; None: infinitely fast."""
        if link is None:
            self._links.pop(port, None)
        else:
            self._links[port] = link
        if port in self._ports:
            self._ports[port].link = link
        self._cached = None

    def link(self, port: int) -> LinkDirection | None:
        """The egress link direction of ``port``, if one is set."""
        return self._links.get(port)

    @property
    def links(self) -> dict[int, LinkDirection]:
        """Egress link directions by port (do not modify; use :meth:`set_link`)."""
        return self._links

    def queue_config(self, port: int, priority: int = 0) -> QueueConfig:
        """The limits in force for one queue."""
        self._check_priority(priority)
        return (self._queue.get((port, priority)) or self._port_queue.get(port)
                or self.default_queue)

    def configure_queue(self, port: int | None = None, priority: int | None = None,
                        **changes: object) -> None:
        """Change queue limits (``depth_packets``, ``depth_bytes``, ``rate_pps``, ``rate_bps``).

        ``port`` None: every port (the default); ``priority`` None: every queue of
        the port(s).  Packets already queued stay (a smaller depth only refuses
        new ones), as in BMv2.
        """
        if priority is not None:
            self._check_priority(priority)
            if port is None:
                raise ValueError("a priority needs a port")
        if port is None:
            self.default_queue = _changed(self.default_queue, changes)
            self._port_queue = {p: _changed(c, changes) for p, c in self._port_queue.items()}
            self._queue = {k: _changed(c, changes) for k, c in self._queue.items()}
        elif priority is None:
            self._port_queue[port] = _changed(self.queue_config(port), changes)
            self._queue = {k: (_changed(c, changes) if k[0] == port else c)
                           for k, c in self._queue.items()}
        else:
            self._queue[(port, priority)] = _changed(self.queue_config(port, priority), changes)
        for number, p in self._ports.items():
            for prio, q in enumerate(p.queues):
                q.configure(self.queue_config(number, prio))
        self._cached = None

    def _check_priority(self, priority: int) -> None:
        if not 0 <= priority < self.priority_queues:
            raise ValueError(f"priority {priority} is not in 0..{self.priority_queues - 1} "
                             f"(the switch has {self.priority_queues} queue(s) per port)")

    def _port(self, number: int) -> _Port:
        p = self._ports.get(number)
        if p is None:
            queues = [_Queue(self.queue_config(number, prio))
                      for prio in range(self.priority_queues)]
            p = self._ports[number] = _Port(number, queues, self._links.get(number))
        return p

    # ------------------------------------------------------------------ packets

    def enqueue(self, now: int, packet: QueuedPacket) -> str | None:
        """Queue ``packet`` at ``now``; None if accepted, else the drop reason."""
        priority = packet.priority
        if priority >= self.priority_queues:
            self.drops["priority"] += 1
            return "priority"
        port = self._port(packet.port)
        q = port.queues[priority]
        cfg = q.config
        length = packet.length
        if len(q.entries) >= cfg.depth_packets or (
                cfg.depth_bytes is not None and q.bytes + length > cfg.depth_bytes):
            self.drops["queue_full"] += 1
            return "queue_full"
        if not q.entries and q.eligible_at < now:
            q.eligible_at = now              # an idle queue's next packet may leave now
        q.entries.append((packet, now, port.count))
        q.bytes += length
        port.count += 1
        self._active[packet.port] = port
        self._cached = None
        return None

    def _next(self) -> tuple[int, _Port] | None:
        """The port whose packet leaves first, and when (cached until the queues change)."""
        if self._cached is None and self._active:
            best: _Port | None = None
            best_t = 0
            for p in self._active.values():
                t = p.ready_at()
                if best is None or t < best_t or (t == best_t and p.number < best.number):
                    best, best_t = p, t
            self._cached = (best_t, best)  # type: ignore[assignment]
        return self._cached

    def pass_through(self, now: int, packet: QueuedPacket) -> QueueMetadata | None:
        """Metadata for a packet that leaves at once, or None (then :meth:`enqueue` it).

        A packet leaves at once when its port holds no packets, is not sending and
        its queue's rate allows a departure now: queueing it and taking it out at
        the same time would give the same metadata and the same schedule.
        """
        priority = packet.priority
        if priority >= self.priority_queues:
            return None
        port = self._port(packet.port)
        if port.count or port.free_at > now:
            return None
        q = port.queues[priority]
        cfg = q.config
        length = packet.length
        if q.eligible_at > now or cfg.depth_packets < 1 or (
                cfg.depth_bytes is not None and length > cfg.depth_bytes):
            return None
        service = q.service_ns(length)
        if service:
            q.eligible_at = now + service
        return QueueMetadata(enq_timestamp=now // 1000, enq_qdepth=0, deq_timedelta=0,
                             deq_qdepth=0, qid=self.priority_queues - 1 - priority)

    def next_departure(self) -> int | None:
        """The earliest time a queued packet may leave (None: all queues are empty)."""
        nxt = self._cached or self._next()
        return None if nxt is None else nxt[0]

    def dequeue(self, now: int) -> Departure | None:
        """The next packet whose time has come by ``now`` (earliest first), or None."""
        nxt = self._next()
        if nxt is None or nxt[0] > now:
            return None
        best_t, best = nxt
        self._cached = None
        for prio in range(self.priority_queues - 1, -1, -1):
            q = best.queues[prio]
            if q.entries and q.eligible_at <= best_t:
                break
        packet, enq_ns, enq_depth = q.entries.popleft()
        q.bytes -= packet.length
        best.count -= 1
        if not best.count:
            del self._active[best.number]
        service = q.service_ns(packet.length)
        if service:
            q.eligible_at = best_t + service
        meta = QueueMetadata(enq_timestamp=enq_ns // 1000, enq_qdepth=enq_depth,
                             deq_timedelta=best_t // 1000 - enq_ns // 1000,
                             deq_qdepth=best.count, qid=self.priority_queues - 1 - prio)
        return Departure(best_t, packet, meta)

    def transmitted(self, port: int, now: int, length: int) -> int:
        """A ``length``-byte frame starts on ``port`` at ``now``; returns when its last bit left."""
        p = self._port(port)
        end = now + (p.link.transmit_ns(length) if p.link is not None else 0)
        p.free_at = end
        self._cached = None
        return end

    def depth(self, port: int, priority: int | None = None) -> int:
        """Packets queued on ``port`` (one priority, or all)."""
        p = self._ports.get(port)
        if p is None:
            return 0
        return p.count if priority is None else len(p.queues[priority].entries)

    def depths(self) -> dict[int, list[int]]:
        """``{port: [all queues, priority 0, priority 1, ...]}`` for every port in use."""
        return {number: [p.count, *(len(q.entries) for q in p.queues)]
                for number, p in sorted(self._ports.items())}

    @property
    def queued(self) -> int:
        """Packets in all queues."""
        return sum(p.count for p in self._active.values())


def _changed(config: QueueConfig, changes: dict[str, object]) -> QueueConfig:
    values = {**config.__dict__, **changes}
    return QueueConfig(**values)  # type: ignore[arg-type]
