"""PacketReplicationEngineEntry: multicast groups and clone sessions.

A multicast group is ``(egress port, instance)`` replicas, as BMv2's PRE.  A
clone session with one replica of instance 0 sends its clone to that port;
otherwise its replicas become a multicast group of the switch's replication
engine outside the controller's 16-bit group ids (as BMv2's PI does for clone
sessions), and the clone is copied to each, with the instance as
``egress_rid``.  Clones are truncated to ``packet_length_bytes`` if set.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings
from netweft.emulation.p4runtime.errors import already_exists, invalid, not_found
from netweft.emulation.p4runtime.pipeline import Pipeline
from netweft.emulation.v1model.replication import CloneSession

CLONE_GROUP_BASE = 1 << 16    # replication groups of clone sessions: base + session id

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)


@dataclass
class _Group:
    replicas: list[tuple[int, int]]
    metadata: bytes


@dataclass
class _Session:
    replicas: list[tuple[int, int]]
    class_of_service: int
    packet_length_bytes: int


def _replicas(what: str, replicas: list[p4runtime_pb2.Replica]) -> list[tuple[int, int]]:
    out = []
    for r in replicas:
        if r.WhichOneof("port_kind") == "port":
            port = bytestrings.decode(r.port, 32, f"{what} replica port")
        else:
            port = r.egress_port
        if not 0 <= port < 512:
            raise invalid(f"{what}: port {port} outside the switch's ports 0..511")
        if (port, r.instance) in out:
            raise invalid(f"{what}: replica (port {port}, instance {r.instance}) listed twice")
        out.append((port, r.instance))
    return out


class Replication:
    """The P4Runtime view of the switch's multicast groups and clone sessions."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.groups: dict[int, _Group] = {}
        self.sessions: dict[int, _Session] = {}

    def write(self, kind: int, msg: p4runtime_pb2.PacketReplicationEngineEntry) -> None:
        which = msg.WhichOneof("type")
        if which == "multicast_group_entry":
            self._write_group(kind, msg.multicast_group_entry)
        elif which == "clone_session_entry":
            self._write_session(kind, msg.clone_session_entry)
        else:
            raise invalid("packet replication engine entry: neither a multicast group nor "
                          "a clone session")

    def _write_group(self, kind: int, msg: p4runtime_pb2.MulticastGroupEntry) -> None:
        gid = msg.multicast_group_id
        what = f"multicast group {gid}"
        if not 0 < gid < (1 << 16):
            raise invalid(f"{what}: ids are 1..65535")
        self._check_kind(kind, gid in self.groups, what)
        switch = self.pipeline.switch
        if kind == DELETE:
            del self.groups[gid]
            switch.mc_group_set(gid, [])
            return
        replicas = _replicas(what, list(msg.replicas))
        switch.mc_group_set(gid, replicas)
        self.groups[gid] = _Group(replicas, msg.metadata)

    def _write_session(self, kind: int, msg: p4runtime_pb2.CloneSessionEntry) -> None:
        sid = msg.session_id
        what = f"clone session {sid}"
        if not 0 <= sid < (1 << 15):
            raise invalid(f"{what}: ids are 0..32767")
        self._check_kind(kind, sid in self.sessions, what)
        switch = self.pipeline.switch
        if kind == DELETE:
            del self.sessions[sid]
            switch.clone_sessions.sessions.pop(sid, None)
            switch.pre.groups.pop(CLONE_GROUP_BASE + sid, None)
            return
        replicas = _replicas(what, list(msg.replicas))
        if not replicas:
            raise invalid(f"{what}: a clone session needs at least one replica")
        truncate = msg.packet_length_bytes or None
        switch.pre.groups.pop(CLONE_GROUP_BASE + sid, None)
        if len(replicas) == 1 and replicas[0][1] == 0:
            switch.clone_session_set(sid, replicas[0][0], truncate=truncate)
        else:
            switch.pre.groups[CLONE_GROUP_BASE + sid] = replicas
            switch.clone_sessions.sessions[sid] = CloneSession(None, truncate,
                                                               CLONE_GROUP_BASE + sid)
        self.sessions[sid] = _Session(replicas, msg.class_of_service, msg.packet_length_bytes)

    @staticmethod
    def _check_kind(kind: int, exists: bool, what: str) -> None:
        if kind == INSERT and exists:
            raise already_exists(f"{what} exists")
        if kind in (MODIFY, DELETE) and not exists:
            raise not_found(f"{what} does not exist")

    def read(self, msg: p4runtime_pb2.PacketReplicationEngineEntry
             ) -> Iterator[p4runtime_pb2.Entity]:
        which = msg.WhichOneof("type")
        if which in (None, "multicast_group_entry"):
            want = msg.multicast_group_entry.multicast_group_id
            for gid, group in sorted(self.groups.items()):
                if want and gid != want:
                    continue
                entity = p4runtime_pb2.Entity()
                out = entity.packet_replication_engine_entry.multicast_group_entry
                out.multicast_group_id, out.metadata = gid, group.metadata
                for port, instance in group.replicas:
                    out.replicas.add(egress_port=port, instance=instance)
                yield entity
        if which in (None, "clone_session_entry"):
            want = msg.clone_session_entry.session_id
            for sid, session in sorted(self.sessions.items()):
                if want and sid != want:
                    continue
                entity = p4runtime_pb2.Entity()
                out = entity.packet_replication_engine_entry.clone_session_entry
                out.session_id, out.class_of_service = sid, session.class_of_service
                out.packet_length_bytes = session.packet_length_bytes
                for port, instance in session.replicas:
                    out.replicas.add(egress_port=port, instance=instance)
                yield entity
