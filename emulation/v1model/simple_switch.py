"""The v1model architecture driver: BMv2 ``simple_switch``'s packet flow.

:meth:`V1ModelDriver.process` runs one received packet to completion with
the queues bypassed: parser -> verify checksum -> ingress -> (I2E clone,
resubmit, multicast through the PRE, unicast or drop) -> egress per copy ->
(E2E clone, drop, compute checksum, deparser, recirculate) -> outputs.  The
order of work follows simple_switch's ingress and egress threads (see its
``ingress_thread``/``egress_thread``) with one FIFO of pending passes, so
outputs come in a deterministic order.

For a traffic manager between the two halves, :meth:`V1ModelDriver.ingress`
returns the :class:`QueuedPacket` s bound for egress queues and
:meth:`V1ModelDriver.egress` runs one of them with the queueing metadata the
traffic manager measured.  Every packet carries its number of pipeline
passes; a chain of resubmits, recirculations or clones longer than
``max_passes`` is dropped (and counted), so no program can loop forever.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from netweft.emulation.pipeline.runtime import AssertionFailed, PacketCursor, ParserReject
from netweft.emulation.v1model.action_profiles import EMPTY_GROUP_WARNING, EmptySelectorGroup
from netweft.emulation.v1model.context import LOG, PacketContext
from netweft.emulation.v1model.replication import CloneSessions, PacketReplicationEngine

DROP_PORT = 511
NORMAL, INGRESS_CLONE, EGRESS_CLONE, COALESCED, RECIRC, REPLICATION, RESUBMIT = range(7)


@dataclass
class _IngressPass:
    data: bytes
    port: int
    instance_type: int
    preserved: Any = None          # (meta, standard_metadata) to copy a field list from
    field_list: int | None = None
    passes: int = 0                # pipeline passes before this one
    trace_id: str | None = None    # the packet trace's name for it (when tracing)


@dataclass
class QueuedPacket:
    """A packet between ingress and egress: what a traffic manager queues.

    ``port`` is the egress port; :attr:`priority` the queue (simple_switch's
    ``--priority-queues`` use ``standard_metadata.priority``); :attr:`length`
    the bytes it will occupy.  The rest is the pipeline's state.
    """

    hdr: Any
    meta: Any
    sm: Any
    payload: bytes
    port: int
    ilen: int
    truncate: int | None
    passes: int = 0
    trace_id: str | None = None    # the packet trace's name for it (when tracing)

    @property
    def priority(self) -> int:
        """The queue priority set by ingress (0 if the program never set it)."""
        return int(getattr(self.sm, "priority", 0))

    @property
    def length(self) -> int:
        """Packet length in bytes as received by ingress."""
        return self.ilen


@dataclass
class QueueMetadata:
    """What the traffic manager measured for one packet (microseconds, packets)."""

    enq_timestamp: int | None = None   # None: the egress time (no queueing)
    enq_qdepth: int = 0
    deq_timedelta: int = 0
    deq_qdepth: int = 0
    qid: int = 0                       # written if standard_metadata has a qid field




class V1ModelDriver:
    """Runs packets through one instantiated pipeline namespace."""

    def __init__(self, ns: dict[str, Any], context: PacketContext,
                 pre: PacketReplicationEngine, sessions: CloneSessions,
                 field_lists: dict[int, list[tuple[str, ...]]],
                 clock: Callable[[], int], max_passes: int = 64) -> None:
        self.ns = ns
        self.x = context
        self.pre = pre
        self.sessions = sessions
        self.field_lists = field_lists
        self.clock = clock
        self.max_passes = max_passes
        # "dropped" counts every packet the program dropped; "drop_parser_error" the
        # share of them whose parser had failed, "drop_empty_group" those whose table entry
        # pointed at an action selector group with no members, "drop_program" the rest
        self.stats = {"received": 0, "sent": 0, "dropped": 0, "drop_program": 0,
                      "drop_parser_error": 0, "drop_empty_group": 0, "pass_limit": 0,
                      "assert_failed": 0, "internal_error": 0}
        self._parse = ns["RUN_parser"]
        self._verify = ns["RUN_verify_checksum"]
        self._ingress = ns["RUN_ingress"]
        self._egress = ns["RUN_egress"]
        self._compute = ns["RUN_compute_checksum"]
        self._deparse = ns["RUN_deparser"]
        self._new_hdr = ns["NEW_parser_1"]
        self._new_meta = ns["NEW_parser_2"]
        self._new_sm = ns["NEW_parser_3"]
        self._has_qid = hasattr(self._new_sm(), "qid")

    # ------------------------------------------------------------------ entry

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """All packets out for one packet in (queues bypassed), in a deterministic order."""
        self.stats["received"] += 1
        outputs: list[tuple[int, bytes]] = []
        self._drain(deque([_IngressPass(bytes(data), port, NORMAL)]), outputs, None)
        self.stats["sent"] += len(outputs)
        return outputs

    def ingress(self, port: int, data: bytes) -> list[QueuedPacket]:
        """Run the ingress half for a received packet; returns the packets bound for egress."""
        self.stats["received"] += 1
        queued: list[QueuedPacket] = []
        self._drain(deque([_IngressPass(bytes(data), port, NORMAL)]), [], queued)
        return queued

    def egress(self, packet: QueuedPacket, queue: QueueMetadata | None = None
               ) -> tuple[list[tuple[int, bytes]], list[QueuedPacket]]:
        """Run the egress half for a dequeued packet.

        Returns the packets sent and new packets for the queues (egress clones,
        and what recirculated packets' ingress produced).
        """
        outputs: list[tuple[int, bytes]] = []
        queued: list[QueuedPacket] = []
        work: deque[_IngressPass | QueuedPacket] = deque()
        self._guarded(self._run_egress, packet, work, outputs, queue)
        self._drain(work, outputs, queued)
        self.stats["sent"] += len(outputs)
        return outputs, queued

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
                self._guarded(self._run_ingress, job, work)
            else:
                self._guarded(self._run_egress, job, work, outputs, None)

    def _guarded(self, run: Callable[..., None], *args: object) -> None:
        """Run one pipeline pass; a failed assert or a back-end bug drops only this packet."""
        try:
            run(*args)
        except AssertionFailed as err:
            self.stats["assert_failed"] += 1
            LOG.error("%s; packet dropped", err)
        except EmptySelectorGroup:
            self.stats["dropped"] += 1
            self.stats["drop_empty_group"] += 1
            if self.stats["drop_empty_group"] == 1:
                LOG.warning(EMPTY_GROUP_WARNING)
        except Exception:  # a back-end bug must not take the switch down
            self.stats["internal_error"] += 1
            LOG.exception("internal error while processing a packet; packet dropped")

    # ------------------------------------------------------------------ ingress

    def _parse_into(self, data: bytes, port: int, instance_type: int, now: int
                    ) -> tuple[Any, Any, Any, PacketCursor]:
        hdr, meta, sm = self._new_hdr(), self._new_meta(), self._new_sm()
        sm.ingress_port = port
        sm.instance_type = instance_type
        sm.packet_length = len(data)
        if instance_type == NORMAL:
            sm.ingress_global_timestamp = now & 0xFFFFFFFFFFFF
        cur = PacketCursor(data)
        self.x.start_pass(sm, now, len(data))
        try:
            self._parse(cur, hdr, meta, sm)
        except ParserReject as rej:
            if rej.code is not None:
                sm.parser_error = rej.code
        return hdr, meta, sm, cur

    def _run_ingress(self, job: _IngressPass, work: deque) -> None:
        x = self.x
        now = self.clock()
        nxt = job.passes + 1
        data = job.data
        hdr, meta, sm, cur = self._parse_into(data, job.port, job.instance_type, now)
        if job.preserved is not None:
            self._copy_field_list(job.preserved, (meta, sm), job.field_list)
        x.payload = data[cur.pos:]
        self._verify(hdr, meta)
        sm.checksum_error = x.checksum_error
        x.start_pass(sm, now, len(data))
        x.payload = data[cur.pos:]
        self._ingress(hdr, meta, sm)
        if x.pending_digest is not None:  # learning happens at the end of ingress
            x.digests.append(x.pending_digest)
        truncate = x.truncate
        clone_session, clone_fl = x.clone_session, x.clone_field_list
        resubmit = x.resubmit
        mgid = sm.mcast_grp
        egress_spec = sm.egress_spec
        if clone_session is not None:
            session = self.sessions.get(clone_session)
            if session is not None:
                c_hdr, c_meta, c_sm, c_cur = self._parse_into(data, job.port, INGRESS_CLONE, now)
                # simple_switch resets all metadata of the clone, then copies the field list
                c_meta._assign(self._new_meta())
                c_sm._assign(self._new_sm())
                self._copy_field_list((meta, sm), (c_meta, c_sm), clone_fl)
                c_sm.instance_type = INGRESS_CLONE
                self._send_clone(session, QueuedPacket(c_hdr, c_meta, c_sm, data[c_cur.pos:], 0,
                                                       len(data), session.truncate, nxt), work)
        if resubmit is not None:
            # metadata (ingress_port included) is reset, as simple_switch does
            work.append(_IngressPass(data, 0, RESUBMIT, (meta, sm), resubmit[0], nxt))
            return
        payload = data[cur.pos:]
        if mgid != 0:
            # each copy is a new BMv2 Packet (clone_with_phv), whose truncation length
            # starts unset: an ingress truncate() does not reach multicast copies
            sm.instance_type = REPLICATION
            for port, rid in self.pre.replicate(mgid):
                sm.egress_rid = rid
                work.append(QueuedPacket(hdr._copy(), meta._copy(), sm._copy(), payload, port,
                                         len(data), None, nxt))
            return
        if egress_spec == DROP_PORT:
            self._count_drop(sm)
            return
        sm.instance_type = NORMAL
        work.append(QueuedPacket(hdr, meta, sm, payload, egress_spec, len(data), truncate, nxt))

    # ------------------------------------------------------------------ egress

    def _run_egress(self, job: QueuedPacket, work: deque, outputs: list[tuple[int, bytes]],
                    queue: QueueMetadata | None) -> None:
        x = self.x
        now = self.clock()
        nxt = job.passes + 1
        hdr, meta, sm = job.hdr, job.meta, job.sm
        sm.egress_port = job.port
        sm.egress_spec = 0  # BMv2 writes drop_port + 1 into the 9-bit field
        sm.packet_length = job.ilen
        sm.egress_global_timestamp = now & 0xFFFFFFFFFFFF
        if queue is None:
            sm.enq_timestamp = now & 0xFFFFFFFF
            sm.deq_timedelta = sm.enq_qdepth = sm.deq_qdepth = 0
        else:
            enq = now if queue.enq_timestamp is None else queue.enq_timestamp
            sm.enq_timestamp = enq & 0xFFFFFFFF
            sm.enq_qdepth = queue.enq_qdepth & 0x7FFFF
            sm.deq_timedelta = queue.deq_timedelta & 0xFFFFFFFF
            sm.deq_qdepth = queue.deq_qdepth & 0x7FFFF
            if self._has_qid:
                sm.qid = queue.qid
        x.start_pass(sm, now, job.ilen)
        x.truncate = job.truncate
        x.payload = job.payload
        self._egress(hdr, meta, sm)
        if x.clone_session is not None:
            session = self.sessions.get(x.clone_session)
            if session is not None:
                c_meta = self._new_meta()
                c_sm = self._new_sm()
                self._copy_field_list((meta, sm), (c_meta, c_sm), x.clone_field_list)
                c_sm.instance_type = EGRESS_CLONE
                self._send_clone(session, QueuedPacket(hdr._copy(), c_meta, c_sm, job.payload,
                                                       0, job.ilen, session.truncate, nxt), work)
        if sm.egress_spec == DROP_PORT:
            self._count_drop(sm)
            return
        truncate = x.truncate
        recirculate = x.recirculate
        x.payload = job.payload
        self._compute(hdr, meta)
        out: list[bytes] = []
        self._deparse(out, hdr)
        out.append(job.payload)
        packet = b"".join(out)
        if recirculate is not None:
            # BMv2 recirculates a copy of the whole deparsed buffer (clone_no_phv) with a
            # fresh truncation length: truncate() does not shorten a recirculated packet
            work.append(_IngressPass(packet, 0, RECIRC, (meta, sm), recirculate[0], nxt))
            return
        if truncate is not None and truncate < len(packet):
            packet = packet[:truncate]
        outputs.append((job.port, packet))

    def _count_drop(self, sm: Any) -> None:
        stats = self.stats
        stats["dropped"] += 1
        stats["drop_parser_error" if sm.parser_error else "drop_program"] += 1

    def _send_clone(self, session: Any, clone: QueuedPacket, work: deque) -> None:
        """Queue a clone to the session's multicast group copies, then to its port."""
        if session.mc_group is not None:
            for port, rid in self.pre.replicate(session.mc_group):
                sm = clone.sm._copy()
                sm.egress_rid = rid
                work.append(QueuedPacket(clone.hdr._copy(), clone.meta._copy(), sm,
                                         clone.payload, port, clone.ilen, clone.truncate,
                                         clone.passes))
        if session.port is not None:
            clone.port = session.port
            work.append(clone)

    # ------------------------------------------------------------------ field lists

    def _copy_field_list(self, src: tuple[Any, Any], dst: tuple[Any, Any],
                         index: int | None) -> None:
        """Copy field list ``index`` from ``(meta, standard_metadata)`` to another pair.

        Paths starting with ``"@sm"`` name standard metadata fields (the data
        argument of the older clone3/resubmit/recirculate forms may list them).
        """
        if index is None:
            return
        for path in self.field_lists.get(index, ()):
            if path[0] == "@sm":
                s, d, path = src[1], dst[1], path[1:]
            else:
                s, d = src[0], dst[0]
            for name in path[:-1]:
                s, d = getattr(s, name), getattr(d, name)
            value = getattr(s, path[-1])
            if hasattr(value, "_copy"):
                getattr(d, path[-1])._assign(value)
            else:
                setattr(d, path[-1], value)
