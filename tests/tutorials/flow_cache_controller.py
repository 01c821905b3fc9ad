"""The flow-cache controller of the tests/tutorials exercise, in the tutorials' style
(plain grpc and the p4runtime protobufs through ``tutorial_controller.Controller``).

It is the switch's primary client: a PacketIn of an uncached flow is sent on by a
PacketOut to the egress port in its metadata, and the flow is cached with an idle
timeout; an IdleTimeoutNotification deletes the idle entries, as the tutorials'
flowcache ``mycontroller.py`` does.  What it saw is kept for the test to check.
"""

from __future__ import annotations

import threading
import time

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from tests.p4runtime.tutorial_controller import Controller


class FlowCacheController:
    def __init__(self, address: str, device_id: int, p4info: p4info_pb2.P4Info,
                 idle_timeout_ns: int) -> None:
        self.controller = Controller(address, device_id, p4info)
        self.idle_timeout_ns = idle_timeout_ns
        self.packet_ins = 0
        self.cached: list[tuple[bytes, bytes]] = []
        self.idle: list[tuple[float, list[tuple[bytes, bytes]]]] = []   # (when, flows)
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.controller.close()

    def _cache_entry(self, src: bytes, dst: bytes) -> p4runtime_pb2.Update:
        update = self.controller.table_entry({
            "table": "MyIngress.flow_cache", "action_name": "MyIngress.cached",
            "match": {"hdr.ipv4.srcAddr": int.from_bytes(src, "big"),
                      "hdr.ipv4.dstAddr": int.from_bytes(dst, "big")}})
        update.entity.table_entry.idle_timeout_ns = self.idle_timeout_ns
        return update

    def _read(self) -> None:
        try:
            for msg in self.controller.stream:
                kind = msg.WhichOneof("update")
                if kind == "packet":
                    self._packet_in(msg.packet)
                elif kind == "idle_timeout_notification":
                    self._idle(msg.idle_timeout_notification)
        except grpc.RpcError:
            pass

    def _packet_in(self, packet: p4runtime_pb2.PacketIn) -> None:
        md = {m.metadata_id: int.from_bytes(m.value, "big") for m in packet.metadata}
        out = p4runtime_pb2.StreamMessageRequest()
        out.packet.payload = packet.payload
        out.packet.metadata.add(metadata_id=1, value=md[2].to_bytes(2, "big"))
        out.packet.metadata.add(metadata_id=2, value=b"\x00")
        self.controller.requests.put(out)
        src, dst = packet.payload[26:30], packet.payload[30:34]
        with self.lock:
            self.packet_ins += 1
            if (src, dst) in self.cached:
                return
            self.cached.append((src, dst))
        try:
            self.controller.write([self._cache_entry(src, dst)])
        except grpc.RpcError as err:
            self.errors.append(f"insert: {err.details()}")

    def _idle(self, note: p4runtime_pb2.IdleTimeoutNotification) -> None:
        flows = [(e.match[0].exact.value.rjust(4, b"\0"), e.match[1].exact.value.rjust(4, b"\0"))
                 for e in note.table_entry]
        with self.lock:
            self.idle.append((time.monotonic(), flows))
        for src, dst in flows:
            update = self._cache_entry(src, dst)
            update.type = p4runtime_pb2.Update.DELETE
            update.entity.table_entry.idle_timeout_ns = 0
            try:
                self.controller.write([update])
            except grpc.RpcError as err:
                self.errors.append(f"delete: {err.details()}")
            with self.lock:
                if (src, dst) in self.cached:
                    self.cached.remove((src, dst))

    def idle_flows(self) -> list[tuple[bytes, bytes]]:
        with self.lock:
            return [f for _when, flows in self.idle for f in flows]
