"""One worker of an in-network all-reduce: the sans-IO core.

The switch holds a pool of aggregation slots; each packet a worker sends
names a slot of its job, a pool (version) bit, the worker's id, an exponent
and ``K`` 32-bit integers. The switch adds the integers into the slot, keeps
the maximum of the exponents, rejects a worker's second contribution (its
bit in the slot's worker bitmap), and once every worker contributed,
multicasts the slot's sums and exponent to the job's workers. A worker that
retransmits to a slot that is already complete gets the result again.

This core decides what to send and what a received result means; a driver
moves its packets (UDP sockets, or the embedded switch in virtual time) and
its clock:

- **Window.** The worker uses ``window`` slots at once. Slot ``j`` carries
  chunks ``j, j + window, j + 2 window, ...`` (a chunk is ``K`` values of the
  array), one *round* each; the pool bit alternates from round to round, so
  the switch keeps the previous round's result in the other pool (its shadow
  copy) while the next one fills. A worker moves a slot on only when it holds
  that slot's result, hence every worker is at most one round apart on a
  slot and two pools suffice: a retransmission of the previous round finds
  its result still in the shadow pool.
- **Exponents one round ahead.** Quantization (:mod:`~netweft.transport.collectives.
  aggregation.quantization`) needs every worker to use the same exponent for a chunk. A
  packet of round ``k`` on slot ``j`` carries chunk ``k``'s integers and, in
  its exponent field, the worker's *local* exponent of the chunk the slot
  carries in round ``k + 1``; the result of round ``k`` brings back the
  maximum over the workers, which is the shared exponent of round ``k + 1``.
  A first round per slot carries zeros and only the exponent of its first
  chunk (one extra round trip per all-reduce, ``window`` packets).
- **Every slot, every call.** All ``window`` slots send their first round even
  when the array has fewer chunks than that (a slot without a chunk is done
  after it): a call then uses every block of its range, so each switch slot
  sees consecutive blocks and its pools alternate from one call to the next.
  A slot skipped in a call would next meet a pool it left complete two laps
  before, with every worker's bit still set, and the switch would answer the
  new round's contribution with that old result (under the new block number).
  An empty array uses no blocks at all.
- **Loss.** Each outstanding slot has a deadline; when it passes, the same
  packet goes out again (same pool bit), and the deadline doubles up to
  ``max_timeout_ns``. A slot's first deadline is the retransmission timeout of
  RFC 6298 (smoothed RTT plus four deviations, sampled on results of packets
  sent once: Karn's rule), never below ``timeout_ns``: a software switch that
  takes longer than ``timeout_ns`` to turn a window round would otherwise see
  every slot time out on every round (a retransmission storm). Lost contributions, lost results and duplicates are all
  repaired this way: the switch's bitmap makes a repeated contribution
  harmless, and a result whose slot, pool, block or job is not what the
  worker waits for is counted and ignored.
- **Stale copies.** A network that duplicates *and* delays packets can deliver
  a copy of a slot's contribution two rounds late, when its pool is being
  reused: the switch must not take it for the new round. Block numbers only
  grow on a slot (and across all-reduces of a job), so the switch drops a
  contribution older than its pool's block (docs/aggregation.md). Without that
  rule the fault-injection tests deadlock: the poisoned round's result
  carries an old block, which every worker ignores.

Packets are :class:`AggregationPacket` objects; drivers encode them with the
wire codec of :mod:`netweft.transport.collectives.aggregation.codec`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from netweft.transport.collectives.aggregation.quantization import EXPONENT_MIN, BlockQuantizer
from netweft.transport.errors import InvalidArgumentError


@dataclass(frozen=True)
class AggregationJob:
    """What one worker needs to know about its job: the switch-side configuration
    (job id, the number of workers, the vector length ``K``; ``window`` at most the
    job's slot range on the switch) and its own worker id."""

    job_id: int
    worker_id: int
    workers: int
    values_per_packet: int
    window: int
    first_block: int = 0
    timeout_ns: int = 2_000_000
    max_timeout_ns: int = 64_000_000
    stall_timeout_ns: int = 0
    """Give up on the switch after this long without a result (0: never): the worker
    turns :attr:`AggregationWorker.stalled` and its driver falls back to the ring."""

    def __post_init__(self) -> None:
        for name in ("job_id", "worker_id", "workers", "values_per_packet", "window",
                     "first_block", "timeout_ns", "max_timeout_ns", "stall_timeout_ns"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidArgumentError(f"{name} must be an int >= 0, got {value!r}")
        if self.workers < 1 or not 0 <= self.worker_id < self.workers:
            raise InvalidArgumentError(f"worker_id must be in 0..workers-1 (workers="
                                       f"{self.workers}), got {self.worker_id}")
        if self.values_per_packet < 1 or self.window < 1 or self.timeout_ns < 1:
            raise InvalidArgumentError("values_per_packet, window and timeout_ns must be >= 1")


@dataclass
class AggregationPacket:
    """One aggregation packet as the worker and switch see it (before wire encoding).

    ``block`` numbers the packet's round (see :class:`AggregationWorker`), which the
    switch echoes and uses to tell a stale copy from a new round; ``values`` are
    int32. From a worker, the values are its contribution; from the switch, the
    slot's sums and ``exponent`` the maximum of the workers' exponents."""

    job_id: int
    slot: int
    pool: int
    worker_id: int
    block: int
    exponent: int
    values: np.ndarray = field(repr=False)
    retransmit: bool = False


@dataclass
class _Slot:
    index: int  # 0..window-1 within the job
    round: int = -1  # -1: the exponent-only first round
    packet: AggregationPacket | None = None
    deadline_ns: int = 0
    timeout_ns: int = 0
    sent_ns: int = 0
    done: bool = False


class AggregationWorker:
    """A worker's all-reduce of one float32 array through the switch (sans-IO).

    Call :meth:`start` once, then :meth:`on_packet` for every packet received and
    :meth:`on_time` when :meth:`next_deadline` passes; each returns the packets to
    send. :attr:`done` turns True when :attr:`result` holds the sum.

    Block numbers follow docs/aggregation.md (block ``b`` uses slot ``b mod window``,
    pool ``(b div window) mod 2``), counted from ``job.first_block``: the exponent-only
    round of slot ``j`` is block ``first_block + j``, chunk ``c`` of the array is block
    ``first_block + window + c``. They only grow within a job: the next all-reduce of
    the job starts at :attr:`end_block` (no gap: see "Every slot, every call")."""

    def __init__(self, array: np.ndarray, job: AggregationJob) -> None:
        array = np.asarray(array)
        if array.dtype != np.float32:
            raise InvalidArgumentError(f"allreduce takes float32 arrays, got {array.dtype}")
        self.job = job
        self.shape = array.shape
        self.length = array.size
        self.quantizer = BlockQuantizer(job.values_per_packet, job.workers)
        self._blocks = self.quantizer.as_blocks(array)  # (chunks, K) float32
        self._bits = self.quantizer.bits
        self._limit = float(1 << self._bits)
        self.chunks = self._blocks.shape[0]
        self._local_exp = self.quantizer.local_exponents(array)
        self.exponents = np.full(self.chunks, EXPONENT_MIN, dtype=np.int16)  # shared ones
        self.sums = np.zeros((self.chunks, job.values_per_packet), dtype=np.int32)
        self.result: np.ndarray | None = None
        self.stats = {"sent": 0, "retransmits": 0, "results": 0, "ignored": 0}
        self._window = job.window
        self._slots = [_Slot(j) for j in range(job.window if self.chunks else 1)]
        self.end_block = job.first_block + (job.window + self.chunks if self.chunks else 0)
        self._open = 0  # slots not done
        self._zeros = np.zeros(job.values_per_packet, dtype=np.int32)
        self.srtt_ns: int | None = None  # RFC 6298 estimator over result round trips
        self.rttvar_ns = 0
        self.stalled = False
        """True once no result came for ``job.stall_timeout_ns``: the switch stopped
        answering (restarted, or lost the job); the worker sends nothing more."""
        self._progress_ns = 0
        self.rto_ns = job.timeout_ns
        """A slot's first timeout: RFC 6298's SRTT + 4 RTTVAR within [``timeout_ns``,
        ``max_timeout_ns``]; ``timeout_ns`` before any sample, and a timeout's backed-off
        value carries to new sends until the next sample (RFC 6298, 5.5-5.7)."""

    # ---- retransmission timeout ----
    def _clamp(self, timeout_ns: int) -> int:
        return max(self.job.timeout_ns, min(timeout_ns, self.job.max_timeout_ns))

    def _sample_rtt(self, rtt_ns: int) -> None:
        if self.srtt_ns is None:
            self.srtt_ns, self.rttvar_ns = rtt_ns, rtt_ns // 2
        else:
            self.rttvar_ns += (abs(self.srtt_ns - rtt_ns) - self.rttvar_ns) // 4
            self.srtt_ns += (rtt_ns - self.srtt_ns) // 8
        self.rto_ns = self._clamp(self.srtt_ns + 4 * self.rttvar_ns)

    # ---- chunk bookkeeping ----
    def _chunk(self, slot: _Slot, round_: int) -> int:
        return slot.index + round_ * self._window

    def _next_exponent(self, slot: _Slot, round_: int) -> int:
        nxt = self._chunk(slot, round_ + 1)
        return int(self._local_exp[nxt]) if nxt < self.chunks else EXPONENT_MIN

    def _packet(self, slot: _Slot) -> AggregationPacket:
        k = slot.round
        if k < 0:
            values = self._zeros
        else:
            values = self._quantize_chunk(self._chunk(slot, k))
        block = self.job.first_block + self._chunk(slot, k + 1)
        return AggregationPacket(self.job.job_id, block % self._window,
                                 (block // self._window) & 1, self.job.worker_id,
                                 block & 0xFFFFFFFF,
                                 self._next_exponent(slot, k), values)

    def _quantize_chunk(self, c: int) -> np.ndarray:
        """Chunk ``c`` on its shared exponent: :meth:`BlockQuantizer.quantize` of one block
        (the same arithmetic, so the same integers) without its per-call reshaping and
        checks of shapes, which cost more than the arithmetic at one call per packet."""
        scale = math.ldexp(1.0, self._bits - int(self.exponents[c]))
        q = np.rint(self._blocks[c].astype(np.float64) * scale)
        if np.abs(q).max() > self._limit:
            raise ValueError("an exponent is below the data's own exponent: quantize with "
                             "the shared exponents (the maximum over the workers)")
        return q.astype(np.int32)

    def _send(self, slot: _Slot, now_ns: int) -> AggregationPacket:
        slot.packet = self._packet(slot)
        slot.timeout_ns = self.rto_ns
        slot.sent_ns = now_ns
        slot.deadline_ns = now_ns + slot.timeout_ns
        self.stats["sent"] += 1
        return slot.packet

    # ---- the sans-IO interface ----
    @property
    def done(self) -> bool:
        """True once every chunk's result arrived and :attr:`result` holds the sum."""
        return self.result is not None

    def start(self, now_ns: int) -> list[AggregationPacket]:
        """The first packet of every slot (exponent-only rounds)."""
        if self.chunks == 0:
            self.result = np.zeros(self.shape, dtype=np.float32)
            return []
        self._open = len(self._slots)
        self._progress_ns = now_ns
        return [self._send(slot, now_ns) for slot in self._slots]

    def next_deadline(self) -> int | None:
        """When :meth:`on_time` must run next (nanoseconds), or None."""
        if self.stalled:
            return None
        pending = [s.deadline_ns for s in self._slots if not s.done and s.packet is not None]
        if pending and self.job.stall_timeout_ns:
            pending.append(self._progress_ns + self.job.stall_timeout_ns)
        return min(pending) if pending else None

    def on_time(self, now_ns: int) -> list[AggregationPacket]:
        """Retransmit every outstanding slot whose deadline passed (backing off); turn
        :attr:`stalled` after ``stall_timeout_ns`` without a result."""
        if self.stalled or self.done:
            return []
        if self.job.stall_timeout_ns and now_ns - self._progress_ns >= self.job.stall_timeout_ns:
            self.stalled = True
            return []
        out = []
        for slot in self._slots:
            if slot.done or slot.packet is None or slot.deadline_ns > now_ns:
                continue
            slot.timeout_ns = self._clamp(slot.timeout_ns * 2)
            self.rto_ns = max(self.rto_ns, slot.timeout_ns)
            slot.deadline_ns = now_ns + slot.timeout_ns
            self.stats["retransmits"] += 1
            self.stats["sent"] += 1
            slot.packet.retransmit = True
            out.append(slot.packet)
        return out

    def on_packet(self, packet: AggregationPacket, now_ns: int) -> list[AggregationPacket]:
        """A result from the switch: take it if it is the one a slot waits for, then send
        that slot's next round; anything else (duplicates, other jobs) is ignored."""
        index = (packet.slot - self.job.first_block) % self._window
        if self.stalled or packet.job_id != self.job.job_id or not 0 <= index < len(self._slots):
            self.stats["ignored"] += 1
            return []
        slot = self._slots[index]
        if (slot.done or slot.packet is None or packet.pool != slot.packet.pool
                or packet.block != slot.packet.block):
            self.stats["ignored"] += 1
            return []
        self.stats["results"] += 1
        self._progress_ns = now_ns
        if not slot.packet.retransmit:
            self._sample_rtt(max(now_ns - slot.sent_ns, 0))
        k = slot.round
        if k >= 0:
            c = self._chunk(slot, k)
            self.sums[c] = packet.values
        nxt = self._chunk(slot, k + 1)
        if nxt < self.chunks:
            self.exponents[nxt] = packet.exponent
            slot.round = k + 1
            return [self._send(slot, now_ns)]
        slot.done = True
        slot.packet = None
        self._open -= 1
        if self._open == 0:
            self.result = self.quantizer.dequantize(self.sums, self.exponents,
                                                    self.length).reshape(self.shape)
        return []
