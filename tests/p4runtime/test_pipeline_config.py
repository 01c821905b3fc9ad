"""SetForwardingPipelineConfig / GetForwardingPipelineConfig with netweft-p4c's output,
as p4runtime-shell sends it (the file's bytes) and as the tutorials' p4runtime_lib
does (wrapped in p4.tmp.P4DeviceConfig)."""

from __future__ import annotations

import subprocess
import sys
import threading

import grpc
import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.p4.compiler.device_config import load_device_config
from tests.p4runtime.conftest import PROGRAM
from tests.p4runtime.switch_runner import running_switch

SetAction = p4runtime_pb2.SetForwardingPipelineConfigRequest.Action


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """netweft-p4c's P4Info (text) and device config for the test program."""
    out = tmp_path_factory.mktemp("build")
    p4info, config = out / "cp.p4info.txtpb", out / "cp.json"
    done = subprocess.run([sys.executable, "-m", "netweft.testbed.commands.compile", "--p4v", "16",
                           "--p4runtime-files", str(p4info), "-o", str(config), str(PROGRAM)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return p4info, config


def _wrapped(data: bytes) -> bytes:
    """p4.tmp.P4DeviceConfig{reassign: true, device_data: data} in protobuf's wire format."""
    length, n = b"", len(data)
    while True:
        length += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            break
    return b"\x08\x01" + b"\x1a" + length + data


@pytest.fixture
def device_server():
    device = Device(load_device_config, device_id=1, cpu_port=255)
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    channel = grpc.insecure_channel(server.target)
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    requests = [p4runtime_pb2.StreamMessageRequest()]
    requests[0].arbitration.device_id = 1
    requests[0].arbitration.election_id.low = 1
    done = threading.Event()
    stream = stub.StreamChannel(_hold(requests, done))
    assert next(stream).arbitration.status.code == 0
    try:
        yield device, stub
    finally:
        done.set()
        stream.cancel()
        channel.close()
        server.stop(0)


def _hold(first, done):
    """A request iterator that sends ``first`` and keeps the stream open until ``done``."""
    yield from first
    done.wait(120)


def _set(stub, action, p4info, data, cookie=None):
    req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=1, action=action)
    req.election_id.low = 1
    req.config.p4info.CopyFrom(p4info)
    req.config.p4_device_config = data
    if cookie is not None:
        req.config.cookie.cookie = cookie
    return stub.SetForwardingPipelineConfig(req)


def test_wrapped_and_plain_device_configs_load(device_server, compiled):
    device, stub = device_server
    p4info = text_format.Parse(compiled[0].read_text(), p4info_pb2.P4Info())
    data = compiled[1].read_bytes()
    _set(stub, SetAction.VERIFY_AND_COMMIT, p4info, _wrapped(data), cookie=7)
    got = stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(
        device_id=1)).config
    assert got.p4info == p4info and got.cookie.cookie == 7
    cookie_only = stub.GetForwardingPipelineConfig(
        p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=1, response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.COOKIE_ONLY
        )).config
    assert not cookie_only.HasField("p4info") and cookie_only.cookie.cookie == 7
    _set(stub, SetAction.VERIFY_AND_COMMIT, p4info, data)
    assert sorted(device.switch.tables)[0] == "I.acl"


def test_reconcile_keeps_entries_and_verify_refuses_bad_configs(device_server, compiled):
    device, stub = device_server
    p4info = text_format.Parse(compiled[0].read_text(), p4info_pb2.P4Info())
    data = compiled[1].read_bytes()
    _set(stub, SetAction.VERIFY_AND_COMMIT, p4info, data)
    table = next(t for t in p4info.tables if t.preamble.name == "I.route")
    action = next(a for a in p4info.actions if a.preamble.name == "I.forward")
    req = p4runtime_pb2.WriteRequest(device_id=1)
    req.election_id.low = 1
    te = req.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry
    te.table_id = table.preamble.id
    te.match.add(field_id=1).exact.value = b"\x0b"
    te.action.action.action_id = action.preamble.id
    te.action.action.params.add(param_id=1, value=b"\x03")
    stub.Write(req)
    old_switch = device.switch
    _set(stub, SetAction.RECONCILE_AND_COMMIT, p4info, data)
    assert device.switch is not old_switch
    assert len(device.switch.tables["I.route"].entries) == 1

    with pytest.raises(grpc.RpcError) as info:
        _set(stub, SetAction.VERIFY, p4info, b'{"format": "something else"}')
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    other = p4info_pb2.P4Info()
    other.CopyFrom(p4info)
    other.tables[0].match_fields[0].bitwidth = 47
    with pytest.raises(grpc.RpcError) as info:
        _set(stub, SetAction.VERIFY_AND_COMMIT, other, data)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "47 bits" in info.value.details()
    _set(stub, SetAction.VERIFY_AND_SAVE, p4info, data, cookie=9)
    _set(stub, SetAction.COMMIT, p4info_pb2.P4Info(), b"")
    assert device.get_config().cookie.cookie == 9


def _insert_group(stub, group_id: int, ports: list[int]) -> None:
    req = p4runtime_pb2.WriteRequest(device_id=1)
    req.election_id.low = 1
    group = req.updates.add(type=p4runtime_pb2.Update.INSERT).entity \
        .packet_replication_engine_entry.multicast_group_entry
    group.multicast_group_id = group_id
    for rid, port in enumerate(ports):
        group.replicas.add(egress_port=port, instance=rid)
    stub.Write(req)


def test_verify_and_commit_clears_the_multicast_groups(device_server, compiled):
    """A new pipeline starts without replication groups, as P4Runtime says (BMv2's
    simple_switch_grpc keeps them in its replication engine: docs/bmv2-differences.md)."""
    _device, stub = device_server
    p4info = text_format.Parse(compiled[0].read_text(), p4info_pb2.P4Info())
    data = compiled[1].read_bytes()
    _set(stub, SetAction.VERIFY_AND_COMMIT, p4info, data)
    _insert_group(stub, 1, [1, 2, 3])
    _set(stub, SetAction.VERIFY_AND_COMMIT, p4info, data)
    _insert_group(stub, 1, [4])          # not ALREADY_EXISTS: the old group is gone
    req = p4runtime_pb2.ReadRequest(device_id=1)
    req.entities.add().packet_replication_engine_entry.multicast_group_entry.SetInParent()
    [entity] = [e for response in stub.Read(req) for e in response.entities]
    replicas = entity.packet_replication_engine_entry.multicast_group_entry.replicas
    assert [(r.egress_port, r.instance) for r in replicas] == [(4, 0)]


def test_p4runtime_shell_sets_the_pipeline_of_a_no_p4_switch(compiled):
    from p4runtime_sh import shell as sh
    with running_switch(["--no-p4", "--device-id", "3", "--",
                         "--grpc-server-addr", "127.0.0.1:0"]) as (_proc, target):
        sh.setup(device_id=3, grpc_addr=target, election_id=(0, 1), verbose=False,
                 config=sh.FwdPipeConfig(str(compiled[0]), str(compiled[1])))
        try:
            te = sh.TableEntry("I.route")(action="forward")
            te.match["hdr.ethernet.dst"] = "00:00:00:00:00:0b"
            te.action["port"] = "3"
            te.insert()
            assert len(list(sh.TableEntry("I.route").read())) == 1
        finally:
            sh.teardown()


def test_p4_tmp_p4config_is_importable_and_accepted(device_server, compiled):
    """PI's ``p4.tmp.p4config_pb2`` is installed with netweft, imported as the tutorials'
    ``p4runtime_lib/switch.py`` imports it, and its wrapper is what netweft accepts."""
    from p4.tmp import p4config_pb2

    device, stub = device_server
    p4info = text_format.Parse(compiled[0].read_text(), p4info_pb2.P4Info())
    data = compiled[1].read_bytes()
    config = p4config_pb2.P4DeviceConfig()  # as p4runtime_lib's buildDeviceConfig does
    config.reassign = True
    config.device_data = data
    config.extras.kv["origin"] = "test"
    assert p4config_pb2.P4DeviceConfig.FromString(_wrapped(data)).device_data == data
    _set(stub, SetAction.VERIFY_AND_COMMIT, p4info, config.SerializeToString())
    assert sorted(device.switch.tables)[0] == "I.acl"


def test_p4_tmp_imports_in_a_fresh_interpreter():
    """Importable before anything of netweft's is (the tutorials' scripts import it first)."""
    done = subprocess.run([sys.executable, "-c", "from p4.tmp import p4config_pb2 as m; "
                           "from p4.v1 import p4runtime_pb2; "
                           "print(m.P4DeviceConfig.DESCRIPTOR.full_name)"],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "p4.tmp.P4DeviceConfig"
