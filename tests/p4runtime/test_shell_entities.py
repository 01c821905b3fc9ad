"""p4runtime-shell, unchanged, drives the embedded switch: one test per entity kind."""

from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2

from tests.p4runtime.frames import frame

A, B, C = "00:00:00:00:00:0a", "00:00:00:00:00:0b", "00:00:00:00:00:0c"


def _ports(outputs):
    return sorted(port for port, _ in outputs)


def test_capabilities_and_pipeline_come_back(shell, p4info):
    assert shell.APIVersion() == "1.4.1"
    assert shell.context.p4info == p4info


def test_table_entry_insert_read_modify_delete(shell, served):
    te = shell.TableEntry("I.route")(action="forward")
    te.match["hdr.ethernet.dst"] = B
    te.action["port"] = "3"
    te.insert()
    assert _ports(served.device.process(1, frame(B, A))) == [3]

    read = list(shell.TableEntry("I.route").read())
    assert len(read) == 1
    assert read[0].match["hdr.ethernet.dst"].exact.value == bytes.fromhex("0b")
    assert read[0].action["port"].value == b"\x03"

    te.action["port"] = "4"
    te.modify()
    assert _ports(served.device.process(1, frame(B, A))) == [4]
    te.delete()
    assert list(shell.TableEntry("I.route").read()) == []
    # both tables miss: egress_spec stays 0 (v1model), so port 0
    assert _ports(served.device.process(1, frame(B, A))) == [0]


def test_default_entry_is_modified_and_restored(shell, served):
    te = shell.TableEntry("I.route")(action="forward", is_default=True)
    te.action["port"] = "6"
    te.modify()
    assert _ports(served.device.process(1, frame(C, A))) == [6]
    (default,) = shell.TableEntry("I.route")(is_default=True).read()
    assert default.action["port"].value == b"\x06"
    shell.TableEntry("I.route")(is_default=True).modify()   # no action: the program's default
    assert _ports(served.device.process(1, frame(C, A))) == [0]


def test_ternary_entries_rank_by_priority_and_count(shell, served):
    low = shell.TableEntry("I.acl")(action="acl_forward")
    low.match["hdr.ethernet.type"] = "0x0800&&&0xff00"
    low.action["port"] = "1"
    low.priority = 10
    low.insert()
    high = shell.TableEntry("I.acl")(action="acl_forward")
    high.match["hdr.ethernet.type"] = "0x0800&&&0xffff"
    high.match["sm.ingress_port"] = "2"
    high.action["port"] = "7"
    high.priority = 20
    high.insert()
    assert _ports(served.device.process(2, frame(C, A))) == [7]
    assert _ports(served.device.process(3, frame(C, A))) == [1]

    counts = {te.priority: te.counter_data.packet_count
              for te in shell.TableEntry("I.acl").read()}
    assert counts == {10: 1, 20: 1}
    (dc,) = [d for d in shell.DirectCounterEntry("I.acl_counter").read()
             if d.table_entry.priority == 20]
    assert dc.packet_count == 1 and dc.byte_count == 60


def test_direct_meter_config_is_stored(shell):
    te = shell.TableEntry("I.acl")(action="acl_drop")
    te.match["hdr.ethernet.type"] = "0x86dd&&&0xffff"
    te.priority = 5
    te.insert()
    dm = shell.DirectMeterEntry("I.acl_meter")
    dm.table_entry.match["hdr.ethernet.type"] = "0x86dd&&&0xffff"
    dm.table_entry.priority = 5
    dm.config.cir, dm.config.cburst, dm.config.pir, dm.config.pburst = 100, 10, 200, 20
    dm.modify()
    (back,) = shell.DirectMeterEntry("I.acl_meter").read()
    assert (back.config.cir, back.config.cburst, back.config.pir, back.config.pburst) == \
        (100, 10, 200, 20)


def test_action_selector_members_and_groups(shell, served):
    for mid, port in ((1, 5), (2, 6)):
        m = shell.ActionProfileMember("I.ecmp_selector")(member_id=mid, action="forward")
        m.action["port"] = str(port)
        m.insert()
    g = shell.ActionProfileGroup("I.ecmp_selector")(group_id=1)
    g.add(1).add(2)
    g.insert()
    te = shell.TableEntry("I.ecmp")
    te.match["hdr.ethernet.dst"] = C
    te.group_id = 1
    te.insert()
    seen = {p for i in range(40)
            for p in _ports(served.device.process(1, frame(C, f"00:00:00:00:01:{i:02x}")))}
    assert seen == {5, 6}

    one = shell.TableEntry("I.ecmp")
    one.match["hdr.ethernet.dst"] = B
    one.member_id = 2
    one.insert()
    m2 = shell.ActionProfileMember("I.ecmp_selector")(member_id=2, action="forward")
    m2.action["port"] = "9"
    m2.modify()   # entries and groups that use member 2 follow
    assert _ports(served.device.process(1, frame(B, A))) == [9]
    seen = {p for i in range(40)
            for p in _ports(served.device.process(1, frame(C, f"00:00:00:00:01:{i:02x}")))}
    assert seen == {5, 9}
    assert sorted(m.member_id for m in shell.ActionProfileMember("I.ecmp_selector").read()) \
        == [1, 2]
    (grp,) = shell.ActionProfileGroup("I.ecmp_selector").read()
    assert sorted(m.member_id for m in grp.members) == [1, 2]


def test_multicast_group_and_clone_session(shell, served):
    shell.MulticastGroupEntry(7).add(1, 1).add(2, 1).add(3, 2).insert()
    te = shell.TableEntry("I.route")(action="flood")
    te.match["hdr.ethernet.dst"] = "ff:ff:ff:ff:ff:ff"
    te.action["group"] = "7"
    te.insert()
    assert _ports(served.device.process(4, frame("ff:ff:ff:ff:ff:ff", A))) == [1, 2, 3]
    (group,) = shell.MulticastGroupEntry(7).read()
    assert [(r.egress_port, r.instance) for r in group.replicas] == [(1, 1), (2, 1), (3, 2)]

    clone = shell.CloneSessionEntry(5).add(8)
    clone.packet_length_bytes = 20
    clone.insert()
    m = shell.TableEntry("I.mirror_by_src")(action="mirror")
    m.match["hdr.ethernet.src"] = A
    m.action["session"] = "5"
    m.insert()
    fwd = shell.TableEntry("I.route")(action="forward")
    fwd.match["hdr.ethernet.dst"] = B
    fwd.action["port"] = "2"
    fwd.insert()
    outputs = served.device.process(1, frame(B, A))
    assert sorted((p, len(d)) for p, d in outputs) == [(2, 60), (8, 20)]
    (session,) = shell.CloneSessionEntry(5).read()
    assert session.packet_length_bytes == 20
    several = shell.CloneSessionEntry(5).add(8).add(9, 3)
    several.modify()    # two replicas: the clone is copied to both
    outputs = served.device.process(1, frame(B, A))
    assert sorted((p, len(d)) for p, d in outputs) == [(2, 60), (8, 60), (9, 60)]
    shell.MulticastGroupEntry(7).delete()
    assert served.device.process(4, frame("ff:ff:ff:ff:ff:ff", C)) == []


def test_counters_meters_and_registers(shell, served):
    for _ in range(3):
        served.device.process(2, frame(B, A))
    (cell,) = shell.CounterEntry("I.port_packets")(index=2).read()
    assert (cell.packet_count, cell.byte_count) == (3, 180)
    assert len(list(shell.CounterEntry("I.port_packets").read())) == 8

    c = shell.CounterEntry("I.port_packets")(index=2)
    c.packet_count, c.byte_count = 0, 0
    c.modify()
    (cell,) = shell.CounterEntry("I.port_packets")(index=2).read()
    assert cell.packet_count == 0

    me = shell.MeterEntry("I.port_meter")(index=1)
    me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = 1000, 1, 2000, 2
    me.modify()
    (back,) = shell.MeterEntry("I.port_meter")(index=1).read()
    assert (back.config.cir, back.config.pburst) == (1000, 2)

    # p4runtime-shell 0.0.6 has no register class: its client sends RegisterEntry as is
    info = {r.preamble.name: r.preamble.id for r in shell.context.p4info.registers}
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    reg = update.entity.register_entry
    reg.register_id, reg.index.index, reg.data.bitstring = info["I.last_length"], 5, b"\x01\x02"
    shell.client.write_update(update)
    query = p4runtime_pb2.Entity()
    query.register_entry.register_id = info["I.last_length"]
    values = {e.register_entry.index.index: e.register_entry.data.bitstring
              for r in shell.client.read_one(query) for e in r.entities}
    assert values[5] == b"\x01\x02" and values[2] == (60).to_bytes(1, "big")


def test_value_set_members(shell, served):
    vs_id = shell.context.p4info.value_sets[0].preamble.id
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    entry = update.entity.value_set_entry
    entry.value_set_id = vs_id
    entry.members.add().match.add(field_id=1).exact.value = b"\x12\x34"
    shell.client.write_update(update)
    query = p4runtime_pb2.Entity()
    query.value_set_entry.value_set_id = vs_id
    (response,) = list(shell.client.read_one(query))
    assert response.entities[0].value_set_entry.members[0].match[0].exact.value == b"\x12\x34"
    assert served.device.switch.value_sets["P.special"].match((0x1234,))


def test_packet_in_and_packet_out_through_the_cpu_port(shell, served):
    served.device.process(3, frame(B, A, 0x88b5, b"hello" + bytes(41)))
    msg = shell.client.get_stream_packet("packet", timeout=10)
    assert msg is not None
    md = {m.metadata_id: m.value for m in msg.packet.metadata}
    assert md[1] == b"\x03"
    assert msg.packet.payload[12:14] == b"\x88\xb5" and msg.packet.payload[14:19] == b"hello"

    payload = frame(B, A)
    shell.PacketOut(payload, egress_port="4").send()
    deadline_frames = []
    for _ in range(200):
        if served.sent:
            break
        shell.client.get_stream_packet("unknown", timeout=0.05)
    deadline_frames = list(served.sent)
    assert deadline_frames == [(4, payload)]


def test_digests_are_sent_and_acknowledged(shell, served):
    digest_id = shell.context.p4info.digests[0].preamble.id
    d = shell.DigestEntry("learn_t")
    d.max_timeout_ns, d.max_list_size, d.ack_timeout_ns = 0, 1, 10**12
    d.insert()
    served.device.process(6, frame(B, A))
    msg = shell.client.get_stream_packet("digest", timeout=10)
    assert msg.digest.digest_id == digest_id
    (data,) = msg.digest.data
    assert [m.bitstring for m in data.struct.members] == [bytes.fromhex("0a"), b"\x06"]
    served.device.process(6, frame(B, A))   # same data, list not acknowledged: suppressed
    assert shell.client.get_stream_packet("digest", timeout=0.3) is None
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = digest_id, msg.digest.list_id
    shell.client.stream_out_q.put(ack)
    for _ in range(100):   # the ack travels on the stream; resend until it has arrived
        served.device.process(6, frame(B, A))
        again = shell.client.get_stream_packet("digest", timeout=0.1)
        if again is not None:
            break
    assert again.digest.list_id == msg.digest.list_id + 1
    (config,) = shell.DigestEntry("learn_t").read()
    assert config.max_list_size == 1


def test_const_table_writes_are_refused(shell):
    from p4runtime_sh.p4runtime import P4RuntimeWriteException
    te = shell.TableEntry("I.fixed")(action="drop")
    te.match["hdr.ethernet.type"] = "0x1234"
    with pytest.raises(P4RuntimeWriteException, match="PERMISSION_DENIED"):
        te.insert()
    query = p4runtime_pb2.Entity()
    query.table_entry.table_id = shell.context.get_obj_id(shell.P4Type.table, "I.fixed")
    (response,) = list(shell.client.read_one(query))
    (entry,) = response.entities
    assert entry.table_entry.is_const
    assert entry.table_entry.match[0].exact.value == b"\x99\x99"
