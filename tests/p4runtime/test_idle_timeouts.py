"""Idle timeouts (support_timeout tables, idle_timeout_ns, IdleTimeoutNotification) and
PacketIn/PacketOut, on the tutorials-shaped flow-cache program of tests/tutorials, on
both back ends (the native one counts each entry's hits in C)."""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from netweft.emulation.native.selection import select_backend
from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.errors import P4RuntimeError
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from tests.p4runtime.frames import frame
from tests.p4runtime.tutorial_controller import Controller

PROGRAM = Path(__file__).parents[1] / "tutorials" / "exercise" / "flowcache.p4"
CPU_PORT = 255
SECOND = 10**9
H1, H2 = "10.0.1.1", "10.0.2.2"


def _no_loader(data: bytes):
    raise ValueError("this test device loads its program directly")


@pytest.fixture(scope="module")
def program():
    return compile_p4(PROGRAM)


@pytest.fixture(scope="module")
def p4info(program):
    return build_p4info(program)


@pytest.fixture(params=["python", "c"])
def backend(request) -> str:
    return request.param


def _device(program, p4info, sweep_s: float, backend: str) -> Device:
    device = Device(_no_loader, device_id=1, cpu_port=CPU_PORT, idle_sweep_s=sweep_s)
    switch = SoftSwitch(program, backend=backend)
    assert switch.backend == backend
    device.install(p4info, b"", switch=switch)
    return device


def _ipv4(src: str, dst: str) -> bytes:
    """An Ethernet + IPv4 frame (protocol 253, no payload checks) from ``src`` to ``dst``."""
    header = bytearray(20)
    header[0], header[8], header[9] = 0x45, 64, 253
    header[2:4] = (20).to_bytes(2, "big")
    header[12:16] = bytes(map(int, src.split(".")))
    header[16:20] = bytes(map(int, dst.split(".")))
    return frame("08:00:00:00:01:00", "08:00:00:00:01:11", 0x0800, bytes(header) + bytes(26))


def _controller(device: Device, p4info) -> Controller:
    c = Controller.__new__(Controller)
    c.device_id, c.p4info = device.device_id, p4info
    return c


def _route_and_cache_updates(c: Controller, idle_ns: int) -> list[p4runtime_pb2.Update]:
    route = c.table_entry({"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [H2, 32]},
                           "action_name": "MyIngress.ipv4_forward",
                           "action_params": {"dstAddr": "08:00:00:00:02:22", "port": 2}})
    cache = c.table_entry({"table": "MyIngress.flow_cache",
                           "match": {"hdr.ipv4.srcAddr": H1, "hdr.ipv4.dstAddr": H2},
                           "action_name": "MyIngress.cached"})
    cache.entity.table_entry.idle_timeout_ns = idle_ns
    return [route, cache]


def _write(device: Device, updates: list[p4runtime_pb2.Update]) -> None:
    results = device.write(updates)
    assert results == [None] * len(updates), results


def test_an_idle_entry_is_reported_once_and_again_only_after_a_hit_or_a_modify(program, p4info, backend):
    device = _device(program, p4info, sweep_s=0, backend=backend)   # swept by hand, at given times
    sweeps = device._entities.idle_timeouts
    c = _controller(device, p4info)
    t0 = time.monotonic_ns()
    route, cache = _route_and_cache_updates(c, idle_ns=SECOND)
    _write(device, [route, cache])
    assert sweeps.sweep(t0 + SECOND // 2) is None
    assert device.process(1, _ipv4(H1, H2))[0][0] == 2      # hits the cached flow
    assert sweeps.sweep(t0 + SECOND + SECOND // 5) is None   # the hit is seen here
    assert sweeps.sweep(t0 + 2 * SECOND) is None             # 0.8 s idle
    msg = sweeps.sweep(t0 + 2 * SECOND + SECOND // 2)        # 1.3 s idle
    assert msg is not None and len(msg.table_entry) == 1
    reported = msg.table_entry[0]
    assert reported.table_id == cache.entity.table_entry.table_id
    assert list(reported.match) == list(cache.entity.table_entry.match)
    assert reported.idle_timeout_ns == SECOND
    assert msg.timestamp > 0
    assert sweeps.sweep(t0 + 10 * SECOND) is None            # reported once
    # time_since_last_hit in a read that asks for it
    query = p4runtime_pb2.Entity()
    query.table_entry.table_id = reported.table_id
    query.table_entry.time_since_last_hit.SetInParent()
    (read,) = device.read([query])
    assert read.table_entry.HasField("time_since_last_hit")
    assert read.table_entry.idle_timeout_ns == SECOND
    # hit again: re-armed
    device.process(1, _ipv4(H1, H2))
    assert sweeps.sweep(t0 + 11 * SECOND) is None
    again = sweeps.sweep(t0 + 12 * SECOND + 1)
    assert again is not None and list(again.table_entry[0].match) == list(reported.match)
    # MODIFY re-arms too
    cache.type = p4runtime_pb2.Update.MODIFY
    _write(device, [cache])
    later = time.monotonic_ns()
    assert sweeps.sweep(later + SECOND // 2) is None
    assert sweeps.sweep(later + 2 * SECOND) is not None


def test_entries_without_idle_timeout_or_in_other_tables_are_never_reported(program, p4info, backend):
    device = _device(program, p4info, sweep_s=0, backend=backend)
    c = _controller(device, p4info)
    route, cache = _route_and_cache_updates(c, idle_ns=0)
    _write(device, [route, cache])
    assert device._entities.idle_timeouts.sweep(time.monotonic_ns() + 3600 * SECOND) is None


def test_idle_timeout_is_refused_where_the_table_has_no_support_timeout(program, p4info, backend):
    device = _device(program, p4info, sweep_s=0, backend=backend)
    c = _controller(device, p4info)
    route, _cache = _route_and_cache_updates(c, idle_ns=SECOND)
    route.entity.table_entry.idle_timeout_ns = SECOND
    (result,) = device.write([route])
    assert isinstance(result, P4RuntimeError)
    assert result.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "support_timeout" in result.message


def test_the_native_back_end_runs_idle_timeout_programs(program):
    assert select_backend(program, "c", traced=False, seed=0,
                          select_no_match_ends_parsing=False) is not None
    assert SoftSwitch(program, backend="auto").backend == "c"


def _entry_hits(device: Device) -> dict[tuple[str, tuple], int]:
    """Every installed entry's hits, by table and match."""
    tables = device.switch.tables
    return {(name, entry.match): entry.hits
            for name, table in tables.items() for entry in table.entries}


def test_hit_counts_are_the_same_on_both_back_ends(program, p4info):
    """The same entries and frames (hits, misses, a non-timeout table, a MODIFY)
    leave every entry with the same hit count on both back ends."""
    counts = {}
    for backend in ("python", "c"):
        device = _device(program, p4info, sweep_s=0, backend=backend)
        c = _controller(device, p4info)
        route, cache = _route_and_cache_updates(c, idle_ns=SECOND)
        other = c.table_entry({"table": "MyIngress.flow_cache",
                               "match": {"hdr.ipv4.srcAddr": H2, "hdr.ipv4.dstAddr": H1},
                               "action_name": "MyIngress.cached"})
        back = c.table_entry({"table": "MyIngress.ipv4_lpm",
                              "match": {"hdr.ipv4.dstAddr": [H1, 32]},
                              "action_name": "MyIngress.ipv4_forward",
                              "action_params": {"dstAddr": "08:00:00:00:01:11", "port": 1}})
        _write(device, [route, back, cache, other])
        for n in range(7):
            device.process(1, _ipv4(H1, H2))            # the cached flow: a hit
            if n % 3 == 0:
                device.process(2, _ipv4(H2, H1))        # the other entry
            device.process(1, _ipv4("10.0.9.9", H2))    # a miss: counts nothing
        cache.type = p4runtime_pb2.Update.MODIFY        # a MODIFY keeps the count
        _write(device, [cache])
        device.process(1, _ipv4(H1, H2))
        counts[backend] = _entry_hits(device)
    assert counts["c"] == counts["python"]
    flow = {match: hits for (table, match), hits in counts["c"].items()
            if table == "MyIngress.flow_cache"}
    assert sorted(flow.values()) == [3, 8]
    assert all(hits == 0 for (table, _m), hits in counts["c"].items()
               if table == "MyIngress.ipv4_lpm")      # no support_timeout: never counted


class _Stream:
    """A Controller's stream read on a thread (responses into a queue)."""

    def __init__(self, controller: Controller) -> None:
        self.messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, args=(controller.stream,), daemon=True).start()

    def _read(self, stream) -> None:
        try:
            for msg in stream:
                self.messages.put(msg)
        except grpc.RpcError:
            pass

    def next(self, kind: str, timeout: float = 60) -> p4runtime_pb2.StreamMessageResponse:
        deadline = time.monotonic() + timeout
        while True:
            msg = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            if msg.WhichOneof("update") == kind:
                return msg


def test_packet_in_packet_out_and_idle_timeout_notification_over_grpc(program, p4info, backend):
    device = _device(program, p4info, sweep_s=0.05, backend=backend)
    sent: list[tuple[int, bytes]] = []
    device.transmit = lambda port, data: sent.append((port, data))
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    controller = Controller(server.target, device.device_id, p4info)
    try:
        stream = _Stream(controller)
        route, cache = _route_and_cache_updates(controller, idle_ns=SECOND // 5)
        controller.write([route])
        # an uncached flow goes to the controller with both ports in its metadata
        assert device.process(1, _ipv4(H1, H2)) == []
        packet_in = stream.next("packet").packet
        md = {m.metadata_id: int.from_bytes(m.value, "big") for m in packet_in.metadata}
        assert md == {1: 1, 2: 2, 3: 0}     # ingress port, egress port, pad
        assert packet_in.payload[30:34] == bytes([10, 0, 2, 2])
        # the controller sends it on and caches the flow
        out = p4runtime_pb2.StreamMessageRequest()
        out.packet.payload = packet_in.payload
        out.packet.metadata.add(metadata_id=1, value=(2).to_bytes(2, "big"))
        out.packet.metadata.add(metadata_id=2, value=b"\x00")
        controller.requests.put(out)
        controller.write([cache])
        for _ in range(600):
            if sent:
                break
            time.sleep(0.05)
        assert sent == [(2, packet_in.payload)]
        assert device.process(1, _ipv4(H1, H2))[0][0] == 2     # cached: forwarded
        # idle: the notification names the entry and its timeout
        note = stream.next("idle_timeout_notification").idle_timeout_notification
        (entry,) = note.table_entry
        assert list(entry.match) == list(cache.entity.table_entry.match)
        assert entry.idle_timeout_ns == SECOND // 5
    finally:
        controller.close()
        server.stop(0)
