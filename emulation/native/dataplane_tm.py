"""The C traffic manager (``dataplane_tm.c``) behind a small Python API.

The same semantics as :class:`netweft.emulation.traffic_manager.TrafficManager`
(strict-priority queues per port, depth in packets and bytes, service rates,
tail drop, BMv2's queue metadata), sans-IO: the caller passes the time in
nanoseconds and gets departures out.  Packets are opaque integer handles.
The dataplane loop drives the same C object; this wrapper lets tests compare
it with the Python reference in virtual time.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from netweft.emulation.native.dataplane_build import load

DROP_REASONS = {1: "queue_full", 2: "priority", 3: "port", 4: "no_memory"}
_FIELDS = {"depth_packets": 1, "depth_bytes": 2, "rate_pps": 4, "rate_bps": 8}


class QueueMeta(NamedTuple):
    """The metadata BMv2 fills for a packet leaving its queue (microseconds, packets)."""

    enq_timestamp: int
    enq_qdepth: int
    deq_timedelta: int
    deq_qdepth: int
    qid: int


class NativeDeparture(NamedTuple):
    """A packet leaving its queue: when, which, where and what it measured."""

    time: int
    handle: int
    port: int
    priority: int
    length: int
    queue: QueueMeta


def _meta(m: Any) -> QueueMeta:
    return QueueMeta(int(m.enq_timestamp), int(m.enq_qdepth), int(m.deq_timedelta),
                     int(m.deq_qdepth), int(m.qid))


class NativeTrafficManager:
    """Egress queues of one switch, in C; ports 0..511 appear on first use."""

    def __init__(self, priority_queues: int = 1, depth_packets: int = 64,
                 depth_bytes: int | None = None, rate_pps: float | None = None,
                 rate_bps: float | None = None) -> None:
        self._mod = load()
        ffi, lib = self._mod.ffi, self._mod.lib
        cfg = self._config(depth_packets=depth_packets, depth_bytes=depth_bytes,
                           rate_pps=rate_pps, rate_bps=rate_bps)
        tm = lib.nw_tm_new(priority_queues, cfg)
        if tm == ffi.NULL:
            raise ValueError(f"priority queues must be 1..8, got {priority_queues}")
        self.ptr = ffi.gc(tm, lib.nw_tm_free)
        self.priority_queues = priority_queues
        self._meta = ffi.new("nw_tm_queue_meta_t *")
        self._dep = ffi.new("nw_tm_departure_t *")
        self._when = ffi.new("uint64_t *")

    def _config(self, **values: Any) -> Any:
        cfg = self._mod.ffi.new("nw_tm_queue_config_t *")
        if values.get("depth_packets") is not None:
            if values["depth_packets"] < 0:
                raise ValueError("queue depth must be >= 0 packets")
            cfg.depth_packets = values["depth_packets"]
        if values.get("depth_bytes") is not None:
            if values["depth_bytes"] < 0:
                raise ValueError("queue depth must be >= 0 bytes")
            cfg.has_depth_bytes, cfg.depth_bytes = 1, values["depth_bytes"]
        for name in ("rate_pps", "rate_bps"):
            value = values.get(name)
            if value is not None and value <= 0:
                raise ValueError(f"queue {name} must be positive, got {value}")
            setattr(cfg, name, value or 0.0)
        return cfg

    def configure_queue(self, port: int | None = None, priority: int | None = None,
                        **changes: Any) -> None:
        """Change queue limits as :meth:`TrafficManager.configure_queue` does."""
        unknown = set(changes) - set(_FIELDS)
        if unknown:
            raise TypeError(f"unknown queue settings: {', '.join(sorted(unknown))}")
        mask = sum(_FIELDS[name] for name in changes)
        rc = self._mod.lib.nw_tm_configure(self.ptr, -1 if port is None else port,
                                           -1 if priority is None else priority, mask,
                                           self._config(**changes))
        if rc < 0:
            raise ValueError(f"bad queue (port {port}, priority {priority})")

    def set_port_rate(self, port: int, rate_bps: float | None) -> None:
        """The port transmitter's rate (None: infinitely fast)."""
        if self._mod.lib.nw_tm_set_port_rate(self.ptr, port, rate_bps or 0.0) < 0:
            raise ValueError(f"bad port {port} or rate {rate_bps}")

    def enqueue(self, now: int, port: int, priority: int, length: int,
                handle: int) -> str | None:
        """Queue a packet; None if accepted, else the drop reason."""
        rc = self._mod.lib.nw_tm_enqueue(self.ptr, now, port, priority, length, handle)
        return None if rc == 0 else DROP_REASONS[rc]

    def pass_through(self, now: int, port: int, priority: int, length: int) -> QueueMeta | None:
        """Metadata for a packet that leaves at once, or None (then enqueue it)."""
        if self._mod.lib.nw_tm_pass_through(self.ptr, now, port, priority, length, self._meta):
            return _meta(self._meta)
        return None

    def next_departure(self) -> int | None:
        """The earliest time a queued packet may leave (None: all queues are empty)."""
        if self._mod.lib.nw_tm_next_departure(self.ptr, self._when):
            return int(self._when[0])
        return None

    def dequeue(self, now: int) -> NativeDeparture | None:
        """The next packet whose time has come by ``now``, or None."""
        d = self._dep
        if not self._mod.lib.nw_tm_dequeue(self.ptr, now, d):
            return None
        return NativeDeparture(int(d.time_ns), int(d.handle), int(d.port), int(d.priority),
                               int(d.length), _meta(d.meta))

    def transmitted(self, port: int, now: int, length: int) -> int:
        """A frame starts on ``port`` at ``now``; returns when its last bit has left."""
        return int(self._mod.lib.nw_tm_transmitted(self.ptr, port, now, length))

    def depth(self, port: int, priority: int | None = None) -> int:
        """Packets queued on ``port`` (one priority, or all)."""
        return int(self._mod.lib.nw_tm_depth(self.ptr, port,
                                             -1 if priority is None else priority))

    @property
    def drops(self) -> dict[str, int]:
        """Drops by reason, as :attr:`TrafficManager.drops`."""
        st = self._mod.ffi.new("nw_tm_stats_t *")
        self._mod.lib.nw_tm_stats(self.ptr, st)
        return {"queue_full": int(st.drop_queue_full), "priority": int(st.drop_priority)}
