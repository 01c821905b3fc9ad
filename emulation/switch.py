"""``SoftSwitch``: netweft's embedded P4 switch (v1model, BMv2 ``simple_switch`` semantics).

>>> from netweft.p4.compiler import compile_p4
>>> from netweft.emulation.switch import SoftSwitch
>>> sw = SoftSwitch(compile_p4("p4/basic_forward.p4"))
>>> sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.1.1", 32)},
...              "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 1})
>>> sw.process(0, frame)      # -> [(port, bytes), ...]

The program is compiled once into Python code (:mod:`netweft.emulation.pipeline`);
the switch holds the state (tables, registers, counters, meters, multicast
groups, clone sessions) and runs packets to completion, sans-IO: time comes
from ``clock`` (microseconds; by default a counter that advances one
microsecond per pipeline pass, so runs are reproducible).

With queues and links (:meth:`SoftSwitch.configure_port`, ``set_queue_*``),
packets cross the traffic manager (:mod:`netweft.emulation.traffic_manager`)
and the ports' link models (:mod:`netweft.emulation.links.link_model`): the caller
passes time in nanoseconds to :meth:`SoftSwitch.receive` and
:meth:`SoftSwitch.advance` and asks :meth:`SoftSwitch.next_deadline` when to
call again, in virtual time (tests) or real time (a switch process).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from netweft.emulation.links.link_model import LinkConfig, LinkDirection, LinkStats
from netweft.emulation.links.port_options import PortOptions
from netweft.emulation.native.driver import NativeDriver
from netweft.emulation.native.pipeline import NativePipeline, NativeUnavailable
from netweft.emulation.native.selection import DEFAULT_BACKEND, select_backend
from netweft.emulation.packet_trace import PacketTrace, TracedExtern, TracedTable, TracingDriver
from netweft.emulation.pipeline.compiled import instantiate, lower_program
from netweft.emulation.traffic_manager import Departure, TrafficManager
from netweft.emulation.v1model.action_profiles import ActionProfile
from netweft.emulation.v1model.context import PacketContext
from netweft.emulation.v1model.counters import COUNTER_TYPES, CounterArray
from netweft.emulation.v1model.deployability import warn_if_undeployable
from netweft.emulation.v1model.hash_algorithms import CrcConfig, HashAlgorithms, bmv2_refusal
from netweft.emulation.v1model.key_values import BadValueError, parse_value
from netweft.emulation.v1model.match_table import (
    ActionSpec,
    KeySpec,
    MatchTable,
    TableEntry,
    TableError,
)
from netweft.emulation.v1model.meters import METER_TYPES, Meter, MeterArray
from netweft.emulation.v1model.names import resolve_name
from netweft.emulation.v1model.registers import RegisterArray
from netweft.emulation.v1model.replication import CloneSessions, PacketReplicationEngine
from netweft.emulation.v1model.simple_switch import QueuedPacket, QueueMetadata, V1ModelDriver
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.program import Program

__all__ = ["SoftSwitch", "SwitchError", "QueuedPacket", "QueueMetadata", "DEFAULT_BACKEND"]
from netweft.emulation.v1model.value_sets import ValueSet


class SwitchError(ValueError):
    """A control-plane request the switch cannot honour; the message says why."""


def _link_drop(link: LinkDirection) -> str:
    return "lost" if link.stats.lost else "too many frames waiting"


def _microsecond_counter() -> Callable[[], int]:
    counter = itertools.count()
    return lambda: next(counter)


class SoftSwitch:
    """One v1model switch running a compiled program."""

    def __init__(self, program: Program, clock: Callable[[], int] | None = None,
                 seed: int = 0, max_passes: int = 64, priority_queues: int = 1,
                 trace: PacketTrace | None = None, bmv2_select_no_match: bool = False,
                 backend: str | None = None) -> None:
        """``bmv2_select_no_match``: a ``select`` no case matches ends parsing without
        an error, as BMv2's simple_switch does, instead of P4-16's ``error.NoMatch``
        (see docs/bmv2-differences.md).

        ``backend``: ``"python"`` (the generated Python pipeline), ``"c"`` (the
        native pipeline, compiled with the system C compiler; refuses with the
        cause when it cannot run the program) or ``"auto"`` (C when it can, else
        Python with one line on stderr saying why); None takes
        ``$NETWEFT_SWITCH_BACKEND`` or :data:`DEFAULT_BACKEND`.
        See docs/native-backend.md.
        """
        self.program = program
        self.trace = trace
        self.seed = seed
        self.tm = TrafficManager(priority_queues)
        self._ingress_links: dict[int, LinkDirection] = {}
        self._retired_links: list[LinkStats] = []    # counters of replaced link models
        self._link_generations: dict[tuple[int, str], int] = {}
        self._timed = False              # any queue or link setting made: queue packets
        self._now_us = 0
        self._now_ns = 0                 # the latest time receive/advance were given
        self._seq = itertools.count()
        self._arrivals: list[tuple[int, int, int, bytes]] = []     # (time, seq, port, frame)
        self._deliveries: list[tuple[int, int, int, bytes]] = []   # (time, seq, port, frame)
        try:
            native = select_backend(program, backend, trace is not None, seed,
                                    bmv2_select_no_match)
        except (NativeUnavailable, ValueError) as err:
            raise SwitchError(f"switch back end: {err}") from None
        self.backend = "python" if native is None else "c"
        self._lowered = None if native is not None else lower_program(program,
                                                                      trace=trace is not None)
        warn_if_undeployable(program)
        self.algorithms = HashAlgorithms(seed)
        self.context = PacketContext(self.algorithms)
        self.pre = PacketReplicationEngine()
        self.clone_sessions = CloneSessions()
        self.tables: dict[str, MatchTable] = {}
        self.registers: dict[str, RegisterArray] = {}
        self.counters: dict[str, CounterArray] = {}
        self.meters: dict[str, MeterArray] = {}
        self.profiles: dict[str, ActionProfile] = {}
        self.value_sets: dict[str, ValueSet] = {}
        self._direct_meter_types: dict[str, str] = {}   # table -> "packets" | "bytes"
        self._extern_objects: dict[str, Any] = {}
        self._const_entry_tables: set[str] = set()
        self._clock = clock or _microsecond_counter()
        if native is not None:
            self._init_native(native, max_passes)
            return
        objects: dict[str, Any] = {}
        self._create_externs(objects)
        for var, vs in self._lowered.value_sets.items():
            widths = [_width(t) for t in _flat_types(vs.element_type)]
            value_set = ValueSet(vs.fqn or vs.name, vs.size or 0, widths)
            self.value_sets[value_set.name] = value_set
            objects[var] = value_set
        if trace is not None:
            objects["TRACE_STATE"] = trace.parser_state
            trace.error_names = list(program.errors)
            for var, obj in objects.items():
                if isinstance(obj, (RegisterArray, CounterArray, MeterArray)):
                    objects[var] = TracedExtern(obj, obj.name, trace)
        self._ns = instantiate(self._lowered, self.context, objects,
                               select_no_match_ends_parsing=bmv2_select_no_match)
        for fqn, info in self._lowered.tables.items():
            table = self._build_table(fqn, info)
            self.tables[fqn] = table
            self._ns[info.var] = table if trace is None else TracedTable(table, trace)
        args = (self._ns, self.context, self.pre, self.clone_sessions,
                self._lowered.field_lists, self._clock, max_passes)
        self.driver = (V1ModelDriver(*args) if trace is None
                       else TracingDriver(*args, trace=trace))

    def _init_native(self, native: NativePipeline, max_passes: int) -> None:
        """Tables, registers and counters of the native pipeline; program entries."""
        self.native = native
        self._ns = {}
        self.registers.update(native.registers)
        self.counters.update(native.counters)
        self.value_sets.update(native.value_sets)
        self._extern_objects.update(native.registers)
        self._extern_objects.update(native.counters)
        self.meters.update(native.meters)
        self._extern_objects.update(native.meters)
        self._direct_meter_types.update(native.direct_meter_types)
        self.profiles.update(native.action_profiles(self.algorithms))
        for fqn, table in native.tables.items():
            decl = table._info.decl
            if decl.entries_const:
                self._const_entry_tables.add(fqn)
            try:
                self._install_program_entries(table, decl)
            except (TableError, BadValueError) as err:
                raise P4Error(f"table {fqn}: {err}", decl.loc) from None
            self.tables[fqn] = table
        self.driver = NativeDriver(native.library, native.pointer, self.pre, self._clock,
                                   native.lock, self.clone_sessions, self.context,
                                   native.generated.flow, max_passes)

    # ------------------------------------------------------------------ packets

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one packet received on ``port``; returns every ``(port, bytes)`` sent.

        The queues and links are bypassed: the packet runs to completion at once
        (time from the ``clock`` given to the constructor).  :meth:`receive` is
        the same with the traffic manager and link models in the way.
        """
        self._check_packet(port, data)
        self.driver.clock = self._clock
        return self.driver.process(port, bytes(data))

    def ingress(self, port: int, data: bytes) -> list[QueuedPacket]:
        """The ingress half only: the packets bound for egress queues (for a traffic manager).

        Each :class:`QueuedPacket` has ``port``, ``priority`` and ``length``;
        pass it to :meth:`egress` when the traffic manager dequeues it.
        """
        self._check_packet(port, data)
        return self.driver.ingress(port, bytes(data))

    def egress(self, packet: QueuedPacket, queue: QueueMetadata | None = None
               ) -> tuple[list[tuple[int, bytes]], list[QueuedPacket]]:
        """The egress half for a dequeued packet, with the measured queueing metadata.

        Returns ``(sent, queued)``: the ``(port, bytes)`` sent, and new packets for
        the queues (egress clones, and what recirculated packets' ingress produced).
        """
        if not isinstance(packet, QueuedPacket):
            raise SwitchError("egress() takes a QueuedPacket returned by ingress()")
        return self.driver.egress(packet, queue)

    def _check_packet(self, port: object, data: object) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 512:
            raise SwitchError(f"ingress port {port!r} is not an integer in 0..511")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise SwitchError(f"the packet must be bytes, not {type(data).__name__}")

    @property
    def digests(self) -> list[tuple[int, Any]]:
        """``(receiver, data)`` of every ``digest`` call so far (the caller may clear it)."""
        return self.context.digests

    @property
    def logs(self) -> list[str]:
        """Messages of ``log_msg`` calls so far."""
        return self.context.logs

    @property
    def stats(self) -> dict[str, int]:
        """Packet counters (a new dict per call).

        ``received``, ``sent``, ``pass_limit``, ``assert_failed``,
        ``internal_error``; drops by reason: ``drop_program`` (the program
        dropped it), ``drop_parser_error`` (... after its parser had failed),
        ``drop_empty_group`` (a table entry pointed at an action selector group
        with no members),
        ``drop_queue_full`` (tail drop), ``drop_priority`` (priority beyond the
        port's queues), ``drop_link_loss`` (lost on a link), ``drop_link_limit``
        (too many frames waiting for an ingress link); ``dropped`` is their sum;
        ``link_corrupted`` counts frames a link damaged.
        """
        out = dict(self.driver.stats)
        out["drop_queue_full"] = self.tm.drops["queue_full"]
        out["drop_priority"] = self.tm.drops["priority"]
        lost = limit = corrupted = 0
        for counts in self._retired_links + [link.stats for link in self._all_links()]:
            lost += counts.lost
            limit += counts.limit
            corrupted += counts.corrupted
        out["drop_link_loss"] = lost
        out["drop_link_limit"] = limit
        out["link_corrupted"] = corrupted
        out["dropped"] = (out["drop_program"] + out["drop_parser_error"]
                          + out["drop_empty_group"] + out["drop_queue_full"]
                          + out["drop_priority"] + lost + limit)
        return out

    def _all_links(self) -> list[LinkDirection]:
        return [*self._ingress_links.values(), *self.tm.links.values()]

    # ------------------------------------------------------------------ queues, links, time

    def configure_port(self, port: int, options: PortOptions) -> None:
        """Apply a port's link models (both directions) and queue limits.

        Each link direction draws its randomness from ``(seed, port, direction)``,
        so a run is reproducible.
        """
        self._check_port(port)
        self.set_link(port, "in", options.ingress)
        self.set_link(port, "out", options.egress)
        if options.queue_changes:
            self._configure_queue(port, None, **options.queue_changes)

    def set_link(self, port: int, direction: str, config: LinkConfig | None) -> None:
        """Set the link model of ``port`` for frames coming ``"in"`` or going ``"out"``."""
        self._check_port(port)
        if direction not in ("in", "out"):
            raise SwitchError(f"link direction must be 'in' or 'out', not {direction!r}")
        old = self._ingress_links.get(port) if direction == "in" else self.tm.link(port)
        if old is not None:
            if old.config == config:
                return
            self._retired_links.append(old.stats)     # its counts stay in stats
        # a replaced link draws fresh (still reproducible) streams, not its old ones again
        generation = self._link_generations.get((port, direction), 0)
        self._link_generations[(port, direction)] = generation + 1
        seed = f"{self.seed}/{port}/{direction}" + (f"/{generation}" if generation else "")
        link = None if config is None or config.is_ideal else LinkDirection(config, seed)
        if direction == "in":
            if link is None:
                self._ingress_links.pop(port, None)
            else:
                self._ingress_links[port] = link
        else:
            self.tm.set_link(port, link)
        if link is not None:
            self._timed = True

    def set_queue_depth(self, depth: int, port: int | None = None,
                        priority: int | None = None) -> None:
        """Queue depth in packets (BMv2 ``set_queue_depth <nb_pkts> [<port> [<priority>]]``)."""
        self._configure_queue(port, priority, depth_packets=depth)

    def set_queue_depth_bytes(self, depth: int | None, port: int | None = None,
                              priority: int | None = None) -> None:
        """Queue depth in bytes as well as packets (None: packets only)."""
        self._configure_queue(port, priority, depth_bytes=depth)

    def set_queue_rate(self, rate_pps: float, port: int | None = None,
                       priority: int | None = None) -> None:
        """Queue service rate in packets/s (BMv2 ``set_queue_rate <pps> [<port> [<prio>]]``)."""
        self._configure_queue(port, priority, rate_pps=rate_pps)

    def set_queue_rate_bps(self, rate_bps: float | None, port: int | None = None,
                           priority: int | None = None) -> None:
        """Queue service rate in bits/s (None: no bit-rate limit)."""
        self._configure_queue(port, priority, rate_bps=rate_bps)

    def _configure_queue(self, port: int | None, priority: int | None, **change: Any) -> None:
        if port is not None:
            self._check_port(port)
        try:
            self.tm.configure_queue(port, priority, **change)
        except (TypeError, ValueError) as err:
            raise SwitchError(str(err)) from None
        self._timed = True

    def _check_port(self, port: object) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 511:
            raise SwitchError(f"port {port!r} is not an integer in 0..510")

    def receive(self, port: int, data: bytes, now: int) -> list[tuple[int, bytes]]:
        """A frame arrives on ``port`` at ``now`` (ns); returns the frames that leave by ``now``.

        Frames cross the port's ingress link model, ingress, the traffic
        manager's queues, egress and the egress port's link model; what is
        still in a queue or on a link leaves in a later :meth:`advance`.
        Until a queue or link is configured this is :meth:`process` at ``now``.
        """
        self._check_packet(port, data)
        if now < self._now_ns:             # time never runs backwards for the switch
            now = self._now_ns
        self._now_ns = now
        if not self._timed:
            self._now_us = now // 1000
            self.driver.clock = self._timed_clock
            return self.driver.process(port, bytes(data))
        link = self._ingress_links.get(port)
        if link is None:
            if self._idle_until(now):   # nothing else due by now: ingress at once
                out: list[tuple[int, bytes]] = []
                self._ingress_at(now, port, bytes(data), out)
                return out + self.advance(now)
            heapq.heappush(self._arrivals, (now, next(self._seq), port, bytes(data)))
        else:
            arrived = link.send(now, bytes(data))
            if arrived is not None:
                heapq.heappush(self._arrivals, (arrived[0], next(self._seq), port, arrived[1]))
            elif self.trace is not None:
                self._now_us = now // 1000
                self.trace.event(f"A frame of {len(data)} bytes was dropped on the link into "
                                 f"port {port} ({_link_drop(link)})", "-")
        return self.advance(now)

    @property
    def time_ns(self) -> int:
        """The latest time given to :meth:`receive` or :meth:`advance` (ns)."""
        return self._now_ns

    def next_deadline(self) -> int | None:
        """When :meth:`advance` next has work (ns): an arrival, a departure or a delivery."""
        times = [t for t in (self._arrivals[0][0] if self._arrivals else None,
                             self.tm.next_departure(),
                             self._deliveries[0][0] if self._deliveries else None)
                 if t is not None]
        return min(times) if times else None

    def advance(self, now: int) -> list[tuple[int, bytes]]:
        """Run everything due by ``now`` (ns) in time order; returns the frames that leave."""
        if now < self._now_ns:
            now = self._now_ns
        self._now_ns = now
        out: list[tuple[int, bytes]] = []
        arrivals, deliveries, tm = self._arrivals, self._deliveries, self.tm
        next_departure, pop = tm.next_departure, heapq.heappop
        self.driver.clock = self._timed_clock
        never = now + 1
        while True:
            ta = arrivals[0][0] if arrivals else never
            td = next_departure()
            if td is None:
                td = never
            tx = deliveries[0][0] if deliveries else never
            if tx <= ta and tx <= td:
                if tx > now:
                    break
                _, _, port, frame = pop(deliveries)
                out.append((port, frame))
            elif ta <= td:
                if ta > now:
                    break
                _, _, port, frame = pop(arrivals)
                self._ingress_at(ta, port, frame, out)
            else:
                if td > now:
                    break
                self._depart(tm.dequeue(td), out)
        return out

    def _idle_until(self, now: int) -> bool:
        """True if no arrival, departure or delivery is due by ``now``."""
        if self._arrivals and self._arrivals[0][0] <= now:
            return False
        if self._deliveries and self._deliveries[0][0] <= now:
            return False
        td = self.tm.next_departure()
        return td is None or td > now

    def _ingress_at(self, t: int, port: int, frame: bytes,
                    out: list[tuple[int, bytes]]) -> None:
        """Ingress for a frame arriving at ``t``; its packets join the queues.

        A packet for an idle port without a rate goes straight on to egress.
        """
        self._now_us = t // 1000
        self.driver.clock = self._timed_clock
        tm, trace = self.tm, self.trace
        for packet in self.driver.ingress(port, frame):
            meta = tm.pass_through(t, packet)
            if meta is not None:
                if trace is not None:
                    trace.event(f"Port {packet.port} is idle: straight to egress",
                                self.driver.tag(packet))
                self._depart(Departure(t, packet, meta), out)
                continue
            reason = tm.enqueue(t, packet)
            if trace is not None:
                self._trace_enqueue(packet, reason)

    def _depart(self, departure: Any, out: list[tuple[int, bytes]]) -> None:
        """Egress for a dequeued packet; its frame goes out now or onto the link's timeline."""
        t, packet, queue = departure
        self._now_us = t // 1000
        tm = self.tm
        sent, queued = self.driver.egress(packet, queue)
        trace = self.trace
        for again in queued:
            reason = tm.enqueue(t, again)
            if trace is not None:
                self._trace_enqueue(again, reason)
        for port, frame in sent:
            end = tm.transmitted(port, t, len(frame))
            link = tm.link(port)
            if link is not None and link.config.has_wire_effects:
                corrupted = link.stats.corrupted
                arrived = link.propagate(end, frame)
                if arrived is None:
                    if trace is not None:
                        trace.event(f"Lost on the link out of port {port}")
                    continue
                if trace is not None and link.stats.corrupted > corrupted:
                    trace.event(f"Corrupted (one bit flipped) on the link out of port {port}")
                end, frame = arrived
            if end == t:      # no rate, no delay: out now (earlier deliveries already left)
                out.append((port, frame))
                continue
            if trace is not None:
                trace.event(f"Arrives at the far end of port {port}'s link at "
                            f"{end / 1e9:.6f} s")
            heapq.heappush(self._deliveries, (end, next(self._seq), port, frame))

    def _trace_enqueue(self, packet: Any, reason: str | None) -> None:
        trace, tm = self.trace, self.tm
        tid = self.driver.tag(packet)
        where = f"port {packet.port} priority {packet.priority}"
        if reason is None:
            trace.event(f"Enqueued on {where}; the port now holds {tm.depth(packet.port)} "
                        "packet(s)", tid)
        elif reason == "queue_full":
            cfg = tm.queue_config(packet.port, packet.priority)
            limit = f"{cfg.depth_packets} packets" + (
                f" / {cfg.depth_bytes} bytes" if cfg.depth_bytes is not None else "")
            trace.event(f"Dropped: queue full on {where} (depth {limit})", tid)
        else:
            trace.event(f"Dropped: priority {packet.priority} out of range (the switch has "
                        f"{tm.priority_queues} queue(s) per port)", tid)

    def _timed_clock(self) -> int:
        return self._now_us

    # ------------------------------------------------------------------ tables

    def _table(self, name: str) -> MatchTable:
        try:
            return self.tables[resolve_name(name, self.tables, "table")]
        except LookupError as err:
            raise SwitchError(str(err)) from None

    def _mutable_table(self, name: str) -> MatchTable:
        t = self._table(name)
        if t.name in self._const_entry_tables:
            raise SwitchError(f"table {t.name} has const entries: the control plane cannot "
                              "change them")
        return t

    def table_add(self, table: str, match: Mapping[str, object] | Sequence[object],
                  action: str, params: Mapping[str, object] | Sequence[object] = (),
                  priority: int | None = None) -> TableEntry:
        """Install an entry (see the module docstring for value forms); returns it."""
        t = self._mutable_table(table)
        if t.name in self.profiles:
            raise SwitchError(f"table {t.name} uses an action profile: add members with "
                              "act_prof_add_member and entries with table_add_member")
        t.check_control_plane_priority(priority)
        entry = t.add(match, action, params, priority)
        self._attach_direct_meter(t, entry)
        return entry

    def table_set_default(self, table: str, action: str,
                          params: Mapping[str, object] | Sequence[object] = ()) -> None:
        """Set the action run on a miss."""
        self._table(table).set_default(action, params)

    def table_modify(self, table: str, entry: TableEntry, action: str,
                     params: Mapping[str, object] | Sequence[object] = ()) -> None:
        """Change the action of an entry returned by :meth:`table_add`."""
        self._mutable_table(table).modify(entry, action, params)

    def table_entries(self, table: str) -> list[TableEntry]:
        """The installed entries of a table (program const entries included)."""
        return self._table(table).entries

    def table_delete(self, table: str, entry: TableEntry) -> None:
        """Remove an entry returned by :meth:`table_add`."""
        t = self._mutable_table(table)
        try:
            t.delete(entry)
        except ValueError:
            raise SwitchError(f"table {table}: no such entry") from None

    def table_clear(self, table: str) -> None:
        """Remove every entry of a table (as BMv2's ``table_clear``)."""
        self._mutable_table(table).clear()

    def direct_counter_read(self, table: str, entry: TableEntry) -> tuple[int, int]:
        """``(packets, bytes)`` of an entry's direct counter."""
        self._table(table)
        return entry.counter[0], entry.counter[1]

    def direct_meter_set_rates(self, table: str, entry: TableEntry,
                               rates: Sequence[tuple[float, int]]) -> None:
        """Configure the direct meter of an entry: ``[(CIR, CBS), (PIR, PBS)]`` per µs."""
        t = self._table(table)
        if t.name not in self._direct_meter_types:
            raise SwitchError(f"table {t.name} has no direct meter")
        self._attach_direct_meter(t, entry)
        entry.meter.set_rates(rates)

    def _attach_direct_meter(self, t: MatchTable, entry: TableEntry) -> None:
        if t.name in self._direct_meter_types and entry.meter is None:
            entry.meter = Meter(self._direct_meter_types[t.name])

    # -- action profiles and selectors

    def _profile(self, table: str) -> ActionProfile:
        if table not in self.profiles:
            raise SwitchError(f"table {table} has no action profile or selector")
        return self.profiles[table]

    def act_prof_add_member(self, table: str, action: str,
                            params: Mapping[str, object] | Sequence[object] = ()) -> int:
        """Create a member (action + arguments) of a table's action profile; returns its id."""
        t = self._table(table)
        prof = self._profile(t.name)
        return prof.add_member(*t.bind_action(action, params))

    def act_prof_create_group(self, table: str, members: Iterable[int]) -> int:
        """Create a group of members (action selectors only); returns its id."""
        try:
            return self._profile(self._table(table).name).add_group(list(members))
        except ValueError as err:
            raise SwitchError(str(err)) from None

    def table_add_member(self, table: str, match: Mapping[str, object] | Sequence[object],
                         member: int, priority: int | None = None) -> TableEntry:
        """Install an entry pointing at an action profile member."""
        t = self._mutable_table(table)
        try:
            name, args, bound = self._profile(t.name).member(member)
        except ValueError as err:
            raise SwitchError(str(err)) from None
        t.check_control_plane_priority(priority)
        return t.add_bound(match, name, args, bound, priority)

    def table_add_group(self, table: str, match: Mapping[str, object] | Sequence[object],
                        group: int, priority: int | None = None) -> TableEntry:
        """Install an entry pointing at an action selector group."""
        t = self._mutable_table(table)
        try:
            grp = self._profile(t.name).group(group)
        except ValueError as err:
            raise SwitchError(str(err)) from None
        t.check_control_plane_priority(priority)
        return t.add_bound(match, "<group>", (), grp, priority)

    # ------------------------------------------------------------------ hash parameters

    def set_crc16_parameters(self, polynomial: int, initial: int, final_xor: int,
                             reflect_data: bool, reflect_remainder: bool) -> None:
        """Configure ``HashAlgorithm.crc16_custom`` (simple_switch_CLI set_crc16_parameters)."""
        self.algorithms.set_crc16_parameters(CrcConfig(
            16, polynomial & 0xFFFF, initial & 0xFFFF, final_xor & 0xFFFF,
            bool(reflect_data), bool(reflect_remainder)))
        if self.backend == "c":
            self.native.set_crc(self.algorithms.crc16_custom.config)

    def set_crc32_parameters(self, polynomial: int, initial: int, final_xor: int,
                             reflect_data: bool, reflect_remainder: bool) -> None:
        """Configure ``HashAlgorithm.crc32_custom`` (simple_switch_CLI set_crc32_parameters)."""
        self.algorithms.set_crc32_parameters(CrcConfig(
            32, polynomial & 0xFFFFFFFF, initial & 0xFFFFFFFF, final_xor & 0xFFFFFFFF,
            bool(reflect_data), bool(reflect_remainder)))
        if self.backend == "c":
            self.native.set_crc(self.algorithms.crc32_custom.config)

    # ------------------------------------------------------------------ PRE, clones

    def mc_group_set(self, group_id: int, copies: Iterable[tuple[int, int]]) -> None:
        """Create or replace multicast group ``group_id`` with ``(port, rid)`` copies."""
        try:
            self.pre.set_group(group_id, list(copies))
        except (TypeError, ValueError) as err:
            raise SwitchError(str(err)) from None

    def clone_session_set(self, session_id: int, port: int | None,
                          truncate: int | None = None, mc_group: int | None = None) -> None:
        """Mirror clones of session ``session_id`` to ``port`` and/or to the copies of
        multicast group ``mc_group``, truncated to ``truncate`` bytes if given."""
        try:
            self.clone_sessions.set(session_id, port, truncate, mc_group)
        except ValueError as err:
            raise SwitchError(str(err)) from None

    # ------------------------------------------------------------------ stateful externs

    def _named(self, kind: str, pool: Mapping[str, Any], name: str) -> Any:
        try:
            return pool[resolve_name(name, pool, kind)]
        except LookupError as err:
            raise SwitchError(str(err)) from None

    def register_read(self, name: str, index: int) -> int:
        """The value of register ``name`` at ``index``."""
        reg = self._named("register", self.registers, name)
        try:
            reg.check_index(index)
        except IndexError as err:
            raise SwitchError(str(err)) from None
        value = reg.read(index)
        if reg.signed and value >> (reg.width - 1):
            value -= 1 << reg.width
        return value

    def register_write(self, name: str, index: int, value: int) -> None:
        """Store ``value`` in register ``name`` at ``index``."""
        reg = self._named("register", self.registers, name)
        try:
            reg.check_index(index)
            v = parse_value(value, reg.width, f"register {reg.name}")
        except (IndexError, BadValueError) as err:
            raise SwitchError(str(err)) from None
        reg.write(index, v)

    def register_reset(self, name: str) -> None:
        """All cells of register ``name`` back to zero."""
        self._named("register", self.registers, name).reset()

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        """``(packets, bytes)`` of counter ``name`` at ``index``."""
        try:
            return self._named("counter", self.counters, name).read(index)
        except IndexError as err:
            raise SwitchError(str(err)) from None

    def counter_reset(self, name: str) -> None:
        """All cells of counter ``name`` back to zero."""
        self._named("counter", self.counters, name).reset()

    def meter_set_rates(self, name: str, rates: Sequence[tuple[float, int]],
                        index: int | None = None) -> None:
        """Configure meter ``name`` (one index or all): ``[(CIR, CBS), (PIR, PBS)]`` per µs."""
        try:
            self._named("meter", self.meters, name).set_rates(rates, index)
        except (IndexError, ValueError) as err:
            raise SwitchError(str(err)) from None

    def value_set_add(self, name: str, value: object, mask: object = None) -> None:
        """Add a member to parser value set ``name``.

        ``value``/``mask``: one integer (the fields concatenated, first field most
        significant) or, for a set over a struct, a tuple with one value per field.
        """
        try:
            self._named("value set", self.value_sets, name).add(value, mask)
        except (BadValueError, ValueError) as err:
            raise SwitchError(str(err)) from None

    # ------------------------------------------------------------------ construction

    def _create_externs(self, objects: dict[str, Any]) -> None:
        for var, inst in self._lowered.externs.items():
            kind = inst.extern_type
            args = [_const(a) for a in inst.args]
            loc = inst.decl.loc
            if kind == "register":
                t = inst.type_args[0] if inst.type_args else None
                width = _width(t) if t is not None else 32
                signed = isinstance(t, ir.Type_Bits) and t.signed
                obj: Any = RegisterArray(inst.name, int(args[0]), width, signed)
                self.registers[inst.name] = obj
            elif kind == "counter":
                obj = CounterArray(inst.name, int(args[0]), _enum_name(inst.args[1],
                                                                       COUNTER_TYPES))
                self.counters[inst.name] = obj
            elif kind == "meter":
                obj = MeterArray(inst.name, int(args[0]), _enum_name(inst.args[1], METER_TYPES))
                self.meters[inst.name] = obj
            elif kind in ("action_profile", "action_selector"):
                if kind == "action_selector":
                    refusal = bmv2_refusal(_enum_name(inst.args[0], ("random",
                                                                     *HashAlgorithms.NAMES)))
                    if refusal is not None:
                        raise P4Error(refusal, inst.args[0].loc or loc)
                    algo = _enum_name(inst.args[0], HashAlgorithms.NAMES)
                    obj = ActionProfile(inst.name, self.algorithms.get(algo),
                                        int(args[2]) if len(args) > 2 else 0)
                else:
                    obj = ActionProfile(inst.name, None, 0)
            elif kind in ("direct_counter", "direct_meter", "Checksum16"):
                obj = inst
            else:
                raise P4Error(f"unsupported by the netweft back end: the extern {kind}", loc)
            objects[var] = obj
            self._extern_objects[inst.name] = obj

    def _build_table(self, fqn: str, info: Any) -> MatchTable:
        decl: ir.P4Table = info.decl
        keys = [KeySpec(name, kind, width) for name, kind, width in info.keys]
        actions = []
        for afqn, params in info.action_params.items():
            default_only, table_only = info.action_flags[afqn]
            actions.append(ActionSpec(afqn, tuple(params), default_only, table_only))
        fns = dict(info.actions)
        ns = self._ns

        def bind(action: str, args: tuple[int, ...]) -> tuple[Any, tuple[int, ...], str]:
            return (ns[fns[action]], args, action)

        table = MatchTable(fqn, keys, actions, bind, decl.size)
        impl = decl.implementation_instance
        if impl is not None:
            prof = self._extern_objects.get(impl.fqn)
            if not isinstance(prof, ActionProfile):
                prof = ActionProfile(impl.fqn or fqn, None, 0)
            self.profiles[fqn] = prof
        if decl.meters is not None:
            inst = self.program.externs.get(decl.meters.fqn)
            self._direct_meter_types[fqn] = (_enum_name(inst.args[0], METER_TYPES) if inst
                                             else "bytes")
        if decl.entries_const:
            self._const_entry_tables.add(fqn)
        try:
            self._install_program_entries(table, decl)
        except (TableError, BadValueError) as err:
            raise P4Error(f"table {fqn}: {err}", decl.loc) from None
        return table

    def _install_program_entries(self, table: MatchTable, decl: ir.P4Table) -> None:
        default = decl.default_action
        if default is not None and default.action_ref.action is not None:
            a = default.action_ref.action
            values = _ref_constants(default.action_ref, a)
            table.set_default(a.fqn or a.name, values, const=default.is_const, force=True)
        for entry in decl.entries or []:
            a = entry.action.action
            values = _ref_constants(entry.action, a)
            match = [_keyset_value(k, spec) for k, spec in zip(entry.keys, table.keys,
                                                               strict=False)]
            prio = entry.priority
            table.add(match, a.fqn or a.name, values, prio)


# ---------------------------------------------------------------------- helpers


def _const(e: Any) -> Any:
    if e is None:
        return None
    if isinstance(e, ir.Constant):
        return e.value
    if isinstance(e, ir.BoolLiteral):
        return int(e.value)
    decl = getattr(e, "decl", None)
    if isinstance(decl, (ir.Declaration_ID, ir.SerEnumMember)):
        return decl.value
    if isinstance(e, ir.Cast):
        return _const(e.expr)
    return None


def _enum_name(e: Any, allowed: Sequence[str]) -> str:
    name = e.member if isinstance(e, ir.Member) else getattr(getattr(e, "decl", None), "name",
                                                             None)
    if name not in allowed:
        raise P4Error(f"expected one of {', '.join(allowed)}", getattr(e, "loc", None))
    return name


def _width(t: Any) -> int:
    from netweft.emulation.pipeline.types import bit_width
    return bit_width(t)


def _flat_types(t: Any) -> list[Any]:
    if isinstance(t, ir.Type_StructLike):
        out = []
        for f in t.fields:
            out += _flat_types(f.type)
        return out
    return [t]


def _ref_constants(ref: ir.ActionRef, action: ir.P4Action) -> list[int]:
    """Values of the directionless (control-plane) arguments of an action reference."""
    e = ref.expression
    if isinstance(e, ir.MethodCallExpression):
        args = list(e.bound_args) if e.bound_args is not None else [a.expr for a in e.args]
    else:
        args = []
    values = []
    for p, a in zip(action.params, args, strict=False):
        if p.direction:
            continue
        v = _const(a)
        if v is None:
            raise P4Error(f"argument {p.name} of {action.name} is not a constant",
                          getattr(a, "loc", None))
        values.append(v & ((1 << _width(p.type)) - 1))
    return values


def _keyset_value(k: Any, spec: KeySpec) -> Any:
    if isinstance(k, ir.DefaultExpression):
        return None
    if isinstance(k, ir.Binary) and k.op == "&&&":
        value, mask = _const(k.left), _const(k.right)
        if spec.match_kind == "lpm":
            plen = bin(mask).count("1")
            return (value, plen)
        return (value, mask)
    if isinstance(k, ir.Binary) and k.op == "..":
        return (_const(k.left), _const(k.right))
    v = _const(k)
    if v is None:
        raise P4Error("a table entry key is not a constant", getattr(k, "loc", None))
    if v < 0:
        v &= (1 << spec.width) - 1
    if spec.match_kind == "range":  # a single value on a range key: the range v..v
        return (v, v)
    return v
