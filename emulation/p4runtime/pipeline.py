"""A committed forwarding pipeline: the P4Info, the switch built from the device
config, and the P4Info-to-switch name maps that every entity translator uses."""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

from netweft.emulation.p4runtime.errors import invalid
from netweft.emulation.p4runtime.p4info_index import P4InfoIndex
from netweft.emulation.switch import SoftSwitch
from netweft.emulation.v1model.match_table import MatchTable


@dataclass
class Pipeline:
    """What SetForwardingPipelineConfig committed."""

    p4info: p4info_pb2.P4Info
    switch: SoftSwitch
    device_config: bytes
    cookie: int | None = None
    index: P4InfoIndex = field(init=False)
    action_ids: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.index = P4InfoIndex(self.p4info)
        self.action_ids = {a.preamble.name: a.preamble.id for a in self.p4info.actions}
        check_consistent(self.index, self.switch)

    def match_table(self, table_id: int) -> MatchTable:
        """The switch's table for a P4Info table id (the id must exist)."""
        return self.switch.tables[self.index.name("tables", table_id)]


def check_consistent(index: P4InfoIndex, switch: SoftSwitch) -> None:
    """INVALID_ARGUMENT unless the P4Info describes the program in the device config."""
    for table in index.all("tables"):
        name = table.preamble.name
        mt = switch.tables.get(name)
        if mt is None:
            raise invalid(f"the P4Info's table {name} is not in the device config's program")
        if len(mt.keys) != len(table.match_fields):
            raise invalid(f"table {name}: the P4Info has {len(table.match_fields)} match "
                          f"field(s), the program {len(mt.keys)}")
        for mf, key in zip(table.match_fields, mt.keys, strict=True):
            if mf.bitwidth != key.width:
                raise invalid(f"table {name} field {mf.name}: the P4Info says {mf.bitwidth} "
                              f"bits, the program {key.width}")
    for kind, pool in (("registers", switch.registers), ("counters", switch.counters),
                       ("meters", switch.meters), ("value_sets", switch.value_sets)):
        for obj in index.all(kind):
            if obj.preamble.name not in pool:
                raise invalid(f"the P4Info's {kind[:-1].replace('_', ' ')} "
                              f"{obj.preamble.name} is not in the device config's program")
