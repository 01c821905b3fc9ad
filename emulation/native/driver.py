"""Runs packets through a native pipeline with BMv2 ``simple_switch``'s flow.

:class:`NativeDriver` has the interface of
:class:`~netweft.emulation.v1model.simple_switch.V1ModelDriver` (``process``,
``ingress``, ``egress``, ``stats``, ``clock``): the C code runs each pass
(parser to ingress, egress to deparser) and this driver does what lies
between, in Python and in the same order: drop accounting, multicast through
the switch's replication engine, the queued packets of a traffic manager.
:meth:`NativeDriver.process_batch` runs many frames in one C call (the
in-process fast path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from netweft.emulation.v1model.context import LOG
from netweft.emulation.v1model.replication import PacketReplicationEngine
from netweft.emulation.v1model.simple_switch import QueuedPacket, QueueMetadata

NORMAL, REPLICATION = 0, 5
F_DROP, F_PARSER_ERROR, F_TRUNCATE = 1, 2, 16
OK, ERR_ASSERT, ERR_NOSPACE, NEEDS_DRIVER = 0, 1, 2, 16
NO_TIMESTAMP = (1 << 64) - 1


@dataclass
class _Priority:
    """What a traffic manager reads of a queued packet's standard metadata."""

    priority: int


@dataclass
class NativePacket:
    """One packet between ingress and egress: its C state and frame buffer."""

    state: Any
    data: Any
    length: int
    flags: int
    truncate_len: int
    parser_error: int


class NativeDriver:
    """Drives one native pipeline (see the module docstring)."""

    def __init__(self, library: Any, pipeline: Any, pre: PacketReplicationEngine,
                 clock: Callable[[], int]) -> None:
        self.ffi, self.lib = library.ffi, library.lib
        self.pipeline = pipeline
        self.pre = pre
        self.clock = clock
        self.stats = {"received": 0, "sent": 0, "dropped": 0, "drop_program": 0,
                      "drop_parser_error": 0, "pass_limit": 0, "assert_failed": 0,
                      "internal_error": 0}
        self.state_size = int(self.lib.nw_pipeline_state_size())
        self.headroom = int(self.lib.nw_pipeline_emit_max())
        self._pkt = self.ffi.new("nw_pkt_t *")
        self._state = self.ffi.new("uint8_t[]", self.state_size)
        self._cap = 0
        self._buf: Any = None

    # ------------------------------------------------------------------ buffers

    def _frame_buffer(self, n: int) -> Any:
        """The shared buffer for a frame of ``n`` bytes (with room for added headers)."""
        need = n + self.headroom
        if need > self._cap:
            self._cap = max(need, 2048)
            self._buf = self.ffi.new("uint8_t[]", self._cap)
        return self._buf

    def _load(self, port: int, data: bytes) -> Any:
        pkt = self._pkt
        buf = self._frame_buffer(len(data))
        self.ffi.memmove(buf, data, len(data))
        pkt.data = buf
        pkt.len = len(data)
        pkt.cap = self._cap
        pkt.ingress_port = port
        pkt.instance_type = NORMAL
        pkt.flags = 0
        pkt.state = self._state
        return pkt

    # ------------------------------------------------------------------ entry

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """All packets out for one packet in (queues bypassed)."""
        self.stats["received"] += 1
        outputs: list[tuple[int, bytes]] = []
        pkt = self._load(port, data)
        if not self._ingress(pkt):
            return outputs
        if pkt.mcast_grp:
            for copy in self._copies(pkt, int(pkt.mcast_grp)):
                self._egress_copy(copy, outputs, None)
        else:
            pkt.egress_port = pkt.egress_spec
            pkt.instance_type = NORMAL
            self._egress(pkt, outputs, None)
        self.stats["sent"] += len(outputs)
        return outputs

    def process_batch(self, port: int, frames: Sequence[bytes], now_ns: int = 0,
                      step_ns: int = 1000) -> list[list[tuple[int, bytes]]]:
        """Many frames in one C call (time ``now_ns`` + i * ``step_ns``).

        Unicast and dropped packets finish in C; a packet that needs this driver
        (multicast) is finished here.  Returns each frame's outputs.
        """
        n = len(frames)
        ffi, lib = self.ffi, self.lib
        pkts = ffi.new("nw_pkt_t[]", n)
        rcs = ffi.new("int32_t[]", n)
        states = ffi.new("uint8_t[]", self.state_size * n)
        keep = []
        for i, frame in enumerate(frames):
            cap = len(frame) + self.headroom
            buf = ffi.new("uint8_t[]", cap)
            ffi.memmove(buf, frame, len(frame))
            keep.append(buf)
            p = pkts[i]
            p.data, p.len, p.cap = buf, len(frame), cap
            p.ingress_port, p.instance_type = port, NORMAL
            p.state = states + i * self.state_size
        lib.nw_process_batch(self.pipeline, pkts, rcs, n, now_ns, step_ns)
        results = []
        for i in range(n):
            self.stats["received"] += 1
            results.append(self._finish(pkts[i], int(rcs[i])))
        return results

    def _finish(self, pkt: Any, rc: int) -> list[tuple[int, bytes]]:
        outputs: list[tuple[int, bytes]] = []
        if rc == ERR_ASSERT:
            self._assert_failed()
        elif rc == NEEDS_DRIVER:
            for copy in self._copies(pkt, int(pkt.mcast_grp)):
                self._egress_copy(copy, outputs, None)
        elif rc != OK:
            self._internal_error(rc)
        elif pkt.flags & F_DROP:
            self._count_drop(pkt)
        else:
            outputs.append((int(pkt.egress_port), bytes(self.ffi.buffer(pkt.data, pkt.len))))
        self.stats["sent"] += len(outputs)
        return outputs

    def ingress(self, port: int, data: bytes) -> list[QueuedPacket]:
        """The ingress half: the packets bound for egress queues."""
        self.stats["received"] += 1
        pkt = self._load(port, data)
        if not self._ingress(pkt):
            return []
        if pkt.mcast_grp:
            return self._copies(pkt, int(pkt.mcast_grp))
        return [self._queued(pkt, int(pkt.egress_spec), NORMAL, 0)]

    def egress(self, packet: QueuedPacket, queue: QueueMetadata | None = None
               ) -> tuple[list[tuple[int, bytes]], list[QueuedPacket]]:
        """The egress half for a dequeued packet; nothing is queued again (no
        recirculation or clones in the programs the native back end covers)."""
        outputs: list[tuple[int, bytes]] = []
        self._egress_copy(packet, outputs, queue)
        self.stats["sent"] += len(outputs)
        return outputs, []

    # ------------------------------------------------------------------ passes

    def _ingress(self, pkt: Any) -> bool:
        rc = self.lib.nw_ingress(self.pipeline, pkt, self.clock() * 1000)
        if rc == ERR_ASSERT:
            self._assert_failed()
            return False
        if rc != OK:
            self._internal_error(rc)
            return False
        if pkt.flags & F_DROP:
            self._count_drop(pkt)
            return False
        return True

    def _queued(self, pkt: Any, port: int, instance_type: int, rid: int) -> QueuedPacket:
        """A packet for the queues: its own copy of the state and the frame."""
        ffi = self.ffi
        state = ffi.new("uint8_t[]", self.state_size)
        self.lib.nw_state_copy(state, pkt.state)
        data = ffi.new("uint8_t[]", int(pkt.len) + self.headroom)
        ffi.memmove(data, pkt.data, pkt.len)
        flags = int(pkt.flags) & (F_PARSER_ERROR | (F_TRUNCATE if instance_type == NORMAL else 0))
        held = NativePacket(state, data, int(pkt.len), flags, int(pkt.truncate_len),
                            int(pkt.parser_error))
        truncate = int(pkt.truncate_len) if flags & F_TRUNCATE else None
        q = QueuedPacket(held, None, _Priority(int(pkt.priority)), b"", port,
                         int(pkt.ingress_len), truncate, 1)
        q.meta = (instance_type, rid)
        return q

    def _copies(self, pkt: Any, group: int) -> list[QueuedPacket]:
        # each copy is a new packet whose truncation starts unset (as in BMv2)
        return [self._queued(pkt, port, REPLICATION, rid) for port, rid in
                self.pre.replicate(group)]

    def _egress_copy(self, q: QueuedPacket, outputs: list[tuple[int, bytes]],
                     queue: QueueMetadata | None) -> None:
        held: NativePacket = q.hdr
        instance_type, rid = q.meta
        pkt = self._pkt
        pkt.data = held.data
        pkt.len = held.length
        pkt.cap = held.length + self.headroom
        pkt.state = held.state
        pkt.flags = held.flags
        pkt.truncate_len = held.truncate_len
        pkt.parser_error = held.parser_error
        pkt.egress_port = q.port
        pkt.instance_type = instance_type
        pkt.egress_rid = rid
        self._egress(pkt, outputs, queue)

    def _egress(self, pkt: Any, outputs: list[tuple[int, bytes]],
                queue: QueueMetadata | None) -> None:
        meta = self.ffi.NULL
        if queue is not None:
            meta = self.ffi.new("nw_queue_meta_t *")
            meta.enq_timestamp = NO_TIMESTAMP if queue.enq_timestamp is None else \
                queue.enq_timestamp
            meta.enq_qdepth = queue.enq_qdepth
            meta.deq_timedelta = queue.deq_timedelta
            meta.deq_qdepth = queue.deq_qdepth
            meta.qid = queue.qid
        rc = self.lib.nw_egress(self.pipeline, pkt, self.clock() * 1000, meta)
        if rc == ERR_ASSERT:
            self._assert_failed()
        elif rc != OK:
            self._internal_error(rc)
        elif pkt.flags & F_DROP:
            self._count_drop(pkt)
        else:
            outputs.append((int(pkt.egress_port), bytes(self.ffi.buffer(pkt.data, pkt.len))))

    # ------------------------------------------------------------------ accounting

    def _count_drop(self, pkt: Any) -> None:
        self.stats["dropped"] += 1
        self.stats["drop_parser_error" if pkt.parser_error else "drop_program"] += 1

    def _assert_failed(self) -> None:
        self.stats["assert_failed"] += 1
        LOG.error("an assert/assume failed; packet dropped")

    def _internal_error(self, rc: int) -> None:
        self.stats["internal_error"] += 1
        LOG.error("the native pipeline failed (code %d); packet dropped", rc)
