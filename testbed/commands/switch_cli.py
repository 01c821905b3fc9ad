"""``netweft cli``: simple_switch_CLI's commands against a running switch.

Against ``netweft-switch`` it connects to the P4Runtime server, takes the
P4Info from it, and arbitrates in its own role, ``netweft-cli``, so that it
neither demotes nor collides with the controller of the default role.
Against a switch process started with ``--control PATH`` (``netweft up``'s
switches) it sends the commands over that Unix socket.  Either way it runs a
command list from a file or from an interactive ``RuntimeCmd:`` prompt (see
:mod:`netweft.emulation.p4runtime.command_list` for the commands).

    netweft cli --grpc-addr 127.0.0.1:9559 commands.txt
    netweft cli --control /tmp/nw1a2b3-s1.sock     # interactive
"""

from __future__ import annotations

import argparse
import cmd
import json
import queue
import threading
from pathlib import Path

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from netweft.emulation.p4runtime.command_list import COMMANDS, CommandError, CommandSession
from netweft.emulation.process.control import ControlError, send_command
from netweft.testbed.arg_types import existing_file, int_in
from netweft.testbed.command_line import CommandError as CliError

ROLE = "netweft-cli"


def existing_path(text: str) -> Path:
    """A path that exists (a socket is not a regular file)."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such socket: {text!r}")
    return path


class GrpcTarget:
    """A P4Runtime client session: arbitration on a stream, then Write and Read."""

    def __init__(self, address: str, device_id: int, election_id: int, role: str,
                 timeout: float = 10.0) -> None:
        self.device_id, self.election_id, self.role = device_id, election_id, role
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._requests: queue.Queue = queue.Queue()
        self._answers: queue.Queue = queue.Queue()
        request = p4runtime_pb2.StreamMessageRequest()
        arb = request.arbitration
        arb.device_id, arb.role.name = device_id, role
        arb.election_id.high, arb.election_id.low = election_id >> 64, election_id & (2**64 - 1)
        self._requests.put(request)
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        threading.Thread(target=self._listen, daemon=True).start()
        try:
            answer = self._answers.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise CliError(f"no P4Runtime answer from {address} within {timeout:.0f} s: is "
                           "netweft-switch running there (-- --grpc-server-addr)?") from None
        if isinstance(answer, grpc.RpcError):
            self.close()
            raise CliError(f"{address}: {_rpc_text(answer)}")
        if answer.arbitration.status.code != code_pb2.OK:
            self.close()
            raise CliError(f"{address}: another client of role {role} is primary; "
                           "choose a higher --election-id")

    def _listen(self) -> None:
        try:
            for response in self._stream:
                if response.HasField("arbitration"):
                    self._answers.put(response)
        except grpc.RpcError as err:
            self._answers.put(err)

    def p4info(self):
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            return self.stub.GetForwardingPipelineConfig(request).config.p4info
        except grpc.RpcError as err:
            raise CliError(f"cannot get the P4Info: {_rpc_text(err)}") from None

    def write(self, updates: list[p4runtime_pb2.Update]) -> None:
        request = p4runtime_pb2.WriteRequest(device_id=self.device_id, role=self.role)
        request.election_id.high = self.election_id >> 64
        request.election_id.low = self.election_id & (2**64 - 1)
        request.updates.extend(updates)
        try:
            self.stub.Write(request)
        except grpc.RpcError as err:
            raise CommandError(_write_error_text(err)) from None

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        request = p4runtime_pb2.ReadRequest(device_id=self.device_id, role=self.role)
        request.entities.append(entity)
        try:
            return [e for response in self.stub.Read(request) for e in response.entities]
        except grpc.RpcError as err:
            raise CommandError(_rpc_text(err)) from None

    def close(self) -> None:
        self._requests.put(None)
        self.channel.close()


def _rpc_text(err: grpc.RpcError) -> str:
    return f"{err.code().name}: {err.details()}"


def _write_error_text(err: grpc.RpcError) -> str:
    if err.code() != grpc.StatusCode.UNKNOWN:
        return _rpc_text(err)
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status()
            status.ParseFromString(value)
            for detail in status.details:
                error = p4runtime_pb2.Error()
                detail.Unpack(error)
                if error.canonical_code != code_pb2.OK:
                    return f"{code_pb2.Code.Name(error.canonical_code)}: {error.message}"
    return _rpc_text(err)


class ControlChannelSession:
    """Commands sent as they are over a switch process's ``--control`` socket."""

    def __init__(self, path: str) -> None:
        self.path = path

    def execute(self, line: str) -> str:
        line = line.split("#", 1)[0].strip()
        if not line:
            return ""
        try:
            answer = send_command(self.path, line, timeout=30.0)
        except ControlError as err:
            raise CommandError(str(err)) from None
        except OSError as err:
            raise CliError(f"cannot reach the switch at {self.path}: "
                           f"{err.strerror or err}") from None
        if answer == "ok":
            return ""
        value = json.loads(answer)
        return value if isinstance(value, str) else json.dumps(value)

    def run_file(self, path: str) -> list[str]:
        out = []
        for number, line in enumerate(open(path).read().splitlines(), 1):
            try:
                text = self.execute(line)
            except CommandError as err:
                raise CommandError(f"{path}:{number}: {err}") from None
            if text:
                out.append(text)
        return out


class RuntimeCmd(cmd.Cmd):
    """The interactive prompt: one simple_switch_CLI command per line."""

    prompt = "RuntimeCmd: "
    intro = ("netweft cli: simple_switch_CLI commands over P4Runtime "
             f"({', '.join(COMMANDS)}); EOF or 'exit' quits")

    def __init__(self, session: CommandSession | ControlChannelSession) -> None:
        super().__init__()
        self.session = session

    def default(self, line: str) -> bool:
        if line.strip() in ("exit", "quit", "EOF"):
            return True
        try:
            text = self.session.execute(line)
        except CommandError as err:
            print(f"Error: {err}")
            return False
        if text:
            print(text)
        return False

    def emptyline(self) -> bool:
        return False

    def completenames(self, text: str, *ignored: object) -> list[str]:
        return [c for c in COMMANDS if c.startswith(text)]


def _run_session(session: CommandSession | ControlChannelSession,
                 commands: str | None) -> None:
    if commands:
        try:
            for text in session.run_file(commands):
                print(text)
        except CommandError as err:
            raise CliError(str(err)) from None
    else:
        RuntimeCmd(session).cmdloop()


def run(args: argparse.Namespace) -> int:
    if args.control is not None:
        _run_session(ControlChannelSession(str(args.control)), args.commands)
        return 0
    target = GrpcTarget(args.grpc_addr, args.device_id, args.election_id, args.role)
    try:
        _run_session(CommandSession(target.p4info(), target), args.commands)
    finally:
        target.close()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``cli`` to the ``netweft`` command line."""
    p = subparsers.add_parser("cli", help="simple_switch_CLI commands against a running "
                              "netweft-switch (file or prompt)", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("commands", nargs="?", metavar="FILE", type=existing_file,
                   help="command list to run (default: an interactive prompt)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--grpc-addr", default="127.0.0.1:9559", metavar="HOST:PORT",
                       help="netweft-switch's P4Runtime address (default 127.0.0.1:9559)")
    where.add_argument("--control", type=existing_path, metavar="PATH",
                       help="a switch process's --control socket instead (netweft up)")
    p.add_argument("--device-id", type=int_in(0), default=0,
                   help="the switch's device id (netweft-switch --device-id; default 0)")
    p.add_argument("--election-id", type=int_in(0), default=1,
                   help="election id in the cli's role (default 1)")
    p.add_argument("--role", default=ROLE, help=f"P4Runtime role (default {ROLE})")
    p.set_defaults(func=run)

