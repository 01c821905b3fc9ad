"""Completion queues: how an application learns that its work requests finished.

Each endpoint has one :class:`CompletionQueue`. :meth:`CompletionQueue.poll`
returns what has completed without blocking; :meth:`CompletionQueue.wait`
blocks (on real sockets) or runs the simulation (in virtual time) until a
completion arrives; :meth:`CompletionQueue.wait_for` waits for one particular
work request and keeps the others for later polls.
"""

from __future__ import annotations

import enum
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from netweft.nic_offload import lib
from netweft.transport.errors import (
    CompletionTimeout,
    EndpointClosedError,
    InvalidArgumentError,
    WorkRequestFailed,
)


class Opcode(enum.IntEnum):
    """What a completion completes; values are the engine's ``NW_OP_*``."""

    WRITE = 1
    READ = 2
    SEND = 3
    RECV = 4


@dataclass
class Completion:
    """One finished work request.

    ``status`` is 0 on success, else the engine's negative error code and
    ``error`` its message. ``nbytes`` counts bytes moved; for a successful
    receive, ``data`` is the filled part of the posted buffer (for a UUD
    message completed as lost, ``nbytes`` counts the bytes that arrived and
    ``data`` is None). ``peer`` is the engine's peer handle.
    """

    wr_id: int
    opcode: Opcode
    status: int
    nbytes: int
    peer: int
    error: str = ""
    data: memoryview | None = field(default=None, repr=False)
    context: Any = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """True if the work request succeeded."""
        return self.status == 0

    @property
    def cancelled(self) -> bool:
        """True if the work request was flushed because its peer or endpoint closed."""
        return self.status == lib.NW_ECANCELED

    def check(self) -> Completion:
        """Return self if it succeeded, else raise :class:`WorkRequestFailed`."""
        if not self.ok:
            raise WorkRequestFailed(f"{self.opcode.name.lower()} wr_id={self.wr_id} failed: "
                                    f"{self.error} (status {self.status})")
        return self


def completion_dtype() -> Any:
    """The numpy record type of :meth:`CompletionQueue.poll_batch`: the layout of the
    engine's ``nw_completion_t`` (``nbytes`` is its ``bytes``)."""
    import numpy as np

    return np.dtype([("wr_id", "<u8"), ("nbytes", "<u8"), ("status", "<i4"),
                     ("peer", "<u4"), ("opcode", "u1"), ("mode", "u1"),
                     ("reserved", "u1", (6,))])


def completions_to_array(raws: list[Any]) -> Any:
    """Completions (objects with the ``nw_completion_t`` fields) as a record array."""
    import numpy as np

    out = np.zeros(len(raws), dtype=completion_dtype())
    for i, c in enumerate(raws):
        out[i] = (c.wr_id, getattr(c, "bytes", getattr(c, "nbytes", 0)), c.status, c.peer,
                  int(c.opcode), getattr(c, "mode", 0), (0,) * 6)
    return out


class CompletionQueue:
    """The completion queue of one endpoint.

    ``fetch(max)`` pulls finished completions from the engine and ``progress(
    deadline)`` lets the driver make progress until ``deadline`` (a value of
    the driver's ``clock``) or until something may have completed.
    """

    def __init__(self, fetch: Callable[[int], list[Completion]],
                 progress: Callable[[float | None], bool], clock: Callable[[], float],
                 is_closed: Callable[[], bool],
                 in_flight: Callable[[int], bool] = lambda wr_id: True,
                 fetch_batch: Callable[[int], Any] | None = None) -> None:
        self._fetch = fetch
        self._fetch_batch = fetch_batch
        self._in_flight = in_flight
        self._progress = progress
        self._clock = clock
        self._is_closed = is_closed
        self._pending: deque[Completion] = deque()

    def poll(self, max_entries: int = 64) -> list[Completion]:
        """Up to ``max_entries`` completions that are ready now; never blocks."""
        if max_entries < 1:
            raise InvalidArgumentError(f"max_entries must be >= 1, got {max_entries}")
        out: list[Completion] = []
        while self._pending and len(out) < max_entries:
            out.append(self._pending.popleft())
        if len(out) < max_entries and not self._is_closed():
            out.extend(self._fetch(max_entries - len(out)))
        return out

    def poll_batch(self, max_entries: int = 256) -> Any:
        """Up to ``max_entries`` ready completions as one numpy record array (fields
        ``wr_id``, ``nbytes``, ``status``, ``peer``, ``opcode``; see
        :func:`completion_dtype`); never blocks. No object is made per completion, so
        a loop with many small messages in flight spends its time on them, not on
        Python; a receive's bytes are in the buffer it posted (``data`` is not set)."""
        import numpy as np

        if max_entries < 1:
            raise InvalidArgumentError(f"max_entries must be >= 1, got {max_entries}")
        head = [self._pending.popleft() for _ in range(min(max_entries, len(self._pending)))]
        parts = [completions_to_array(head)] if head else []
        left = max_entries - len(head)
        if left and not self._is_closed():
            if self._fetch_batch is not None:
                parts.append(self._fetch_batch(left))
            else:
                parts.append(completions_to_array(self._fetch(left)))
        if not parts:
            return np.zeros(0, dtype=completion_dtype())
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def wait(self, timeout: float | None = None) -> Completion:
        """The next completion; raise :class:`CompletionTimeout` after ``timeout`` seconds.

        In a simulation the timeout is virtual seconds, and an idle simulation
        (nothing left that could complete) raises at once.
        """
        return self._wait_matching(lambda c: True, timeout, "a completion")

    def wait_for(self, wr_id: int, timeout: float | None = None) -> Completion:
        """The completion of work request ``wr_id``; others are kept for later polls."""
        self._check_known([wr_id])
        return self._wait_matching(lambda c: c.wr_id == wr_id, timeout,
                                   f"the completion of wr_id={wr_id}")

    def wait_all(self, wr_ids: list[int], timeout: float | None = None) -> list[Completion]:
        """The completions of every id in ``wr_ids``, in that order."""
        self._check_known(wr_ids)
        deadline = None if timeout is None else self._clock() + timeout
        found: dict[int, Completion] = {}
        wanted = set(wr_ids)
        while wanted - found.keys():
            left = None if deadline is None else max(0.0, deadline - self._clock())
            c = self._wait_matching(lambda c: c.wr_id in wanted and c.wr_id not in found, left,
                                    f"{len(wanted - found.keys())} completions")
            found[c.wr_id] = c
        return [found[w] for w in wr_ids]

    def _check_known(self, wr_ids: list[int]) -> None:
        stashed = {c.wr_id for c in self._pending}
        unknown = [w for w in wr_ids if w not in stashed and not self._in_flight(w)]
        if unknown:
            raise InvalidArgumentError(f"no work request in flight or completed-but-unpolled "
                                       f"with wr_id {unknown[0]!r} (already polled?)")

    def _wait_matching(self, match: Callable[[Completion], bool], timeout: float | None,
                       what: str) -> Completion:
        deadline = None if timeout is None else self._clock() + timeout
        while True:
            for i, c in enumerate(self._pending):
                if match(c):
                    del self._pending[i]
                    return c
            if self._is_closed():
                raise EndpointClosedError("the endpoint is closed")
            fresh = self._fetch(256)
            hit = None
            for c in fresh:
                if hit is None and match(c):
                    hit = c
                else:
                    self._pending.append(c)
            if hit is not None:
                return hit
            if fresh:
                continue
            if deadline is not None and self._clock() >= deadline:
                raise CompletionTimeout(f"timed out after {timeout} s waiting for {what}")
            if not self._progress(deadline):
                raise CompletionTimeout(f"nothing left to happen while waiting for {what}")


def wall_clock() -> float:
    """Monotonic seconds, the clock of real-socket drivers."""
    return time.monotonic()
