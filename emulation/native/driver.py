"""Runs packets through a native pipeline with BMv2 ``simple_switch``'s flow.

:class:`NativeDriver` has the interface of
:class:`~netweft.emulation.v1model.simple_switch.V1ModelDriver` (``process``,
``ingress``, ``egress``, ``stats``, ``clock``): the C code runs each pass
(parser to ingress, egress to deparser) and this driver does what lies
between, in Python and in the same order, with one FIFO of pending passes:
drop accounting, I2E and E2E clones through the clone sessions, resubmit and
recirculation (field lists kept by the C code), multicast through the
switch's replication engine, the pass limit, the queued packets of a traffic
manager; digests and ``log_msg`` messages go from the pipeline's rings to the
switch's :class:`~netweft.emulation.v1model.context.PacketContext`, as the
Python back end's.  :meth:`NativeDriver.process_batch` runs many frames in
one C call (the in-process fast path).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from netweft.emulation.native.c_flow import FlowSites
from netweft.emulation.v1model.action_profiles import EMPTY_GROUP_WARNING
from netweft.emulation.v1model.context import LOG, PacketContext
from netweft.emulation.v1model.replication import (
    CloneSession,
    CloneSessions,
    PacketReplicationEngine,
)
from netweft.emulation.v1model.simple_switch import QueuedPacket, QueueMetadata

NORMAL, INGRESS_CLONE, EGRESS_CLONE, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 4, 5, 6
F_DROP, F_PARSER_ERROR, F_RESUBMIT, F_RECIRCULATE, F_TRUNCATE, F_CLONE = 1, 2, 4, 8, 16, 32
F_EGRESS_RID = 128
OK, ERR_ASSERT, ERR_NOSPACE, ERR_EMPTY_GROUP, NEEDS_DRIVER = 0, 1, 2, 5, 16
NO_TIMESTAMP = (1 << 64) - 1


@dataclass
class _Priority:
    """What a traffic manager reads of a queued packet's standard metadata."""

    priority: int


@dataclass
class _IngressPass:
    """A pending ingress pass: a received, resubmitted or recirculated frame."""

    data: bytes
    port: int
    instance_type: int
    preserved: Any = None          # the C state whose field list the pass keeps
    field_list: int = 0
    passes: int = 0                # pipeline passes before this one


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
                 clock: Callable[[], int], lock: Any, sessions: CloneSessions | None = None,
                 context: PacketContext | None = None, flow: FlowSites | None = None,
                 max_passes: int = 64) -> None:
        self.ffi, self.lib = library.ffi, library.lib
        self.lock = lock    # shared with the tables: updates wait for the packet in C
        self.pipeline = pipeline
        self.pre = pre
        self.sessions = sessions if sessions is not None else CloneSessions()
        self.context = context
        self.flow = flow if flow is not None else FlowSites()
        self.clock = clock
        self.max_passes = max_passes
        self.stats = {"received": 0, "sent": 0, "dropped": 0, "drop_program": 0,
                      "drop_parser_error": 0, "drop_empty_group": 0, "pass_limit": 0,
                      "assert_failed": 0, "internal_error": 0}
        self.state_size = int(self.lib.nw_pipeline_state_size())
        self.headroom = int(self.lib.nw_pipeline_emit_max())
        self.uses_flow = bool(self.lib.nw_pipeline_uses_flow())
        self._has_rings = bool(self.flow.digests or self.flow.logs)
        self._words = self.ffi.new("uint64_t[]", int(self.lib.nw_flow_words()))
        self._site = self.ffi.new("uint32_t *")
        self._aux = self.ffi.new("uint32_t *")
        self._pkt = self.ffi.new("nw_pkt_t *")
        self._state = self.ffi.new("uint8_t[]", self.state_size)
        self._clone_state = self.ffi.new("uint8_t[]", self.state_size)
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

    def _load(self, port: int, data: bytes, instance_type: int = NORMAL) -> Any:
        pkt = self._pkt
        buf = self._frame_buffer(len(data))
        self.ffi.memmove(buf, data, len(data))
        pkt.data = buf
        pkt.len = len(data)
        pkt.cap = self._cap
        pkt.ingress_port = port
        pkt.instance_type = instance_type
        pkt.flags = 0
        pkt.state = self._state
        pkt.clone_state = self.ffi.NULL
        pkt.preserved = self.ffi.NULL
        return pkt

    def _state_copy(self, src: Any) -> Any:
        state = self.ffi.new("uint8_t[]", self.state_size)
        self.lib.nw_state_copy(state, src)
        return state

    # ------------------------------------------------------------------ entry

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """All packets out for one packet in (queues bypassed), in a deterministic order."""
        self.stats["received"] += 1
        outputs: list[tuple[int, bytes]] = []
        if self.uses_flow:
            self._drain(deque([_IngressPass(bytes(data), port, NORMAL)]), outputs, None)
            self.stats["sent"] += len(outputs)
            return outputs
        pkt = self._load(port, data)
        if not self._ingress(pkt):
            return outputs
        if pkt.mcast_grp:
            for copy in self._copies(pkt, int(pkt.mcast_grp), 1):
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
        (multicast) is finished here.  A program that clones, resubmits or
        recirculates runs each frame through :meth:`process` at its time.
        Returns each frame's outputs.
        """
        if self.uses_flow:
            saved = self.clock
            results = []
            try:
                for i, frame in enumerate(frames):
                    t = (now_ns + i * step_ns) // 1000
                    self.clock = lambda t=t: t
                    results.append(self.process(port, frame))
            finally:
                self.clock = saved
            return results
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
        with self.lock:
            lib.nw_process_batch(self.pipeline, pkts, rcs, n, now_ns, step_ns)
        self._take_rings()
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
            for copy in self._copies(pkt, int(pkt.mcast_grp), 1):
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
        if self.uses_flow:
            queued: list[QueuedPacket] = []
            self._drain(deque([_IngressPass(bytes(data), port, NORMAL)]), [], queued)
            return queued
        pkt = self._load(port, data)
        if not self._ingress(pkt):
            return []
        if pkt.mcast_grp:
            return self._copies(pkt, int(pkt.mcast_grp), 1)
        return [self._queued(pkt, int(pkt.egress_spec), NORMAL, 0, 1)]

    def egress(self, packet: QueuedPacket, queue: QueueMetadata | None = None
               ) -> tuple[list[tuple[int, bytes]], list[QueuedPacket]]:
        """The egress half for a dequeued packet.

        Returns the packets sent and new packets for the queues (egress clones,
        and what recirculated packets' ingress produced).
        """
        outputs: list[tuple[int, bytes]] = []
        queued: list[QueuedPacket] = []
        if self.uses_flow:
            work: deque = deque()
            self._run_egress(packet, work, outputs, queue)
            self._drain(work, outputs, queued)
        else:
            self._egress_copy(packet, outputs, queue)
        self.stats["sent"] += len(outputs)
        return outputs, queued

    # ------------------------------------------------------------------ the flow

    def _drain(self, work: deque, outputs: list[tuple[int, bytes]],
               queued: list[QueuedPacket] | None) -> None:
        """Run pending passes; egress passes go to ``queued`` when it is given."""
        while work:
            job = work.popleft()
            if job.passes >= self.max_passes:
                self.stats["pass_limit"] += 1
                LOG.warning("a packet exceeded %d pipeline passes; dropped", self.max_passes)
                continue
            if queued is not None and not isinstance(job, _IngressPass):
                queued.append(job)
                continue
            if isinstance(job, _IngressPass):
                self._run_ingress(job, work)
            else:
                self._run_egress(job, work, outputs, None)

    def _run_ingress(self, job: _IngressPass, work: deque) -> None:
        ffi, lib = self.ffi, self.lib
        pkt = self._load(job.port, job.data, job.instance_type)
        if job.preserved is not None:
            pkt.preserved = job.preserved
            pkt.preserved_fl = job.field_list
        now = self.clock() * 1000
        with self.lock:
            rc = lib.nw_ingress(self.pipeline, pkt, now)
        self._take_rings()
        if self._failed(rc):
            return
        nxt = job.passes + 1
        flags = int(pkt.flags)
        if flags & F_CLONE:
            session = self.sessions.get(int(pkt.clone_session))
            if session is not None:
                state = ffi.new("uint8_t[]", self.state_size)
                with self.lock:
                    rc = lib.nw_clone_i2e(self.pipeline, pkt, state, now)
                self._take_rings()
                if rc == OK:
                    data = ffi.new("uint8_t[]", len(job.data) + self.headroom)
                    ffi.memmove(data, job.data, len(job.data))
                    self._send_clone(session, state, data, len(job.data), INGRESS_CLONE,
                                     len(job.data), nxt, work)
                else:
                    self._internal_error(rc)
        if flags & F_RESUBMIT:
            # metadata (ingress_port included) is reset, as simple_switch does
            work.append(_IngressPass(job.data, 0, RESUBMIT, self._state_copy(pkt.state),
                                     int(pkt.resubmit_fl), nxt))
            return
        if pkt.mcast_grp:
            work.extend(self._copies(pkt, int(pkt.mcast_grp), nxt))
            return
        if flags & F_DROP:
            self._count_drop(pkt)
            return
        work.append(self._queued(pkt, int(pkt.egress_spec), NORMAL, 0, nxt))

    def _failed(self, rc: int) -> bool:
        """Count a pass that did not finish (a failed assert, an internal error)."""
        if rc == ERR_ASSERT:
            self._assert_failed()
        elif rc != OK:
            self._internal_error(rc)
        return rc != OK

    def _run_egress(self, q: QueuedPacket, work: deque, outputs: list[tuple[int, bytes]],
                    queue: QueueMetadata | None) -> None:
        ffi = self.ffi
        pkt = self._prepare_egress(q)
        pkt.clone_state = self._clone_state
        rc = self._run_c_egress(pkt, queue)
        pkt.clone_state = ffi.NULL
        if self._failed(rc):
            return
        nxt = q.passes + 1
        flags = int(pkt.flags)
        if flags & F_CLONE:
            session = self.sessions.get(int(pkt.clone_session))
            if session is not None:
                n = int(pkt.clone_payload_len)
                data = ffi.new("uint8_t[]", n + self.headroom)
                ffi.memmove(data, pkt.data + int(pkt.clone_payload_at), n)
                self._send_clone(session, self._state_copy(self._clone_state), data, n,
                                 EGRESS_CLONE, q.ilen, nxt, work)
        if flags & F_DROP:
            self._count_drop(pkt)
            return
        if flags & F_RECIRCULATE:
            # BMv2 recirculates a copy of the whole deparsed buffer (clone_no_phv) with a
            # fresh truncation length: truncate() does not shorten a recirculated packet
            frame = bytes(ffi.buffer(pkt.data, pkt.len))
            work.append(_IngressPass(frame, 0, RECIRC, self._state_copy(pkt.state),
                                     int(pkt.recirc_fl), nxt))
            return
        outputs.append((q.port, bytes(ffi.buffer(pkt.data, pkt.len))))

    def _send_clone(self, session: CloneSession, state: Any, data: Any, length: int,
                    instance_type: int, ilen: int, passes: int, work: deque) -> None:
        """Queue a clone to the session's multicast group copies, then to its port."""
        truncate = session.truncate
        flags = F_TRUNCATE if truncate is not None else 0
        held = NativePacket(state, data, length, flags, truncate or 0, 0)
        if session.mc_group is not None:
            for port, rid in self.pre.replicate(session.mc_group):
                copy_data = self.ffi.new("uint8_t[]", length + self.headroom)
                self.ffi.memmove(copy_data, data, length)
                copy = NativePacket(self._state_copy(state), copy_data, length,
                                    flags | F_EGRESS_RID, truncate or 0, 0)
                q = QueuedPacket(copy, (instance_type, rid), _Priority(0), b"", port, ilen,
                                 truncate, passes)
                work.append(q)
        if session.port is not None:
            work.append(QueuedPacket(held, (instance_type, 0), _Priority(0), b"", session.port,
                                     ilen, truncate, passes))

    def take_rings(self) -> None:
        """Move the rings' digests and log_msg messages to the context (another
        thread's passes, e.g. the C packet loop's, may have left them there)."""
        self._take_rings()

    def _take_rings(self) -> None:
        """Digests and log_msg messages the passes left in the pipeline's rings."""
        if not self._has_rings or self.context is None:
            return
        lib, pipeline, flow, x = self.lib, self.pipeline, self.flow, self.context
        site, aux, words = self._site, self._aux, self._words
        n = len(words)
        while lib.nw_flow_pop(pipeline, 0, site, aux, words):
            x.digests.append((int(aux[0]), flow.digest_value(int(site[0]), list(words[0:n]))))
        while lib.nw_flow_pop(pipeline, 1, site, aux, words):
            msg, values = flow.log_values(int(site[0]), int(aux[0]), list(words[0:n]))
            x.log_msg(msg, values)

    # ------------------------------------------------------------------ passes

    def _ingress(self, pkt: Any) -> bool:
        now = self.clock() * 1000
        with self.lock:
            rc = self.lib.nw_ingress(self.pipeline, pkt, now)
        self._take_rings()
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

    def _queued(self, pkt: Any, port: int, instance_type: int, rid: int,
                passes: int) -> QueuedPacket:
        """A packet for the queues: its own copy of the state and the frame."""
        ffi = self.ffi
        state = self._state_copy(pkt.state)
        data = ffi.new("uint8_t[]", int(pkt.len) + self.headroom)
        ffi.memmove(data, pkt.data, pkt.len)
        flags = int(pkt.flags) & (F_PARSER_ERROR | (F_TRUNCATE if instance_type == NORMAL else 0))
        held = NativePacket(state, data, int(pkt.len), flags, int(pkt.truncate_len),
                            int(pkt.parser_error))
        truncate = int(pkt.truncate_len) if flags & F_TRUNCATE else None
        return QueuedPacket(held, (instance_type, rid), _Priority(int(pkt.priority)), b"", port,
                            int(pkt.ingress_len), truncate, passes)

    def _copies(self, pkt: Any, group: int, passes: int) -> list[QueuedPacket]:
        # each copy is a new packet whose truncation starts unset (as in BMv2)
        return [self._queued(pkt, port, REPLICATION, rid, passes) for port, rid in
                self.pre.replicate(group)]

    def _prepare_egress(self, q: QueuedPacket) -> Any:
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
        pkt.clone_state = self.ffi.NULL
        pkt.preserved = self.ffi.NULL
        return pkt

    def _egress_copy(self, q: QueuedPacket, outputs: list[tuple[int, bytes]],
                     queue: QueueMetadata | None) -> None:
        self._egress(self._prepare_egress(q), outputs, queue)

    def _run_c_egress(self, pkt: Any, queue: QueueMetadata | None) -> int:
        meta = self.ffi.NULL
        if queue is not None:
            meta = self.ffi.new("nw_queue_meta_t *")
            meta.enq_timestamp = NO_TIMESTAMP if queue.enq_timestamp is None else \
                queue.enq_timestamp
            meta.enq_qdepth = queue.enq_qdepth
            meta.deq_timedelta = queue.deq_timedelta
            meta.deq_qdepth = queue.deq_qdepth
            meta.qid = queue.qid
        now = self.clock() * 1000
        with self.lock:
            rc = int(self.lib.nw_egress(self.pipeline, pkt, now, meta))
        self._take_rings()
        return rc

    def _egress(self, pkt: Any, outputs: list[tuple[int, bytes]],
                queue: QueueMetadata | None) -> None:
        rc = self._run_c_egress(pkt, queue)
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
        if rc == ERR_EMPTY_GROUP:
            self._empty_group()
            return
        self.stats["internal_error"] += 1
        LOG.error("the native pipeline failed (code %d); packet dropped", rc)

    def _empty_group(self) -> None:
        """A table entry pointed at an action selector group with no members."""
        self.stats["dropped"] += 1
        self.stats["drop_empty_group"] += 1
        if self.stats["drop_empty_group"] == 1:
            LOG.warning(EMPTY_GROUP_WARNING)
