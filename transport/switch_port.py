"""An output port of a simulated switch: byte-limited queues, ECN marking, trimming.

This is the per-port traffic manager of the simulator's fabric model
(:mod:`netweft.transport.fabric`), in the shape of UEC's htsim switch model
(``/work/shared/anchors/uec-htsim.md``; the code is not copied, the rules are):

- A **data queue** of at most ``buffer_bytes`` wire bytes, served FIFO at the
  port's rate. A data packet (a UET request) that would overflow it is
  **trimmed** when trimming is on: the packet keeps its first
  ``NW_WIRE_TRIM_KEEP`` = 64 UDP payload bytes (every PDS and SES header),
  gets the trimmed mark ``NW_PDS_F_TRIMMED`` in its PDS flags
  (``docs/wire.md``) and joins the priority queue; with trimming off it is
  dropped (tail drop).
- A **priority queue** of at most ``priority_bytes`` (htsim: 2 × buffer) for
  trimmed headers and control packets (ACK, NACK, CTRL); it is served before the
  data queue. What would overflow it is dropped and counted.
- **ECN**: an ECN-capable packet (ECT(0) or ECT(1) in its IP header; netweft's
  engines send data packets so) leaving the data queue is CE-marked with a RED-like
  probability that grows linearly from 0 at ``ecn_min_bytes`` of queue to 1 at
  ``ecn_max_bytes`` (the queue as the packet leaves it, the packet included).

The port is sans-IO over the simulation's :class:`EventLoop` (virtual time) and
draws every marking decision from its own seeded ``random.Random``: the same
seed gives the same marks. One loop event per packet arrival, and one per
dequeue only while packets wait: an idle port forwards without queueing.
"""

from __future__ import annotations

import random
from array import array
from collections import deque
from collections.abc import Callable
from typing import Any

from netweft.nic_offload import lib
from netweft.nic_offload import trim as wire_trim
from netweft.transport.impairments import ECN_CE, ECN_ECT0, ECN_ECT1
from netweft.transport.sim.event_loop import EventLoop

TRIM_KEEP = int(lib.NW_WIRE_TRIM_KEEP)    # UDP payload bytes a trimming switch keeps
PDS_F_TRIMMED = int(lib.NW_PDS_F_TRIMMED)  # the trimmed mark, low 7 bits of the PDS prologue
# PDS types of data packets, the ones a switch may trim: RUD, ROD, UUD, RUD_CC, ROD_CC.
DATA_TYPES = frozenset(int(getattr(lib, f"NW_PDS_{t}"))
                       for t in ("RUD", "ROD", "UUD", "RUD_CC", "ROD_CC"))
WIRE_OVERHEAD = 46      # Ethernet header and FCS (18) + IPv4 (20) + UDP (8) per datagram


class FabricPacket:
    """One UDP datagram crossing the fabric: the engine's bytes plus what switches see
    (the IP header's ECN codepoint ``ecn``, the UDP source port ``entropy``)."""

    __slots__ = ("data", "wire", "is_data", "src_host", "dst_host", "src_ip", "entropy",
                 "ecn", "trimmed", "sent_ns")

    def __init__(self, data: bytes, src_host: int, dst_host: int, src_ip: int, entropy: int,
                 ecn: int, sent_ns: int) -> None:
        self.data = data
        self.wire = len(data) + WIRE_OVERHEAD
        self.is_data = bool(data) and (data[0] >> 3) in DATA_TYPES
        self.src_host = src_host
        self.dst_host = dst_host
        self.src_ip = src_ip
        self.entropy = entropy
        self.ecn = ecn
        self.trimmed = False
        self.sent_ns = sent_ns

    @property
    def ce(self) -> bool:
        """Congestion experienced: a switch marked it."""
        return self.ecn == ECN_CE

    def trim(self) -> bool:
        """Cut to the headers with the trimmed mark, as a trimming switch does
        (:func:`netweft.nic_offload.trim`); False if this packet may not be trimmed."""
        head = wire_trim(self.data)
        if head is None:
            return False
        self.data = head
        self.wire = len(head) + WIRE_OVERHEAD
        self.trimmed = True
        return True


class PortCounters:
    """What one output port did; all counts are packets unless named bytes."""

    __slots__ = ("forwarded", "forwarded_bytes", "data_bytes", "ce_marked", "trimmed",
                 "dropped", "trim_dropped", "priority_dropped", "peak_bytes",
                 "queue_area", "busy_ns")

    def __init__(self) -> None:
        self.forwarded = 0
        self.forwarded_bytes = 0       # wire bytes put on the link
        self.data_bytes = 0            # of which untrimmed data packets
        self.ce_marked = 0
        self.trimmed = 0
        self.dropped = 0               # data packets dropped (trimming off or not a request)
        self.trim_dropped = 0          # trimmed headers dropped: the priority queue was full
        self.priority_dropped = 0      # control packets dropped: the priority queue was full
        self.peak_bytes = 0            # largest data-queue occupancy seen
        self.queue_area = 0            # integral of the data-queue bytes over time (byte*ns)
        self.busy_ns = 0               # time spent serializing

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


class OutputPort:
    """One switch output port and the link behind it (rate, propagation delay).

    ``deliver(packet)`` is called when a packet reaches the far end of the link
    (the next switch or a host). ``trace`` records (time, data-queue bytes) at
    every change, for plots of the queue over time.
    """

    def __init__(self, loop: EventLoop, name: str, deliver: Callable[[FabricPacket], Any], *,
                 rate_bps: float, delay_ns: int, buffer_bytes: int, priority_bytes: int,
                 ecn_min_bytes: int, ecn_max_bytes: int, ecn: bool, trim: bool,
                 rng: random.Random, trace: bool = False) -> None:
        self.loop = loop
        self.name = name
        self.deliver = deliver
        self.ns_per_byte = 8e9 / rate_bps
        self.delay_ns = delay_ns
        self.buffer_bytes = buffer_bytes
        self.priority_bytes = priority_bytes
        self.ecn_min = ecn_min_bytes
        self.ecn_max = ecn_max_bytes
        self.ecn = ecn
        self.trim = trim
        self.rng = rng
        self.data_q: deque[FabricPacket] = deque()
        self.prio_q: deque[FabricPacket] = deque()
        self.data_bytes = 0
        self.prio_bytes = 0
        self.busy_until = 0
        self._dequeue_pending = False
        self._last_change = 0
        self.counters = PortCounters()
        self.trace_t: array | None = array("q") if trace else None
        self.trace_q: array | None = array("q") if trace else None

    def arrive(self, pkt: FabricPacket) -> None:
        """``pkt`` reaches this port now: send it, queue it, trim it or drop it."""
        now = self.loop.now_ns
        if (self.busy_until <= now and not self.data_bytes and not self.prio_q):
            self._start(pkt, now, 0)
            return
        if pkt.is_data and not pkt.trimmed:
            if self.data_bytes + pkt.wire <= self.buffer_bytes:
                self._account(now)
                self.data_q.append(pkt)
                self.data_bytes += pkt.wire
                if self.data_bytes > self.counters.peak_bytes:
                    self.counters.peak_bytes = self.data_bytes
                self._record(now)
            elif self.trim and pkt.trim():
                self.counters.trimmed += 1
                if not self._prio_append(pkt):
                    self.counters.trim_dropped += 1
            else:
                self.counters.dropped += 1
        elif not self._prio_append(pkt):
            if pkt.trimmed:
                self.counters.trim_dropped += 1
            else:
                self.counters.priority_dropped += 1
        if not self._dequeue_pending:
            self._dequeue_pending = True
            self.loop.post(max(self.busy_until, now), self._dequeue, None)

    def _prio_append(self, pkt: FabricPacket) -> bool:
        if self.prio_bytes + pkt.wire > self.priority_bytes:
            return False
        self.prio_q.append(pkt)
        self.prio_bytes += pkt.wire
        return True

    def _dequeue(self, _: None) -> None:
        now = self.loop.now_ns
        if self.prio_q:
            pkt = self.prio_q.popleft()
            self.prio_bytes -= pkt.wire
            self._start(pkt, now, 0)
        else:
            pkt = self.data_q.popleft()
            queued = self.data_bytes
            self._account(now)
            self.data_bytes -= pkt.wire
            self._record(now)
            self._start(pkt, now, queued)
        if self.prio_q or self.data_q:
            self.loop.post(self.busy_until, self._dequeue, None)
        else:
            self._dequeue_pending = False

    def _start(self, pkt: FabricPacket, now: int, queued: int) -> None:
        """Put ``pkt`` on the link now; ``queued`` is the data queue it leaves (ECN)."""
        if (self.ecn and queued > self.ecn_min and (pkt.ecn == ECN_ECT0 or pkt.ecn == ECN_ECT1)
                and (queued >= self.ecn_max
                     or self.rng.random() * (self.ecn_max - self.ecn_min) < queued - self.ecn_min)):
            pkt.ecn = ECN_CE
            self.counters.ce_marked += 1
        ser = int(pkt.wire * self.ns_per_byte) or 1
        self.busy_until = now + ser
        c = self.counters
        c.forwarded += 1
        c.forwarded_bytes += pkt.wire
        c.busy_ns += ser
        if pkt.is_data and not pkt.trimmed:
            c.data_bytes += pkt.wire
        self.loop.post(now + ser + self.delay_ns, self.deliver, pkt)

    def _account(self, now: int) -> None:
        self.counters.queue_area += self.data_bytes * (now - self._last_change)
        self._last_change = now

    def _record(self, now: int) -> None:
        if self.trace_t is not None:
            self.trace_t.append(now)
            self.trace_q.append(self.data_bytes)

    def mean_bytes(self, until_ns: int) -> float:
        """Time-averaged data-queue bytes from time 0 to ``until_ns``."""
        if until_ns <= 0:
            return 0.0
        area = self.counters.queue_area + self.data_bytes * max(0, until_ns - self._last_change)
        return area / until_ns
