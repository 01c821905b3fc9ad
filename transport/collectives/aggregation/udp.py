"""The UDP socket driver of in-network all-reduce: one worker on a real host.

:class:`SwitchGroup` is a worker's membership in an aggregation job on a
switch: a UDP socket bound to the address the switch sends this worker's
results to, the job's service address (where contributions go, UDP port
61440), and the job's shape (workers, window, lanes per packet: the switch
program's ``AGG_LANES``, which the job's setup gives). :meth:`SwitchGroup.allreduce`
runs one all-reduce over the socket with one of two workers (``worker=``):

- ``"c"``: :class:`~netweft.transport.collectives.aggregation.native_worker.
  NativeAggregationWorker`, the worker core and its socket loop in C (``sendmmsg`` and
  ``recvmmsg`` batches, one C call per all-reduce, no Python per packet);
- ``"python"``: :class:`~netweft.transport.collectives.aggregation.worker.AggregationWorker`,
  the reference, driven by this module's loop: it sends what the core returns, reads
  results with a timeout set to the core's next deadline, and hands timeouts to the core.

``"auto"`` (the default) takes C when the engine has it. Both send the same packets
(tests/transport/test_aggregation_native.py). Datagrams that are not well-formed
aggregation packets are counted and dropped.

With a ``fallback`` :class:`~netweft.transport.collectives.ring_allreduce.RingGroup`
(the same workers over netweft's transport), a job the controller refused
(``admitted=False``) all-reduces by ring, and a call whose switch stops
answering (no result for ``stall_timeout`` seconds: a restart, the job
removed) is done again by ring. Every worker of the job stalls in the same call
(no slot completes without all of them), so they fall back together; the next
call tries the switch again.
"""

from __future__ import annotations

import select
import socket
import time

import numpy as np

from netweft.transport.collectives.aggregation.codec import (
    AGG_UDP_PORT,
    decode_payload,
    encode_payload,
)
from netweft.transport.collectives.aggregation.layer import AGG_LANES, check_lanes
from netweft.transport.collectives.aggregation.native_worker import (
    NativeAggregationWorker,
    native_available,
)
from netweft.transport.collectives.aggregation.worker import AggregationJob, AggregationWorker
from netweft.transport.collectives.ring_allreduce import RingGroup, ring_allreduce
from netweft.transport.errors import CompletionTimeout, InvalidArgumentError


class SwitchGroup:
    """A worker's membership in an aggregation job on a switch (real UDP sockets).

    ``service`` is the job's service address (the IPv4 address the aggregating switch
    claims for the job); ``bind`` the (ip, port) this worker's results are sent to, as
    configured on the switch. The group keeps the job's block counter, so consecutive
    all-reduces on one group are safe. ``worker`` picks the worker (``"auto"``, ``"c"``,
    ``"python"``; see the module's docstring); :attr:`worker` says which one runs."""

    def __init__(self, service: str, job_id: int, worker_id: int, workers: int, *,
                 bind: tuple[str, int], window: int = 32, timeout: float = 0.02,
                 service_port: int = AGG_UDP_PORT, lanes: int = AGG_LANES,
                 fallback: RingGroup | None = None, admitted: bool = True,
                 stall_timeout: float = 2.0, worker: str = "auto") -> None:
        if worker not in ("auto", "c", "python"):
            raise InvalidArgumentError(f"worker must be auto, c or python, got {worker!r}")
        if worker == "c" and not native_available():
            raise InvalidArgumentError("worker='c': this build of the C engine has no "
                                       "aggregation worker")
        self.worker = "python" if worker == "python" or not native_available() else "c"
        self.service = (service, service_port)
        self.lanes = check_lanes(lanes)
        if not admitted and fallback is None:
            raise InvalidArgumentError("a job the switch refused needs a fallback RingGroup")
        self.fallback = fallback
        self.admitted = admitted
        stall_ns = int(stall_timeout * 1e9) if fallback is not None else 0
        self._template = AggregationJob(job_id, worker_id, workers, lanes, window,
                                        timeout_ns=int(timeout * 1e9),
                                        max_timeout_ns=int(max(timeout * 32, 1.0) * 1e9),
                                        stall_timeout_ns=stall_ns)
        self._next_block = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            self.sock.bind(bind)
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.stats = {"malformed": 0, "sent": 0, "received": 0, "retransmits": 0,
                      "ring": 0, "fallbacks": 0}
        self.io_stats: dict[str, int] = {}
        """The C socket loop's counters of the last all-reduce (system calls, waits)."""

    @property
    def address(self) -> tuple[str, int]:
        """The (ip, port) this worker's results come to."""
        return self.sock.getsockname()

    @property
    def size(self) -> int:
        """Number of workers in the job."""
        return self._template.workers

    def _send(self, packets: list) -> None:
        for packet in packets:
            self.sock.sendto(encode_payload(packet), self.service)
            self.stats["sent"] += 1

    def allreduce(self, array: np.ndarray, deadline: float | None = 60.0) -> np.ndarray:
        """The sum of every worker's ``array`` (float32), summed by the switch (or by ring
        over the fallback group: refused job, switch not answering); raises
        :class:`CompletionTimeout` if it is not done within ``deadline`` seconds."""
        if not self.admitted:
            self.stats["ring"] += 1
            return ring_allreduce(array, self.fallback, timeout=deadline)
        result = self._in_network(array, deadline)
        if result is None:
            self.stats["fallbacks"] += 1
            self.stats["ring"] += 1
            return ring_allreduce(array, self.fallback, timeout=deadline)
        return result

    def _in_network(self, array: np.ndarray, deadline: float | None) -> np.ndarray | None:
        """The switch's sum, or None if the worker stalled (only with a fallback)."""
        job = AggregationJob(**{**self._template.__dict__, "first_block": self._next_block})
        if self.worker == "c":
            return self._in_network_native(array, job, deadline)
        worker = AggregationWorker(array, job)
        self._next_block = worker.end_block
        start = time.monotonic()
        clock = lambda: int((time.monotonic() - start) * 1e9)  # noqa: E731
        self._send(worker.start(clock()))
        while not worker.done:
            if worker.stalled:
                return None
            now = clock()
            if deadline is not None and now > deadline * 1e9:
                raise CompletionTimeout(f"in-network all-reduce (job {job.job_id}, worker "
                                        f"{job.worker_id}) not done after {deadline} s: is the "
                                        f"switch configured for this job and reachable at "
                                        f"{self.service[0]}?")
            due = worker.next_deadline()
            wait = 0.0 if due is None else max(0.0, (due - now) / 1e9)
            readable, _, _ = select.select([self.sock], [], [], min(wait, 0.5))
            if readable:
                self._drain(worker, clock)
            elif due is not None and clock() >= due:
                sent = worker.on_time(clock())
                self.stats["retransmits"] += len(sent)
                self._send(sent)
        assert worker.result is not None
        return worker.result

    def _in_network_native(self, array: np.ndarray, job: AggregationJob,
                           deadline: float | None) -> np.ndarray | None:
        worker = NativeAggregationWorker(array, job)
        self._next_block = worker.end_block
        try:
            worker.run_socket(self.sock, self.service, deadline)
        finally:
            core, self.io_stats = worker.stats, worker.io_stats
            for name, value in (("retransmits", core["retransmits"]),
                                ("malformed", core["malformed"]),
                                ("sent", self.io_stats["sent"]),
                                ("received", self.io_stats["received"])):
                self.stats[name] += value
        return None if worker.stalled else worker.result

    def _drain(self, worker: AggregationWorker, clock) -> None:
        while True:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return
            self.stats["received"] += 1
            decoded = decode_payload(data, self.lanes)
            if decoded is None:
                self.stats["malformed"] += 1
                continue
            self._send(worker.on_packet(decoded[0], clock()))

    def close(self) -> None:
        """Close the socket."""
        self.sock.close()

    def __enter__(self) -> SwitchGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

