"""Installing a switch's plan over P4Runtime, idempotently.

The installer reads what the switch holds in the tables the program binding
owns and in the packet replication engine, then sends only the difference:
INSERT for new entries, MODIFY for entries whose action changed, DELETE for
entries no longer planned; registers and default actions are always written
(MODIFY). Installing the same plan twice sends nothing the second time. A
refused update raises :class:`InstallError` naming the switch and the entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from netweft.testbed.control.entity_encoder import EncodeError, EntityEncoder
from netweft.testbed.control.entries import (
    BindingError,
    InstallError,
    MulticastWrite,
    TableWrite,
    Write,
)
from netweft.testbed.control.fabric.ecmp_spray_binding import EcmpSprayBinding
from netweft.testbed.control.fabric.fabric_binding import FabricBinding
from netweft.testbed.control.fabric.plan import SwitchPlan
from netweft.testbed.control.fabric.settings import FabricSettings
from netweft.testbed.control.p4runtime_installer import refusals_text, send
from netweft.testbed.control.p4runtime_session import SwitchSession

Update = p4runtime_pb2.Update
# Multicast groups from here up belong to aggregation jobs on the same switch
# (docs/aggregation.md); the installer neither plans nor deletes them.
AGGREGATION_GROUPS = 0x8000


@dataclass
class InstallReport:
    """What one install did on one switch."""

    switch: str
    program: str
    inserted: int = 0
    modified: int = 0
    deleted: int = 0
    unchanged: int = 0

    def describe(self) -> str:
        return (f"{self.switch}: {self.program}: {self.inserted} inserted, {self.modified} "
                f"modified, {self.deleted} deleted, {self.unchanged} unchanged")


def bindings() -> list:
    """The program bindings the controller knows, most specific first."""
    return [FabricBinding(), EcmpSprayBinding()]


def binding_for(encoder: EntityEncoder, switch: str):
    for binding in bindings():
        if binding.recognises(encoder.has_table):
            return binding
    names = ", ".join(sorted(encoder.tables)) or "none"
    raise InstallError(f"{switch}: runs a program the fabric controller does not know "
                       f"(tables: {names}); run fabric.p4 (or ecmp_spray.p4)")


def _canonical(value: bytes) -> bytes:
    """A bytestring without leading zero bytes: targets may answer full-width values
    (BMv2's PI does), netweft's server and this controller send the shortest form."""
    return value.lstrip(b"\0") or b"\0"


def _match_key(fm: p4runtime_pb2.FieldMatch) -> tuple:
    kind = fm.WhichOneof("field_match_type")
    if kind == "exact":
        return fm.field_id, kind, _canonical(fm.exact.value)
    if kind == "lpm":
        return fm.field_id, kind, _canonical(fm.lpm.value), fm.lpm.prefix_len
    if kind == "ternary":
        return fm.field_id, kind, _canonical(fm.ternary.value), _canonical(fm.ternary.mask)
    if kind == "range":
        return fm.field_id, kind, _canonical(fm.range.low), _canonical(fm.range.high)
    if kind == "optional":
        return fm.field_id, kind, _canonical(fm.optional.value)
    return fm.field_id, kind, fm.SerializeToString(deterministic=True)


def _key(entry: p4runtime_pb2.TableEntry) -> tuple:
    return entry.table_id, entry.priority, tuple(sorted(_match_key(m) for m in entry.match))


def _action(entry: p4runtime_pb2.TableEntry) -> bytes:
    action = p4runtime_pb2.TableAction()
    action.CopyFrom(entry.action)
    if action.HasField("action"):
        params = sorted(action.action.params, key=lambda p: p.param_id)
        del action.action.params[:]
        for p in params:
            action.action.params.add(param_id=p.param_id, value=_canonical(p.value))
    return action.SerializeToString(deterministic=True)


def _replicas(group: p4runtime_pb2.MulticastGroupEntry) -> list[tuple[int, int]]:
    return sorted((r.egress_port or int.from_bytes(r.port or b"\0", "big"), r.instance)
                  for r in group.replicas)


def plan_updates(session: SwitchSession, encoder: EntityEncoder, binding,
                 writes: list[Write], report: InstallReport) -> list[tuple[Update, str]]:
    """The updates that bring the switch from what it holds to ``writes``, each with
    the description of the write it comes from."""
    held: dict[tuple, p4runtime_pb2.TableEntry] = {}
    for table in binding.tables:
        if encoder.has_table(table):
            read = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
                table_id=encoder.table(table).preamble.id))
            for entity in session.read(read):
                held[_key(entity.table_entry)] = entity.table_entry
    groups: dict[int, p4runtime_pb2.MulticastGroupEntry] = {}
    read = p4runtime_pb2.Entity()
    read.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 0
    for entity in session.read(read):
        group = entity.packet_replication_engine_entry.multicast_group_entry
        if group.multicast_group_id >= AGGREGATION_GROUPS:
            continue  # an aggregation job's (testbed/control/aggregation/controller.py): not ours
        groups[group.multicast_group_id] = group
    out: list[tuple[Update, str]] = []

    def add(kind: int, entity: p4runtime_pb2.Entity, what: str) -> None:
        update = Update(type=kind)
        update.entity.CopyFrom(entity)
        out.append((update, what))

    for write in writes:
        entity = encoder.entity(write)
        if isinstance(write, TableWrite) and not write.default:
            old = held.pop(_key(entity.table_entry), None)
            if old is None:
                add(Update.INSERT, entity, write.describe())
                report.inserted += 1
            elif _action(old) != _action(entity.table_entry):
                add(Update.MODIFY, entity, write.describe())
                report.modified += 1
            else:
                report.unchanged += 1
        elif isinstance(write, MulticastWrite):
            old_group = groups.pop(write.group_id, None)
            new_group = entity.packet_replication_engine_entry.multicast_group_entry
            if old_group is None:
                add(Update.INSERT, entity, write.describe())
                report.inserted += 1
            elif _replicas(old_group) != _replicas(new_group):
                add(Update.MODIFY, entity, write.describe())
                report.modified += 1
            else:
                report.unchanged += 1
        else:  # default actions and registers exist always: MODIFY
            add(Update.MODIFY, entity, write.describe())
            report.modified += 1
    stale: list[tuple[Update, str]] = []
    for entry in held.values():
        update = Update(type=Update.DELETE)
        update.entity.table_entry.CopyFrom(entry)
        stale.append((update, f"stale entry of table id {entry.table_id}"))
    for group in groups.values():
        update = Update(type=Update.DELETE)
        update.entity.packet_replication_engine_entry.multicast_group_entry.CopyFrom(group)
        stale.append((update, f"stale multicast group {group.multicast_group_id}"))
    report.deleted = len(stale)
    return stale + out


def install_switch(session: SwitchSession, plan: SwitchPlan,
                   settings: FabricSettings) -> InstallReport:
    """Bring one switch to its plan; raises :class:`InstallError` on the first refusal."""
    where = f"{session.name} ({session.address})"
    encoder = EntityEncoder(session.p4info())
    binding = binding_for(encoder, session.name)
    report = InstallReport(session.name, binding.name)
    try:
        writes = binding.writes(plan, settings, encoder.has_table)
        updates = plan_updates(session, encoder, binding, writes, report)
    except (BindingError, EncodeError) as err:
        raise InstallError(f"{where}: {err}") from None
    refused = send(session, updates, stop_at_refusal=True)
    if refused:
        raise InstallError(f"{where} {refusals_text(refused)}")
    return report
