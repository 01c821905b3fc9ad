"""The P4Runtime fuzzing client against netweft's server, on every program in p4/ and
on test programs with ternary, range, optional and priority tables, an action selector,
direct counters and meters and a CPU port: every answer is the one the state model
predicts, and after every batch the server holds exactly the model's state."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from tests.p4runtime.p4runtime_fuzzer import fuzz

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "p4").glob("*.p4")) + [
    ROOT / "tests/p4runtime/programs/control_plane.p4",
    ROOT / "tests/p4_conformance/programs/tables.p4",
]


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_fuzzing_client_finds_nothing(path):
    program = compile_p4(path, include_dirs=[ROOT / "p4"])
    p4info = build_p4info(program)
    sent: list[tuple[int, bytes]] = []
    device = Device(lambda data: None, device_id=1, cpu_port=255)
    device.transmit = lambda port, frame: sent.append((port, frame))
    device.install(p4info, b"", switch=SoftSwitch(program))
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    try:
        report = fuzz(server.target, p4info, seed=len(path.stem), batches=60)
    finally:
        server.stop(0)
    assert report.server_failures == []
    assert report.wrong_answers == []
    assert report.state_mismatches == []
    assert report.secondary_writes_applied == 0
    assert report.accepted > 20 and report.refused > 20, report
    assert report.reads_by_others > 0 and report.packet_outs == report.batches
