"""A per-packet trace of the switch, in the manner of BMv2's event log (``--log-console``).

For every packet: where it came from, the parser states it went through, the
headers it extracted and the bytes parsed (or the parser error), each table
applied with its key and whether it hit (with the entry and its action) or
missed (with the default action), the extern methods called, ``log_msg``
text, what ingress decided (egress port, multicast group, clone, resubmit,
digest, drop), the traffic manager's decision (queue, depth, tail drop), the
queueing metadata at dequeue, egress's verdict, the deparsed size and port,
and what the link did (lost, corrupted, arrival time).

Tracing costs nothing when off: a :class:`~netweft.emulation.switch.SoftSwitch`
built without a trace runs the plain pipeline code; one built with a
:class:`PacketTrace` runs code compiled with parser-state calls, proxies in
front of its tables and externs, and :class:`TracingDriver`.

Lines look like ``[    0.001234] [pkt 3.1] Table 'MyIngress.ipv4_lpm': hit ...``: the
switch's time in seconds since it started, the packet number (``.N`` for the
N-th copy: multicast, clones, recirculation).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

from netweft.emulation.v1model.match_table import MatchTable, TableEntry
from netweft.emulation.v1model.simple_switch import (
    DROP_PORT,
    QueuedPacket,
    QueueMetadata,
    V1ModelDriver,
    _IngressPass,
)

__all__ = ["PacketTrace", "TracedExtern", "TracedTable", "TracingDriver"]

_INSTANCE = {0: "normal", 1: "ingress clone", 2: "egress clone", 3: "coalesced",
             4: "recirculated", 5: "multicast copy", 6: "resubmitted"}


class PacketTrace:
    """Formats trace events as text lines and hands them to ``write``."""

    def __init__(self, write: Callable[[str], Any], clock_us: Callable[[], int] | None = None
                 ) -> None:
        self._write = write
        self.clock_us = clock_us or (lambda: 0)
        self._ids = itertools.count(1)
        self.current = "-"
        self.lines = 0
        self.error_names: list[str] = []     # the program's error names, by code

    def error_name(self, code: int) -> str:
        """``error.<name>`` of a parser error code (the number if unknown)."""
        names = self.error_names
        return f"error.{names[code]}" if 0 <= code < len(names) else f"error {code}"

    @classmethod
    def to_stream(cls, stream: TextIO) -> PacketTrace:
        """A trace writing one line per event to ``stream``."""
        return cls(lambda line: stream.write(line + "\n"))

    def new_packet(self) -> str:
        """A fresh packet number, which becomes the current one."""
        self.current = str(next(self._ids))
        return self.current

    def event(self, text: str, packet: str | None = None) -> None:
        """One line about ``packet`` (default: the current one)."""
        self.lines += 1
        t = self.clock_us()
        self._write(f"[{t // 1_000_000:5d}.{t % 1_000_000:06d}] "
                    f"[pkt {packet or self.current}] {text}")

    def parser_state(self, parser: str, state: str) -> None:
        """Called by traced pipeline code on entering a parser state."""
        self.event(f"Parser '{parser}' entering state '{state}'")


def _hex(value: int, width: int) -> str:
    return f"0x{value:0{max(1, (width + 3) // 4)}x}"


def _match_text(match: Any, kind: str, width: int) -> str:
    if match is None:
        return "*"
    if kind == "lpm":
        return f"{_hex(match[0], width)}/{match[1]}"
    if kind == "ternary":
        return f"{_hex(match[0], width)} &&& {_hex(match[1], width)}"
    if kind == "range":
        return f"{_hex(match[0], width)}..{_hex(match[1], width)}"
    return _hex(match[0], width)


class TracedTable:
    """A table as the pipeline code sees it, reporting every lookup."""

    def __init__(self, table: MatchTable, trace: PacketTrace) -> None:
        self._table = table
        self._trace = trace

    def lookup(self, key: tuple[int, ...]) -> TableEntry | None:
        t, trace = self._table, self._trace
        entry = t.lookup(key)
        shown = ", ".join(f"{k.name}={_hex(v, k.width)}" for k, v in zip(t.keys, key,
                                                                       strict=False))
        trace.event(f"Applying table '{t.name}'" + (f" with key {shown}" if shown else ""))
        if entry is None:
            args = ", ".join(map(str, t.default_args))
            trace.event(f"Table '{t.name}': miss; default action {t.default_action}({args})")
        else:
            match = ", ".join(_match_text(m, k.match_kind, k.width)
                              for k, m in zip(t.keys, entry.match, strict=False))
            prio = f" priority {entry.priority}" if entry.priority else ""
            trace.event(f"Table '{t.name}': hit entry #{entry.seq} [{match}]{prio}; action "
                        f"{entry.action}({', '.join(map(str, entry.args))})")
        return entry

    @property
    def default_bound(self) -> Any:
        return self._table.default_bound

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


class TracedExtern:
    """An extern object (register, counter, meter) reporting each method call."""

    def __init__(self, obj: Any, name: str, trace: PacketTrace) -> None:
        self._obj = obj
        self._name = name
        self._trace = trace

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._obj, attr)
        if not callable(value) or attr.startswith("_"):
            return value
        trace, name = self._trace, self._name

        def call(*args: Any) -> Any:
            result = value(*args)
            shown = ", ".join(str(a) for a in args)
            tail = f" -> {result}" if result is not None else ""
            trace.event(f"Extern '{name}'.{attr}({shown}){tail}")
            return result

        return call


class TracingDriver(V1ModelDriver):
    """The v1model driver with a trace line for every step of a packet's way."""

    def __init__(self, *args: Any, trace: PacketTrace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.trace = trace
        trace.clock_us = lambda: self.x.now   # the pass's time; never ticks the clock
        self._ingress = self._block("Pipeline 'ingress'", self._ingress)
        self._egress = self._block("Pipeline 'egress'", self._egress)
        self._deparse = self._block("Deparser", self._deparse)
        self._copies: dict[str, itertools.count] = {}

    def _block(self, label: str, run: Callable[..., None]) -> Callable[..., None]:
        trace = self.trace

        def traced(*args: Any) -> None:
            trace.event(f"{label}: start")
            run(*args)
            trace.event(f"{label}: end")

        return traced

    # ------------------------------------------------------------------ ids

    def _id_of(self, job: Any) -> str:
        tid = job.trace_id
        if tid is None:
            tid = self.trace.new_packet()
            if isinstance(job, _IngressPass):
                self.trace.event(f"Processing packet received on port {job.port}, "
                                 f"{len(job.data)} bytes")
        self.trace.current = tid
        return tid

    def _tag_new(self, work: deque, before: int, parent: str) -> None:
        """Give new passes ids: the packet itself keeps its id, copies get ``base.N``."""
        base = parent.split(".")[0]
        copies = self._copies.get(base)
        for item in list(work)[before:]:
            if isinstance(item, QueuedPacket) and not item.sm.instance_type:
                item.trace_id = parent
                continue
            if copies is None:
                copies = self._copies[base] = itertools.count(1)
            item.trace_id = f"{base}.{next(copies)}"
        if len(self._copies) > 8192:   # bounded: old packets' copy counters are forgotten
            for k in list(self._copies)[:4096]:
                del self._copies[k]

    def tag(self, packet: QueuedPacket) -> str:
        """The trace id of a packet between ingress and egress (for queue events)."""
        return packet.trace_id or self.trace.current

    # ------------------------------------------------------------------ passes

    def _parse_into(self, data: bytes, port: int, instance_type: int, now: int
                    ) -> tuple[Any, Any, Any, Any]:
        trace = self.trace
        trace.event("Parser: start")
        hdr, meta, sm, cur = super()._parse_into(data, port, instance_type, now)
        valid = [name for name in getattr(hdr, "__slots__", ())
                 if getattr(getattr(hdr, name, None), "_v", False)]
        trace.event(f"Parser: end; {cur.pos} bytes parsed, valid headers: "
                    f"{', '.join(valid) or 'none'}"
                    + (f"; parser error {trace.error_name(sm.parser_error)}"
                       if sm.parser_error else ""))
        return hdr, meta, sm, cur

    def _run_ingress(self, job: _IngressPass, work: deque) -> None:
        trace = self.trace
        tid = self._id_of(job)
        if job.instance_type:
            trace.event(f"Ingress pass of a {_INSTANCE.get(job.instance_type, '?')} packet "
                        f"on port {job.port}, {len(job.data)} bytes")
        logs = len(self.x.logs)
        digests = len(self.x.digests)
        before = len(work)
        dropped, parser_drops = self.stats["dropped"], self.stats["drop_parser_error"]
        super()._run_ingress(job, work)
        x = self.x
        for text in x.logs[logs:]:
            trace.event(f"log_msg: {text}")
        if len(x.digests) > digests:
            trace.event(f"Digest sent to the control plane (receiver {x.digests[-1][0]})")
        if x.clone_session is not None:
            trace.event(f"Cloning packet at ingress (session {x.clone_session})")
        new = list(work)[before:]
        self._tag_new(work, before, tid)
        if self.stats["dropped"] > dropped:
            why = (" after a parser error" if self.stats["drop_parser_error"] > parser_drops
                   else "")
            trace.event(f"Dropping packet at the end of ingress{why} (mark_to_drop / "
                        f"egress_spec {DROP_PORT})")
        for item in new:
            if isinstance(item, _IngressPass):
                trace.event(f"Resubmitting packet as {item.trace_id or tid}")
            else:
                copy = item.trace_id or tid
                trace.event(f"Egress port is {item.port}, priority {item.priority}"
                            + (f", rid {item.sm.egress_rid}" if item.sm.mcast_grp else "")
                            + (f" (as {copy})" if copy != tid else ""))

    def _run_egress(self, job: QueuedPacket, work: deque, outputs: list[tuple[int, bytes]],
                    queue: QueueMetadata | None) -> None:
        trace = self.trace
        tid = self._id_of(job)
        if queue is not None:
            trace.event(f"Dequeued from port {job.port} queue {queue.qid}: enq_qdepth "
                        f"{queue.enq_qdepth}, deq_qdepth {queue.deq_qdepth}, deq_timedelta "
                        f"{queue.deq_timedelta} us")
        logs = len(self.x.logs)
        before, sent = len(work), len(outputs)
        dropped = self.stats["dropped"]
        super()._run_egress(job, work, outputs, queue)
        for text in self.x.logs[logs:]:
            trace.event(f"log_msg: {text}")
        if self.x.clone_session is not None:
            trace.event(f"Cloning packet at egress (session {self.x.clone_session})")
        self._tag_new(work, before, tid)
        for item in list(work)[before:]:
            what = "Recirculating" if isinstance(item, _IngressPass) else "Egress clone"
            trace.event(f"{what} as {item.trace_id or tid}")
        if self.stats["dropped"] > dropped:
            trace.event(f"Dropping packet at the end of egress (egress_spec {DROP_PORT})")
        for port, data in outputs[sent:]:
            trace.event(f"Transmitting packet of size {len(data)} out of port {port}")
