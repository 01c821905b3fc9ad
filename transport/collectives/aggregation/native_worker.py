"""The in-network all-reduce worker in C: the worker core and its socket loop in
``nic_offload`` (``src/collectives/aggregation_worker.c``, ``src/io/aggregation_socket.c``).

:class:`NativeAggregationWorker` has the interface of :class:`~netweft.transport.
collectives.aggregation.worker.AggregationWorker` (the reference: the same protocol,
packet for packet) plus :meth:`~NativeAggregationWorker.run_socket`, which runs a
whole all-reduce over a UDP socket in one C call (``sendmmsg``/``recvmmsg`` batches,
no Python per packet, no GIL held). The arithmetic is :mod:`~netweft.transport.
collectives.aggregation.quantization`'s, bit for bit, in C
(``src/collectives/aggregation_quantization.c``): local exponents before the call,
one block quantized per packet when its shared exponent comes back from the switch,
the sums dequantized after (without numpy's float64 temporaries, whose fresh pages
cost a worker a quarter of its CPU).

:func:`native_available` says whether the C engine offers the worker (a build of
netweft without it falls back to the Python worker).
"""

from __future__ import annotations

import os
import socket

import numpy as np

from netweft.transport.collectives.aggregation.codec import decode_payload, encode_payload
from netweft.transport.collectives.aggregation.quantization import EXPONENT_MIN, BlockQuantizer
from netweft.transport.collectives.aggregation.worker import AggregationJob, AggregationPacket
from netweft.transport.errors import CompletionTimeout, InvalidArgumentError

try:
    from netweft.nic_offload import ffi, lib

    _HAVE_NATIVE = hasattr(lib, "nw_agg_run_socket")
except ImportError:  # pragma: no cover - the engine is built by the install
    ffi = lib = None
    _HAVE_NATIVE = False

__all__ = ["NativeAggregationWorker", "native_available", "IO_COUNTERS"]
IO_COUNTERS = ("send_calls", "recv_calls", "waits", "sent", "received", "send_retries")
"""The socket loop's counters: system calls, waits in ppoll, datagrams."""


def native_available() -> bool:
    """True when the C engine has the aggregation worker."""
    return _HAVE_NATIVE


def _ipv4(address: str) -> int:
    return int.from_bytes(socket.inet_aton(address), "big")


class NativeAggregationWorker:
    """A worker's all-reduce of one float32 array through the switch, in C.

    Sans-IO like the reference (:meth:`start`, :meth:`on_packet`/:meth:`on_payload`,
    :meth:`on_time`, :meth:`next_deadline`, :attr:`done`, :attr:`result`), or driven
    over a socket by :meth:`run_socket`."""

    def __init__(self, array: np.ndarray, job: AggregationJob) -> None:
        if not _HAVE_NATIVE:
            raise RuntimeError("this build of netweft's C engine has no aggregation worker")
        array = np.asarray(array)
        if array.dtype != np.float32:
            raise InvalidArgumentError(f"allreduce takes float32 arrays, got {array.dtype}")
        self.job = job
        self.shape = array.shape
        self.length = array.size
        self.quantizer = BlockQuantizer(job.values_per_packet, job.workers)
        self._blocks = np.ascontiguousarray(self.quantizer.as_blocks(array))
        self.chunks = self._blocks.shape[0]
        self._local_exp = np.empty(self.chunks, dtype=np.int16)
        if lib.nw_agg_local_exponents(ffi.from_buffer("float[]", self._blocks), self.chunks,
                                      job.values_per_packet,
                                      ffi.from_buffer("int16_t[]", self._local_exp)) < 0:
            raise ValueError("cannot quantize NaN or infinite values")
        self.exponents = np.full(self.chunks, EXPONENT_MIN, dtype=np.int16)
        self.sums = np.zeros((self.chunks, job.values_per_packet), dtype=np.int32)
        self.end_block = job.first_block + (job.window + self.chunks if self.chunks else 0)
        self._result: np.ndarray | None = None
        self.io_stats: dict[str, int] = dict.fromkeys(IO_COUNTERS, 0)
        if job.job_id > 0xFFFF or job.worker_id > 0xFF or job.window > lib.NW_AGG_MAX_WINDOW \
                or job.values_per_packet > lib.NW_AGG_MAX_LANES:
            raise InvalidArgumentError(f"a job the aggregation header cannot carry: {job}")
        cjob = ffi.new("nw_agg_job_t *", {
            "first_block": job.first_block, "timeout_ns": job.timeout_ns,
            "max_timeout_ns": job.max_timeout_ns, "stall_timeout_ns": job.stall_timeout_ns,
            "job_id": job.job_id, "worker_id": job.worker_id, "workers": job.workers,
            "lanes": job.values_per_packet, "window": job.window,
            "value_bits": self.quantizer.bits})
        out = ffi.new("nw_agg_worker_t **")
        self._buffers = [ffi.from_buffer("float[]", self._blocks),
                         ffi.from_buffer("int16_t[]", self._local_exp),
                         ffi.from_buffer("int32_t[]", self.sums),
                         ffi.from_buffer("int16_t[]", self.exponents)]
        rc = lib.nw_agg_worker_new(cjob, *self._buffers, self.chunks, out)
        if rc < 0:
            raise InvalidArgumentError(f"the C aggregation worker refused {job} (code {rc})")
        self._worker = ffi.gc(out[0], lib.nw_agg_worker_free)
        self.packet_len = lib.nw_agg_packet_len(self._worker)

    # ---- the sans-IO interface (AggregationWorker's) ----
    def _check(self, rc: int) -> int:
        if rc == lib.NW_ERANGE:
            raise ValueError("an exponent is below the data's own exponent: quantize with "
                             "the shared exponents (the maximum over the workers)")
        if rc < 0:
            raise RuntimeError(f"the C aggregation worker failed (code {rc})")
        return rc

    def take_payloads(self) -> list[bytes]:
        """The UDP payloads the last events queued (and empties the queue)."""
        out = [bytes(ffi.buffer(lib.nw_agg_tx_packet(self._worker, i), self.packet_len))
               for i in range(lib.nw_agg_tx_count(self._worker))]
        lib.nw_agg_tx_clear(self._worker)
        return out

    def _packets(self, rc: int) -> list[AggregationPacket]:
        self._check(rc)
        lanes = self.job.values_per_packet
        return [decode_payload(p, lanes)[0] for p in self.take_payloads()]

    def start(self, now_ns: int) -> list[AggregationPacket]:
        """The first packet of every slot (exponent-only rounds)."""
        return self._packets(lib.nw_agg_start(self._worker, now_ns))

    def on_payload(self, payload: bytes, now_ns: int) -> int:
        """Feed one UDP payload from the switch; returns the number of packets queued
        (read them with :meth:`take_payloads`). Malformed payloads are counted."""
        return self._check(lib.nw_agg_on_payload(self._worker, payload, len(payload), now_ns))

    def on_packet(self, packet: AggregationPacket, now_ns: int) -> list[AggregationPacket]:
        """A decoded result from the switch (the reference's interface)."""
        return self._packets(self.on_payload(encode_payload(packet, result=True), now_ns))

    def on_time(self, now_ns: int) -> list[AggregationPacket]:
        """Retransmissions due by ``now_ns`` (and the stall timeout)."""
        return self._packets(lib.nw_agg_on_time(self._worker, now_ns))

    def next_deadline(self) -> int | None:
        """When :meth:`on_time` must run next (nanoseconds), or None."""
        due = lib.nw_agg_next_deadline(self._worker)
        return None if due < 0 else due

    @property
    def stalled(self) -> bool:
        """True once no result came for ``job.stall_timeout_ns``."""
        return lib.nw_agg_state(self._worker) == lib.NW_AGG_STALLED

    @property
    def done(self) -> bool:
        """True once every chunk's result arrived."""
        return lib.nw_agg_state(self._worker) == lib.NW_AGG_DONE

    @property
    def result(self) -> np.ndarray | None:
        """The sum (float32, the input's shape) once :attr:`done`, else None."""
        if self._result is None and self.done:
            out = np.empty(self.length, dtype=np.float32)
            lib.nw_agg_dequantize(self._buffers[2], self._buffers[3], self.chunks,
                                  self.job.values_per_packet, self.quantizer.bits, self.length,
                                  ffi.from_buffer("float[]", out))
            self._result = out.reshape(self.shape)
        return self._result

    @property
    def rto_ns(self) -> int:
        """The timeout a new send gets (RFC 6298 over result round trips)."""
        return lib.nw_agg_rto_ns(self._worker)

    @property
    def stats(self) -> dict[str, int]:
        """sent, retransmits, results, ignored (the reference's) and malformed."""
        s = ffi.new("nw_agg_stats_t *")
        lib.nw_agg_stats_get(self._worker, s)
        return {"sent": s.sent, "retransmits": s.retransmits, "results": s.results,
                "ignored": s.ignored, "malformed": s.malformed}

    # ---- the socket driver ----
    def run_socket(self, sock: socket.socket, service: tuple[str, int],
                   deadline: float | None) -> dict[str, int]:
        """The whole all-reduce over ``sock`` (bound where the switch sends this worker's
        results) to the job's ``service`` address, in one C call (one more after each
        signal Python handles); returns the loop's counters (also :attr:`io_stats`, kept
        when it raises). Check :attr:`done` or :attr:`stalled` after it; raises
        :class:`CompletionTimeout` after ``deadline`` seconds, ``OSError`` when a system
        call fails, ``ValueError`` for exponents the data does not fit."""
        stats = ffi.new("nw_agg_io_stats_t *")
        t0 = lib.nw_agg_monotonic_ns()
        deadline_ns = 0 if deadline is None else t0 + max(1, int(deadline * 1e9))
        rc = lib.NW_AGG_INTERRUPTED
        try:
            while rc == lib.NW_AGG_INTERRUPTED:  # Python runs signal handlers between calls
                rc = lib.nw_agg_run_socket(self._worker, sock.fileno(), _ipv4(service[0]),
                                           service[1], t0, deadline_ns, stats)
        finally:
            self.io_stats = {name: getattr(stats, name) for name in IO_COUNTERS}
        if rc == lib.NW_ETIMEDOUT:
            raise CompletionTimeout(f"in-network all-reduce (job {self.job.job_id}, worker "
                                    f"{self.job.worker_id}) not done after {deadline} s: is "
                                    f"the switch configured for this job and reachable at "
                                    f"{service[0]}?")
        if rc == lib.NW_ESYS:
            raise OSError(ffi.errno, f"the aggregation worker's socket loop: "
                                     f"{os.strerror(ffi.errno)}")
        self._check(rc)
        return self.io_stats
