"""CounterEntry, MeterEntry and RegisterEntry: arrays indexed by the controller.

Their cells always exist, so only MODIFY writes them (INSERT and DELETE are
refused with INVALID_ARGUMENT); an entry without an index reads, or writes,
every cell.  Reads come in two forms: messages (in-process callers) and the
bytes of each Entity (the gRPC server's Read, see :mod:`.entity_wire`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings, entity_wire
from netweft.emulation.p4runtime.errors import invalid, out_of_range
from netweft.emulation.p4runtime.meter_configs import meter_config_to_proto, rates_from_proto
from netweft.emulation.p4runtime.pipeline import Pipeline

MODIFY = p4runtime_pb2.Update.MODIFY


def _indexes(what: str, msg: Any, size: int) -> range:
    if not msg.HasField("index"):
        return range(size)
    i = msg.index.index
    if not 0 <= i < size:
        raise out_of_range(f"{what}: index {i} outside 0..{size - 1}")
    return range(i, i + 1)


def _only_modify(what: str, kind: int) -> None:
    if kind != MODIFY:
        raise invalid(f"{what} cells always exist: only MODIFY writes them")


class IndexedExterns:
    """Counters, meters and registers of one pipeline."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def _objects(self, kind: str, object_id: int) -> list[Any]:
        index = self.pipeline.index
        if object_id == 0:
            return index.all(kind)
        return [index.get(kind, object_id, kind[:-1])]

    # ---------------------------------------------------------------- counters

    def write_counter(self, kind: int, msg: p4runtime_pb2.CounterEntry) -> None:
        info = self.pipeline.index.get("counters", msg.counter_id, "counter entry")
        what = f"counter {info.preamble.name}"
        _only_modify(what, kind)
        counter = self.pipeline.switch.counters[info.preamble.name]
        for i in _indexes(what, msg, counter.size):
            counter.write(i, msg.data.packet_count, msg.data.byte_count)

    def read_counters(self, msg: p4runtime_pb2.CounterEntry) -> Iterator[p4runtime_pb2.Entity]:
        for info in self._objects("counters", msg.counter_id):
            counter = self.pipeline.switch.counters[info.preamble.name]
            for i in _indexes(f"counter {info.preamble.name}", msg, counter.size):
                entity = p4runtime_pb2.Entity()
                out = entity.counter_entry
                out.counter_id = info.preamble.id
                out.index.index = i
                out.data.packet_count, out.data.byte_count = counter.read(i)
                yield entity

    # ---------------------------------------------------------------- meters

    def write_meter(self, kind: int, msg: p4runtime_pb2.MeterEntry) -> None:
        info = self.pipeline.index.get("meters", msg.meter_id, "meter entry")
        what = f"meter {info.preamble.name}"
        _only_modify(what, kind)
        meters = self.pipeline.switch.meters[info.preamble.name]
        rates = rates_from_proto(msg.config)
        for i in _indexes(what, msg, meters.size):
            meters.meters[i].set_rates(rates)

    def read_meters(self, msg: p4runtime_pb2.MeterEntry) -> Iterator[p4runtime_pb2.Entity]:
        for info in self._objects("meters", msg.meter_id):
            meters = self.pipeline.switch.meters[info.preamble.name]
            for i in _indexes(f"meter {info.preamble.name}", msg, meters.size):
                entity = p4runtime_pb2.Entity()
                out = entity.meter_entry
                out.meter_id = info.preamble.id
                out.index.index = i
                if meters.meters[i].configured:
                    out.config.CopyFrom(meter_config_to_proto(meters.meters[i].get_rates()))
                yield entity

    # ---------------------------------------------------------------- registers

    def write_register(self, kind: int, msg: p4runtime_pb2.RegisterEntry) -> None:
        info = self.pipeline.index.get("registers", msg.register_id, "register entry")
        what = f"register {info.preamble.name}"
        _only_modify(what, kind)
        register = self.pipeline.switch.registers[info.preamble.name]
        if msg.data.WhichOneof("data") != "bitstring":
            raise invalid(f"{what}: the data must be a bitstring")
        value = bytestrings.decode(msg.data.bitstring, register.width, what)
        for i in _indexes(what, msg, register.size):
            register.write(i, value)

    def read_registers(self, msg: p4runtime_pb2.RegisterEntry
                       ) -> Iterator[p4runtime_pb2.Entity]:
        for info in self._objects("registers", msg.register_id):
            register = self.pipeline.switch.registers[info.preamble.name]
            for i in _indexes(f"register {info.preamble.name}", msg, register.size):
                entity = p4runtime_pb2.Entity()
                out = entity.register_entry
                out.register_id = info.preamble.id
                out.index.index = i
                out.data.bitstring = bytestrings.encode(register.read(i))
                yield entity

    # ---------------------------------------------------------------- reads as wire bytes

    def read_counters_wire(self, msg: p4runtime_pb2.CounterEntry) -> Iterator[bytes]:
        """:meth:`read_counters` as serialized Entities."""
        for info in self._objects("counters", msg.counter_id):
            counter = self.pipeline.switch.counters[info.preamble.name]
            cid = info.preamble.id
            for i in _indexes(f"counter {info.preamble.name}", msg, counter.size):
                packets, nbytes = counter.read(i)
                yield entity_wire.counter_cell(cid, i, packets, nbytes)

    def read_meters_wire(self, msg: p4runtime_pb2.MeterEntry) -> Iterator[bytes]:
        """:meth:`read_meters` as serialized Entities."""
        for info in self._objects("meters", msg.meter_id):
            meters = self.pipeline.switch.meters[info.preamble.name]
            mid = info.preamble.id
            for i in _indexes(f"meter {info.preamble.name}", msg, meters.size):
                meter = meters.meters[i]
                config = meter_config_to_proto(meter.get_rates()) if meter.configured else None
                yield entity_wire.meter_cell(mid, i, config)

    def read_registers_wire(self, msg: p4runtime_pb2.RegisterEntry) -> Iterator[bytes]:
        """:meth:`read_registers` as serialized Entities."""
        for info in self._objects("registers", msg.register_id):
            register = self.pipeline.switch.registers[info.preamble.name]
            rid = info.preamble.id
            for i in _indexes(f"register {info.preamble.name}", msg, register.size):
                yield entity_wire.register_cell(rid, i, bytestrings.encode(register.read(i)))
