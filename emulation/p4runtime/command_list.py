"""Command lists in ``simple_switch_CLI``'s language, translated to P4Runtime requests.

One command per line; ``#`` starts a comment.  Supported commands (BMv2's
names and argument order)::

    table_add TABLE ACTION KEY... => PARAM... [PRIORITY]
    table_set_default TABLE ACTION PARAM...
    table_modify TABLE ACTION HANDLE PARAM...
    table_delete TABLE HANDLE
    table_clear TABLE
    table_dump TABLE
    mc_mgrp_create GROUP            mc_mgrp_destroy GROUP
    mc_node_create RID PORT...      mc_node_destroy HANDLE
    mc_node_associate GROUP HANDLE  mc_node_dissociate GROUP HANDLE
    mirroring_add SESSION PORT      mirroring_delete SESSION
    register_write REGISTER INDEX VALUE
    register_read REGISTER [INDEX]  register_reset REGISTER
    counter_read COUNTER INDEX      counter_reset COUNTER

Keys are written as BMv2 writes them: ``VALUE`` (exact, optional),
``VALUE/PREFIX`` (lpm), ``VALUE&&&MASK`` (ternary), ``LOW->HIGH`` (range);
values may be decimal, ``0x`` hex, IPv4, IPv6 or MAC addresses.  Names are
fully qualified or any unambiguous suffix (``ipv4_lpm``).  Entry and
multicast node handles, as BMv2 prints them, belong to one command session.

The translation is sans-IO: a :class:`CommandSession` turns lines into
P4Runtime updates and reads and hands them to a :class:`ControlTarget` — the
in-process :class:`~netweft.emulation.p4runtime.device.Device` (a switch
process's ``--control`` socket, see :func:`session_for`), or a gRPC client
(``netweft cli`` against netweft-switch).
"""

from __future__ import annotations

import shlex
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings
from netweft.emulation.v1model.key_values import BadValueError, parse_value
from netweft.emulation.v1model.names import UnknownNameError, resolve_name

Update = p4runtime_pb2.Update
MatchType = p4info_pb2.MatchField.MatchType


class CommandError(ValueError):
    """A command that is malformed or that the switch refused; the message says why."""


class ControlTarget(Protocol):
    """Where a session's requests go."""

    def write(self, updates: list[p4runtime_pb2.Update]) -> None:
        """Apply the updates; raise :class:`CommandError` naming the first refusal."""

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        """The entities matching a read filter."""


@dataclass
class _McNode:
    rid: int
    ports: list[int]
    groups: set[int] = field(default_factory=set)


class CommandSession:
    """One simple_switch_CLI session over a P4Info and a control target."""

    def __init__(self, p4info: p4info_pb2.P4Info, target: ControlTarget) -> None:
        self.p4info = p4info
        self.target = target
        self._handles: dict[str, dict[int, p4runtime_pb2.TableEntry]] = {}
        self._next_handle: dict[str, int] = {}
        self._nodes: dict[int, _McNode] = {}
        self._next_node = 0
        self._groups: dict[int, list[int]] = {}

    # ---------------------------------------------------------------- driving

    def run_lines(self, lines: Iterable[str], where: str = "<commands>") -> list[str]:
        """Run commands in order; a failure raises naming ``where:line``."""
        out = []
        for number, line in enumerate(lines, 1):
            try:
                text = self.execute(line)
            except CommandError as err:
                raise CommandError(f"{where}:{number}: {err}") from None
            if text:
                out.append(text)
        return out

    def run_file(self, path: str | Path) -> list[str]:
        """Run a command-list file."""
        try:
            lines = Path(path).read_text().splitlines()
        except OSError as err:
            raise CommandError(f"{path}: {err.strerror}") from None
        return self.run_lines(lines, str(path))

    def execute(self, line: str) -> str:
        """Run one command; returns what simple_switch_CLI would print (may be empty)."""
        line = line.split("#", 1)[0].strip()
        if not line:
            return ""
        try:
            words = shlex.split(line)
        except ValueError as err:
            raise CommandError(str(err)) from None
        name, args = words[0], words[1:]
        handler = getattr(self, f"do_{name}", None)
        if handler is None:
            raise CommandError(f"unknown command {name!r} (known: {', '.join(COMMANDS)})")
        return handler(args)

    # ---------------------------------------------------------------- P4Info lookups

    def _object(self, kind: str, name: str) -> Any:
        objects = {o.preamble.name: o for o in getattr(self.p4info, kind)}
        aliases = {o.preamble.alias: o.preamble.name for o in getattr(self.p4info, kind)}
        label = kind[:-1].replace("_", " ")
        if name in aliases and name not in objects:
            name = aliases[name]
        try:
            return objects[resolve_name(name, objects, label)]
        except UnknownNameError as err:
            raise CommandError(str(err)) from None

    def _action(self, table: p4info_pb2.Table, name: str) -> p4info_pb2.Action:
        allowed = {r.id for r in table.action_refs}
        candidates = {a.preamble.name: a for a in self.p4info.actions
                      if a.preamble.id in allowed}
        aliases = {a.preamble.alias: a.preamble.name for a in candidates.values()}
        if name in aliases and name not in candidates:
            name = aliases[name]
        try:
            return candidates[resolve_name(name, candidates,
                                           f"action of table {table.preamble.name}")]
        except UnknownNameError as err:
            raise CommandError(str(err)) from None

    @staticmethod
    def _value(text: str, width: int, what: str) -> int:
        try:
            return parse_value(text, width, what)
        except BadValueError as err:
            raise CommandError(str(err)) from None

    @staticmethod
    def _int(text: str, what: str) -> int:
        try:
            return int(text, 0)
        except ValueError:
            raise CommandError(f"{what}: {text!r} is not a number") from None

    def _params(self, action: p4info_pb2.Action, words: list[str]) -> p4runtime_pb2.Action:
        if len(words) != len(action.params):
            raise CommandError(f"action {action.preamble.name} takes {len(action.params)} "
                               f"parameter(s), got {len(words)}")
        out = p4runtime_pb2.Action(action_id=action.preamble.id)
        for spec, word in zip(action.params, words, strict=True):
            value = self._value(word, spec.bitwidth,
                                f"action {action.preamble.name} parameter {spec.name}")
            out.params.add(param_id=spec.id, value=bytestrings.encode(value))
        return out

    def _match(self, table: p4info_pb2.Table, words: list[str], entry: p4runtime_pb2.TableEntry
               ) -> None:
        if len(words) != len(table.match_fields):
            raise CommandError(f"table {table.preamble.name} has {len(table.match_fields)} "
                               f"key field(s), got {len(words)}")
        for mf, word in zip(table.match_fields, words, strict=True):
            what = f"table {table.preamble.name} key {mf.name}"
            width = mf.bitwidth
            kind = mf.match_type
            if kind == MatchType.EXACT:
                entry.match.add(field_id=mf.id).exact.value = bytestrings.encode(
                    self._value(word, width, what))
            elif kind == MatchType.OPTIONAL:
                if word != "*":
                    entry.match.add(field_id=mf.id).optional.value = bytestrings.encode(
                        self._value(word, width, what))
            elif kind == MatchType.LPM:
                value, sep, plen = word.partition("/")
                if not sep:
                    raise CommandError(f"{what}: an lpm key is VALUE/PREFIX_LENGTH")
                length = self._int(plen, what)
                if length:
                    fm = entry.match.add(field_id=mf.id)
                    fm.lpm.value = bytestrings.encode(self._value(value, width, what))
                    fm.lpm.prefix_len = length
            elif kind == MatchType.TERNARY:
                value, sep, mask = word.partition("&&&")
                if not sep:
                    raise CommandError(f"{what}: a ternary key is VALUE&&&MASK")
                v, m = self._value(value, width, what), self._value(mask, width, what)
                if m:
                    fm = entry.match.add(field_id=mf.id)
                    fm.ternary.value, fm.ternary.mask = (bytestrings.encode(v & m),
                                                         bytestrings.encode(m))
            elif kind == MatchType.RANGE:
                low, sep, high = word.partition("->")
                if not sep:
                    raise CommandError(f"{what}: a range key is LOW->HIGH")
                lo, hi = self._value(low, width, what), self._value(high, width, what)
                if (lo, hi) != (0, (1 << width) - 1):
                    fm = entry.match.add(field_id=mf.id)
                    fm.range.low, fm.range.high = bytestrings.encode(lo), bytestrings.encode(hi)
            else:
                raise CommandError(f"{what}: match type {kind} is not supported")

    def _write(self, kind: int, entity: p4runtime_pb2.Entity) -> None:
        update = Update(type=kind)
        update.entity.CopyFrom(entity)
        self.target.write([update])

    # ---------------------------------------------------------------- tables

    def do_table_add(self, args: list[str]) -> str:
        if "=>" not in args or len(args) < 3:
            raise CommandError("usage: table_add TABLE ACTION KEY... => PARAM... [PRIORITY]")
        split = args.index("=>")
        table = self._object("tables", args[0])
        action = self._action(table, args[1])
        entry = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
        self._match(table, args[2:split], entry)
        params = args[split + 1:]
        needs_priority = any(mf.match_type in (MatchType.TERNARY, MatchType.RANGE,
                                               MatchType.OPTIONAL) for mf in table.match_fields)
        if needs_priority:
            if len(params) != len(action.params) + 1:
                raise CommandError(f"table {table.preamble.name} has ternary, range or "
                                   "optional keys: give the priority after the parameters")
            entry.priority = self._int(params.pop(), "priority")
        entry.action.action.CopyFrom(self._params(action, params))
        entity = p4runtime_pb2.Entity(table_entry=entry)
        self._write(Update.INSERT, entity)
        name = table.preamble.name
        handle = self._next_handle.get(name, 0)
        self._next_handle[name] = handle + 1
        self._handles.setdefault(name, {})[handle] = entry
        return f"Entry has been added with handle {handle}"

    def _entry(self, table: p4info_pb2.Table, text: str) -> p4runtime_pb2.TableEntry:
        handle = self._int(text, "handle")
        entry = self._handles.get(table.preamble.name, {}).get(handle)
        if entry is None:
            raise CommandError(f"table {table.preamble.name}: no entry with handle {handle} "
                               "in this session")
        return entry

    def do_table_modify(self, args: list[str]) -> str:
        if len(args) < 3:
            raise CommandError("usage: table_modify TABLE ACTION HANDLE PARAM...")
        table = self._object("tables", args[0])
        action = self._action(table, args[1])
        entry = p4runtime_pb2.TableEntry()
        entry.CopyFrom(self._entry(table, args[2]))
        entry.action.action.CopyFrom(self._params(action, args[3:]))
        self._write(Update.MODIFY, p4runtime_pb2.Entity(table_entry=entry))
        self._handles[table.preamble.name][self._int(args[2], "handle")] = entry
        return ""

    def do_table_delete(self, args: list[str]) -> str:
        if len(args) != 2:
            raise CommandError("usage: table_delete TABLE HANDLE")
        table = self._object("tables", args[0])
        entry = self._entry(table, args[1])
        self._write(Update.DELETE, p4runtime_pb2.Entity(table_entry=entry))
        del self._handles[table.preamble.name][self._int(args[1], "handle")]
        return ""

    def do_table_set_default(self, args: list[str]) -> str:
        if len(args) < 2:
            raise CommandError("usage: table_set_default TABLE ACTION PARAM...")
        table = self._object("tables", args[0])
        action = self._action(table, args[1])
        entry = p4runtime_pb2.TableEntry(table_id=table.preamble.id, is_default_action=True)
        entry.action.action.CopyFrom(self._params(action, args[2:]))
        self._write(Update.MODIFY, p4runtime_pb2.Entity(table_entry=entry))
        return ""

    def _table_entries(self, table: p4info_pb2.Table) -> list[p4runtime_pb2.TableEntry]:
        query = p4runtime_pb2.Entity()
        query.table_entry.table_id = table.preamble.id
        return [e.table_entry for e in self.target.read(query)]

    def do_table_clear(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: table_clear TABLE")
        table = self._object("tables", args[0])
        updates = []
        for entry in self._table_entries(table):
            update = Update(type=Update.DELETE)
            update.entity.table_entry.CopyFrom(entry)
            updates.append(update)
        if updates:
            self.target.write(updates)
        self._handles.pop(table.preamble.name, None)
        return ""

    def do_table_dump(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: table_dump TABLE")
        table = self._object("tables", args[0])
        actions = {a.preamble.id: a for a in self.p4info.actions}
        fields = {mf.id: mf for mf in table.match_fields}
        lines = [f"TABLE {table.preamble.name}"]
        for entry in self._table_entries(table):
            keys = []
            for fm in entry.match:
                kind = fm.WhichOneof("field_match_type")
                v = getattr(fm, kind)
                text = {"exact": lambda v: f"0x{v.value.hex()}",
                        "optional": lambda v: f"0x{v.value.hex()}",
                        "lpm": lambda v: f"0x{v.value.hex()}/{v.prefix_len}",
                        "ternary": lambda v: f"0x{v.value.hex()}&&&0x{v.mask.hex()}",
                        "range": lambda v: f"0x{v.low.hex()}->0x{v.high.hex()}"}[kind](v)
                keys.append(f"{fields[fm.field_id].name}={text}")
            act = entry.action.action
            params = " ".join(f"0x{p.value.hex()}" for p in act.params)
            action = actions[act.action_id].preamble.name if act.action_id else "-"
            prio = f" priority {entry.priority}" if entry.priority else ""
            lines.append(f"  {' '.join(keys)}{prio} => {action} {params}".rstrip())
        return "\n".join(lines)

    # ---------------------------------------------------------------- multicast

    def _group_entity(self, gid: int) -> p4runtime_pb2.Entity:
        entity = p4runtime_pb2.Entity()
        group = entity.packet_replication_engine_entry.multicast_group_entry
        group.multicast_group_id = gid
        for handle in self._groups[gid]:
            node = self._nodes[handle]
            for port in node.ports:
                group.replicas.add(egress_port=port, instance=node.rid)
        return entity

    def do_mc_mgrp_create(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: mc_mgrp_create GROUP")
        gid = self._int(args[0], "group")
        self._groups[gid] = []
        try:
            self._write(Update.INSERT, self._group_entity(gid))
        except CommandError:
            del self._groups[gid]
            raise
        return f"Creating multicast group {gid}"

    def do_mc_mgrp_destroy(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: mc_mgrp_destroy GROUP")
        gid = self._int(args[0], "group")
        entity = p4runtime_pb2.Entity()
        entity.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = gid
        self._write(Update.DELETE, entity)
        for handle in self._groups.pop(gid, []):
            self._nodes[handle].groups.discard(gid)
        return ""

    def do_mc_node_create(self, args: list[str]) -> str:
        if len(args) < 2:
            raise CommandError("usage: mc_node_create RID PORT...")
        rid = self._int(args[0], "rid")
        ports = [self._int(p, "port") for p in args[1:]]
        handle = self._next_node
        self._next_node += 1
        self._nodes[handle] = _McNode(rid, ports)
        return f"node was created with handle {handle}"

    def do_mc_node_destroy(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: mc_node_destroy HANDLE")
        node = self._node(args[0])
        if node.groups:
            raise CommandError(f"node {args[0]} is associated with group(s) "
                               f"{sorted(node.groups)}: dissociate it first")
        del self._nodes[self._int(args[0], "handle")]
        return ""

    def _node(self, text: str) -> _McNode:
        node = self._nodes.get(self._int(text, "handle"))
        if node is None:
            raise CommandError(f"no multicast node with handle {text} in this session")
        return node

    def _known_group(self, text: str) -> int:
        gid = self._int(text, "group")
        if gid not in self._groups:
            raise CommandError(f"multicast group {gid} was not created in this session "
                               "(mc_mgrp_create it first)")
        return gid

    def do_mc_node_associate(self, args: list[str]) -> str:
        if len(args) != 2:
            raise CommandError("usage: mc_node_associate GROUP HANDLE")
        gid, node, handle = self._known_group(args[0]), self._node(args[1]), int(args[1], 0)
        if handle not in self._groups[gid]:
            self._groups[gid].append(handle)
            try:
                self._write(Update.MODIFY, self._group_entity(gid))
            except CommandError:
                self._groups[gid].remove(handle)
                raise
            node.groups.add(gid)
        return f"Associating node {handle} to multicast group {gid}"

    def do_mc_node_dissociate(self, args: list[str]) -> str:
        if len(args) != 2:
            raise CommandError("usage: mc_node_dissociate GROUP HANDLE")
        gid, node, handle = self._known_group(args[0]), self._node(args[1]), int(args[1], 0)
        if handle in self._groups[gid]:
            self._groups[gid].remove(handle)
            self._write(Update.MODIFY, self._group_entity(gid))
            node.groups.discard(gid)
        return ""

    # ---------------------------------------------------------------- mirroring

    def do_mirroring_add(self, args: list[str]) -> str:
        if len(args) != 2:
            raise CommandError("usage: mirroring_add SESSION PORT")
        entity = p4runtime_pb2.Entity()
        session = entity.packet_replication_engine_entry.clone_session_entry
        session.session_id = self._int(args[0], "session")
        session.replicas.add(egress_port=self._int(args[1], "port"))
        existing = p4runtime_pb2.Entity()
        existing.packet_replication_engine_entry.clone_session_entry.session_id = \
            session.session_id
        known = any(e.packet_replication_engine_entry.clone_session_entry.session_id ==
                    session.session_id for e in self.target.read(existing))
        self._write(Update.MODIFY if known else Update.INSERT, entity)
        return ""

    def do_mirroring_delete(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: mirroring_delete SESSION")
        entity = p4runtime_pb2.Entity()
        entity.packet_replication_engine_entry.clone_session_entry.session_id = \
            self._int(args[0], "session")
        self._write(Update.DELETE, entity)
        return ""

    # ---------------------------------------------------------------- registers, counters

    def do_register_write(self, args: list[str]) -> str:
        if len(args) != 3:
            raise CommandError("usage: register_write REGISTER INDEX VALUE")
        reg = self._object("registers", args[0])
        width = reg.type_spec.bitstring.bit.bitwidth or reg.type_spec.bitstring.int.bitwidth
        entity = p4runtime_pb2.Entity()
        entry = entity.register_entry
        entry.register_id = reg.preamble.id
        entry.index.index = self._int(args[1], "index")
        entry.data.bitstring = bytestrings.encode(
            self._value(args[2], width, f"register {reg.preamble.name}"))
        self._write(Update.MODIFY, entity)
        return ""

    def do_register_read(self, args: list[str]) -> str:
        if len(args) not in (1, 2):
            raise CommandError("usage: register_read REGISTER [INDEX]")
        reg = self._object("registers", args[0])
        query = p4runtime_pb2.Entity()
        query.register_entry.register_id = reg.preamble.id
        if len(args) == 2:
            query.register_entry.index.index = self._int(args[1], "index")
        cells = [(e.register_entry.index.index, int.from_bytes(e.register_entry.data.bitstring,
                                                               "big"))
                 for e in self.target.read(query)]
        if len(args) == 2:
            return f"{reg.preamble.name}[{cells[0][0]}]= {cells[0][1]}"
        return f"{reg.preamble.name}= " + ", ".join(str(v) for _, v in cells)

    def do_register_reset(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: register_reset REGISTER")
        reg = self._object("registers", args[0])
        entity = p4runtime_pb2.Entity()
        entity.register_entry.register_id = reg.preamble.id
        entity.register_entry.data.bitstring = b"\x00"
        self._write(Update.MODIFY, entity)
        return ""

    def do_counter_read(self, args: list[str]) -> str:
        if len(args) != 2:
            raise CommandError("usage: counter_read COUNTER INDEX")
        counter = self._object("counters", args[0])
        query = p4runtime_pb2.Entity()
        query.counter_entry.counter_id = counter.preamble.id
        query.counter_entry.index.index = self._int(args[1], "index")
        (cell,) = self.target.read(query)
        data = cell.counter_entry.data
        return (f"{counter.preamble.name}[{args[1]}]=  BmCounterValue(packets={data.packet_count},"
                f" bytes={data.byte_count})")

    def do_counter_reset(self, args: list[str]) -> str:
        if len(args) != 1:
            raise CommandError("usage: counter_reset COUNTER")
        counter = self._object("counters", args[0])
        entity = p4runtime_pb2.Entity()
        entity.counter_entry.counter_id = counter.preamble.id
        entity.counter_entry.data.SetInParent()
        self._write(Update.MODIFY, entity)
        return ""


COMMANDS = sorted(name[3:] for name in dir(CommandSession) if name.startswith("do_"))

_SESSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def session_for(switch: Any) -> CommandSession:
    """The command session of a switch process's control channel (one per switch, so
    handles last as long as the switch): the switch's own P4Info over an in-process
    :class:`~netweft.emulation.p4runtime.device.Device`."""
    session = _SESSIONS.get(switch)
    if session is None:
        from netweft.emulation.p4runtime.device import Device
        from netweft.p4.compiler.p4info import build_p4info

        def no_reload(data: bytes) -> Any:
            raise CommandError("the control channel does not load programs")

        device = Device(no_reload)
        device.install(build_p4info(switch.program), b"", switch=switch)
        session = CommandSession(device.pipeline.p4info, DeviceTarget(device))
        _SESSIONS[switch] = session
    return session


class DeviceTarget:
    """A :class:`ControlTarget` over an in-process Device (tests, embedded use)."""

    def __init__(self, device: Any) -> None:
        self.device = device

    def write(self, updates: list[p4runtime_pb2.Update]) -> None:
        from netweft.emulation.p4runtime.errors import P4RuntimeError
        for result in self.device.write(updates):
            if isinstance(result, P4RuntimeError):
                raise CommandError(f"{result.code.name}: {result.message}")

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        from netweft.emulation.p4runtime.errors import P4RuntimeError
        try:
            return self.device.read([entity])
        except P4RuntimeError as err:
            raise CommandError(f"{err.code.name}: {err.message}") from None
