"""A discrete-event loop with virtual time in integer nanoseconds.

The deterministic simulation runs every engine, link and timer on this loop:
events fire in (time, insertion order), so a run is a pure function of its
inputs and its seed. No wall clock is ever read.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any


class Timer:
    """A scheduled callback; :meth:`cancel` prevents it from firing."""

    __slots__ = ("when_ns", "_fn", "_args", "cancelled")

    def __init__(self, when_ns: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.when_ns = when_ns
        self._fn = fn
        self._args = args
        self.cancelled = False

    def cancel(self) -> None:
        """Do not fire this timer."""
        self.cancelled = True


_TIMER = object()  # the fourth element of a heap entry that holds a Timer


class EventLoop:
    """Virtual time plus a heap of timers; ``now_ns`` only moves forward.

    Heap entries are ``(when, seq, fn, arg)``: :meth:`post` pushes a plain call of
    ``fn(arg)`` (no :class:`Timer`, cannot be cancelled: the simulator's packet
    hops, millions per study), :meth:`call_at` a Timer with ``arg`` = ``_TIMER``."""

    def __init__(self) -> None:
        self.now_ns = 0
        self._heap: list[tuple[int, int, Any, Any]] = []
        self._seq = itertools.count()
        self.events_run = 0

    def call_at(self, when_ns: int, fn: Callable[..., Any], *args: Any) -> Timer:
        """Run ``fn(*args)`` at virtual time ``when_ns`` (clamped to now)."""
        timer = Timer(max(int(when_ns), self.now_ns), fn, args)
        heapq.heappush(self._heap, (timer.when_ns, next(self._seq), timer, _TIMER))
        return timer

    def post(self, when_ns: int, fn: Callable[[Any], Any], arg: Any) -> None:
        """Run ``fn(arg)`` at virtual time ``when_ns`` (an int >= now); not cancellable."""
        heapq.heappush(self._heap, (when_ns, next(self._seq), fn, arg))

    def call_later(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> Timer:
        """Run ``fn(*args)`` ``delay_ns`` nanoseconds from now."""
        return self.call_at(self.now_ns + int(delay_ns), fn, *args)

    def next_time(self) -> int | None:
        """When the next live timer fires, or None if nothing is scheduled."""
        heap = self._heap
        while heap and heap[0][3] is _TIMER and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def step(self) -> bool:
        """Fire the earliest live timer; False if there was none."""
        heap = self._heap
        while heap:
            when, _, fn, arg = heapq.heappop(heap)
            if arg is _TIMER:
                if fn.cancelled:
                    continue
                self.now_ns = when
                self.events_run += 1
                fn._fn(*fn._args)
                return True
            self.now_ns = when
            self.events_run += 1
            fn(arg)
            return True
        return False

    def run_until(self, done: Callable[[], bool], until_ns: int | None = None) -> bool:
        """Fire timers until ``done()`` holds; False if time ``until_ns`` or idleness came first."""
        heap, pop = self._heap, heapq.heappop
        limit = until_ns if until_ns is not None else float("inf")
        while not done():
            while heap and heap[0][3] is _TIMER and heap[0][2].cancelled:
                pop(heap)
            if not heap:
                return False
            if heap[0][0] > limit:
                self.now_ns = max(self.now_ns, until_ns)
                return False
            when, _, fn, arg = pop(heap)
            self.now_ns = when
            self.events_run += 1
            if arg is _TIMER:
                fn._fn(*fn._args)
            else:
                fn(arg)
        return True

    def run_for(self, duration_ns: int) -> None:
        """Fire every timer due within the next ``duration_ns`` and advance time by it."""
        end = self.now_ns + int(duration_ns)
        self.run_until(lambda: False, end)
        self.now_ns = max(self.now_ns, end)
