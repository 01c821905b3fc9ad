"""Writes installed over P4Runtime: each write encoded against the switch's P4Info
(:mod:`.entity_encoder`) and sent through a
:class:`~.p4runtime_session.SwitchSession` in batches; a refused update is named by
the write it comes from.

:func:`install_writes` puts a plan's writes on a switch that holds none of them
(INSERT what a write creates, MODIFY default actions and register cells), in
order; it leaves what :mod:`.in_process_installer` leaves on a switch in this
process. The fabric controller's installer sends only the difference to what a
switch holds, and the aggregation controller takes a refused job back out, both
through :func:`send`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from netweft.testbed.control.entity_encoder import EncodeError, EntityEncoder
from netweft.testbed.control.entries import InstallError, Write, is_created
from netweft.testbed.control.p4runtime_session import SwitchSession

Update = p4runtime_pb2.Update
BATCH = 256
SHOWN = 5  # refusals an error message names


@dataclass(frozen=True)
class Refusal:
    """A refused update: its position in the list sent (-1: a batch the switch refused
    as a whole), the write it comes from, and the switch's code and reason."""

    index: int
    what: str
    code: str
    message: str

    def describe(self) -> str:
        return f"{self.what}: {self.code}: {self.message}"


def updates_for(encoder: EntityEncoder, writes: Iterable[Write],
                kind: int | None = None) -> list[tuple[Update, str]]:
    """One update per write with the write's description: of ``kind`` or, by default,
    INSERT for what a write creates and MODIFY for what the switch always has.
    Raises :class:`~.entity_encoder.EncodeError` for a write the P4Info does not fit."""
    out = []
    for write in writes:
        if kind is not None:
            update = Update(type=kind)
        else:
            update = Update(type=Update.INSERT if is_created(write) else Update.MODIFY)
        update.entity.CopyFrom(encoder.entity(write))
        out.append((update, write.describe()))
    return out


def send(session: SwitchSession, updates: Sequence[tuple[Update, str]], *,
         stop_at_refusal: bool = False) -> list[Refusal]:
    """Write ``updates`` in batches of :data:`BATCH`; every refused one. A switch applies
    the updates of a batch independently, so the later batches are sent too unless
    ``stop_at_refusal``."""
    refused: list[Refusal] = []
    for start in range(0, len(updates), BATCH):
        batch = updates[start:start + BATCH]
        for error in session.write([update for update, _ in batch]):
            if error.index >= 0:
                refused.append(Refusal(start + error.index, batch[error.index][1], error.code,
                                       error.message))
            else:
                refused.append(Refusal(-1, "write", error.code, error.message))
        if refused and stop_at_refusal:
            break
    return refused


def refusals_text(refusals: Sequence[Refusal]) -> str:
    """``refused N update(s): WRITE: CODE: REASON; ...`` (the first :data:`SHOWN`)."""
    more = f" (and {len(refusals) - SHOWN} more)" if len(refusals) > SHOWN else ""
    return (f"refused {len(refusals)} update(s){more}: "
            + "; ".join(r.describe() for r in refusals[:SHOWN]))


def install_writes(session: SwitchSession, writes: Iterable[Write],
                   encoder: EntityEncoder | None = None) -> None:
    """Put ``writes`` on the switch of ``session``, which holds none of them yet; raises
    :class:`~.entries.InstallError` naming the switch and the refused writes."""
    where = f"{session.name} ({session.address})"
    encoder = encoder or EntityEncoder(session.p4info())
    try:
        updates = updates_for(encoder, writes)
    except EncodeError as err:
        raise InstallError(f"{where}: {err}") from None
    refused = send(session, updates, stop_at_refusal=True)
    if refused:
        raise InstallError(f"{where} {refusals_text(refused)}")
