"""Writes by name (:mod:`.entries`) as P4Runtime entities of one switch's P4Info.

Names are fully qualified or any unambiguous suffix (``ipv4_routes`` for
``MyIngress.ipv4_routes``), values integers or address strings; an unknown name
or a value that does not fit raises :class:`EncodeError` naming the write.
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.bytestrings import encode
from netweft.emulation.v1model.key_values import BadValueError, parse_value
from netweft.emulation.v1model.names import UnknownNameError, resolve_name
from netweft.testbed.control.entries import Lpm, MulticastWrite, RegisterWrite, TableWrite, Write

MatchType = p4info_pb2.MatchField.MatchType


class EncodeError(ValueError):
    """A write that does not fit the switch's P4Info; the message names it and why."""


class EntityEncoder:
    """Resolves names against one P4Info and builds entities."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.tables = {t.preamble.name: t for t in p4info.tables}
        self.actions = {a.preamble.name: a for a in p4info.actions}
        self.registers = {r.preamble.name: r for r in p4info.registers}

    def has_table(self, name: str) -> bool:
        try:
            resolve_name(name, self.tables, "table")
        except UnknownNameError:
            return False
        return True

    def table(self, name: str) -> p4info_pb2.Table:
        return self.tables[resolve_name(name, self.tables, "table")]

    def entity(self, write: Write) -> p4runtime_pb2.Entity:
        try:
            if isinstance(write, TableWrite):
                return p4runtime_pb2.Entity(table_entry=self._table_entry(write))
            if isinstance(write, MulticastWrite):
                return _multicast_entity(write)
            return p4runtime_pb2.Entity(register_entry=self._register_entry(write))
        except (UnknownNameError, BadValueError, KeyError) as err:
            raise EncodeError(f"{write.describe()}: {err}") from None

    def _table_entry(self, write: TableWrite) -> p4runtime_pb2.TableEntry:
        table = self.table(write.table)
        entry = p4runtime_pb2.TableEntry(table_id=table.preamble.id, priority=write.priority,
                                         is_default_action=write.default)
        fields = {mf.name: mf for mf in table.match_fields}
        for name, value in write.match:
            mf = fields[resolve_name(name, fields, "key field")]
            what = f"key {mf.name}"
            if mf.match_type == MatchType.LPM:
                lpm = value if isinstance(value, Lpm) else Lpm(value, mf.bitwidth)
                if lpm.prefix_len:
                    fm = entry.match.add(field_id=mf.id)
                    fm.lpm.value = encode(_masked(lpm, mf.bitwidth, what))
                    fm.lpm.prefix_len = lpm.prefix_len
            elif mf.match_type == MatchType.EXACT:
                entry.match.add(field_id=mf.id).exact.value = encode(
                    parse_value(value, mf.bitwidth, what))
            else:
                raise EncodeError(f"{write.describe()}: key {mf.name}: the fabric controller "
                                  "writes exact and lpm keys only")
        action = self.actions[resolve_name(write.action, self.actions, "action")]
        allowed = {ref.id for ref in table.action_refs}
        if action.preamble.id not in allowed:
            raise EncodeError(f"{write.describe()}: table {table.preamble.name} has no action "
                              f"{action.preamble.name}")
        params = {p.name: p for p in action.params}
        given = dict(write.params)
        missing = sorted(set(params) - {resolve_name(n, params, "parameter") for n in given})
        if missing:
            raise EncodeError(f"{write.describe()}: action {action.preamble.name} also needs "
                              f"{', '.join(missing)}")
        out = entry.action.action
        out.action_id = action.preamble.id
        for name, value in sorted(given.items(), key=lambda kv: params[
                resolve_name(kv[0], params, "parameter")].id):
            spec = params[resolve_name(name, params, "parameter")]
            out.params.add(param_id=spec.id, value=encode(
                parse_value(value, spec.bitwidth, f"parameter {spec.name}")))
        return entry

    def _register_entry(self, write: RegisterWrite) -> p4runtime_pb2.RegisterEntry:
        reg = self.registers[resolve_name(write.register, self.registers, "register")]
        if not 0 <= write.index < reg.size:
            raise EncodeError(f"{write.describe()}: index outside 0..{reg.size - 1}")
        entry = p4runtime_pb2.RegisterEntry(register_id=reg.preamble.id)
        entry.index.index = write.index
        width = reg.type_spec.bitstring.bit.bitwidth or 32
        entry.data.bitstring = encode(parse_value(write.value, width, "value"))
        return entry


def _masked(lpm: Lpm, width: int, what: str) -> int:
    if not 0 <= lpm.prefix_len <= width:
        raise EncodeError(f"{what}: prefix length {lpm.prefix_len} outside 0..{width}")
    value = parse_value(lpm.value, width, what)
    return value & (((1 << lpm.prefix_len) - 1) << (width - lpm.prefix_len))


def _multicast_entity(write: MulticastWrite) -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    group = entity.packet_replication_engine_entry.multicast_group_entry
    group.multicast_group_id = write.group_id
    for port, instance in write.replicas:
        group.replicas.add(egress_port=port, instance=instance)
    return entity
