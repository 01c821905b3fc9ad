"""The switch a switch command runs: program, ports' settings, tables, trace, P4Runtime.

``python -m netweft.emulation.process.switch_process`` and ``netweft-switch``
differ in their command lines only.  Each turns its options into a
:class:`SwitchSetup`; :func:`build_switch` makes what both then run with
:func:`~netweft.emulation.process.switch_process.serve`: the
:class:`~netweft.emulation.switch.SoftSwitch` (its program compiled from a
``.p4`` source or loaded from ``netweft-p4c``'s device config, ports'
link settings, runtime file and simple_switch_CLI command list applied), the
packet trace's output, and, with a gRPC address, the P4Runtime device and
server in front of the switch.

The compiler and gRPC are imported when a switch is built, not with this
module: the ``netweft`` command imports the switch commands at start.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from netweft.emulation.links.port_options import PortOptions

if TYPE_CHECKING:
    from netweft.emulation.p4runtime.device import Device
    from netweft.emulation.p4runtime.server import P4RuntimeServer
    from netweft.emulation.process.switch_process import SwitchPorts
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler.program import Program


class SwitchBuildError(Exception):
    """The switch could not be built; the message says why (a command prints it after
    ``error:`` and exits with status 2)."""


@dataclass
class SwitchSetup:
    """What to build, whichever command line said it."""

    program: Path | None = None          # a .p4 source, or a device config from netweft-p4c
    include_dirs: tuple[str, ...] = ()   # #include folders of a .p4 source
    runtime: Path | None = None          # runtime file (sX-runtime.json)
    commands: Path | None = None         # simple_switch_CLI command list
    port_options: Mapping[int, PortOptions] = field(default_factory=dict)
    priority_queues: int = 1
    seed: int = 0                        # of the links' loss, corruption and jitter
    log_file: Path | None = None         # the packet trace, into a file ...
    log_console: bool = False            # ... or on stdout
    grpc_address: str | None = None      # serve P4Runtime there (HOST:PORT or unix:PATH)
    device_id: int = 0
    cpu_port: int | None = None          # PacketIn/PacketOut port of the P4Runtime device
    backend: str | None = None           # auto, c or python (None: $NETWEFT_SWITCH_BACKEND)


@dataclass
class BuiltSwitch:
    """A built switch: ``target`` is what the loop drives (the switch, or the P4Runtime
    device holding it); :meth:`close` stops the server and closes the trace file."""

    target: Any
    trace_out: TextIO | None = None
    device: Device | None = None
    server: P4RuntimeServer | None = None

    def attach_ports(self, io: SwitchPorts | None) -> None:
        """Send the P4Runtime device's PacketOut frames through the switch's open ports
        (``serve``'s ``on_ready``; None: a C loop owns the ports and takes PacketOut
        frames itself)."""
        if self.device is None or io is None:
            return

        def transmit(port: int, frame: bytes) -> None:
            sock = io.sockets.get(port)
            if sock is not None:
                try:
                    sock.send(frame)
                except OSError:
                    pass
        self.device.transmit = transmit

    def close(self) -> None:
        if self.server is not None:
            self.server.stop(0)
            self.server = None
        if self.trace_out is not None and self.trace_out is not sys.stdout:
            self.trace_out.close()
        self.trace_out = None


def load_device_config(data: bytes) -> Program:
    """The program of a device config (netweft-p4c's output, possibly wrapped in
    ``p4.tmp.P4DeviceConfig``): the P4Runtime device's program loader."""
    from netweft.p4.compiler.device_config import load_device_config as load
    return load(data)


def build_switch(setup: SwitchSetup) -> BuiltSwitch:
    """Build the switch ``setup`` describes; :class:`SwitchBuildError` says what failed
    (nothing is left open then)."""
    trace_out = _open_trace(setup)
    try:
        return _build(setup, trace_out)
    except BaseException:
        if trace_out is not None and trace_out is not sys.stdout:
            trace_out.close()
        raise


def _open_trace(setup: SwitchSetup) -> TextIO | None:
    if setup.log_file:
        try:
            return open(setup.log_file, "w", buffering=1 << 16)  # noqa: SIM115
        except OSError as err:
            raise SwitchBuildError(f"cannot write the log file {setup.log_file}: "
                                   f"{err.strerror}") from None
    return sys.stdout if setup.log_console else None


def _build(setup: SwitchSetup, trace_out: TextIO | None) -> BuiltSwitch:
    from netweft.emulation.p4runtime.command_list import CommandError
    from netweft.emulation.p4runtime.runtime_file import RuntimeFileError, apply_runtime_file
    from netweft.emulation.packet_trace import PacketTrace
    from netweft.emulation.switch import SoftSwitch, SwitchError
    from netweft.p4.compiler import P4Error

    trace = PacketTrace.to_stream(trace_out) if trace_out is not None else None

    def new_switch(program: Program) -> SoftSwitch:
        """A switch for ``program`` (also one a controller's pipeline gets later)."""
        built = SoftSwitch(program, seed=setup.seed, priority_queues=setup.priority_queues,
                           trace=trace, backend=setup.backend)
        for port, opts in setup.port_options.items():
            built.configure_port(port, opts)
        return built

    switch = config = None
    if setup.program is not None:
        try:
            program, config = _load_program(setup.program, setup.include_dirs)
            switch = new_switch(program)
            if setup.runtime:
                apply_runtime_file(switch, setup.runtime)
            if setup.commands:
                _apply_command_list(switch, setup.commands)
        except OSError as err:
            raise SwitchBuildError(f"{err.filename or setup.program}: "
                                   f"{err.strerror or err}") from None
        except (P4Error, ValueError, RuntimeFileError, SwitchError, CommandError) as err:
            raise SwitchBuildError(str(err)) from None
    if setup.grpc_address is None:
        return BuiltSwitch(switch, trace_out)
    device, server = _serve_p4runtime(setup.grpc_address, setup, switch, config, new_switch)
    return BuiltSwitch(device, trace_out, device, server)


def _load_program(path: Path, include_dirs: tuple[str, ...]) -> tuple[Program, bytes]:
    """The program of a ``.p4`` source (compiled) or a device config, and the config's
    bytes (empty for a source: the P4Runtime device has no config to hand back)."""
    from netweft.p4.compiler import compile_p4

    if path.suffix == ".p4":
        return compile_p4(str(path), include_dirs=include_dirs), b""
    data = path.read_bytes()
    return load_device_config(data), data


def _apply_command_list(switch: SoftSwitch, path: Path) -> None:
    """Run a simple_switch_CLI command list against ``switch`` through an in-process
    P4Runtime device (the translation ``netweft cli`` uses), before traffic flows."""
    from netweft.emulation.p4runtime.command_list import CommandSession, DeviceTarget
    from netweft.emulation.p4runtime.device import Device
    from netweft.p4.compiler.p4info import build_p4info

    p4info = build_p4info(switch.program)
    device = Device(lambda _config: switch.program, switch_factory=lambda _program: switch)
    device.install(p4info, b"", switch=switch)
    CommandSession(p4info, DeviceTarget(device)).run_file(path)


def _serve_p4runtime(address: str, setup: SwitchSetup, switch: SoftSwitch | None,
                     config: bytes | None, new_switch: Any) -> tuple[Device, P4RuntimeServer]:
    """Put ``switch`` (none: wait for SetForwardingPipelineConfig) behind a P4Runtime
    device served at ``address``; a pipeline a controller sets later runs on a
    switch built by ``new_switch`` (same ports' settings, queues and trace)."""
    from netweft.emulation.p4runtime.device import Device
    from netweft.emulation.p4runtime.server import P4RuntimeServer
    from netweft.p4.compiler.p4info import build_p4info

    device = Device(load_device_config, device_id=setup.device_id, cpu_port=setup.cpu_port,
                    switch_factory=new_switch)
    if switch is not None:
        device.install(build_p4info(switch.program), config or b"", switch=switch)
    if address.startswith("unix:"):
        Path(address.removeprefix("unix:").removeprefix("//")).unlink(missing_ok=True)
    try:
        return device, P4RuntimeServer(device, address).start()
    except OSError as err:
        raise SwitchBuildError(f"{err} (is another switch using it? give another "
                               "--grpc-server-addr)") from None
