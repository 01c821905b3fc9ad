"""An output port of the simulator: the one queue model of its switches and downlinks.

Every queue of the simulated network is an :class:`OutputPort`: each switch
port of the simulator's network (:mod:`netweft.transport.sim.network`) and, in
a simulation without one, the queue in front of each endpoint's downlink
(built from its :class:`~netweft.transport.sim.wire.Link` by
:meth:`OutputPort.for_link`). It follows UEC's htsim switch model
(as docs/cc-studies.md describes it; the code is not copied, the rules are):

- A **data queue**, tail drop, of at most ``buffer_bytes`` wire bytes and/or
  ``buffer_pkts`` packets waiting (the packet being sent is not counted),
  served FIFO at the port's rate (serialization by the wire model's rule,
  :func:`netweft.nic_offload.wire_model.serialization_ns`). A data packet (a
  UET request) that would overflow it is **trimmed** when trimming is on: the
  packet keeps its first ``NW_WIRE_TRIM_KEEP`` = 64 UDP payload bytes (every
  PDS and SES header), gets the trimmed mark ``NW_PDS_F_TRIMMED`` in its PDS
  flags (``docs/wire.md``) and joins the priority queue; with trimming off it
  is dropped. With ``random_trim`` (the network's ports, as htsim's, after
  NDP) a data packet arriving at a full queue is trimmed with probability 1/2;
  otherwise the last packet queued is trimmed instead and the arrival takes its
  place. A deterministic simulator needs that draw: trimming only arrivals, a
  few senders whose packets come back just as the queue frees a slot keep the
  link while the others' resends meet a full queue every time (Floyd and
  Jacobson's phase effect).
- A **priority queue** of at most ``priority_bytes`` (None: no limit) for
  trimmed headers and, with ``control_priority``, control packets (ACK, NACK,
  CTRL); it is served before the data queue. What would overflow it is
  dropped and counted. Without ``control_priority`` control packets queue
  with the data, and take the priority queue only when the data queue is full
  and the port trims.
- **ECN**, two rules: with ``ecn``, an ECN-capable packet (ECT(0) or ECT(1)
  in its IP header; netweft's engines send data packets so) leaving the data
  queue is CE-marked with a RED-like probability that grows linearly from 0 at
  ``ecn_min_bytes`` of queue to 1 at ``ecn_max_bytes`` (the queue as the
  packet leaves it, the packet included); with ``ecn_step_pkts`` K > 0 one
  arriving when at least K packets wait is marked (DCTCP's step).

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
from netweft.nic_offload.wire_model import serialization_ns
from netweft.transport.sim.event_loop import EventLoop
from netweft.transport.sim.wire import Link

ECN_ECT1, ECN_ECT0, ECN_CE = 1, 2, 3  # IP ECN codepoints (RFC 3168)

TRIM_KEEP = int(lib.NW_WIRE_TRIM_KEEP)    # UDP payload bytes a trimming switch keeps
PDS_F_TRIMMED = int(lib.NW_PDS_F_TRIMMED)  # the trimmed mark, low 7 bits of the PDS prologue
# PDS types of data packets, the ones a switch may trim: RUD, ROD, UUD, RUD_CC, ROD_CC.
DATA_TYPES = frozenset(int(getattr(lib, f"NW_PDS_{t}"))
                       for t in ("RUD", "ROD", "UUD", "RUD_CC", "ROD_CC"))
WIRE_OVERHEAD = 46      # Ethernet header and FCS (18) + IPv4 (20) + UDP (8) per datagram


class FabricPacket:
    """One UDP datagram crossing the simulated network: the engine's bytes plus what
    switches see (the IP header's ECN codepoint ``ecn``, the UDP source port
    ``entropy``), its wire bytes, and what the receiving NIC checks (the UDP ``checksum``
    taken at send, None: not checked; ``junk``; the sender's sequence number ``seq``).
    ``may_trim`` False keeps a queue from trimming it (a corrupted or junk datagram).

    Wire bytes: the UDP payload plus ``overhead`` (the headers around it), except that
    ``control_wire`` > 0 is the wire size of every packet that is not a data packet
    (ACK, NACK, CTRL) and ``trimmed_wire`` > 0 that of a trimmed header, whatever their
    payload: a scenario can give the packets another model's sizes (htsim's 64 bytes,
    ``FabricSpec.trimmed_wire``) while the engines exchange their real bytes."""

    __slots__ = ("data", "wire", "overhead", "trimmed_wire", "is_data", "src_host", "dst_host",
                 "src_ip", "entropy", "ecn", "trimmed", "sent_ns", "checksum", "seq", "junk",
                 "may_trim")

    def __init__(self, data: bytes, src_host: int, dst_host: int, src_ip: int, entropy: int,
                 ecn: int, sent_ns: int, overhead: int = WIRE_OVERHEAD, *,
                 trimmed_wire: int = 0, control_wire: int = 0) -> None:
        self.data = data
        self.overhead = overhead
        self.trimmed_wire = trimmed_wire
        self.is_data = bool(data) and (data[0] >> 3) in DATA_TYPES
        self.wire = control_wire if control_wire and not self.is_data else len(data) + overhead
        self.src_host = src_host
        self.dst_host = dst_host
        self.src_ip = src_ip
        self.entropy = entropy
        self.ecn = ecn
        self.trimmed = False
        self.sent_ns = sent_ns
        self.checksum: int | None = None
        self.seq = 0
        self.junk = False
        self.may_trim = True

    @property
    def ce(self) -> bool:
        """Congestion experienced: a switch marked it."""
        return self.ecn == ECN_CE

    def trim(self) -> bool:
        """Cut to the headers with the trimmed mark, as a trimming switch does
        (:func:`netweft.nic_offload.trim`); False if this packet may not be trimmed."""
        head = wire_trim(self.data) if self.may_trim else None
        if head is None:
            return False
        self.data = head
        self.wire = self.trimmed_wire or len(head) + self.overhead
        self.trimmed = True
        return True


class PortCounters:
    """What one output port did; all counts are packets unless named bytes."""

    __slots__ = ("forwarded", "forwarded_bytes", "data_bytes", "ce_marked", "trimmed",
                 "dropped", "trim_dropped", "priority_dropped", "peak_bytes", "peak_packets",
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
        self.peak_packets = 0          # most packets waiting in the data queue
        self.queue_area = 0            # integral of the data-queue bytes over time (byte*ns)
        self.busy_ns = 0               # time spent serializing

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


class OutputPort:
    """One output port and the link behind it (rate, propagation delay).

    ``deliver(packet)`` is called when a packet reaches the far end of the link
    (the next switch or a host). ``trace`` records (time, data-queue bytes) at
    every change, for plots of the queue over time. ``buffer_bytes`` and
    ``buffer_pkts`` None: no limit of that kind.
    """

    def __init__(self, loop: EventLoop, name: str, deliver: Callable[[FabricPacket], Any], *,
                 rate_bps: float, delay_ns: int = 0, buffer_bytes: int | None = None,
                 buffer_pkts: int | None = None, priority_bytes: int | None = None,
                 ecn_min_bytes: int = 0, ecn_max_bytes: int = 0, ecn: bool = False,
                 ecn_step_pkts: int = 0, trim: bool = False, random_trim: bool = False,
                 control_priority: bool = True, rng: random.Random | None = None,
                 trace: bool = False) -> None:
        self.loop = loop
        self.name = name
        self.deliver = deliver
        self.rate_bps = max(1, round(rate_bps))
        self.delay_ns = delay_ns
        self.buffer_bytes = buffer_bytes
        self.buffer_pkts = buffer_pkts
        self.priority_bytes = priority_bytes
        self.ecn_min = ecn_min_bytes
        self.ecn_max = ecn_max_bytes
        self.ecn = ecn
        self.ecn_step = ecn_step_pkts
        self.trim = trim
        self.random_trim = random_trim
        self.control_priority = control_priority
        self.rng = rng or random.Random(0)
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

    @classmethod
    def for_link(cls, loop: EventLoop, name: str, deliver: Callable[[FabricPacket], Any],
                 link: Link) -> OutputPort:
        """The queue in front of an endpoint's downlink on ``link`` (the simulation
        without a network): ``queue_pkts`` deep, step ECN marking at
        ``ecn_threshold_pkts``, trimming as the link says; no propagation delay (the
        sender's path has it) and no limit on the trimmed headers."""
        return cls(loop, name, deliver, rate_bps=link.rate_bps, buffer_pkts=link.queue_pkts,
                   ecn_step_pkts=link.ecn_threshold_pkts, trim=link.trim,
                   control_priority=False)

    def arrive(self, pkt: FabricPacket) -> bool:
        """``pkt`` reaches this port now: send it, queue it or trim it (True), or drop
        it (False)."""
        now = self.loop.now_ns
        if self.ecn_step and len(self.data_q) >= self.ecn_step and \
                (pkt.ecn == ECN_ECT0 or pkt.ecn == ECN_ECT1):
            pkt.ecn = ECN_CE
            self.counters.ce_marked += 1
        if self.busy_until <= now and not self.data_q and not self.prio_q:
            self._start(pkt, now, 0)
            return True
        kept = True
        if not pkt.trimmed and (pkt.is_data or not self.control_priority):
            if self._fits(pkt):
                self._account(now)
                self.data_q.append(pkt)
                self.data_bytes += pkt.wire
                c = self.counters
                if self.data_bytes > c.peak_bytes:
                    c.peak_bytes = self.data_bytes
                if len(self.data_q) > c.peak_packets:
                    c.peak_packets = len(self.data_q)
                self._record(now)
            elif self.trim and not pkt.is_data:      # control beside the trimmed headers
                kept = self._prio_append(pkt)
                if not kept:
                    self.counters.priority_dropped += 1
            elif self.trim and pkt.is_data and self.random_trim and \
                    self.rng.random() < 0.5 and self._trim_last_for(pkt, now):
                pass
            elif self.trim and pkt.trim():
                self.counters.trimmed += 1
                kept = self._prio_append(pkt)
                if not kept:
                    self.counters.trim_dropped += 1
            else:
                self.counters.dropped += 1
                kept = False
        elif not self._prio_append(pkt):
            kept = False
            if pkt.trimmed:
                self.counters.trim_dropped += 1
            else:
                self.counters.priority_dropped += 1
        if not self._dequeue_pending:
            self._dequeue_pending = True
            self.loop.post(max(self.busy_until, now), self._dequeue, None)
        return kept

    def _trim_last_for(self, pkt: FabricPacket, now: int) -> bool:
        """Trim the last data packet queued and queue ``pkt`` in its place; False (and
        nothing changed) if that packet may not be trimmed or ``pkt`` would still not
        fit."""
        last = self.data_q[-1] if self.data_q else None
        if last is None or not last.is_data or last.trimmed or not last.may_trim:
            return False
        if self.buffer_bytes is not None and \
                self.data_bytes - last.wire + pkt.wire > self.buffer_bytes:
            return False
        self._account(now)
        self.data_q.pop()
        self.data_bytes -= last.wire
        if not last.trim():
            raise AssertionError("a data packet that may be trimmed did not trim")
        self.counters.trimmed += 1
        if not self._prio_append(last):
            self.counters.trim_dropped += 1
        self.data_q.append(pkt)
        self.data_bytes += pkt.wire
        self._record(now)
        return True

    def _fits(self, pkt: FabricPacket) -> bool:
        """Whether the data queue has room for ``pkt`` (tail drop)."""
        if self.buffer_bytes is not None and self.data_bytes + pkt.wire > self.buffer_bytes:
            return False
        return self.buffer_pkts is None or len(self.data_q) < self.buffer_pkts

    def _prio_append(self, pkt: FabricPacket) -> bool:
        if self.priority_bytes is not None and self.prio_bytes + pkt.wire > self.priority_bytes:
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
        ser = serialization_ns(self.rate_bps, pkt.wire)
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
