"""BMv2 beside netweft's switches in ``netweft bench switch --veth``.

The switch under test is BMv2's ``simple_switch_grpc`` (``simple_switch`` with a
P4Runtime server) on the bench's two ports, running the JSON that p4c's
``p4c-bm2-ss`` compiles from the same ``p4/basic_forward.p4`` the other switches
run. The route (10.0.0.0/8 to port 2), or any runtime file's exact and lpm
entries and multicast groups (:func:`runtime_writes`), goes in over P4Runtime
through netweft's controller session, as on any P4Runtime switch; BMv2's Thrift CLI is not used
(its Python client needs the ``thrift`` module, which netweft does not depend on).
Runtime logging stays off (no ``--log-console``/``--log-file``), so a build with
logging macros measures their checks only.

The bench includes it when ``p4c-bm2-ss`` and ``simple_switch_grpc`` are on PATH
and names the missing tools when it is left out (:func:`bmv2_switches`).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from netweft.testbed.bench.switch_veth import (
    BenchLinks,
    ProgramBench,
    SwitchUnderTest,
    basic_forward_runtime,
)
from netweft.testbed.control.entries import Lpm, MulticastWrite, TableWrite, Write

BMV2_TOOLS = ("p4c-bm2-ss", "simple_switch_grpc")
BMV2_NAME = "BMv2 simple_switch_grpc, basic_forward.p4"


def missing_tools(which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The BMv2 tools the bench needs that are not on PATH."""
    return [tool for tool in BMV2_TOOLS if which(tool) is None]


def bmv2_switches(which: Callable[[str], str | None] = shutil.which
                  ) -> tuple[list[SwitchUnderTest], str | None]:
    """BMv2 as a switch under test when its tools are on PATH, else no switch and the
    line that says why it is skipped."""
    missing = missing_tools(which)
    if missing:
        return [], f"{BMV2_NAME}: skipped ({', '.join(missing)} not on PATH)"
    return [bmv2_switch()], None


def runtime_writes(runtime: dict) -> list[Write]:
    """A runtime file's (the tutorials' format, as the switch process's ``--runtime``
    takes it) table entries and multicast groups as P4Runtime writes: a key given as
    ``[value, prefix_len]`` is lpm, any other exact; no default actions, clone
    sessions or ternary/range keys (the bench's programs need none)."""
    writes: list[Write] = []
    for entry in runtime.get("table_entries", []):
        if entry.get("default_action"):
            raise ValueError(f"{entry['table']}: default actions are not supported here")
        match = tuple((name, _key(value)) for name, value in entry.get("match", {}).items())
        writes.append(TableWrite(entry["table"], match, entry["action_name"],
                                 tuple(entry.get("action_params", {}).items()),
                                 int(entry.get("priority", 0))))
    for group in runtime.get("multicast_group_entries", []):
        writes.append(MulticastWrite(group["multicast_group_id"], tuple(
            (r["egress_port"], r["instance"]) for r in group["replicas"])))
    return writes


def _key(value: object) -> object:
    """A runtime file's key value: ``[value, prefix_len]`` is lpm, ``[value]`` exact."""
    if isinstance(value, list):
        return Lpm(value[0], value[1]) if len(value) == 2 else value[0]
    return value


def _free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bmv2Launch:
    """One start of simple_switch_grpc: its command line (with ports of its own for
    P4Runtime and Thrift, so that it runs beside other BMv2 instances), then the
    program compiled, pushed and given its route."""

    def __init__(self, program: Path | None = None, runtime: dict | None = None) -> None:
        if program is None:
            from netweft.p4.programs import source_dir

            program = source_dir() / "basic_forward.p4"
        self.program = program
        self.writes = runtime_writes(basic_forward_runtime() if runtime is None else runtime)
        self.grpc_port = _free_tcp_port()
        self.thrift_port = _free_tcp_port()

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def argv(self, links: BenchLinks, tmp: Path) -> list[str]:
        return ["simple_switch_grpc", "-i", f"1@{links.port1}", "-i", f"2@{links.port2}",
                "--no-p4", "--device-id", "0", "--thrift-port", str(self.thrift_port),
                "--notifications-addr", f"ipc://{tmp}/bmv2-notifications.ipc",
                "--", "--grpc-server-addr", self.grpc_address]

    def compile(self, tmp: Path) -> tuple[Path, Path]:
        """``p4c-bm2-ss`` on the program: its P4Info (text) and BMv2 JSON."""
        p4info, config = tmp / "bmv2.p4info.txtpb", tmp / "bmv2.json"
        done = subprocess.run(["p4c-bm2-ss", "--p4v", "16", "-I", str(self.program.parent),
                               "--p4runtime-files", str(p4info), "-o", str(config),
                               str(self.program)], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"p4c-bm2-ss refused {self.program.name}: "
                               f"{done.stderr.strip()[-1000:]}")
        return p4info, config

    def ready(self, proc: subprocess.Popen, tmp: Path, timeout: float) -> None:
        """Returns once the switch serves P4Runtime, runs the program and holds the route."""
        from google.protobuf import text_format
        from p4.config.v1 import p4info_pb2

        from netweft.testbed.control.p4runtime_installer import install_writes
        from netweft.testbed.control.p4runtime_session import SwitchSession

        p4info_path, config = self.compile(tmp)
        deadline = time.monotonic() + timeout
        while not _accepts(self.grpc_port):
            if proc.poll() is not None:
                raise RuntimeError(f"simple_switch_grpc exited with {proc.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"simple_switch_grpc serves no P4Runtime on "
                                   f"{self.grpc_address} after {timeout:g} s")
            time.sleep(0.1)
        p4info = text_format.Parse(p4info_path.read_text(), p4info_pb2.P4Info())
        with SwitchSession("bmv2", self.grpc_address, timeout=timeout) as session:
            session.set_pipeline(p4info, config.read_bytes())
            install_writes(session, self.writes)


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def bmv2_switch(program: Path | None = None, runtime: dict | None = None,
                name: str = BMV2_NAME) -> SwitchUnderTest:
    """simple_switch_grpc running ``program`` with ``runtime``'s entries (default
    ``p4/basic_forward.p4`` and its route)."""
    launch = Bmv2Launch(program, runtime)
    return SwitchUnderTest(name, launch.argv, ready=launch.ready)


def bmv2_program_name(bench: ProgramBench) -> str:
    return f"BMv2 simple_switch_grpc, {bench.program}"


def bmv2_program_switch(bench: ProgramBench) -> SwitchUnderTest:
    """simple_switch_grpc running one of ``--veth-programs``' programs with its entries."""
    from netweft.p4.programs import source_dir

    return bmv2_switch(source_dir() / bench.program, bench.runtime, bmv2_program_name(bench))
