"""A refused P4Runtime update leaves no trace (issue 23's reproductions).

A fuzzing client found entries stored although their INSERT was answered
INVALID_ARGUMENT (``counter_data``/``meter_config`` on a table with no direct
counter or meter), a refused MODIFY whose new action was applied all the same,
and the default entry accepting direct resources its table lacks.  Error
messages name a bad value by its size, never print it whole.
"""

from __future__ import annotations

import grpc
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.errors import MAX_ERROR_MESSAGE, invalid, write_error_status
from netweft.emulation.switch import SoftSwitch

INSERT, MODIFY = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY


def _device(program, p4info) -> Device:
    device = Device(lambda data: None, device_id=1, cpu_port=255)
    device.install(p4info, b"", switch=SoftSwitch(program))
    return device


def _ids(p4info, table: str, action: str) -> tuple[int, int]:
    t = next(t for t in p4info.tables if t.preamble.name.endswith(table))
    a = next(a for a in p4info.actions if a.preamble.name.endswith(action)
             or a.preamble.name == action.lstrip("."))
    return t.preamble.id, a.preamble.id


def _route_entry(p4info, port: int = 1) -> p4runtime_pb2.TableEntry:
    tid, aid = _ids(p4info, ".route", ".forward")
    te = p4runtime_pb2.TableEntry(table_id=tid)
    te.match.add(field_id=1).exact.value = bytes.fromhex("00000000000b")
    act = te.action.action
    act.action_id = aid
    act.params.add(param_id=1, value=bytes([0, port]))
    return te


def _update(kind: int, te: p4runtime_pb2.TableEntry) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=te))


def _stored(device: Device, p4info) -> list[p4runtime_pb2.TableEntry]:
    tid, _ = _ids(p4info, ".route", ".forward")
    query = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=tid))
    return [e.table_entry for e in device.read([query])]


def test_insert_with_counter_data_on_a_table_without_one_is_not_stored(program, p4info):
    device = _device(program, p4info)
    te = _route_entry(p4info)
    te.counter_data.packet_count = 5
    [result] = device.write([_update(INSERT, te)])
    assert result is not None and result.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "no direct counter" in result.message
    assert _stored(device, p4info) == []
    # the same entry without counter_data is then accepted (it was not left behind)
    assert device.write([_update(INSERT, _route_entry(p4info))]) == [None]


def test_insert_with_meter_config_on_a_table_without_one_is_not_stored(program, p4info):
    device = _device(program, p4info)
    te = _route_entry(p4info)
    te.meter_config.cir, te.meter_config.pir = 10, 20
    [result] = device.write([_update(INSERT, te)])
    assert result is not None and result.code == grpc.StatusCode.INVALID_ARGUMENT
    assert _stored(device, p4info) == []


def test_refused_modify_keeps_the_old_action(program, p4info):
    device = _device(program, p4info)
    assert device.write([_update(INSERT, _route_entry(p4info, port=1))]) == [None]
    te = _route_entry(p4info, port=7)
    te.meter_config.cir, te.meter_config.pir = 10, 20
    [result] = device.write([_update(MODIFY, te)])
    assert result is not None and result.code == grpc.StatusCode.INVALID_ARGUMENT
    [stored] = _stored(device, p4info)
    assert stored.action.action.params[0].value == b"\x01"


def test_default_entry_direct_resources_are_checked(program, p4info):
    device = _device(program, p4info)
    tid, aid = _ids(p4info, ".route", ".NoAction")
    te = p4runtime_pb2.TableEntry(table_id=tid, is_default_action=True)
    te.action.action.action_id = aid
    te.counter_data.packet_count = 1
    [result] = device.write([_update(MODIFY, te)])
    assert result is not None and result.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "no direct counter" in result.message
    te.ClearField("counter_data")
    te.meter_config.cir, te.meter_config.pir = 1, 2
    [result] = device.write([_update(MODIFY, te)])
    assert result is not None and result.code == grpc.StatusCode.INVALID_ARGUMENT
    # a table that has a direct counter: the default entry's is refused as unsupported,
    # not silently ignored
    acl, acl_none = _ids(p4info, ".acl", ".acl_none")
    te = p4runtime_pb2.TableEntry(table_id=acl, is_default_action=True)
    te.action.action.action_id = acl_none
    te.counter_data.packet_count = 1
    [result] = device.write([_update(MODIFY, te)])
    assert result is not None and result.code == grpc.StatusCode.UNIMPLEMENTED


def test_a_huge_bad_value_gets_a_short_message(program, p4info):
    device = _device(program, p4info)
    te = _route_entry(p4info)
    te.action.action.params[0].value = b"\xff" * (1 << 20)
    [result] = device.write([_update(INSERT, te)])
    assert result is not None and result.code == grpc.StatusCode.INVALID_ARGUMENT
    assert len(result.message) < 200, result.message
    assert "1048576-byte" in result.message
    status = write_error_status([result])
    assert len(status.SerializeToString()) < 1024
    assert _stored(device, p4info) == []


def test_error_report_messages_are_capped():
    status = write_error_status([invalid("x" * 100_000), None])
    error = p4runtime_pb2.Error()
    status.details[0].Unpack(error)
    assert len(error.message) == MAX_ERROR_MESSAGE and error.message.endswith("\u2026")
    ok = p4runtime_pb2.Error()
    status.details[1].Unpack(ok)
    assert ok.canonical_code == 0
