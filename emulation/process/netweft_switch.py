"""``netweft-switch``: the embedded switch with simple_switch_grpc's command line.

Scripts and Makefiles written for BMv2 start it by changing the program name::

    netweft-switch -i 1@s1-eth1 -i 2@s1-eth2 --device-id 0 build/basic.json \\
        --log-console -- --grpc-server-addr 0.0.0.0:50051 --cpu-port 255

It forwards between the ``-i`` interfaces (AF_PACKET sockets), serves
P4Runtime on ``--grpc-server-addr`` (127.0.0.1:9559 unless given) and hands
frames sent to ``--cpu-port`` to the primary controller as PacketIn.  The
positional argument is a device config written by ``netweft-p4c`` /
``netweft compile`` (or a ``.p4`` source, compiled on start); with ``--no-p4``
(or nothing) the switch waits for SetForwardingPipelineConfig.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from netweft.emulation.process.build import (
    SwitchBuildError,
    SwitchSetup,
    build_switch,
    load_device_config,
)
from netweft.emulation.process.switch_process import serve

# load_device_config: offered here as under this module's old name, netweft.emulation.switch_command
__all__ = ["PROG", "build_parser", "build_target_parser", "load_device_config", "main",
           "parse_args", "register"]

DEFAULT_GRPC_ADDRESS = "127.0.0.1:9559"
PROG = "netweft-switch"


def _interface(text: str) -> tuple[int, str]:
    port, sep, ifname = text.partition("@")
    if not sep or not port.isdigit() or not ifname:
        raise argparse.ArgumentTypeError(f"want PORT@IFACE (as 1@s1-eth1), got {text!r}")
    if not 0 <= int(port) < 511:
        raise argparse.ArgumentTypeError(f"port {port} outside 0..510 (511 is the drop port)")
    return int(port), ifname


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) < 512:
        raise argparse.ArgumentTypeError(f"want a port number in 0..511, got {text!r}")
    return int(text)


def _count(low: int, high: int):
    def parse(text: str) -> int:
        if not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"want a number in {low}..{high}, got {text!r}")
        return int(text)
    return parse


def _address(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise argparse.ArgumentTypeError(f"want HOST:PORT (as 0.0.0.0:50051), got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    """simple_switch_grpc's options (those before ``--``)."""
    p = argparse.ArgumentParser(
        prog=PROG, usage=f"{PROG} [options] [DEVICE_CONFIG] [-- target options]",
        description="netweft's embedded P4 switch with simple_switch_grpc's command line. "
                    "Target options after --: --grpc-server-addr HOST:PORT (default "
                    f"{DEFAULT_GRPC_ADDRESS}; other addresses only when given), --cpu-port N, "
                    "--drop-port N (511), --priority-queues N.")
    p.add_argument("config", nargs="?", type=Path, metavar="DEVICE_CONFIG",
                   help="device config from netweft-p4c (or a .p4 source); omit with --no-p4")
    p.add_argument("-i", "--interface", action="append", type=_interface, default=[],
                   metavar="PORT@IFACE", help="attach interface IFACE as port PORT (repeatable)")
    p.add_argument("--pcap", nargs="?", const=".", type=Path, metavar="DIR",
                   help="write <iface>_in.pcap and <iface>_out.pcap per port in DIR "
                        "(default: the current directory)")
    p.add_argument("--log-console", action="store_true",
                   help="write the per-packet trace to the console (stdout)")
    p.add_argument("--log-file", type=Path, metavar="FILE",
                   help="write the per-packet trace to FILE")
    p.add_argument("-L", "--log-level", default="info",
                   choices=("trace", "debug", "info", "warn", "error", "off"),
                   help="accepted for compatibility (the trace has one level)")
    p.add_argument("--log-flush", action="store_true", help="accepted (the trace is flushed "
                   "every loop pass)")
    p.add_argument("--device-id", type=_count(0, 2**63 - 1), default=0,
                   help="P4Runtime device id (default 0)")
    p.add_argument("--priority-queues", type=_count(1, 8), metavar="N",
                   help="strict-priority egress queues per port (1..8)")
    p.add_argument("--backend", choices=("auto", "c", "python"),
                   help="pipeline back end: the native C one, the Python one, or auto "
                        "(default: $NETWEFT_SWITCH_BACKEND, else auto; docs/native-backend.md)")
    p.add_argument("--thrift-port", type=_count(0, 65535), metavar="PORT",
                   help="accepted for compatibility: netweft has no Thrift server "
                        "(use P4Runtime, or netweft cli)")
    p.add_argument("--nanolog", metavar="ADDR", help="accepted for compatibility (no nanomsg "
                   "event log; use --log-console or --log-file)")
    p.add_argument("--debugger", action="store_true",
                   help="accepted for compatibility (no BMv2 debugger)")
    p.add_argument("--debugger-addr", metavar="ADDR", help=argparse.SUPPRESS)
    p.add_argument("--no-p4", action="store_true",
                   help="start without a program; wait for SetForwardingPipelineConfig")
    p.add_argument("--use-files", metavar="WAIT", help=argparse.SUPPRESS)
    p.add_argument("--max-port-count", type=_count(1, 512), help=argparse.SUPPRESS)
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="include directory when DEVICE_CONFIG is a .p4 source")
    return p


def build_target_parser() -> argparse.ArgumentParser:
    """The options simple_switch_grpc takes after ``--``."""
    p = argparse.ArgumentParser(prog=f"{PROG} ... --", add_help=False)
    p.add_argument("--grpc-server-addr", type=_address, default=DEFAULT_GRPC_ADDRESS)
    p.add_argument("--cpu-port", type=_port)
    p.add_argument("--drop-port", type=_port, default=511)
    p.add_argument("--priority-queues", type=_count(1, 8))
    p.add_argument("--load-modules", help=argparse.SUPPRESS)
    p.add_argument("--enable-swap", action="store_true", help=argparse.SUPPRESS)
    return p


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Both halves of the command line, validated; exits with status 2 on bad input."""
    argv = list(argv)
    split = argv.index("--") if "--" in argv else len(argv)
    parser = build_parser()
    args = parser.parse_args(argv[:split])
    target = build_target_parser()
    targs, unknown = target.parse_known_args(argv[split + 1:])
    if unknown:
        parser.error(f"unknown target option(s) after --: {' '.join(unknown)}")
    args.target = targs
    if args.config is not None and args.no_p4:
        parser.error("give a device config or --no-p4, not both")
    ports = [port for port, _ in args.interface]
    if len(set(ports)) != len(ports):
        parser.error("a port number is given to two -i interfaces")
    if targs.cpu_port is not None and targs.cpu_port in ports:
        parser.error(f"--cpu-port {targs.cpu_port} is also an -i interface's port")
    if args.log_console and args.log_file:
        parser.error("give --log-console or --log-file, not both")
    if args.priority_queues and targs.priority_queues and \
            args.priority_queues != targs.priority_queues:
        parser.error("--priority-queues is given twice with different values")
    args.queues = args.priority_queues or targs.priority_queues or 1
    if targs.drop_port != 511:
        parser.error("--drop-port: the v1model drop port is 511 in netweft")
    return args


def _notes(args: argparse.Namespace) -> list[str]:
    notes = []
    if args.thrift_port is not None:
        notes.append(f"--thrift-port {args.thrift_port}: netweft has no Thrift server; "
                     "use P4Runtime or `netweft cli` for simple_switch_CLI commands")
    if args.nanolog:
        notes.append("--nanolog: netweft has no nanomsg event log; use --log-console/--log-file")
    if args.debugger or args.debugger_addr:
        notes.append("--debugger: netweft has no BMv2 debugger; use --log-console and "
                     "log_msg in the program")
    if args.use_files:
        notes.append("--use-files: netweft attaches interfaces only (-i PORT@IFACE)")
    return notes


def main(argv: Sequence[str] | None = None) -> int:
    """Run netweft-switch; returns the exit status."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for note in _notes(args):
        print(f"{PROG}: note: {note}", file=sys.stderr)
    for port, ifname in args.interface:
        try:
            socket.if_nametoindex(ifname)
        except OSError:
            print(f"{PROG}: error: -i {port}@{ifname}: no interface {ifname} in this network "
                  "namespace (ip link shows the names)", file=sys.stderr)
            return 2
    setup = SwitchSetup(
        program=args.config, include_dirs=tuple(args.include), priority_queues=args.queues,
        log_file=args.log_file, log_console=args.log_console,
        grpc_address=args.target.grpc_server_addr, device_id=args.device_id,
        cpu_port=args.target.cpu_port, backend=args.backend)
    try:
        built = build_switch(setup)
    except SwitchBuildError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    cpu = args.target.cpu_port
    print(f"P4Runtime server listening on {built.server.target} (device id {args.device_id}, "
          f"CPU port {'none' if cpu is None else cpu})", flush=True)
    try:
        serve(built.target, dict(args.interface), pcap_dir=args.pcap, trace_out=built.trace_out,
              on_ready=built.attach_ports)
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        hint = (" (the switch's AF_PACKET ports need root or CAP_NET_RAW)"
                if err.errno == errno.EPERM else "")
        print(f"{PROG}: error: {where}{err.strerror or err}{hint}", file=sys.stderr)
        return 2
    finally:
        built.close()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``netweft switch`` (the same command line as ``netweft-switch``)."""
    # "+" prefix: every argument, "-i" and "--" included, is left for main()
    p = subparsers.add_parser("switch", add_help=False, prefix_chars="+",
                              help="the embedded switch with simple_switch_grpc's command line "
                                   "(also netweft-switch)")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p.set_defaults(func=lambda ns: main(ns.argv))


if __name__ == "__main__":
    sys.exit(main())
