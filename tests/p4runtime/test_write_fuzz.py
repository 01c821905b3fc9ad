"""Random P4Runtime writes and reads: every refusal is a P4Runtime status code, never
an internal failure, and the switch keeps forwarding."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.errors import P4RuntimeError
from netweft.emulation.switch import SoftSwitch
from tests.p4runtime.frames import frame

_small_bytes = st.binary(min_size=0, max_size=7)


def _ids(p4info):
    tables = [t.preamble.id for t in p4info.tables]
    actions = [a.preamble.id for a in p4info.actions]
    return st.sampled_from(tables + [0, 1, 0x02000001]), st.sampled_from(actions + [0, 7])


@st.composite
def _table_entry(draw, p4info):
    table_ids, action_ids = _ids(p4info)
    te = p4runtime_pb2.TableEntry(table_id=draw(table_ids))
    te.priority = draw(st.integers(-1, 40))
    te.is_default_action = draw(st.booleans()) and draw(st.booleans())
    for _ in range(draw(st.integers(0, 3))):
        fm = te.match.add(field_id=draw(st.integers(0, 3)))
        kind = draw(st.sampled_from(["exact", "lpm", "ternary", "range", "optional"]))
        if kind == "exact":
            fm.exact.value = draw(_small_bytes)
        elif kind == "optional":
            fm.optional.value = draw(_small_bytes)
        elif kind == "lpm":
            fm.lpm.value, fm.lpm.prefix_len = draw(_small_bytes), draw(st.integers(-1, 60))
        elif kind == "ternary":
            fm.ternary.value, fm.ternary.mask = draw(_small_bytes), draw(_small_bytes)
        else:
            fm.range.low, fm.range.high = draw(_small_bytes), draw(_small_bytes)
    which = draw(st.sampled_from(["action", "member", "group", "none"]))
    if which == "action":
        te.action.action.action_id = draw(action_ids)
        for _ in range(draw(st.integers(0, 2))):
            te.action.action.params.add(param_id=draw(st.integers(0, 2)), value=draw(_small_bytes))
    elif which == "member":
        te.action.action_profile_member_id = draw(st.integers(0, 3))
    elif which == "group":
        te.action.action_profile_group_id = draw(st.integers(0, 3))
    return te


@st.composite
def _update(draw, p4info):
    update = p4runtime_pb2.Update(type=draw(st.integers(0, 4)))
    kind = draw(st.sampled_from(["table", "member", "group", "mc", "clone", "register",
                                 "counter", "value_set", "digest"]))
    e = update.entity
    if kind == "table":
        e.table_entry.CopyFrom(draw(_table_entry(p4info)))
    elif kind == "member":
        m = e.action_profile_member
        m.action_profile_id = draw(st.sampled_from([0, p4info.action_profiles[0].preamble.id]))
        m.member_id = draw(st.integers(0, 3))
        m.action.action_id = draw(_ids(p4info)[1])
        m.action.params.add(param_id=1, value=draw(_small_bytes))
    elif kind == "group":
        g = e.action_profile_group
        g.action_profile_id = p4info.action_profiles[0].preamble.id
        g.group_id = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(0, 3))):
            g.members.add(member_id=draw(st.integers(0, 3)), weight=draw(st.integers(-1, 3)))
    elif kind in ("mc", "clone"):
        pre = e.packet_replication_engine_entry
        target = pre.multicast_group_entry if kind == "mc" else pre.clone_session_entry
        if kind == "mc":
            target.multicast_group_id = draw(st.integers(0, 70000))
        else:
            target.session_id = draw(st.integers(0, 40000))
        for _ in range(draw(st.integers(0, 3))):
            target.replicas.add(egress_port=draw(st.integers(0, 600)),
                                instance=draw(st.integers(0, 3)))
    elif kind == "register":
        r = e.register_entry
        r.register_id = draw(st.sampled_from([0, p4info.registers[0].preamble.id]))
        if draw(st.booleans()):
            r.index.index = draw(st.integers(-2, 10))
        r.data.bitstring = draw(_small_bytes)
    elif kind == "counter":
        c = e.counter_entry
        c.counter_id = draw(st.sampled_from([0, p4info.counters[0].preamble.id]))
        c.index.index = draw(st.integers(-2, 10))
        c.data.packet_count = draw(st.integers(0, 5))
    elif kind == "value_set":
        v = e.value_set_entry
        v.value_set_id = draw(st.sampled_from([0, p4info.value_sets[0].preamble.id]))
        for _ in range(draw(st.integers(0, 6))):
            v.members.add().match.add(field_id=draw(st.integers(0, 2))).exact.value = \
                draw(_small_bytes)
    else:
        d = e.digest_entry
        d.digest_id = draw(st.sampled_from([0, p4info.digests[0].preamble.id]))
        d.config.max_list_size = draw(st.integers(-1, 3))
    return update


def test_random_writes_get_status_codes(program, p4info):
    device = Device(lambda data: None, device_id=1, cpu_port=255)
    device.install(p4info, b"", switch=SoftSwitch(program))

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(_update(p4info), min_size=1, max_size=6))
    def run(updates):
        results = device.write(updates)
        assert len(results) == len(updates)
        for r in results:
            assert r is None or (isinstance(r, P4RuntimeError) and r.code.name != "INTERNAL"), r
        wildcard = [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()),
                    p4runtime_pb2.Entity(
                        action_profile_group=p4runtime_pb2.ActionProfileGroup())]
        device.read(wildcard)
        device.process(1, frame("00:00:00:00:00:0b", "00:00:00:00:00:0a"))

    run()
