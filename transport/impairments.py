"""Seeded packet impairments and a link model for the deterministic simulation.

:class:`Impairments` says what may happen to each datagram (loss, duplication,
reordering, corruption, extra delay and jitter, injected junk datagrams);
:class:`Link` gives an endpoint a rate each way, a propagation delay and a
queue in front of its downlink (:class:`DownlinkQueue`, tail drop);
:class:`Path` applies both to one datagram at a time with a seeded
``random.Random`` and returns its arrivals. It is pure: no I/O, no engine.

Corruption flips one bit. Each datagram carries the RFC 1071 checksum of its
bytes computed at transmit, as UDP does; the receiving side of the simulation
verifies it and drops a mismatch, exactly as a kernel drops a UDP datagram with
a bad checksum. Junk datagrams (random bytes, and copies of real datagrams cut
inside their first header bytes) are what the engine itself must count and
drop.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from dataclasses import dataclass, field

from netweft.nic_offload import lib, trim
from netweft.transport.errors import InvalidArgumentError

ECN_ECT1, ECN_ECT0, ECN_CE = 1, 2, 3  # IP ECN codepoints (RFC 3168)
TRIM_KEEP = int(lib.NW_WIRE_TRIM_KEEP)  # bytes a trimming queue keeps of a packet
JUNK_TRUNCATE_MAX = 8  # junk copies of real datagrams keep fewer bytes than any header


@dataclass(frozen=True)
class Impairments:
    """Per-datagram probabilities and delays; all zero means a perfect network.

    ``spray_paths``/``spray_skew_ns`` model a fabric that sprays on the entropy
    value: each value maps to one of several paths of different lengths, so
    packets of one flow arrive reordered by their entropy.

    ``burst_enter``/``burst_exit``/``burst_loss`` add Gilbert-Elliott burst loss:
    each datagram the path moves from its good to its bad state with probability
    ``burst_enter`` (from bad to good with ``burst_exit``), and in the bad state a
    datagram is lost with probability ``burst_loss``; ``loss`` applies in both
    states. Mean burst length is ``1 / burst_exit`` datagrams."""

    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    reorder_delay_ns: int = 50_000
    corrupt: float = 0.0
    delay_ns: int = 0
    jitter_ns: int = 0
    junk: float = 0.0
    spray_paths: int = 1
    spray_skew_ns: int = 0
    burst_enter: float = 0.0
    burst_exit: float = 1.0
    burst_loss: float = 1.0

    def __post_init__(self) -> None:
        for name in ("loss", "duplicate", "reorder", "corrupt", "junk", "burst_enter",
                     "burst_exit", "burst_loss"):
            p = getattr(self, name)
            if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
                raise InvalidArgumentError(f"impairment {name} must be a probability in [0, 1], "
                                           f"got {p!r}")
        if self.loss >= 1.0:
            raise InvalidArgumentError("impairment loss must be below 1 (nothing would arrive)")
        if self.burst_enter and self.burst_exit == 0.0:
            raise InvalidArgumentError("impairment burst_exit must be > 0 when burst_enter is "
                                       "set (the path would stay in its bad state)")
        if not isinstance(self.spray_paths, int) or self.spray_paths < 1:
            raise InvalidArgumentError(f"impairment spray_paths must be an int >= 1, "
                                       f"got {self.spray_paths!r}")
        for name in ("reorder_delay_ns", "delay_ns", "jitter_ns", "spray_skew_ns"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise InvalidArgumentError(f"impairment {name} must be an int >= 0, got {v!r}")

    @classmethod
    def mix(cls, level: float = 0.02) -> Impairments:
        """Every impairment at once at probability ``level``, with jitter."""
        return cls(loss=level, duplicate=level, reorder=level, corrupt=level,
                   delay_ns=20_000, jitter_ns=10_000, junk=level)


@dataclass(frozen=True)
class Link:
    """An endpoint's attachment: ``rate_bps`` each way, ``delay_ns`` of propagation, and a
    tail-drop queue of ``queue_pkts`` packets in front of its downlink (where incast
    from several senders meets).

    ``ecn_threshold_pkts`` > 0 makes that queue mark ECN-capable packets CE when it holds
    at least that many packets on arrival (a step marking, as DCTCP's K). ``trim`` makes
    it trim instead of drop when full, as a UET switch does: the packet's first 64 bytes
    with the trimmed mark (:func:`netweft.nic_offload.trim`) reach the endpoint at once,
    ahead of the queued data (a header queue of its own, served first, that does not
    delay data); packets no longer than that (ACKs, CTRL) take the header queue too."""

    rate_bps: float = 25e9
    delay_ns: int = 2_000
    queue_pkts: int = 1024
    ecn_threshold_pkts: int = 0
    trim: bool = False

    def __post_init__(self) -> None:
        if not self.rate_bps > 0:
            raise InvalidArgumentError(f"link rate_bps must be > 0, got {self.rate_bps!r}")
        if not isinstance(self.delay_ns, int) or self.delay_ns < 0:
            raise InvalidArgumentError(f"link delay_ns must be an int >= 0, got {self.delay_ns!r}")
        if not isinstance(self.queue_pkts, int) or self.queue_pkts < 1:
            raise InvalidArgumentError(f"link queue_pkts must be an int >= 1, "
                                       f"got {self.queue_pkts!r}")
        if not isinstance(self.ecn_threshold_pkts, int) or self.ecn_threshold_pkts < 0:
            raise InvalidArgumentError(f"link ecn_threshold_pkts must be an int >= 0, "
                                       f"got {self.ecn_threshold_pkts!r}")

    def serialization_ns(self, nbytes: int) -> int:
        """Time to put ``nbytes`` on the wire (at least 1 ns, so events stay ordered)."""
        return max(1, int(nbytes * 8 * 1e9 / self.rate_bps))


class DownlinkQueue:
    """The tail-drop FIFO in front of an endpoint's downlink, served at the link's rate."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self._departures: deque[int] = deque()
        self.drops = 0
        self.trims = 0
        self.ce_marks = 0
        self.max_depth = 0

    def depth(self, now_ns: int) -> int:
        """Packets in the queue at ``now_ns``."""
        deps = self._departures
        while deps and deps[0] <= now_ns:
            deps.popleft()
        return len(deps)

    def admit(self, now_ns: int, nbytes: int) -> int | None:
        """When a packet arriving at ``now_ns`` reaches the endpoint, or None if dropped."""
        deps = self._departures
        if self.depth(now_ns) >= self.link.queue_pkts:
            self.drops += 1
            return None
        leave = max(now_ns, deps[-1] if deps else 0) + self.link.serialization_ns(nbytes)
        deps.append(leave)
        self.max_depth = max(self.max_depth, len(deps))
        return leave

    def enqueue(self, now_ns: int, data: bytes, ecn: int = 0) -> tuple[int, bytes, int] | None:
        """A packet with IP ECN codepoint ``ecn`` arrives: (when it reaches the endpoint,
        its bytes, its ECN codepoint), or None if dropped. Marks CE above the ECN threshold
        (ECN-capable packets only) and trims instead of dropping when the link trims."""
        link = self.link
        depth = self.depth(now_ns)
        if depth >= link.queue_pkts and link.trim:
            if len(data) <= TRIM_KEEP:  # control packets share the header queue
                return now_ns + link.serialization_ns(len(data)), data, ecn
            trimmed = trim(data)
            if trimmed is not None:
                self.trims += 1
                return now_ns + link.serialization_ns(len(trimmed)), trimmed, ecn
        if link.ecn_threshold_pkts and ecn in (ECN_ECT1, ECN_ECT0) and \
                depth >= link.ecn_threshold_pkts:
            ecn = ECN_CE
            self.ce_marks += 1
        leave = self.admit(now_ns, len(data))
        return None if leave is None else (leave, data, ecn)


@dataclass(frozen=True)
class Arrival:
    """One datagram reaching the receiver at ``at_ns``; ``intact`` is False if corrupted."""

    at_ns: int
    data: bytes
    intact: bool = True
    junk: bool = False


@dataclass
class Path:
    """A sender's link plus impairments, drawing every decision from ``rng``."""

    link: Link
    impairments: Impairments
    rng: random.Random
    busy_until_ns: int = 0
    counters: Counter = field(default_factory=Counter)
    in_burst: bool = False  # Gilbert-Elliott state: True = bad

    def transmit(self, now_ns: int, data: bytes, entropy: int = 0) -> tuple[int, list[Arrival]]:
        """Send ``data`` at ``now_ns``: (time the link is free again, arrivals at the receiver).

        ``entropy`` (the UDP source port) picks one of ``spray_paths`` paths, path
        ``k`` being ``k * spray_skew_ns`` longer, as a spraying fabric would."""
        imp, rng = self.impairments, self.rng
        start = max(now_ns, self.busy_until_ns)
        self.busy_until_ns = start + self.link.serialization_ns(len(data))
        self.counters["sent"] += 1
        base = self.busy_until_ns + self.link.delay_ns + imp.delay_ns
        if imp.spray_paths > 1:
            base += (entropy % imp.spray_paths) * imp.spray_skew_ns
        arrivals: list[Arrival] = []
        if imp.junk and rng.random() < imp.junk:
            arrivals.append(Arrival(base, self._junk(data), junk=True))
            self.counters["junk"] += 1
        if imp.loss and rng.random() < imp.loss:
            self.counters["lost"] += 1
            return self.busy_until_ns, arrivals
        if imp.burst_enter and self._burst_drop():
            self.counters["lost"] += 1
            self.counters["burst_lost"] += 1
            return self.busy_until_ns, arrivals
        copies = 1
        if imp.duplicate and rng.random() < imp.duplicate:
            copies = 2
            self.counters["duplicated"] += 1
        for _ in range(copies):
            at = base + (rng.randrange(imp.jitter_ns + 1) if imp.jitter_ns else 0)
            if imp.reorder and rng.random() < imp.reorder:
                at += imp.reorder_delay_ns
                self.counters["reordered"] += 1
            payload, intact = data, True
            if imp.corrupt and rng.random() < imp.corrupt:
                payload, intact = self._flip_bit(data), False
                self.counters["corrupted"] += 1
            arrivals.append(Arrival(at, payload, intact))
        return self.busy_until_ns, arrivals

    def _burst_drop(self) -> bool:
        """One Gilbert-Elliott step: move between the states, then drop in the bad one."""
        imp, rng = self.impairments, self.rng
        if self.in_burst:
            self.in_burst = rng.random() >= imp.burst_exit
        else:
            self.in_burst = rng.random() < imp.burst_enter
        return self.in_burst and rng.random() < imp.burst_loss

    def _flip_bit(self, data: bytes) -> bytes:
        if not data:
            return data
        buf = bytearray(data)
        bit = self.rng.randrange(len(buf) * 8)
        buf[bit // 8] ^= 1 << (bit % 8)
        return bytes(buf)

    def _junk(self, data: bytes) -> bytes:
        if self.rng.random() < 0.5:
            return data[: self.rng.randrange(min(len(data), JUNK_TRUNCATE_MAX) + 1)]
        return self.rng.randbytes(self.rng.randrange(1, max(2, len(data))))
