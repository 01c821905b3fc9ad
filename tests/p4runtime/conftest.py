"""Fixtures: the control-plane test program, an in-process P4Runtime server on
a SoftSwitch (no sockets but gRPC's), and p4runtime-shell connected to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info

PROGRAM = Path(__file__).parent / "programs" / "control_plane.p4"
CPU_PORT = 255


def _no_loader(data: bytes):
    raise ValueError("this test device loads its program directly")


@pytest.fixture(scope="session")
def program():
    return compile_p4(PROGRAM)


@pytest.fixture(scope="session")
def p4info(program):
    return build_p4info(program)


class Served:
    """A device with the test program, its server, and the frames it transmitted."""

    def __init__(self, program, p4info) -> None:
        self.device = Device(_no_loader, device_id=1, cpu_port=CPU_PORT)
        self.device.install(p4info, b"", switch=SoftSwitch(program))
        self.sent: list[tuple[int, bytes]] = []
        self.device.transmit = lambda port, frame: self.sent.append((port, frame))
        self.server = P4RuntimeServer(self.device, "127.0.0.1:0").start()

    @property
    def target(self) -> str:
        return self.server.target


@pytest.fixture
def served(program, p4info):
    s = Served(program, p4info)
    try:
        yield s
    finally:
        s.server.stop(0)


@pytest.fixture
def shell(served):
    """p4runtime-shell set up as the primary client (election id 1)."""
    from p4runtime_sh import shell as sh
    sh.setup(device_id=1, grpc_addr=served.target, election_id=(0, 1), verbose=False)
    try:
        yield sh
    finally:
        sh.teardown()
