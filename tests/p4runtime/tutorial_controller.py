"""A controller in the style of the p4lang tutorials' ``p4runtime_lib``, written against
plain grpc and the ``p4runtime`` protobufs only (no netweft import): it becomes
primary, sets the pipeline with the device config wrapped in ``p4.tmp.P4DeviceConfig``,
installs a ``sX-runtime.json`` and, with ``--read-counters``, prints table entries.

    python tutorial_controller.py ADDR DEVICE_ID P4INFO.txtpb DEVICE.json RUNTIME.json
"""

from __future__ import annotations

import ipaddress
import json
import queue
import re
import sys

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc


def encode(value, bitwidth: int) -> bytes:
    """p4runtime_lib's encoding: MACs, IPv4 addresses and numbers, padded to the width."""
    if isinstance(value, str) and re.fullmatch(r"([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}", value):
        number = int(value.replace(":", ""), 16)
    elif isinstance(value, str) and value.count(".") == 3:
        number = int(ipaddress.IPv4Address(value))
    else:
        number = int(value)
    return number.to_bytes((bitwidth + 7) // 8, "big")


def wrapped_device_config(data: bytes) -> bytes:
    """p4.tmp.P4DeviceConfig{reassign: true, device_data: data}, encoded by hand (the
    p4runtime package has no p4.tmp module)."""
    n, length = len(data), b""
    while True:
        length += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return b"\x08\x01\x1a" + length + data


class Controller:
    def __init__(self, address: str, device_id: int, p4info: p4info_pb2.P4Info) -> None:
        self.device_id, self.p4info = device_id, p4info
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.stream = self.stub.StreamChannel(iter(self.requests.get, None))
        arbitration = p4runtime_pb2.StreamMessageRequest()
        arbitration.arbitration.device_id = device_id
        arbitration.arbitration.election_id.low = 1
        self.requests.put(arbitration)
        answer = next(self.stream)
        if answer.arbitration.status.code != 0:
            raise SystemExit(f"not primary: {answer.arbitration.status.message}")

    def close(self) -> None:
        self.requests.put(None)
        self.channel.close()

    def set_pipeline(self, device_config: bytes) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        req.election_id.low = 1
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        req.config.p4info.CopyFrom(self.p4info)
        req.config.p4_device_config = wrapped_device_config(device_config)
        self.stub.SetForwardingPipelineConfig(req)

    def _find(self, kind: str, name: str):
        for obj in getattr(self.p4info, kind):
            if name in (obj.preamble.name, obj.preamble.alias):
                return obj
        raise SystemExit(f"no {kind} named {name}")

    def table_entry(self, spec: dict) -> p4runtime_pb2.Update:
        table = self._find("tables", spec["table"])
        default = bool(spec.get("default_action"))
        update = p4runtime_pb2.Update(
            type=p4runtime_pb2.Update.MODIFY if default else p4runtime_pb2.Update.INSERT)
        te = update.entity.table_entry
        te.table_id = table.preamble.id
        te.is_default_action = default
        te.priority = spec.get("priority", 0)
        for name, value in spec.get("match", {}).items():
            mf = next(f for f in table.match_fields if f.name == name)
            fm = te.match.add(field_id=mf.id)
            if mf.match_type == p4info_pb2.MatchField.EXACT:
                fm.exact.value = encode(value[0] if isinstance(value, list) else value,
                                        mf.bitwidth)
            elif mf.match_type == p4info_pb2.MatchField.LPM:
                fm.lpm.value, fm.lpm.prefix_len = encode(value[0], mf.bitwidth), value[1]
            elif mf.match_type == p4info_pb2.MatchField.TERNARY:
                fm.ternary.value = encode(value[0], mf.bitwidth)
                fm.ternary.mask = encode(value[1], mf.bitwidth)
        action = self._find("actions", spec["action_name"])
        te.action.action.action_id = action.preamble.id
        for name, value in spec.get("action_params", {}).items():
            param = next(p for p in action.params if p.name == name)
            te.action.action.params.add(param_id=param.id, value=encode(value, param.bitwidth))
        return update

    def write(self, updates: list[p4runtime_pb2.Update]) -> None:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.low = 1
        req.updates.extend(updates)
        self.stub.Write(req)

    def read_table(self, name: str) -> list[p4runtime_pb2.TableEntry]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.add().table_entry.table_id = self._find("tables", name).preamble.id
        return [e.table_entry for r in self.stub.Read(req) for e in r.entities]


def main(argv: list[str]) -> int:
    address, device_id, p4info_path, config_path, runtime_path = argv[:5]
    p4info = text_format.Parse(open(p4info_path).read(), p4info_pb2.P4Info())
    runtime = json.load(open(runtime_path))
    controller = Controller(address, int(device_id), p4info)
    try:
        controller.set_pipeline(open(config_path, "rb").read())
        for spec in runtime.get("table_entries", []):
            controller.write([controller.table_entry(spec)])
        tables = {spec["table"] for spec in runtime.get("table_entries", [])}
        for table in sorted(tables):
            print(f"{table}: {len(controller.read_table(table))} entries", flush=True)
    finally:
        controller.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
