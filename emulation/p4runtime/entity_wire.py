"""Read results written straight in protobuf's wire format.

The ``p4runtime`` package pins protobuf 3.20, whose pure-Python messages cost
hundreds of microseconds each to build and serialize: a wildcard read of a
program's registers (tens of thousands of cells) took seconds that way.  Cells
of counters, meters and registers are therefore encoded here as the bytes of a
``p4.v1.Entity``, byte for byte what ``SerializeToString()`` gives (a test
compares the two), and a Read's response is the concatenation of such entities.
Field numbers come from the protobuf descriptors, not from this file.
"""

from __future__ import annotations

from collections.abc import Iterable

from p4.v1 import p4data_pb2, p4runtime_pb2


def _number(message: type, name: str) -> int:
    return message.DESCRIPTOR.fields_by_name[name].number


def _tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def varint(value: int) -> bytes:
    """``value`` (non-negative, or a negative int64 as 10 bytes) as a protobuf varint."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length_delimited(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: its tag, the payload's length, the payload."""
    return tag + varint(len(payload)) + payload


def _scalar(tag: bytes, value: int) -> bytes:
    """A varint field as proto3 writes it: nothing for zero."""
    return tag + varint(value) if value else b""


LEN, VARINT = 2, 0
_ENTITY = {kind: _tag(_number(p4runtime_pb2.Entity, kind), LEN)
           for kind in ("register_entry", "counter_entry", "meter_entry")}
_INDEX = _tag(_number(p4runtime_pb2.Index, "index"), VARINT)
_RESPONSE_ENTITY = _tag(_number(p4runtime_pb2.ReadResponse, "entities"), LEN)
_REG = {name: _tag(_number(p4runtime_pb2.RegisterEntry, name), VARINT if name == "register_id"
                   else LEN) for name in ("register_id", "index", "data")}
_BITSTRING = _tag(_number(p4data_pb2.P4Data, "bitstring"), LEN)
_CTR = {name: _tag(_number(p4runtime_pb2.CounterEntry, name), VARINT if name == "counter_id"
                   else LEN) for name in ("counter_id", "index", "data")}
_CTR_DATA = {name: _tag(_number(p4runtime_pb2.CounterData, name), VARINT)
             for name in ("byte_count", "packet_count")}
_METER = {name: _tag(_number(p4runtime_pb2.MeterEntry, name), VARINT if name == "meter_id"
                     else LEN) for name in ("meter_id", "index", "config")}


def _index(tag: bytes, index: int) -> bytes:
    return length_delimited(tag, _scalar(_INDEX, index))


def register_cell(register_id: int, index: int, bitstring: bytes) -> bytes:
    """The Entity of one register cell (``bitstring``: its canonical bytestring)."""
    body = (_scalar(_REG["register_id"], register_id) + _index(_REG["index"], index)
            + length_delimited(_REG["data"], length_delimited(_BITSTRING, bitstring)))
    return length_delimited(_ENTITY["register_entry"], body)


def counter_cell(counter_id: int, index: int, packets: int, nbytes: int) -> bytes:
    """The Entity of one counter cell."""
    data = (_scalar(_CTR_DATA["byte_count"], nbytes)
            + _scalar(_CTR_DATA["packet_count"], packets))
    body = (_scalar(_CTR["counter_id"], counter_id) + _index(_CTR["index"], index)
            + length_delimited(_CTR["data"], data))
    return length_delimited(_ENTITY["counter_entry"], body)


def meter_cell(meter_id: int, index: int, config: p4runtime_pb2.MeterConfig | None) -> bytes:
    """The Entity of one meter cell (``config`` None: not configured)."""
    body = _scalar(_METER["meter_id"], meter_id) + _index(_METER["index"], index)
    if config is not None:
        body += length_delimited(_METER["config"], config.SerializeToString())
    return length_delimited(_ENTITY["meter_entry"], body)


def read_response(entities: Iterable[bytes]) -> bytes:
    """A ``p4.v1.ReadResponse`` holding the given serialized entities."""
    return b"".join(length_delimited(_RESPONSE_ENTITY, e) for e in entities)
