"""Client arbitration: per role, the connected client with the highest election id
is the primary; only the primary may write, set the pipeline or send packets.

Sans-IO: :class:`Arbitration` keeps the stream sessions and calls each one's
``send`` with the ``MasterArbitrationUpdate`` answers.  Every arbitration
request is answered at once; when the primary of a role changes, every client
of that role is told (status OK for the primary, ALREADY_EXISTS for backups
while a primary exists, NOT_FOUND when none does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.errors import invalid, not_found, permission_denied


def election_number(msg: p4runtime_pb2.Uint128) -> int:
    """An election id as one integer."""
    return (msg.high << 64) | msg.low


@dataclass(eq=False)
class Session:
    """One StreamChannel: where its responses go and what it last claimed."""

    send: Callable[[p4runtime_pb2.StreamMessageResponse], None]
    arbitrated: bool = False
    role: str = ""
    role_config: bytes = b""
    election_id: int | None = None
    peer: str = field(default="")


class Arbitration:
    """Primary/backup election for one device."""

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self.sessions: list[Session] = []

    def primary(self, role: str) -> Session | None:
        """The primary client of ``role``, if any."""
        candidates = [s for s in self.sessions
                      if s.role == role and s.election_id is not None]
        return max(candidates, key=lambda s: s.election_id, default=None)

    def update(self, session: Session, msg: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        """Handle an arbitration request; raises for a request that ends the stream."""
        if msg.device_id != self.device_id:
            raise not_found(f"arbitration: this server is device {self.device_id}, "
                            f"not {msg.device_id}")
        role = msg.role.name if msg.HasField("role") else ""
        election = election_number(msg.election_id) if msg.HasField("election_id") else None
        for other in self.sessions:
            if other is not session and other.role == role and election is not None \
                    and other.election_id == election:
                raise invalid(f"arbitration: election id {election} is already used by "
                              f"another client of role {role or '(default)'}")
        old_roles = {session.role} if session.arbitrated else set()
        before = {r: self.primary(r) for r in old_roles | {role}}
        session.role, session.election_id, session.arbitrated = role, election, True
        session.role_config = (msg.role.config.SerializeToString()
                               if msg.HasField("role") and msg.role.HasField("config") else b"")
        if session not in self.sessions:
            self.sessions.append(session)
        changed = {r for r, p in before.items() if self.primary(r) is not p}
        for r in changed:
            self._notify_role(r)
        if role not in changed:
            self._notify(session)

    def remove(self, session: Session) -> None:
        """A stream closed; if it was a primary, the role's clients hear who is now."""
        if session not in self.sessions:
            return
        was_primary = self.primary(session.role) is session
        self.sessions.remove(session)
        if was_primary:
            self._notify_role(session.role)

    def check_primary(self, role: str, election_id: p4runtime_pb2.Uint128 | None,
                      what: str) -> None:
        """PERMISSION_DENIED unless ``election_id`` is the primary's for ``role``."""
        primary = self.primary(role)
        claimed = election_number(election_id) if election_id is not None else None
        if primary is None or claimed != primary.election_id:
            label = role or "(default)"
            raise permission_denied(f"{what}: only the primary client of role {label} may "
                                    f"write (election id {claimed} is not the primary's)")

    def _notify_role(self, role: str) -> None:
        for s in self.sessions:
            if s.role == role:
                self._notify(s)

    def _notify(self, session: Session) -> None:
        primary = self.primary(session.role)
        out = p4runtime_pb2.StreamMessageResponse()
        arb = out.arbitration
        arb.device_id = self.device_id
        if session.role:
            arb.role.name = session.role
        highest = primary.election_id if primary is not None else max(
            (s.election_id for s in self.sessions
             if s.role == session.role and s.election_id is not None), default=None)
        if highest is not None:
            arb.election_id.high, arb.election_id.low = highest >> 64, highest & ((1 << 64) - 1)
        if primary is session:
            arb.status.code = code_pb2.OK
            arb.status.message = "primary"
        elif primary is not None:
            arb.status.code = code_pb2.ALREADY_EXISTS
            arb.status.message = "a primary client is connected; this client is a backup"
        else:
            arb.status.code = code_pb2.NOT_FOUND
            arb.status.message = "no primary client"
        session.send(out)
