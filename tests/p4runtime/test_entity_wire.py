"""Read results encoded without protobuf messages equal protobuf's own bytes, and a
wildcard read over gRPC returns what an in-process read does."""

from __future__ import annotations

import grpc
from hypothesis import given, settings
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from netweft.emulation.p4runtime import entity_wire
from netweft.emulation.p4runtime.device import Device
from netweft.emulation.switch import SoftSwitch

_u64 = st.integers(0, (1 << 63) - 2)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, (1 << 32) - 1), st.integers(0, 1 << 40), st.binary(min_size=1,
                                                                       max_size=20))
def test_register_cell_matches_protobuf(rid, index, bitstring):
    e = p4runtime_pb2.Entity()
    e.register_entry.register_id = rid
    e.register_entry.index.index = index
    e.register_entry.data.bitstring = bitstring
    assert entity_wire.register_cell(rid, index, bitstring) == e.SerializeToString()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, (1 << 32) - 1), st.integers(0, 1 << 40), _u64, _u64)
def test_counter_cell_matches_protobuf(cid, index, packets, nbytes):
    e = p4runtime_pb2.Entity()
    e.counter_entry.counter_id = cid
    e.counter_entry.index.index = index
    e.counter_entry.data.packet_count, e.counter_entry.data.byte_count = packets, nbytes
    assert entity_wire.counter_cell(cid, index, packets, nbytes) == e.SerializeToString()


@settings(max_examples=100, deadline=None)
@given(st.integers(1, (1 << 32) - 1), st.integers(0, 1 << 40), st.booleans(), _u64, _u64)
def test_meter_cell_matches_protobuf(mid, index, configured, cir, pburst):
    e = p4runtime_pb2.Entity()
    e.meter_entry.meter_id = mid
    e.meter_entry.index.index = index
    config = None
    if configured:
        config = p4runtime_pb2.MeterConfig(cir=cir, cburst=3, pir=cir + 1, pburst=pburst)
        e.meter_entry.config.CopyFrom(config)
    assert entity_wire.meter_cell(mid, index, config) == e.SerializeToString()


def test_varint_of_a_negative_int64():
    assert entity_wire.varint(-1) == b"\xff" * 9 + b"\x01"


def _wildcards() -> list[p4runtime_pb2.Entity]:
    return [p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry()),
            p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry()),
            p4runtime_pb2.Entity(meter_entry=p4runtime_pb2.MeterEntry()),
            p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())]


def test_device_reads_agree_in_both_forms(program, p4info):
    device = Device(lambda data: None, device_id=1, cpu_port=255)
    switch = SoftSwitch(program)
    device.install(p4info, b"", switch=switch)
    for register in switch.registers.values():
        for i in range(0, register.size, 3):
            register.write(i, (i * 2654435761) & register.mask)
    for counter in switch.counters.values():
        for i in range(counter.size):
            counter.write(i, i, i * 1500)
    messages = [e.SerializeToString() for e in device.read(_wildcards())]
    assert messages, "the test program has indexed externs"
    assert device.read_wire(_wildcards()) == messages


def test_read_over_grpc_returns_the_devices_entities(served):
    switch = served.device.switch
    for register in switch.registers.values():
        register.write(register.size - 1, 5)
    expected = served.device.read(_wildcards())
    with grpc.insecure_channel(served.target) as channel:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        got = [e for response in stub.Read(p4runtime_pb2.ReadRequest(
            device_id=1, entities=_wildcards())) for e in response.entities]
    assert got == expected


def test_a_large_read_comes_in_several_responses(served, monkeypatch):
    cells = [entity_wire.register_cell(7, i, i.to_bytes(2, "big")) for i in range(2500)]
    monkeypatch.setattr(served.device, "read_wire", lambda entities: cells)
    with grpc.insecure_channel(served.target) as channel:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        responses = list(stub.Read(p4runtime_pb2.ReadRequest(device_id=1,
                                                              entities=_wildcards()[:1])))
    assert [len(r.entities) for r in responses] == [1000, 1000, 500]
    got = [e for r in responses for e in r.entities]
    assert [e.register_entry.index.index for e in got] == list(range(2500))
    assert got[2499].register_entry.data.bitstring == (2499).to_bytes(2, "big")
