"""The deterministic discrete-event driver: C engines talking in virtual time.

A :class:`Simulation` holds an :class:`EventLoop`, one seeded
``random.Random`` and any number of endpoints. Each endpoint is a real C engine
(the same code that runs on sockets) behind a simulated NIC: its egress link
serializes packets at the link's rate, its path applies the seeded
:class:`Impairments` (loss, duplication, reordering, corruption, delay,
jitter, junk; :mod:`netweft.transport.sim.wire`), the receiver's downlink queues
arrivals from every sender (an :class:`~netweft.transport.sim.port.OutputPort`:
tail drop at the link's queue depth: incast), and the receiving NIC checks each
datagram's checksum as UDP would, then hands it to the receiving engine with
the packet's entropy as its UDP source port. Engine timers run at the
engine's own deadlines. :meth:`Simulation.stall` models a host that does not
run an endpoint's I/O thread for a while (CPU starvation): its arrivals wait,
as in a socket buffer, and its timers run late.

With a ``fabric`` (:class:`FabricSpec`), endpoints are the fabric's hosts in
the order they are made, and packets cross output-queued switches with ECN
marking and trimming (:mod:`netweft.transport.sim.network`) instead of the
per-receiver downlink queue; the endpoint's link is then the host's uplink into
its ToR.

The same seed and the same calls give the same run, event for event.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from netweft.nic_offload import csum16
from netweft.transport.endpoint import Endpoint
from netweft.transport.engine_handle import EngineHandle, int_to_ip, ip_to_int, make_config
from netweft.transport.errors import EndpointClosedError, InvalidArgumentError
from netweft.transport.sim.event_loop import EventLoop, Timer
from netweft.transport.sim.network import Fabric, FabricSpec
from netweft.transport.sim.port import FabricPacket, OutputPort
from netweft.transport.sim.wire import Arrival, Impairments, Link, Path
from netweft.transport.trace import TraceEvent, drain

DEFAULT_PORT = 4793
SIM_MTU = 4096  # UDP payload bytes per packet unless an endpoint asks otherwise


class SimulatedNic:
    """One engine on the simulated network: the :class:`EnginePort` of a simulated endpoint."""

    def __init__(self, sim: Simulation, ip: str, port: int, path: Path, cfg: Any,
                 host: int = -1) -> None:
        self.sim = sim
        self.host = host  # index on the simulation's fabric, -1 without one
        self.downlink = OutputPort.for_link(sim.loop, f"{ip}:{port}", self._from_downlink,
                                            path.link)
        self.address = (ip, port)
        self.ip_int = ip_to_int(ip)
        self.path = path
        self.engine = EngineHandle(cfg)
        self.closed = False
        self.counters: Counter = Counter()
        self.entropy_seen: Counter = Counter()
        self.highest_seq_from: dict[int, int] = {}
        self._service_pending = False
        self._timer: Timer | None = None
        self._timer_at: int | None = None
        self.stalled_until_ns = 0
        self._backlog: list[tuple[bytes, int, int, int]] = []
        self.watcher: Any = None  # called after the engine took input (see Simulation.watch)

    # ---- EnginePort: work requests go straight to the engine, then the NIC runs ----
    def max_payload(self) -> int:
        return self.engine.max_payload()

    def mr_register(self, ptr: Any, length: int, access: int) -> int:
        self._check()
        return self.engine.mr_register(ptr, length, access)

    def mr_deregister(self, rkey: int) -> None:
        self._check()
        self.engine.mr_deregister(rkey)

    def peer_add(self, ip: str, port: int, mode: int) -> int:
        self._check()
        return self.engine.peer_add(ip, port, mode)

    def peer_info(self, peer: int) -> tuple[str, int, int]:
        self._check()
        return self.engine.peer_info(peer)

    def peer_close(self, peer: int) -> None:
        self._check()
        self.engine.peer_close(peer)
        self.kick()  # the CTRL CLOSE goes out

    def peer_set_coding(self, peer: int, k: int, m: int) -> None:
        self._check()
        self.engine.peer_set_coding(peer, k, m)
        self.kick()  # a block closed by the change has parity to send

    def peer_path(self, peer: int) -> dict[str, int]:
        self._check()
        return self.engine.peer_path(peer)

    def post_write(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                   roffset: int) -> None:
        self._check()
        self.engine.post_write(peer, wr_id, local, length, rkey, roffset)
        self.kick()

    def post_read(self, peer: int, wr_id: int, local: Any, length: int, rkey: int,
                  roffset: int) -> None:
        self._check()
        self.engine.post_read(peer, wr_id, local, length, rkey, roffset)
        self.kick()

    def post_send(self, peer: int, wr_id: int, buf: Any, length: int) -> None:
        self._check()
        self.engine.post_send(peer, wr_id, buf, length)
        self.kick()

    def post_recv(self, wr_id: int, buf: Any, cap: int) -> None:
        self._check()
        self.engine.post_recv(wr_id, buf, cap)
        self.kick()

    def poll_cq(self, max_entries: int) -> list[Any]:
        return [] if self.closed else self.engine.poll_cq(max_entries)

    def progress(self, deadline: float | None) -> bool:
        """Run one event of the whole simulation unless it is idle or past ``deadline``."""
        loop = self.sim.loop
        nxt = loop.next_time()
        if nxt is None:
            return False
        if deadline is not None and nxt > deadline * 1e9:
            loop.now_ns = max(loop.now_ns, int(deadline * 1e9))
            return False
        return loop.step()

    def clock(self) -> float:
        return self.sim.loop.now_ns / 1e9

    def stats(self) -> dict[str, int]:
        return self.engine.stats()

    def trace_start(self, capacity: int) -> None:
        self._check()
        self.engine.trace_start(capacity)

    def trace_drain(self) -> list[TraceEvent]:
        return drain(self.engine.ptr, f"{self.address[0]}:{self.address[1]}")

    def close(self) -> None:
        """Put what the engine still has to send (e.g. CTRL CLOSEs) on the wire, then stop."""
        if not self.closed:
            now = self.sim.loop.now_ns
            while (out := self.engine.output(now)) is not None:
                self._transmit(now, out)
        self.closed = True
        if self._timer:
            self._timer.cancel()
        self.sim._nics.pop(self.address, None)

    def _check(self) -> None:
        if self.closed:
            raise EndpointClosedError("the endpoint is closed")

    # ---- the simulated NIC ----
    def kick(self) -> None:
        """Run the NIC (timers, then transmissions) at the current virtual time."""
        if not self._service_pending and not self.closed:
            self._service_pending = True
            self.sim.loop.post(self.sim.loop.now_ns, self._service, None)

    def stall(self, duration_ns: int) -> None:
        """From now on, for ``duration_ns``, the host does not run this NIC's engine."""
        until = self.sim.loop.now_ns + duration_ns
        if until > self.stalled_until_ns:
            self.stalled_until_ns = until
            self.sim.loop.call_at(until, self._wake)

    def _wake(self) -> None:
        """The stall is over: the engine reads what waited, in arrival order, then runs."""
        if self.closed or self.sim.loop.now_ns < self.stalled_until_ns:
            return
        backlog, self._backlog = self._backlog, []
        for data, src_ip, src_port, ecn in backlog:
            self.receive(data, src_ip, src_port, ecn)
        self.kick()

    def _service(self, _: Any = None) -> None:
        self._service_pending = False
        if self.closed:
            return
        loop, engine = self.sim.loop, self.engine
        now = loop.now_ns
        if now < self.stalled_until_ns:
            return  # _wake runs the engine when the stall ends
        # The armed timer is the engine's deadline as of its last run (the engine sets
        # deadlines only when it runs, and every run ends in _arm_timer).
        if self._timer_at is not None and self._timer_at <= now:
            engine.on_time(now)
            self.sim.active.add(self.address)
            if self.watcher is not None:  # a timeout may complete (fail) a work request
                self.watcher()
        while True:
            if self.path.busy_until_ns > now:
                self._service_pending = True
                loop.post(self.path.busy_until_ns, self._service, None)
                break
            out = engine.output(now)
            if out is None:
                break
            self._transmit(now, out)
        self._arm_timer()

    def _transmit(self, now: int, out: tuple[bytes, int, int, int]) -> None:
        """Put one engine output packet on this NIC's egress path."""
        data, dst_ip, dst_port, src_port, ecn = out
        self.counters["pkts_out"] += 1
        self.counters["bytes_out"] += len(data)  # UDP payload bytes
        self.entropy_seen[src_port] += 1
        if self.sim.fabric is not None:
            self._transmit_fabric(now, data, dst_ip, dst_port, src_port, ecn)
            return
        checksum = csum16(data)
        _, arrivals = self.path.transmit(now, data, src_port)
        for arrival in arrivals:
            self.sim.loop.call_at(arrival.at_ns, self.sim._deliver, arrival, checksum,
                                  (dst_ip, dst_port), self.ip_int, src_port,
                                  self.counters["pkts_out"], ecn)

    def _transmit_fabric(self, now: int, data: bytes, dst_ip: int, dst_port: int,
                         src_port: int, ecn: int) -> None:
        """Send one packet up this host's link into its ToR."""
        sim = self.sim
        dst_host = sim._hosts.get((dst_ip, dst_port), -1)
        _, arrivals = self.path.transmit(now, data, src_port)
        for arrival in arrivals:
            pkt = sim.fabric.packet(arrival.data, self.host, dst_host, self.ip_int, src_port,
                                    ecn, now)
            sim.loop.post(arrival.at_ns, sim.fabric.inject, pkt)

    def _arm_timer(self) -> None:
        """Keep exactly one loop timer at the engine's next deadline."""
        deadline = self.engine.next_deadline()
        if deadline is None:
            if self._timer:
                self._timer.cancel()
            self._timer, self._timer_at = None, None
            return
        # A deadline already due is run one nanosecond later, so time always moves on.
        deadline = max(deadline, self.sim.loop.now_ns + 1)
        if self._timer is not None and self._timer_at == deadline:
            return
        if self._timer:
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self.sim.loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._service_pending = True
        self._service()

    def _from_downlink(self, pkt: FabricPacket) -> None:
        self.sim._arrive(self, pkt)

    def receive(self, data: bytes, src_ip: int, src_port: int, ecn: int = 0) -> None:
        """A datagram (with its IP ECN codepoint) reached this NIC: hand it to the engine,
        then run the NIC."""
        if self.closed:
            return
        if self.sim.loop.now_ns < self.stalled_until_ns:
            self._backlog.append((data, src_ip, src_port, ecn))
            return
        self.counters["pkts_in"] += 1
        self.counters["bytes_in"] += len(data)
        self.engine.input(data, src_ip, src_port, self.sim.loop.now_ns, ecn)
        self.sim.active.add(self.address)
        self.kick()
        if self.watcher is not None:
            self.watcher()


class Simulation:
    """Endpoints on a virtual network with seeded impairments and virtual time.

    ``impairments`` and ``link`` apply to every endpoint's egress unless
    :meth:`endpoint` overrides them; ``engine_settings`` are ``nw_config_t``
    fields applied to every engine (e.g. ``window_pkts=256``, ``cc_mode="rccc"``).
    """

    def __init__(self, seed: int = 0, impairments: Impairments | None = None,
                 link: Link | None = None, mtu: int = SIM_MTU, *,
                 fabric: FabricSpec | None = None, trace_ports: tuple[str, ...] = (),
                 **engine_settings: int | str) -> None:
        if not isinstance(seed, int):
            raise InvalidArgumentError(f"seed must be an int, got {seed!r}")
        self.seed = seed
        self.rng = random.Random(seed)
        self.loop = EventLoop()
        self.impairments = impairments or Impairments()
        if fabric is not None and (self.impairments.corrupt or self.impairments.junk):
            raise InvalidArgumentError("a fabric carries no UDP checksum model: corrupt and junk "
                                       "impairments need the fabric-less simulation")
        if link is None and fabric is not None:
            link = Link(rate_bps=fabric.rate_bps, delay_ns=fabric.link_delay_ns)
        self.link = link or Link()
        self.fabric: Fabric | None = None
        if fabric is not None:
            self.fabric = Fabric(fabric, self.loop, self._from_fabric, trace_ports)
        self._hosts: dict[tuple[int, int], int] = {}
        self._host_nics: list[SimulatedNic] = []
        self.mtu = mtu
        self.engine_settings = engine_settings
        self._nics: dict[tuple[str, int], SimulatedNic] = {}
        self._all: list[SimulatedNic] = []
        # unroutable, queue_drops, checksum_drops, out_of_order, trims, ce_marks
        self.counters: Counter = Counter()
        # addresses of the endpoints whose engines took input or ran timers since the caller
        # last cleared it: the ones that may have new completions (drivers of many endpoints
        # poll only those)
        self.active: set[tuple[str, int]] = set()

    @property
    def now(self) -> float:
        """Virtual seconds since the start."""
        return self.loop.now_ns / 1e9

    def endpoint(self, ip: str | None = None, port: int = DEFAULT_PORT, *,
                 impairments: Impairments | None = None, link: Link | None = None,
                 **engine_settings: int | str) -> Endpoint:
        """A new endpoint at ``ip`` (default 10.0.0.N) and ``port`` on the virtual network."""
        ip = ip or f"10.0.{len(self._all) // 250}.{len(self._all) % 250 + 1}"
        ip_to_int(ip)  # a clear error for anything but dotted IPv4
        if not isinstance(port, int) or not 0 < port < 65536:
            raise InvalidArgumentError(f"port must be in 1..65535, got {port!r}")
        if (ip, port) in self._nics:
            raise InvalidArgumentError(f"address {ip}:{port} is already in use")
        settings = {"mtu": self.mtu, "dst_port": DEFAULT_PORT,
                    "seed": self.rng.getrandbits(63), **self.engine_settings, **engine_settings}
        for name in ("local_ip", "local_port"):
            if name in settings:
                raise InvalidArgumentError(f"{name} comes from the endpoint's address; "
                                           "pass ip= and port= instead")
        cfg = make_config(local_ip=ip_to_int(ip), local_port=port, **settings)
        path = Path(link or self.link, impairments or self.impairments,
                    self.rng.getrandbits(64))
        host = -1
        if self.fabric is not None:
            host = len(self._host_nics)
            if host >= self.fabric.spec.hosts:
                raise InvalidArgumentError(f"the fabric has {self.fabric.spec.hosts} hosts, all "
                                           "taken; build a larger FabricSpec")
        nic = SimulatedNic(self, ip, port, path, cfg, host)
        if self.fabric is not None:
            self._hosts[(nic.ip_int, port)] = host
            self._host_nics.append(nic)
        self._nics[(ip, port)] = nic
        self._all.append(nic)
        return Endpoint(nic)

    def _from_fabric(self, pkt: FabricPacket) -> None:
        """A packet reached its host's NIC through the fabric."""
        nic = self._host_nics[pkt.dst_host]
        if nic.closed:
            self.counters["unroutable"] += 1
            return
        nic.receive(pkt.data, pkt.src_ip, pkt.entropy, pkt.ecn)

    def watch(self, endpoint: Endpoint, callback: Any) -> None:
        """Call ``callback()`` each time ``endpoint``'s engine has taken a packet in or run
        its timers (when a completion may have become ready): studies time completions to
        the event."""
        nic = self._nics.get(tuple(endpoint.address))
        if nic is None:
            raise InvalidArgumentError("watch: the endpoint is not on this simulation")
        nic.watcher = callback

    def host_of(self, endpoint: Endpoint) -> int:
        """``endpoint``'s host index on the fabric."""
        nic = self._nics.get(tuple(endpoint.address))
        if nic is None or nic.host < 0:
            raise InvalidArgumentError("host_of: the endpoint is not a host of this fabric")
        return nic.host

    def _deliver(self, arrival: Arrival, checksum: int, dst: tuple[int, int], src_ip: int,
                 src_port: int, seq: int, ecn: int = 0) -> None:
        """A datagram reaches the queue in front of its receiver's downlink."""
        nic = self._nics.get((int_to_ip(dst[0]), dst[1]))
        if nic is None:
            self.counters["unroutable"] += 1
            return
        pkt = FabricPacket(arrival.data, -1, -1, src_ip, src_port, ecn, arrival.at_ns,
                           overhead=0)
        pkt.checksum, pkt.seq, pkt.junk = checksum, seq, arrival.junk
        pkt.may_trim = arrival.intact and not arrival.junk  # a queue does not trim these
        if not nic.downlink.arrive(pkt):
            self.counters["queue_drops"] += 1

    def _arrive(self, nic: SimulatedNic, pkt: FabricPacket) -> None:
        """A datagram left the receiver's downlink queue: its UDP layer checks it."""
        checksum = pkt.checksum
        if pkt.trimmed:  # the switch rewrites the UDP checksum
            self.counters["trims"] += 1
            checksum = csum16(pkt.data)
        if pkt.ce:
            self.counters["ce_marks"] += 1
        if not pkt.junk and csum16(pkt.data) != checksum:
            self.counters["checksum_drops"] += 1  # what the receiver's UDP layer does
            return
        src_ip = pkt.src_ip
        if not pkt.junk:  # reordering as the receiver sees it, per sender
            if pkt.seq < nic.highest_seq_from.get(src_ip, 0):
                self.counters["out_of_order"] += 1
            nic.highest_seq_from[src_ip] = max(pkt.seq, nic.highest_seq_from.get(src_ip, 0))
        nic.receive(pkt.data, src_ip, pkt.entropy, pkt.ecn)

    def run_for(self, seconds: float) -> None:
        """Advance virtual time by ``seconds``, running everything due."""
        self.loop.run_for(int(seconds * 1e9))

    def run_until_idle(self, max_seconds: float = 60.0) -> bool:
        """Run until no event is left (True) or ``max_seconds`` of virtual time pass (False)."""
        end = self.loop.now_ns + int(max_seconds * 1e9)
        return self.loop.run_until(lambda: self.loop.next_time() is None, end)

    def stall(self, endpoint: Endpoint, at: float, duration: float) -> None:
        """Stall ``endpoint``'s host from virtual second ``at`` for ``duration`` seconds:
        its engine neither reads arrivals (they wait, in order) nor runs timers until then,
        as when a loaded machine does not schedule its I/O thread."""
        nic = self._nics.get(tuple(endpoint.address))
        if nic is None:
            raise InvalidArgumentError("stall: the endpoint is not on this simulation")
        if not at >= 0 or not duration > 0:
            raise InvalidArgumentError(f"stall: need at >= 0 and duration > 0, got {at!r}, "
                                       f"{duration!r}")
        self.loop.call_at(max(self.loop.now_ns, int(at * 1e9)), nic.stall, int(duration * 1e9))

    def nic_counters(self, endpoint: Endpoint) -> Counter:
        """One endpoint's NIC counters: pkts_out, bytes_out, pkts_in, bytes_in (UDP payload
        bytes, as the engine sends and receives them)."""
        nic = self._nics.get(tuple(endpoint.address))
        if nic is None:
            raise InvalidArgumentError("nic_counters: the endpoint is not on this simulation")
        return Counter(nic.counters)

    def downlink(self, endpoint: Endpoint) -> OutputPort:
        """The queue in front of ``endpoint``'s downlink (its ``counters``: ``peak_packets``,
        ``dropped``, ``trimmed``, ``ce_marked``, ...)."""
        nic = self._nics.get(tuple(endpoint.address))
        if nic is None:
            raise InvalidArgumentError("downlink: the endpoint is not on this simulation")
        return nic.downlink

    def path_counters(self) -> Counter:
        """Impairment counters summed over every endpoint's egress path."""
        total: Counter = Counter()
        for nic in self._all:
            total.update(nic.path.counters)
        return total

    def entropy_values(self) -> Counter:
        """How often each UDP source port (entropy value) was used, over all endpoints."""
        total: Counter = Counter()
        for nic in self._all:
            total.update(nic.entropy_seen)
        return total
