"""The packet replication engine and clone (mirroring) sessions of simple_switch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


class PacketReplicationEngine:
    """Multicast groups: group id -> ordered ``(egress port, rid)`` copies."""

    def __init__(self) -> None:
        self.groups: dict[int, list[tuple[int, int]]] = {}

    def set_group(self, group_id: int, copies: Iterable[tuple[int, int]]) -> None:
        """Create or replace a group; an empty list deletes it."""
        if not 0 < group_id < (1 << 16):
            raise ValueError(f"multicast group id {group_id} outside 1..65535")
        members = []
        for copy in copies:
            port, rid = copy
            if not 0 <= int(port) < 512:
                raise ValueError(f"multicast group {group_id}: port {port} outside 0..511")
            if not 0 <= int(rid) < (1 << 16):
                raise ValueError(f"multicast group {group_id}: rid {rid} outside 0..65535")
            members.append((int(port), int(rid)))
        if members:
            self.groups[group_id] = members
        else:
            self.groups.pop(group_id, None)

    def replicate(self, group_id: int) -> list[tuple[int, int]]:
        """The copies of a group (none for an unknown group, as BMv2)."""
        return self.groups.get(group_id, [])


@dataclass(frozen=True)
class CloneSession:
    """A mirroring session: a destination port and/or a multicast group, and an
    optional truncation length in bytes (simple_switch ``mirroring_add`` /
    ``mirroring_add_mc``)."""

    port: int | None
    truncate: int | None = None
    mc_group: int | None = None


class CloneSessions:
    """Session id -> :class:`CloneSession`."""

    def __init__(self) -> None:
        self.sessions: dict[int, CloneSession] = {}

    def set(self, session_id: int, port: int | None, truncate: int | None = None,
            mc_group: int | None = None) -> None:
        """Create or replace a session (a port, a multicast group, or both)."""
        if not 0 <= session_id < (1 << 15):
            raise ValueError(f"clone session id {session_id} outside 0..32767")
        if port is None and mc_group is None:
            raise ValueError(f"clone session {session_id}: give a port or a multicast group")
        if port is not None and not 0 <= port < 512:
            raise ValueError(f"clone session {session_id}: port {port} outside 0..511")
        if mc_group is not None and not 0 < mc_group < (1 << 16):
            raise ValueError(f"clone session {session_id}: multicast group {mc_group} "
                             "outside 1..65535")
        if truncate is not None and truncate < 0:
            raise ValueError(f"clone session {session_id}: negative truncation length")
        self.sessions[session_id] = CloneSession(port, truncate, mc_group)

    def get(self, session_id: int) -> CloneSession | None:
        """The session, or None when it is not configured (the clone is then dropped)."""
        return self.sessions.get(session_id)
