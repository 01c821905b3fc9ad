"""Lookups into a P4Info by id: what each numeric id in a request refers to."""

from __future__ import annotations

from typing import Any

from p4.config.v1 import p4info_pb2

from netweft.emulation.p4runtime.errors import invalid, not_found

_KINDS = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
          "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests")


class P4InfoIndex:
    """The objects of one P4Info, by kind and id, with their match fields and params."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self._by_kind: dict[str, dict[int, Any]] = {}
        for kind in _KINDS:
            objects: dict[int, Any] = {}
            for obj in getattr(p4info, kind):
                if obj.preamble.id in objects:
                    raise invalid(f"P4Info: duplicate {kind} id {obj.preamble.id:#x}")
                objects[obj.preamble.id] = obj
            self._by_kind[kind] = objects
        self.match_fields = {t.preamble.id: {f.id: f for f in t.match_fields}
                             for t in p4info.tables}
        self.params = {a.preamble.id: {p.id: p for p in a.params} for a in p4info.actions}
        self.table_actions = {t.preamble.id: {r.id: r for r in t.action_refs}
                              for t in p4info.tables}
        self.direct_counter_of = {c.direct_table_id: c for c in p4info.direct_counters}
        self.direct_meter_of = {m.direct_table_id: m for m in p4info.direct_meters}
        self.packet_metadata = {c.preamble.name: c for c in p4info.controller_packet_metadata}

    def get(self, kind: str, object_id: int, what: str) -> Any:
        """The P4Info object of ``kind`` with ``object_id``; NOT_FOUND if there is none."""
        obj = self._by_kind[kind].get(object_id)
        if obj is None:
            raise not_found(f"{what}: no {kind[:-1].replace('_', ' ')} with id {object_id:#x} "
                            "in the P4Info")
        return obj

    def all(self, kind: str) -> list[Any]:
        """Every object of ``kind``."""
        return list(self._by_kind[kind].values())

    def table(self, table_id: int) -> p4info_pb2.Table:
        return self.get("tables", table_id, "table entry")

    def action(self, action_id: int) -> p4info_pb2.Action:
        return self.get("actions", action_id, "action")

    def name(self, kind: str, object_id: int) -> str:
        """The fully qualified name of an object known to exist."""
        return self._by_kind[kind][object_id].preamble.name
