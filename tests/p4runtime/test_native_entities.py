"""P4Runtime entities of direct counters, direct meters, meters and action
profiles/selectors on both switch back ends: the same writes through the
Device (the server's core, no gRPC) give the same reads and the same packets.
Programs: stateful.p4 (conformance) and tests/native/p4/action_selectors.p4."""

from __future__ import annotations

from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from netweft.emulation.native.build import compiler
from netweft.emulation.p4runtime.device import Device
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info

TESTS = Path(__file__).resolve().parents[1]
STATEFUL = TESTS / "p4_conformance" / "programs" / "stateful.p4"
SELECTORS = TESTS / "native" / "p4" / "action_selectors.p4"
INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)


@pytest.fixture(params=["python", "c"])
def backend(request) -> str:
    if request.param == "c" and compiler() is None:
        pytest.skip("no C compiler")
    return request.param


class Rig:
    """A device running ``path`` on one back end, with P4Info names -> ids."""

    def __init__(self, path: Path, backend: str) -> None:
        program = compile_p4(str(path))
        self.p4info = build_p4info(program)
        self.now = [1_000]
        self.device = Device(lambda data: None, device_id=1, cpu_port=255)
        self.switch = SoftSwitch(program, backend=backend, clock=lambda: self.now[0])
        assert self.switch.backend == backend
        self.device.install(self.p4info, b"", switch=self.switch)

    def id(self, kind: str, name: str) -> int:
        for obj in getattr(self.p4info, kind):
            if obj.preamble.name == name:
                return obj.preamble.id
        raise KeyError(name)

    def field(self, table: str, name: str) -> int:
        for t in self.p4info.tables:
            if t.preamble.name == table:
                return next(mf.id for mf in t.match_fields if mf.name == name)
        raise KeyError(table)

    def write(self, *updates: tuple[int, p4runtime_pb2.Entity]) -> None:
        results = self.device.write([p4runtime_pb2.Update(type=k, entity=e) for k, e in updates])
        assert results == [None] * len(updates), results

    def action(self, name: str, *params: bytes) -> p4runtime_pb2.Action:
        return p4runtime_pb2.Action(action_id=self.id("actions", name), params=[
            p4runtime_pb2.Action.Param(param_id=i + 1, value=v) for i, v in enumerate(params)])

    def entry(self, table: str, key: str, value: bytes, **target) -> p4runtime_pb2.Entity:
        e = p4runtime_pb2.Entity()
        te = e.table_entry
        te.table_id = self.id("tables", table)
        m = te.match.add(field_id=self.field(table, key))
        m.exact.value = value
        for k, v in target.items():
            if k == "action":
                te.action.action.CopyFrom(v)
            else:
                setattr(te.action, k, v)
        return e

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        return self.device.read([entity])


def _state(index: int, op: int = 6) -> bytes:
    return bytes.fromhex("0a00000000010a000000000288ba") + bytes([op, index]) + bytes(6)


def test_direct_counter_and_meter_entities(backend: str) -> None:
    rig = Rig(STATEFUL, backend)
    counted = rig.entry("MyIngress.counted", "hdr.st.index", b"\x04",
                        action=rig.action("MyIngress.count_entry"))
    counted.table_entry.counter_data.packet_count = 100
    metered = rig.entry("MyIngress.metered", "hdr.st.index", b"\x04",
                        action=rig.action("MyIngress.read_entry_meter"))
    size = len(_state(4))
    metered.table_entry.meter_config.CopyFrom(p4runtime_pb2.MeterConfig(
        cir=1, cburst=size, pir=2, pburst=2 * size))
    rig.write((INSERT, counted), (INSERT, metered))
    colours = [rig.device.process(0, _state(4))[0][1][21] for _ in range(3)]
    assert colours == [0, 1, 2]
    dc = p4runtime_pb2.Entity()
    dc.direct_counter_entry.table_entry.table_id = rig.id("tables", "MyIngress.counted")
    (got,) = rig.read(dc)
    assert (got.direct_counter_entry.data.packet_count,
            got.direct_counter_entry.data.byte_count) == (103, 3 * size)
    # a DirectCounterEntry MODIFY, then the entry read back with its counter_data
    dc.direct_counter_entry.table_entry.CopyFrom(counted.table_entry)
    dc.direct_counter_entry.table_entry.ClearField("counter_data")
    dc.direct_counter_entry.data.packet_count = 7
    rig.write((MODIFY, dc))
    rig.device.process(0, _state(4))
    q = p4runtime_pb2.Entity()
    q.table_entry.table_id = rig.id("tables", "MyIngress.counted")
    (got,) = rig.read(q)
    assert (got.table_entry.counter_data.packet_count,
            got.table_entry.counter_data.byte_count) == (8, size)
    # the direct meter unset: GREEN again; set again through a DirectMeterEntry
    dm = p4runtime_pb2.Entity()
    dm.direct_meter_entry.table_entry.CopyFrom(metered.table_entry)
    dm.direct_meter_entry.table_entry.ClearField("meter_config")
    rig.write((MODIFY, dm))
    assert rig.device.process(0, _state(4))[0][1][21] == 0
    dm.direct_meter_entry.config.CopyFrom(p4runtime_pb2.MeterConfig(cir=1, cburst=1, pir=1,
                                                                    pburst=1))
    rig.write((MODIFY, dm))
    assert rig.device.process(0, _state(4))[0][1][21] == 2
    q = p4runtime_pb2.Entity()
    q.direct_meter_entry.table_entry.table_id = rig.id("tables", "MyIngress.metered")
    (got,) = rig.read(q)
    assert (got.direct_meter_entry.config.cburst, got.direct_meter_entry.config.pburst) == (1, 1)


def test_indirect_meter_entity(backend: str) -> None:
    rig = Rig(STATEFUL, backend)
    e = p4runtime_pb2.Entity()
    e.meter_entry.meter_id = rig.id("meters", "MyIngress.rate")
    e.meter_entry.index.index = 3
    e.meter_entry.config.CopyFrom(p4runtime_pb2.MeterConfig(cir=1000, cburst=1, pir=2000,
                                                            pburst=2))
    rig.write((MODIFY, e))
    assert [rig.device.process(0, _state(3, op=5))[0][1][20] for _ in range(3)] == [0, 1, 2]
    rig.now[0] += 1000
    assert rig.device.process(0, _state(3, op=5))[0][1][20] == 0


def _selectors(rig: Rig) -> None:
    table = "AIngress.profiled"
    pid = rig.id("action_profiles", "AIngress.members")
    members = []
    for mid, (port, value) in enumerate([(2, None), (3, 0x1234)], start=1):
        e = p4runtime_pb2.Entity()
        m = e.action_profile_member
        m.action_profile_id, m.member_id = pid, mid
        m.action.CopyFrom(rig.action("AIngress.set_port", port.to_bytes(2, "big"))
                          if value is None else
                          rig.action("AIngress.tag", value.to_bytes(2, "big"),
                                     port.to_bytes(2, "big")))
        members.append((INSERT, e))
    rig.write(*members)
    rig.write((INSERT, rig.entry(table, "hdr.ethernet.dstAddr", bytes.fromhex("0a0000000001"),
                                 action_profile_member_id=1)),
              (INSERT, rig.entry(table, "hdr.ethernet.dstAddr", bytes.fromhex("0a0000000002"),
                                 action_profile_member_id=2)))


def test_action_profile_members_and_their_modification(backend: str) -> None:
    rig = Rig(SELECTORS, backend)
    _selectors(rig)
    frame = bytes.fromhex("0a0000000001" "0b0000000000" "0800")
    assert rig.device.process(0, frame) == [(2, frame)]
    e = p4runtime_pb2.Entity()
    m = e.action_profile_member
    m.action_profile_id, m.member_id = rig.id("action_profiles", "AIngress.members"), 1
    m.action.CopyFrom(rig.action("AIngress.set_port", b"\x00\x05"))
    rig.write((MODIFY, e))        # the entry pointing at member 1 follows it
    assert rig.device.process(0, frame) == [(5, frame)]
    # a table entry MODIFY re-points the entry (member 2: tag 0x1234, port 3)
    rig.write((MODIFY, rig.entry("AIngress.profiled", "hdr.ethernet.dstAddr",
                                 bytes.fromhex("0a0000000001"), action_profile_member_id=2)))
    assert rig.device.process(0, frame) == [(3, frame[:12] + b"\x12\x34")]


def test_selector_groups_pick_members_alike(backend: str) -> None:
    rig = Rig(SELECTORS, backend)
    table = "AIngress.spread"
    pid = rig.id("action_profiles", "AIngress.flows")
    ups = []
    for mid in range(1, 5):
        e = p4runtime_pb2.Entity()
        m = e.action_profile_member
        m.action_profile_id, m.member_id = pid, mid
        m.action.CopyFrom(rig.action("AIngress.set_port", (3 + mid).to_bytes(2, "big")))
        ups.append((INSERT, e))
    g = p4runtime_pb2.Entity()
    grp = g.action_profile_group
    grp.action_profile_id, grp.group_id = pid, 1
    grp.members.add(member_id=1, weight=1)
    grp.members.add(member_id=2, weight=3)
    ups.append((INSERT, g))
    rig.write(*ups)
    te = p4runtime_pb2.Entity()
    te.table_entry.table_id = rig.id("tables", table)
    te.table_entry.priority = 10
    fm = te.table_entry.match.add(field_id=rig.field(table, "hdr.ethernet.dstAddr[7:0]"))
    fm.ternary.value, fm.ternary.mask = b"\x10", b"\xf0"
    te.table_entry.action.action_profile_group_id = 1
    rig.write((INSERT, te))
    frames = [bytes.fromhex("0a0000000011") + bytes([0, 0, 0, 0, i // 7, i % 251])
              + bytes([i % 5, 0x08]) for i in range(200)]
    first = [rig.device.process(0, f)[0][0] for f in frames]
    grp.members.add(member_id=4, weight=2)          # the group MODIFY reaches the data plane
    rig.write((MODIFY, g))
    second = [rig.device.process(0, f)[0][0] for f in frames]
    assert set(first) == {4, 5} and set(second) == {4, 5, 7}
    assert (first, second) == (_choices(frames, [4, 5, 5, 5]),
                               _choices(frames, [4, 5, 5, 5, 7, 7]))


def _choices(frames: list[bytes], ports: list[int]) -> list[int]:
    """The ports the Python back end's selector picks for a group of these members
    (a weight-w member appears w times, in member id order)."""
    sw = Rig(SELECTORS, "python").switch
    t = "AIngress.spread"
    group = sw.act_prof_create_group(t, [sw.act_prof_add_member(t, "AIngress.set_port",
                                                                {"port": p}) for p in ports])
    sw.table_add_group(t, {"hdr.ethernet.dstAddr[7:0]": (0x10, 0xF0)}, group, priority=10)
    return [sw.process(0, f)[0][0] for f in frames]
