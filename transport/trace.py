"""The engine's event trace as Python records and JSON lines (qlog-like).

An engine records per-PDC events (packets sent, acknowledged, declared lost,
resent, trimmed; credits granted, received and requested; window and rate
changes) with the driver's timestamps into a bounded ring (``nw_trace_start``,
off by default). :func:`drain` turns what the ring holds into
:class:`TraceEvent` records; :func:`write_jsonl` writes them one JSON object a
line. ``docs/congestion.md`` lists the events and their fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from netweft.nic_offload import ffi, lib

#: ``NW_TR_*`` event types by number.
EVENT_NAMES: dict[int, str] = {
    lib.NW_TR_SENT: "sent",
    lib.NW_TR_ACKED: "acked",
    lib.NW_TR_LOST: "lost",
    lib.NW_TR_TRIMMED_RX: "trimmed_rx",
    lib.NW_TR_TRIM_NACK: "trim_nack",
    lib.NW_TR_CREDIT_GRANT: "credit_granted",
    lib.NW_TR_CREDIT_IN: "credit_received",
    lib.NW_TR_CREDIT_REQ: "credit_requested",
    lib.NW_TR_CWND: "cwnd",
    lib.NW_TR_RATE: "rate",
    lib.NW_TR_ECN_ECHO: "ecn_echo",
}
_FLAGS = ((lib.NW_TRF_RETX, "retx"), (lib.NW_TRF_FAST, "fast"), (lib.NW_TRF_RTO, "rto"))
_BATCH = 4096


@dataclass(frozen=True)
class TraceEvent:
    """One engine event. ``value`` is bytes (sent, acked, lost, credits, cwnd) or kbit/s
    (rate); ``host`` names the endpoint that recorded it (``ip:port``)."""

    t_ns: int
    host: str
    pdc: int
    event: str
    psn: int
    value: int
    flags: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["flags"] = list(self.flags)
        return out


def drain(engine: Any, host: str) -> list[TraceEvent]:
    """Every event the engine's ring holds, oldest first (the ring is emptied).
    The caller holds the engine (its thread, or the I/O driver's lock)."""
    buf = ffi.new("nw_trace_event_t[]", _BATCH)
    out: list[TraceEvent] = []
    while True:
        n = lib.nw_trace_drain(engine, buf, _BATCH)
        for i in range(n):
            ev = buf[i]
            out.append(TraceEvent(int(ev.t_ns), host, int(ev.pdc),
                                  EVENT_NAMES.get(int(ev.type), str(int(ev.type))),
                                  int(ev.psn), int(ev.value),
                                  tuple(name for bit, name in _FLAGS if ev.flags & bit)))
        if n < _BATCH:
            return out


def write_jsonl(events: Iterable[TraceEvent], out: IO[str] | Path) -> int:
    """Writes events as JSON lines to a file object or path; returns how many."""
    if isinstance(out, Path):
        with out.open("w") as fh:
            return write_jsonl(events, fh)
    n = 0
    for ev in events:
        out.write(json.dumps(ev.as_json(), separators=(",", ":")) + "\n")
        n += 1
    return n


def read_jsonl(path: Path) -> list[TraceEvent]:
    """Events back from a JSON-lines file written by :func:`write_jsonl`."""
    events = []
    with path.open() as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                d["flags"] = tuple(d.get("flags", ()))
                events.append(TraceEvent(**d))
    return events
