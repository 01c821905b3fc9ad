"""TableEntry, DirectCounterEntry and DirectMeterEntry over the switch's match tables.

Entries are found by ``(table, normalised match, priority)``, the identity
P4Runtime gives them.  Don't-care fields must be omitted (a ternary mask of
0, a full range or a prefix length of 0 is refused), masked-off bits must be
zero, and tables with ternary, range or optional fields need a priority above
zero (P4Runtime's rule; the switch's Python API also accepts 0 for p4c's STF
tests).  Const tables (``const entries``) refuse writes.  ``idle_timeout_ns``
is accepted only by tables that support idle timeouts (``support_timeout``);
an INSERT or MODIFY starts the entry's idle time afresh (see
:mod:`.idle_timeouts`), and a read that sets ``time_since_last_hit`` gets it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings
from netweft.emulation.p4runtime.action_profiles import ActionProfiles
from netweft.emulation.p4runtime.actions import action_from_proto, action_to_proto
from netweft.emulation.p4runtime.errors import (
    already_exists,
    invalid,
    not_found,
    permission_denied,
    resource_exhausted,
    unimplemented,
)
from netweft.emulation.p4runtime.meter_configs import meter_config_to_proto, rates_from_proto
from netweft.emulation.p4runtime.pipeline import Pipeline
from netweft.emulation.v1model.match_table import MatchTable, TableEntry, TableError
from netweft.emulation.v1model.meters import Meter

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)
MatchType = p4info_pb2.MatchField.MatchType
NOTIFY_CONTROL = p4info_pb2.Table.IdleTimeoutBehavior.NOTIFY_CONTROL
_KIND = {MatchType.EXACT: "exact", MatchType.LPM: "lpm", MatchType.TERNARY: "ternary",
         MatchType.RANGE: "range", MatchType.OPTIONAL: "optional"}

Key = tuple[Any, ...]


@dataclass
class EntryState:
    """What P4Runtime knows of an entry beyond the switch's TableEntry."""

    entry: TableEntry
    ref: tuple[str, int] | None = None          # ("member" | "group", id)
    controller_metadata: int = 0
    metadata: bytes = b""
    idle_timeout_ns: int = 0
    last_hit_ns: int = 0        # the clock's time of the last hit seen (or of the write)
    seen_hits: int = 0          # ``entry.hits`` when last looked at
    idle_notified: bool = False  # reported idle, not hit nor modified since
    extra: dict[str, Any] = field(default_factory=dict)


class TableEntries:
    """Every table's entries, keyed as P4Runtime identifies them."""

    def __init__(self, pipeline: Pipeline, profiles: ActionProfiles,
                 clock: Callable[[], int] = time.monotonic_ns) -> None:
        self.pipeline = pipeline
        self.profiles = profiles
        self.clock = clock
        self.entries: dict[int, dict[Key, EntryState]] = {}
        self.initial_defaults: dict[int, tuple[str | None, tuple[int, ...]]] = {}
        for info in pipeline.index.all("tables"):
            mt = pipeline.switch.tables[info.preamble.name]
            self.entries[info.preamble.id] = {(e.match, e.priority): EntryState(e)
                                              for e in mt.entries}
            self.initial_defaults[info.preamble.id] = (mt.default_action, mt.default_args)

    # ---------------------------------------------------------------- match keys

    def _match(self, info: p4info_pb2.Table, mt: MatchTable,
               fields: Any) -> tuple[list[Any], Key]:
        """The switch's match values and the normalised key of P4Runtime field matches."""
        by_id = {}
        specs = {mf.id: mf for mf in info.match_fields}
        for fm in fields:
            if fm.field_id not in specs:
                raise invalid(f"table {info.preamble.name}: no match field with id "
                              f"{fm.field_id}")
            if fm.field_id in by_id:
                raise invalid(f"table {info.preamble.name}: match field "
                              f"{specs[fm.field_id].name} given twice")
            by_id[fm.field_id] = fm
        values, norm = [], []
        for mf, key in zip(info.match_fields, mt.keys, strict=True):
            value, normal = _field(info.preamble.name, mf, key.match_kind, by_id.get(mf.id))
            values.append(value)
            norm.append(normal)
        return values, tuple(norm)

    def _priority(self, info: p4info_pb2.Table, mt: MatchTable, priority: int) -> int:
        if mt.needs_priority:
            if priority <= 0:
                raise invalid(f"table {info.preamble.name} has ternary, range or optional "
                              f"fields: entries need a priority above 0 (got {priority})")
            return priority
        if priority != 0:
            raise invalid(f"table {info.preamble.name} has only exact and lpm fields: its "
                          f"entries take no priority (got {priority})")
        return 0

    def _locate(self, msg: p4runtime_pb2.TableEntry
                ) -> tuple[p4info_pb2.Table, MatchTable, list[Any], Key]:
        info = self.pipeline.index.table(msg.table_id)
        mt = self.pipeline.switch.tables[info.preamble.name]
        values, norm = self._match(info, mt, msg.match)
        prio = self._priority(info, mt, msg.priority)
        return info, mt, values, (norm, prio)

    # ---------------------------------------------------------------- writes

    def write(self, kind: int, msg: p4runtime_pb2.TableEntry) -> None:
        info = self.pipeline.index.table(msg.table_id)
        if msg.is_default_action:
            self._write_default(kind, info, msg)
            return
        if info.is_const_table or info.preamble.name in self.pipeline.switch._const_entry_tables:
            raise permission_denied(f"table {info.preamble.name} has const entries: the "
                                    "control plane cannot change them")
        if not info.match_fields:
            raise invalid(f"table {info.preamble.name} has no key: only its default entry "
                          "can be written")
        info, mt, values, key = self._locate(msg)
        table = self.entries[info.preamble.id]
        if kind == DELETE:
            state = table.pop(key, None)
            if state is None:
                raise not_found(f"table {info.preamble.name}: no such entry")
            mt.delete(state.entry)
            if state.ref:
                self.profiles.detach(info.preamble.id, state.ref, state.entry)
            return
        if kind == INSERT and key in table:
            raise already_exists(f"table {info.preamble.name}: an entry with this match "
                                 "and priority exists")
        if kind == MODIFY and key not in table:
            raise not_found(f"table {info.preamble.name}: no such entry")
        if not msg.HasField("action"):
            raise invalid(f"table {info.preamble.name}: the entry has no action")
        self._check_idle_timeout(info, msg.idle_timeout_ns)
        name, args, bound, ref = self._action(info, msg.action)
        # Everything that can refuse the update is checked above this line: a refused
        # update leaves no trace (P4Runtime applies an update whole or not at all).
        counter = self._counter_data(info, msg)
        rates = self._meter_rates(info, msg)
        if kind == INSERT:
            if mt.size is not None and len(mt.entries) >= mt.size:
                raise resource_exhausted(f"table {info.preamble.name} is full "
                                         f"({mt.size} entries)")
            try:
                entry = mt.add_bound(values, name, args, bound, key[1])
            except TableError as err:
                raise invalid(str(err)) from None
            self.pipeline.switch._attach_direct_meter(mt, entry)
            state = EntryState(entry)
            table[key] = state
        else:
            state = table[key]
            if state.ref:
                self.profiles.detach(info.preamble.id, state.ref, state.entry)
            mt.set_bound(state.entry, name, args, bound)
        state.ref = ref
        if ref:
            self.profiles.attach(info.preamble.id, ref, mt, state.entry)
        state.controller_metadata = msg.controller_metadata
        state.metadata = msg.metadata
        state.idle_timeout_ns = msg.idle_timeout_ns
        state.last_hit_ns, state.seen_hits = self.clock(), state.entry.hits
        state.idle_notified = False
        if counter is not None:
            state.entry.counter[:] = counter
        if rates is not None:
            self._apply_rates(info, state.entry, rates)

    @staticmethod
    def _check_idle_timeout(info: p4info_pb2.Table, idle_timeout_ns: int) -> None:
        if idle_timeout_ns < 0:
            raise invalid(f"table {info.preamble.name}: idle_timeout_ns cannot be negative")
        if idle_timeout_ns and info.idle_timeout_behavior != NOTIFY_CONTROL:
            raise invalid(f"table {info.preamble.name} does not support idle timeouts "
                          "(no support_timeout = true): idle_timeout_ns must be 0")

    def _counter_data(self, info: p4info_pb2.Table, msg: p4runtime_pb2.TableEntry
                      ) -> list[int] | None:
        """The entry's ``counter_data`` as ``[packets, bytes]``, checked; None if absent."""
        if not msg.HasField("counter_data"):
            return None
        self._check_direct("counter", info)
        return [msg.counter_data.packet_count, msg.counter_data.byte_count]

    def _meter_rates(self, info: p4info_pb2.Table, msg: p4runtime_pb2.TableEntry
                     ) -> list[tuple[float, int]] | None:
        """The entry's ``meter_config`` as rates, checked; None if absent, [] to unset."""
        if not msg.HasField("meter_config"):
            return None
        self._check_direct("meter", info)
        return rates_from_proto(msg.meter_config)

    def _action(self, info: p4info_pb2.Table, action: p4runtime_pb2.TableAction
                ) -> tuple[str, tuple[int, ...], Any, tuple[str, int] | None]:
        tid = info.preamble.id
        mt = self.pipeline.switch.tables[info.preamble.name]
        which = action.WhichOneof("type")
        if which == "action_profile_action_set":
            raise unimplemented("one-shot action selector programming "
                                "(action_profile_action_set) is not supported; "
                                "write members and groups")
        if info.implementation_id:
            if which == "action_profile_member_id":
                name, args, bound = self.profiles.bind_member(tid, action.action_profile_member_id)
                return name, args, bound, ("member", action.action_profile_member_id)
            if which == "action_profile_group_id":
                bound = self.profiles.selector(tid, action.action_profile_group_id)
                return "<group>", (), bound, ("group", action.action_profile_group_id)
            raise invalid(f"table {info.preamble.name} is implemented by an action profile: "
                          "its entries name a member or a group, not an action")
        if which != "action":
            raise invalid(f"table {info.preamble.name} has no action profile: its entries "
                          "name an action")
        name, args = action_from_proto(self.pipeline, tid, action.action)
        try:
            return (*mt.bind_action(name, args), None)
        except TableError as err:
            raise invalid(str(err)) from None

    def _write_default(self, kind: int, info: p4info_pb2.Table,
                       msg: p4runtime_pb2.TableEntry) -> None:
        name = info.preamble.name
        if kind != MODIFY:
            raise invalid(f"table {name}: the default entry always exists; only MODIFY it")
        if msg.match or msg.priority:
            raise invalid(f"table {name}: the default entry has no match and no priority")
        mt = self.pipeline.switch.tables[name]
        if mt.default_const or info.const_default_action_id:
            raise permission_denied(f"table {name}: the default action is const")
        for what, request_field in (("counter", "counter_data"), ("meter", "meter_config")):
            if msg.HasField(request_field):
                self._check_direct(what, info)
                raise unimplemented(f"table {name}: the direct {what} of the default entry "
                                    "cannot be written on this target")
        if not msg.HasField("action"):
            action, args = self.initial_defaults[info.preamble.id]
            if action is None:
                raise invalid(f"table {name}: no initial default action to restore")
        else:
            if msg.action.WhichOneof("type") != "action":
                raise unimplemented(f"table {name}: a default entry naming a member or "
                                    "group is not supported")
            action, args = action_from_proto(self.pipeline, info.preamble.id,
                                             msg.action.action, default=True)
        try:
            mt.set_default(action, args)
        except TableError as err:
            raise invalid(str(err)) from None

    # ---------------------------------------------------------------- reads

    def _tables(self, table_id: int) -> list[p4info_pb2.Table]:
        if table_id == 0:
            return self.pipeline.index.all("tables")
        return [self.pipeline.index.table(table_id)]

    def _selected(self, msg: p4runtime_pb2.TableEntry
                  ) -> Iterator[tuple[p4info_pb2.Table, MatchTable, EntryState]]:
        for info in self._tables(msg.table_id):
            mt = self.pipeline.switch.tables[info.preamble.name]
            table = self.entries[info.preamble.id]
            if msg.match:
                _, _, _, key = self._locate(msg)
                if key in table:
                    yield info, mt, table[key]
                continue
            for state in list(table.values()):
                if msg.priority and state.entry.priority != msg.priority:
                    continue
                yield info, mt, state

    def read(self, msg: p4runtime_pb2.TableEntry) -> Iterator[p4runtime_pb2.Entity]:
        if msg.is_default_action:
            for info in self._tables(msg.table_id):
                entity = p4runtime_pb2.Entity()
                self._default_to_proto(info, entity.table_entry)
                yield entity
            return
        since_hit = msg.HasField("time_since_last_hit")
        now = self.clock() if since_hit else 0
        for info, mt, state in self._selected(msg):
            entity = p4runtime_pb2.Entity()
            self._entry_to_proto(info, mt, state, entity.table_entry)
            if since_hit and info.idle_timeout_behavior == NOTIFY_CONTROL:
                elapsed = 0 if state.entry.hits != state.seen_hits else now - state.last_hit_ns
                entity.table_entry.time_since_last_hit.elapsed_ns = max(elapsed, 0)
            yield entity

    def key_to_proto(self, info: p4info_pb2.Table, mt: MatchTable, state: EntryState,
                     out: p4runtime_pb2.TableEntry) -> None:
        """An entry's identity: table id, match and priority."""
        out.table_id = info.preamble.id
        for mf, key, m in zip(info.match_fields, mt.keys, state.entry.match, strict=True):
            _field_to_proto(mf, key.match_kind, key.width, m, out.match)
        out.priority = state.entry.priority if mt.needs_priority else 0

    def _entry_to_proto(self, info: p4info_pb2.Table, mt: MatchTable, state: EntryState,
                        out: p4runtime_pb2.TableEntry) -> None:
        entry = state.entry
        self.key_to_proto(info, mt, state, out)
        if state.ref is None:
            out.action.action.CopyFrom(action_to_proto(self.pipeline, entry.action, entry.args))
        elif state.ref[0] == "member":
            out.action.action_profile_member_id = state.ref[1]
        else:
            out.action.action_profile_group_id = state.ref[1]
        out.controller_metadata = state.controller_metadata
        out.metadata = state.metadata
        out.idle_timeout_ns = state.idle_timeout_ns
        out.is_const = info.is_const_table or info.preamble.name in \
            self.pipeline.switch._const_entry_tables
        if info.preamble.id in self.pipeline.index.direct_counter_of:
            out.counter_data.packet_count, out.counter_data.byte_count = entry.counter
        if info.preamble.id in self.pipeline.index.direct_meter_of and entry.meter is not None \
                and entry.meter.configured:
            out.meter_config.CopyFrom(meter_config_to_proto(entry.meter.get_rates()))

    def _default_to_proto(self, info: p4info_pb2.Table, out: p4runtime_pb2.TableEntry) -> None:
        mt = self.pipeline.switch.tables[info.preamble.name]
        out.table_id = info.preamble.id
        out.is_default_action = True
        if mt.default_action is not None:
            out.action.action.CopyFrom(action_to_proto(self.pipeline, mt.default_action,
                                                       mt.default_args))

    # ---------------------------------------------------------------- direct resources

    def _check_direct(self, what: str, info: p4info_pb2.Table) -> None:
        pool = (self.pipeline.index.direct_counter_of if what == "counter"
                else self.pipeline.index.direct_meter_of)
        if info.preamble.id not in pool:
            raise invalid(f"table {info.preamble.name} has no direct {what}")

    def _set_meter(self, info: p4info_pb2.Table, entry: TableEntry,
                   config: p4runtime_pb2.MeterConfig) -> None:
        self._check_direct("meter", info)
        self._apply_rates(info, entry, rates_from_proto(config))

    def _apply_rates(self, info: p4info_pb2.Table, entry: TableEntry,
                     rates: list[tuple[float, int]]) -> None:
        """Set checked rates (``[]``: unset) on an entry's direct meter."""
        if not rates:
            entry.meter = Meter(entry.meter.meter_type if entry.meter else "bytes")
            return
        try:
            self.pipeline.switch.direct_meter_set_rates(info.preamble.name, entry, rates)
        except ValueError as err:
            raise invalid(str(err)) from None

    def _direct_target(self, what: str, kind: int, msg: p4runtime_pb2.TableEntry
                       ) -> tuple[p4info_pb2.Table, MatchTable, EntryState]:
        if kind != MODIFY:
            raise invalid(f"direct {what} entries exist with their table entry: only MODIFY")
        info, mt, _values, key = self._locate(msg)
        self._check_direct(what, info)
        state = self.entries[info.preamble.id].get(key)
        if state is None:
            raise not_found(f"table {info.preamble.name}: no such entry")
        return info, mt, state

    def write_direct_counter(self, kind: int, msg: p4runtime_pb2.DirectCounterEntry) -> None:
        _info, _mt, state = self._direct_target("counter", kind, msg.table_entry)
        state.entry.counter[:] = [msg.data.packet_count, msg.data.byte_count]

    def write_direct_meter(self, kind: int, msg: p4runtime_pb2.DirectMeterEntry) -> None:
        info, _mt, state = self._direct_target("meter", kind, msg.table_entry)
        self._set_meter(info, state.entry, msg.config)

    def read_direct(self, what: str, msg: Any) -> Iterator[p4runtime_pb2.Entity]:
        pool = (self.pipeline.index.direct_counter_of if what == "counter"
                else self.pipeline.index.direct_meter_of)
        query = msg.table_entry
        if query.table_id and query.table_id not in pool:
            self.pipeline.index.table(query.table_id)
            raise invalid(f"table {self.pipeline.index.name('tables', query.table_id)} has no "
                          f"direct {what}")
        for info, mt, state in self._selected(query):
            if info.preamble.id not in pool:
                continue
            entity = p4runtime_pb2.Entity()
            if what == "counter":
                out = entity.direct_counter_entry
                out.data.packet_count, out.data.byte_count = state.entry.counter
            else:
                out = entity.direct_meter_entry
                meter = state.entry.meter
                if meter is not None and meter.configured:
                    out.config.CopyFrom(meter_config_to_proto(meter.get_rates()))
            self._entry_to_proto(info, mt, state, out.table_entry)
            out.table_entry.ClearField("counter_data")
            out.table_entry.ClearField("meter_config")
            yield entity


def _field(table: str, mf: p4info_pb2.MatchField, kind: str,
           fm: p4runtime_pb2.FieldMatch | None) -> tuple[Any, Any]:
    """(switch API value, normalised match) of one field; ``fm`` None when omitted."""
    what = f"table {table} field {mf.name}"
    width = mf.bitwidth
    full = (1 << width) - 1
    if fm is None:
        if kind == "exact":
            raise invalid(f"{what}: exact fields cannot be omitted")
        return None, {"lpm": (0, 0), "ternary": (0, 0), "range": (0, full),
                      "optional": None}.get(kind)
    given = fm.WhichOneof("field_match_type")
    expected = _KIND.get(mf.match_type, kind)
    if given != expected:
        raise invalid(f"{what}: a {expected} field, given as {given}")
    if given == "exact":
        v = bytestrings.decode(fm.exact.value, width, what)
        return v, (v,)
    if given == "optional":
        v = bytestrings.decode(fm.optional.value, width, what)
        return v, (v,)
    if given == "lpm":
        v = bytestrings.decode(fm.lpm.value, width, what)
        plen = fm.lpm.prefix_len
        if not 0 < plen <= width:
            raise invalid(f"{what}: prefix length {plen} outside 1..{width} (omit the field "
                          "for a wildcard)")
        if v & ((1 << (width - plen)) - 1):
            raise invalid(f"{what}: bits beyond the prefix length {plen} must be zero")
        return (v, plen), (v, plen)
    if given == "ternary":
        v = bytestrings.decode(fm.ternary.value, width, what)
        m = bytestrings.decode(fm.ternary.mask, width, what)
        if m == 0:
            raise invalid(f"{what}: a mask of 0 is a wildcard: omit the field")
        if v & ~m:
            raise invalid(f"{what}: value bits outside the mask must be zero")
        return (v, m), (v, m)
    lo = bytestrings.decode(fm.range.low, width, what)
    hi = bytestrings.decode(fm.range.high, width, what)
    if lo > hi:
        raise invalid(f"{what}: range low {lo} is above high {hi}")
    if (lo, hi) == (0, full):
        raise invalid(f"{what}: the full range is a wildcard: omit the field")
    return (lo, hi), (lo, hi)


def _field_to_proto(mf: p4info_pb2.MatchField, kind: str, width: int, m: Any,
                    out: Any) -> None:
    full = (1 << width) - 1
    if kind == "exact":
        out.add(field_id=mf.id).exact.value = bytestrings.encode(m[0])
    elif kind == "optional":
        if m is not None:
            out.add(field_id=mf.id).optional.value = bytestrings.encode(m[0])
    elif kind == "lpm":
        if m[1]:
            fm = out.add(field_id=mf.id)
            fm.lpm.value, fm.lpm.prefix_len = bytestrings.encode(m[0]), m[1]
    elif kind == "ternary":
        if m[1]:
            fm = out.add(field_id=mf.id)
            fm.ternary.value, fm.ternary.mask = bytestrings.encode(m[0]), bytestrings.encode(m[1])
    elif kind == "range":
        if m != (0, full):
            fm = out.add(field_id=mf.id)
            fm.range.low, fm.range.high = bytestrings.encode(m[0]), bytestrings.encode(m[1])
