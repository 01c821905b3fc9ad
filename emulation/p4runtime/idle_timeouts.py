"""Idle timeouts: IdleTimeoutNotification for entries not hit for their ``idle_timeout_ns``.

Tables with ``support_timeout = true`` (P4Info ``idle_timeout_behavior:
NOTIFY_CONTROL``) count each entry's hits in the data plane
(:attr:`~netweft.emulation.v1model.match_table.TableEntry.hits`).  A sweep
every ``sweep_s`` seconds notes which entries were hit since the previous
sweep (their last hit is then the sweep's time) and, as P4Runtime specifies,
reports every entry idle for at least its ``idle_timeout_ns`` in one
notification per sweep: each ``TableEntry`` carries the table id, the match,
the priority, the controller metadata and the ``idle_timeout_ns``.  An entry
is reported once; it is reported again only after it is hit again and then
idle again, or after a MODIFY re-arms it.  So a notification comes between
``idle_timeout_ns`` and ``idle_timeout_ns`` + ``sweep_s`` after the last hit
(BMv2 sweeps every second by default).

:meth:`IdleTimeouts.sweep` is the sans-IO core (tests call it with their own
``now``); :meth:`IdleTimeouts.start` runs it on a daemon thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.tables import EntryState, TableEntries

NOTIFY_CONTROL = p4info_pb2.Table.IdleTimeoutBehavior.NOTIFY_CONTROL
DEFAULT_SWEEP_S = 0.1


class IdleTimeouts:
    """The idle-timeout sweep of one pipeline's tables."""

    def __init__(self, tables: TableEntries,
                 notify: Callable[[p4runtime_pb2.IdleTimeoutNotification], None],
                 lock: threading.RLock, sweep_s: float = DEFAULT_SWEEP_S) -> None:
        self.tables = tables
        self.notify = notify
        self.lock = lock
        self.sweep_s = sweep_s
        self.table_ids = [info.preamble.id for info in tables.pipeline.index.all("tables")
                          if info.idle_timeout_behavior == NOTIFY_CONTROL]
        self.sent = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> IdleTimeouts:
        """Sweep on a daemon thread (only if some table supports idle timeouts and
        ``sweep_s`` is above 0)."""
        if self.table_ids and self.sweep_s > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="p4runtime-idle-timeouts")
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop sweeping (the pipeline is being replaced)."""
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.sweep_s):
            msg = self.sweep()
            if msg is not None and not self._stop.is_set():
                self.notify(msg)

    def sweep(self, now: int | None = None) -> p4runtime_pb2.IdleTimeoutNotification | None:
        """Note the hits since the last sweep; the notification of newly idle entries, if any."""
        expired: list[p4runtime_pb2.TableEntry] = []
        with self.lock:
            now = self.tables.clock() if now is None else now
            for table_id in self.table_ids:
                info = self.tables.pipeline.index.table(table_id)
                mt = self.tables.pipeline.switch.tables[info.preamble.name]
                for state in self.tables.entries[table_id].values():
                    if _newly_idle(state, now):
                        out = p4runtime_pb2.TableEntry()
                        self.tables.key_to_proto(info, mt, state, out)
                        out.controller_metadata = state.controller_metadata
                        out.idle_timeout_ns = state.idle_timeout_ns
                        expired.append(out)
        if not expired:
            return None
        msg = p4runtime_pb2.IdleTimeoutNotification(timestamp=time.time_ns())
        msg.table_entry.extend(expired)
        self.sent += 1
        return msg


def _newly_idle(state: EntryState, now: int) -> bool:
    """Update ``state``'s last hit from the data plane's count; True once when it goes idle."""
    if state.idle_timeout_ns <= 0:
        return False
    hits = state.entry.hits
    if hits != state.seen_hits:
        state.seen_hits, state.last_hit_ns, state.idle_notified = hits, now, False
        return False
    if state.idle_notified or now - state.last_hit_ns < state.idle_timeout_ns:
        return False
    state.idle_notified = True
    return True
