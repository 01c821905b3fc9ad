"""Arbitration between clients and the status codes of refused requests."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2
from p4runtime_sh.p4runtime import P4RuntimeClient, P4RuntimeWriteException

from tests.p4runtime.frames import frame


def _route_update(p4info, dst=b"\x0b", port=b"\x03", kind=p4runtime_pb2.Update.INSERT):
    table = next(t for t in p4info.tables if t.preamble.name == "I.route")
    action = next(a for a in p4info.actions if a.preamble.name == "I.forward")
    update = p4runtime_pb2.Update(type=kind)
    te = update.entity.table_entry
    te.table_id = table.preamble.id
    te.match.add(field_id=1).exact.value = dst
    te.action.action.action_id = action.preamble.id
    te.action.action.params.add(param_id=1, value=port)
    return update


@pytest.fixture
def clients(served):
    made = []

    def connect(election, role=None):
        client = P4RuntimeClient(1, served.target, election, role)
        made.append(client)
        return client

    try:
        yield connect
    finally:
        for client in made:
            if hasattr(client, "channel"):   # tests may have closed one already
                client.tear_down()


def _arbitration(client, timeout=10):
    msg = client.get_stream_packet("arbitration", timeout=timeout)
    assert msg is not None, "no arbitration answer"
    return msg.arbitration


def _write_codes(client, *updates):
    req = p4runtime_pb2.WriteRequest()
    req.updates.extend(updates)
    with pytest.raises(P4RuntimeWriteException) as info:
        client.write(req)
    return [code_pb2._CODE.values_by_number[e.canonical_code].name for _, e in info.value.errors]


def test_highest_election_id_is_primary_and_only_it_writes(clients, p4info, served):
    backup = clients((0, 1))           # primary at first (handshake answered with OK)
    primary = clients((0, 2))
    told = _arbitration(backup)        # the first client hears it lost the primary role
    assert told.status.code == code_pb2.ALREADY_EXISTS
    assert (told.election_id.high, told.election_id.low) == (0, 2)
    with pytest.raises(grpc.RpcError) as info:
        backup.write_update(_route_update(p4info))
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    pipeline = p4runtime_pb2.SetForwardingPipelineConfigRequest(
        device_id=1, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY)
    pipeline.election_id.low = 1
    pipeline.config.p4info.CopyFrom(p4info)
    with pytest.raises(grpc.RpcError) as info:
        backup.stub.SetForwardingPipelineConfig(pipeline)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    primary.write_update(_route_update(p4info))
    assert [p for p, _ in served.device.process(1, frame("00:00:00:00:00:0b",
                                                         "00:00:00:00:00:0a"))] == [3]

    primary.tear_down()                # the backup becomes the primary and is told so
    clients_left = _arbitration(backup)
    assert clients_left.status.code == code_pb2.OK
    backup.write_update(_route_update(p4info, dst=b"\x0c"))


def test_same_election_id_twice_is_refused(clients, served):
    clients((0, 5))
    second = P4RuntimeClient.__new__(P4RuntimeClient)
    second.device_id, second.election_id, second.role_name = 1, (0, 5), None
    second.channel = grpc.insecure_channel(served.target)
    try:
        stub = __import__("p4.v1.p4runtime_pb2_grpc", fromlist=["x"]).P4RuntimeStub(
            second.channel)
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = 1
        req.arbitration.election_id.low = 5
        with pytest.raises(grpc.RpcError) as info:
            list(stub.StreamChannel(iter([req]), timeout=10))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        second.channel.close()


def test_roles_have_their_own_primary(clients, p4info):
    default = clients((0, 9))
    other = clients((0, 1), role="telemetry")
    # a lower election id is the primary of its own role: it writes, and the default
    # role's primary is not told about it
    other.write_update(_route_update(p4info))
    assert default.get_stream_packet("arbitration", timeout=0.2) is None
    backup = clients((0, 0x100), role="telemetry")
    assert _arbitration(other).status.code == code_pb2.ALREADY_EXISTS
    with pytest.raises(grpc.RpcError) as info:
        other.write_update(_route_update(p4info, dst=b"\x0c"))
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    backup.write_update(_route_update(p4info, dst=b"\x0c"))


def test_wrong_device_id_is_not_found(served):
    with grpc.insecure_channel(served.target) as channel:
        from p4.v1 import p4runtime_pb2_grpc
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=42)
        with pytest.raises(grpc.RpcError) as info:
            stub.GetForwardingPipelineConfig(req)
        assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_write_errors_carry_one_p4_error_per_update(clients, p4info):
    client = clients((0, 1))
    good = _route_update(p4info)
    client.write_update(good)
    duplicate = _route_update(p4info)
    wide = _route_update(p4info, dst=b"\x01" + bytes(6))           # 49 bits for a 48-bit key
    bad_table = _route_update(p4info, dst=b"\x0d")
    bad_table.entity.table_entry.table_id = 0x0200_0001
    bad_param = _route_update(p4info, dst=b"\x0e", port=b"\x02\x00")   # 512 in 9 bits
    missing = _route_update(p4info, dst=b"\x0f", kind=p4runtime_pb2.Update.DELETE)
    fine = _route_update(p4info, dst=b"\x10")
    req = p4runtime_pb2.WriteRequest(device_id=1)
    req.election_id.low = 1
    req.updates.extend([duplicate, wide, bad_table, bad_param, missing, fine])
    with pytest.raises(grpc.RpcError) as info:
        client.stub.Write(req)
    assert info.value.code() == grpc.StatusCode.UNKNOWN
    status = status_pb2.Status()
    status.ParseFromString(dict(info.value.trailing_metadata())["grpc-status-details-bin"])
    codes = []
    for detail in status.details:
        error = p4runtime_pb2.Error()
        detail.Unpack(error)
        codes.append(code_pb2._CODE.values_by_number[error.canonical_code].name)
    assert codes == ["ALREADY_EXISTS", "INVALID_ARGUMENT", "NOT_FOUND", "INVALID_ARGUMENT",
                     "NOT_FOUND", "OK"]


def test_priorities_follow_p4runtime_rules(clients, p4info):
    client = clients((0, 1))
    table = next(t for t in p4info.tables if t.preamble.name == "I.acl")
    action = next(a for a in p4info.actions if a.preamble.name == "I.acl_none")

    def acl(priority, mask=b"\xff\xff"):
        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        te = update.entity.table_entry
        te.table_id, te.priority = table.preamble.id, priority
        fm = te.match.add(field_id=1)
        fm.ternary.value, fm.ternary.mask = b"\x08\x00", mask
        te.action.action.action_id = action.preamble.id
        return update

    assert _write_codes(client, acl(0)) == ["INVALID_ARGUMENT"]          # 0 is not a priority
    assert _write_codes(client, acl(3, mask=b"\x00")) == ["INVALID_ARGUMENT"]   # wildcard
    assert _write_codes(client, acl(3, mask=b"\xf0\x00")) == ["INVALID_ARGUMENT"]  # bits off
    client.write_update(acl(3))
    route = _route_update(p4info)
    route.entity.table_entry.priority = 4
    assert _write_codes(client, route) == ["INVALID_ARGUMENT"]           # exact: no priority


def test_default_entry_cannot_be_inserted_or_deleted(clients, p4info):
    client = clients((0, 1))
    table = next(t for t in p4info.tables if t.preamble.name == "I.route")
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    update.entity.table_entry.table_id = table.preamble.id
    update.entity.table_entry.is_default_action = True
    assert _write_codes(client, update) == ["INVALID_ARGUMENT"]


def test_in_use_members_and_groups_cannot_be_deleted(clients, p4info):
    client = clients((0, 1))
    prof = p4info.action_profiles[0].preamble.id
    forward = next(a for a in p4info.actions if a.preamble.name == "I.forward")
    member = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    m = member.entity.action_profile_member
    m.action_profile_id, m.member_id = prof, 1
    m.action.action_id = forward.preamble.id
    m.action.params.add(param_id=1, value=b"\x01")
    client.write_update(member)
    group = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    g = group.entity.action_profile_group
    g.action_profile_id, g.group_id = prof, 1
    g.members.add(member_id=1, weight=1)
    client.write_update(group)
    delete = p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE)
    delete.entity.CopyFrom(member.entity)
    assert _write_codes(client, delete) == ["FAILED_PRECONDITION"]
    too_big = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    too_big.entity.CopyFrom(group.entity)
    too_big.entity.action_profile_group.members[0].weight = 5
    too_big.entity.action_profile_group.max_size = 2
    assert _write_codes(client, too_big) == ["RESOURCE_EXHAUSTED"]
    nonexistent = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    nonexistent.entity.CopyFrom(group.entity)
    nonexistent.entity.action_profile_group.members.add(member_id=7, weight=1)
    assert _write_codes(client, nonexistent) == ["NOT_FOUND"]


def test_packet_out_from_a_backup_gets_a_stream_error(clients, served):
    clients((0, 2))
    backup = clients((0, 1))
    req = p4runtime_pb2.StreamMessageRequest()
    req.packet.payload = b"\x00" * 60
    req.packet.metadata.add(metadata_id=1, value=b"\x01")
    req.packet.metadata.add(metadata_id=2, value=b"\x00")
    backup.stream_out_q.put(req)
    err = backup.get_stream_packet("unknown", timeout=10)
    assert err.error.canonical_code == code_pb2.PERMISSION_DENIED
    assert served.sent == []
