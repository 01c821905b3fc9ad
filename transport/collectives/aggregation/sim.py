"""The in-process driver of in-network all-reduce: workers and switches in virtual time.

An :class:`AggregationNetwork` wires :class:`~netweft.transport.collectives.aggregation.worker.
AggregationWorker` cores and switches (netweft's embedded P4 switch,
:class:`~netweft.emulation.switch.SoftSwitch`, or anything with its
``receive(port, frame, now)``, ``advance(now)`` and ``next_deadline()``) with
links on the transport's discrete-event loop. Each link direction is a
:class:`~netweft.transport.sim.wire.Path`: a rate (serialization, so a busy
link queues), a propagation delay and seeded impairments (loss, duplication,
reordering, jitter). A corrupted frame is dropped at the receiving port, as an
Ethernet FCS check would, before anyone parses it. The same seed gives the same
run, event for event, so tests can inject faults and assert exact outcomes.

It counts bytes per host link and direction (whole frames, as a veth sees
them), which is the figure that carries over to hardware.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from netweft.transport.collectives.aggregation.codec import (
    FrameTemplate,
    decode_payload,
    frame_payload,
)
from netweft.transport.collectives.aggregation.worker import AggregationPacket, AggregationWorker
from netweft.transport.sim.event_loop import EventLoop
from netweft.transport.sim.wire import Impairments, Link, Path


class FrameSwitch(Protocol):
    """What the network needs from a switch (SoftSwitch's time-aware interface)."""

    def receive(self, port: int, data: bytes, now: int) -> list[tuple[int, bytes]]: ...

    def advance(self, now: int) -> list[tuple[int, bytes]]: ...

    def next_deadline(self) -> int | None: ...


@dataclass
class Host:
    """A worker host: its frame headers and, while an all-reduce runs, its worker core."""

    name: str
    template: FrameTemplate
    worker: AggregationWorker | None = None
    counters: Counter = field(default_factory=Counter)
    timer: Any = None
    on_done: Callable[[Host], None] | None = None


class AggregationNetwork:
    """Hosts and switches joined by links, run in virtual time (nanoseconds)."""

    def __init__(self, seed: int = 0) -> None:
        self.loop = EventLoop()
        self.rng = random.Random(seed)
        self.switches: dict[str, FrameSwitch] = {}
        self.hosts: dict[str, Host] = {}
        self._links: dict[tuple[str, int], tuple[str, int, Path]] = {}  # (node, port) ->
        self._switch_timers: dict[str, Any] = {}
        self.counters: Counter = Counter()  # fcs_drops, malformed, unconnected
        self.link_bytes: Counter = Counter()  # (node, port) -> bytes sent out of that port

    # ---- building ----
    def peer_of(self, node: str, port: int) -> str | None:
        """The node at the other end of ``node``'s ``port``, or None if unconnected."""
        hop = self._links.get((node, port))
        return hop[0] if hop else None

    def add_switch(self, name: str, switch: FrameSwitch) -> None:
        """Add a switch (its ports are wired by :meth:`link`)."""
        self.switches[name] = switch

    def add_host(self, name: str, template: FrameTemplate) -> Host:
        """Add a worker host that sends frames with ``template``'s headers (host port 0)."""
        host = Host(name, template)
        self.hosts[name] = host
        return host

    def link(self, a: str, a_port: int, b: str, b_port: int, link: Link | None = None,
             impairments: Impairments | None = None) -> None:
        """Join ``a``'s port to ``b``'s port (hosts have one port, 0), both directions with
        the same link and impairments and separately seeded randomness."""
        link = link or Link()
        impairments = impairments or Impairments()
        for (src, sp), (dst, dp) in (((a, a_port), (b, b_port)), ((b, b_port), (a, a_port))):
            path = Path(link, impairments, self.rng.getrandbits(64))
            self._links[(src, sp)] = (dst, dp, path)

    # ---- moving frames ----
    def _transmit(self, node: str, port: int, frame: bytes) -> None:
        hop = self._links.get((node, port))
        if hop is None:
            self.counters["unconnected"] += 1
            return
        dst, dst_port, path = hop
        self.link_bytes[(node, port)] += len(frame)
        if node in self.hosts:
            self.hosts[node].counters["tx_bytes"] += len(frame)
            self.hosts[node].counters["tx_frames"] += 1
        _, arrivals = path.transmit(self.loop.now_ns, frame)
        for arrival in arrivals:
            self.loop.call_at(arrival.at_ns, self._arrive, dst, dst_port, arrival.data,
                              arrival.intact)

    def _arrive(self, node: str, port: int, frame: bytes, intact: bool) -> None:
        if not intact:
            self.counters["fcs_drops"] += 1
            return
        now = self.loop.now_ns
        switch = self.switches.get(node)
        if switch is not None:
            for out_port, out in switch.receive(port, frame, now):
                self._transmit(node, out_port, out)
            self._arm_switch(node)
            return
        host = self.hosts[node]
        host.counters["rx_bytes"] += len(frame)
        host.counters["rx_frames"] += 1
        payload = frame_payload(frame)
        decoded = decode_payload(payload, host.template.lanes) if payload is not None else None
        if decoded is None:
            host.counters["malformed"] += 1
            return
        if host.worker is None:
            host.counters["idle_drops"] += 1
            return
        self._send_all(host, host.worker.on_packet(decoded[0], now))

    def _arm_switch(self, name: str) -> None:
        deadline = self.switches[name].next_deadline()
        timer = self._switch_timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        if deadline is not None:
            self._switch_timers[name] = self.loop.call_at(deadline, self._switch_due, name)

    def _switch_due(self, name: str) -> None:
        self._switch_timers.pop(name, None)
        for out_port, out in self.switches[name].advance(self.loop.now_ns):
            self._transmit(name, out_port, out)
        self._arm_switch(name)

    # ---- workers ----
    def _send_all(self, host: Host, packets: list[AggregationPacket]) -> None:
        for packet in packets:
            self._transmit(host.name, 0, host.template.frame(packet))
        self._arm_worker(host)
        if (host.worker is not None and (host.worker.done or host.worker.stalled)
                and host.on_done is not None):
            host.on_done(host)
            host.on_done = None

    def _arm_worker(self, host: Host) -> None:
        if host.timer is not None:
            host.timer.cancel()
            host.timer = None
        worker = host.worker
        deadline = worker.next_deadline() if worker is not None else None
        if deadline is not None:
            host.timer = self.loop.call_at(deadline, self._worker_due, host)

    def _worker_due(self, host: Host) -> None:
        host.timer = None
        if host.worker is not None:
            self._send_all(host, host.worker.on_time(self.loop.now_ns))

    def start(self, name: str, worker: AggregationWorker, at_ns: int | None = None,
              on_done: Callable[[Host], None] | None = None) -> None:
        """Give host ``name`` an all-reduce to run, starting at ``at_ns`` (default now)."""
        host = self.hosts[name]
        host.worker = worker
        host.on_done = on_done
        when = self.loop.now_ns if at_ns is None else at_ns
        self.loop.call_at(when, lambda: self._send_all(host, worker.start(self.loop.now_ns)))

    def replace_switch(self, name: str, switch: FrameSwitch) -> None:
        """Put ``switch`` in ``name``'s place, on the same links (a restart: what the old
        one held is gone, frames in flight arrive at the new one)."""
        timer = self._switch_timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        self.switches[name] = switch

    def run(self, workers: dict[str, AggregationWorker], limit_ns: int = 60_000_000_000
            ) -> dict[str, int]:
        """Run an all-reduce on the named hosts until every worker is done (or stalled:
        it gave up on the switch); returns each host's completion time (virtual
        nanoseconds from the start)."""
        started = self.loop.now_ns
        finished: dict[str, int] = {}
        for name, worker in workers.items():
            self.start(name, worker,
                       on_done=lambda h: finished.__setitem__(h.name, self.loop.now_ns - started))
        ok = self.loop.run_until(lambda: len(finished) == len(workers), started + limit_ns)
        if not ok:
            stuck = sorted(set(workers) - set(finished))
            raise TimeoutError(f"all-reduce did not finish within {limit_ns / 1e9:g} virtual "
                               f"seconds on {', '.join(stuck)}")
        return finished
