"""Ring all-reduce over netweft's transport: the baseline for in-network aggregation.

Each of ``n`` workers splits the float32 array into ``n`` chunks and talks only
to its ring neighbours: ``n - 1`` reduce-scatter steps (send a chunk to the
right, receive one from the left and add it) leave worker ``r`` with the full
sum of chunk ``r + 1``; ``n - 1`` all-gather steps pass the summed chunks
round. Every worker sends and receives ``2 (n - 1) / n`` of the array's bytes,
the classic bandwidth-optimal figure that in-network aggregation halves.

Messages are transport sends into posted receives on ROD peers (reliable,
ordered), so the ``k``-th message from the left neighbour lands in the
``k``-th posted buffer whatever the network reorders; loss, duplicates and
reordering are the transport's business (selective repeat). All receives are
posted before the first send, so a message never finds its receiver
unprepared.

:class:`RingAllreduce` is one worker's state: it posts work on an
:class:`~netweft.transport.endpoint.Endpoint` and advances on the completions
it is handed (:meth:`RingAllreduce.on_completion`), so one thread can drive
many of them on a simulation (:func:`run_ring`) and a real host drives one
(:func:`ring_allreduce`, blocking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from netweft.transport.completion_queue import Completion, Opcode
from netweft.transport.endpoint import Endpoint, Mode
from netweft.transport.errors import InvalidArgumentError, TransportError
from netweft.transport.sim.simulation import Simulation


@dataclass(frozen=True)
class RingGroup:
    """One worker's view of a ring: its endpoint, its rank and every worker's address in
    ring order (the right neighbour of rank r is rank r + 1 mod n)."""

    endpoint: Endpoint
    rank: int
    addresses: Sequence[tuple[str, int]]

    def __post_init__(self) -> None:
        n = len(self.addresses)
        if n < 1:
            raise InvalidArgumentError("a ring needs at least one worker address")
        if not isinstance(self.rank, int) or not 0 <= self.rank < n:
            raise InvalidArgumentError(f"rank must be in 0..{n - 1}, got {self.rank!r}")
        if len(set(map(tuple, self.addresses))) != n:
            raise InvalidArgumentError("ring addresses must be distinct")

    @property
    def size(self) -> int:
        """Number of workers."""
        return len(self.addresses)


def _check_array(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype != np.float32:
        raise InvalidArgumentError(f"allreduce takes float32 arrays, got {array.dtype}")
    return array


class RingAllreduce:
    """One worker's ring all-reduce in progress; :attr:`result` once :attr:`done`."""

    def __init__(self, array: np.ndarray, group: RingGroup) -> None:
        array = _check_array(array)
        self.group = group
        self.shape = array.shape
        n, r = group.size, group.rank
        self._work = array.reshape(-1).copy()
        self.result: np.ndarray | None = None
        bounds = np.linspace(0, self._work.size, n + 1).round().astype(np.int64)
        self._bounds = [(int(bounds[i]), int(bounds[i + 1])) for i in range(n)]
        self._n, self._r = n, r
        self._steps = 2 * (n - 1)
        self._received = 0
        self._sends_done = 0
        self._sends_posted = 0
        self._wr: set[int] = set()
        if n == 1:
            self.result = self._work.reshape(self.shape)
            return
        ep = group.endpoint
        biggest = max(hi - lo for lo, hi in self._bounds)
        self._staging = np.zeros((n - 1, max(biggest, 1)), dtype=np.float32)
        self._work_mr = ep.register(self._work)
        self._staging_mr = ep.register(self._staging)
        self._right = ep.connect(tuple(group.addresses[(r + 1) % n]), mode=Mode.ROD)
        itemsize = self._work.itemsize
        for step in range(self._steps):  # every receive is posted before the first send
            if step < n - 1:
                length = self._chunk_len(self._rs_recv_chunk(step)) * itemsize
                wr = ep.post_recv(self._staging_mr, offset=step * self._staging.shape[1]
                                  * itemsize, length=length, context=("recv", step))
            else:
                lo, hi = self._bounds[self._ag_recv_chunk(step - (n - 1))]
                wr = ep.post_recv(self._work_mr, offset=lo * itemsize,
                                  length=(hi - lo) * itemsize, context=("recv", step))
            self._wr.add(wr)
        self._send_chunk(r)

    # ---- chunk arithmetic ----
    def _chunk_len(self, chunk: int) -> int:
        lo, hi = self._bounds[chunk]
        return hi - lo

    def _rs_recv_chunk(self, step: int) -> int:
        return (self._r - step - 1) % self._n

    def _ag_recv_chunk(self, step: int) -> int:
        return (self._r - step) % self._n

    def _send_chunk(self, chunk: int) -> None:
        lo, hi = self._bounds[chunk]
        itemsize = self._work.itemsize
        wr = self._right.send(self._work_mr, offset=lo * itemsize, length=(hi - lo) * itemsize,
                              context=("send", self._sends_posted))
        self._sends_posted += 1
        self._wr.add(wr)

    # ---- progress ----
    @property
    def done(self) -> bool:
        """True once every step completed and :attr:`result` holds the sum."""
        return self.result is not None

    def owns(self, completion: Completion) -> bool:
        """True if ``completion`` belongs to this all-reduce."""
        return completion.wr_id in self._wr

    def on_completion(self, completion: Completion) -> None:
        """Advance on one of this all-reduce's completions."""
        self._wr.discard(completion.wr_id)
        if not completion.ok:
            raise TransportError(f"ring all-reduce rank {self._r}: {completion.opcode.name} "
                                 f"failed: {completion.error}")
        n = self._n
        if completion.opcode is Opcode.SEND:
            self._sends_done += 1
        elif completion.opcode is Opcode.RECV:
            step = self._received
            self._received += 1
            if step < n - 1:  # reduce-scatter: add the neighbour's partial sum
                chunk = self._rs_recv_chunk(step)
                lo, hi = self._bounds[chunk]
                self._work[lo:hi] += self._staging[step, :hi - lo]
            else:
                chunk = self._ag_recv_chunk(step - (n - 1))
            if step + 1 < self._steps:  # what we just completed is what we pass on
                self._send_chunk(chunk)
        if self._received == self._steps and self._sends_done == self._steps:
            self._finish()

    def _finish(self) -> None:
        self._work_mr.deregister()
        self._staging_mr.deregister()
        self.result = self._work.reshape(self.shape)


def ring_allreduce(array: np.ndarray, group: RingGroup, timeout: float | None = None
                   ) -> np.ndarray:
    """The element-wise sum of every worker's ``array`` (float32), by ring all-reduce; each
    worker calls it with its own array and group (blocking; ``timeout`` per completion)."""
    job = RingAllreduce(array, group)
    ep = group.endpoint
    while not job.done:
        completion = ep.cq.wait(timeout)
        if job.owns(completion):
            job.on_completion(completion)
    assert job.result is not None
    return job.result


def run_ring(jobs: Sequence[RingAllreduce], sim: Simulation) -> None:
    """Drive several workers' ring all-reduces on one simulation: run its events one at a
    time and hand each worker the completions of its endpoint as soon as there are any
    (only endpoints whose engine did something are polled)."""
    by_address = {tuple(job.group.endpoint.address): job for job in jobs}
    pending = [job for job in jobs if not job.done]
    sim.active.update(by_address)
    while pending:
        active, sim.active = sim.active, set()
        for address in active:
            job = by_address.get(address)
            if job is None or job.done:
                continue
            for completion in job.group.endpoint.cq.poll(256):
                if job.owns(completion):
                    job.on_completion(completion)
        pending = [job for job in pending if not job.done]
        if pending and not sim.active and not sim.loop.step():
            raise TransportError("ring all-reduce stalled: the simulation has nothing left "
                                 "to run")
