"""A switch process: the embedded P4 switch driven by frames on real interfaces.

This is the thin I/O driver around the sans-IO :class:`~netweft.emulation.switch.SoftSwitch`:
one AF_PACKET socket per port, a poll loop that hands each received frame to
``process`` and sends each output frame on its port's socket. It runs inside a
switch's network namespace, started by :func:`start_switch_process` (which waits
for the ``ready`` line and tears the process down on failure).

Run by hand: ``python -m netweft.emulation.switch_process --program basic_forward.p4
--port 1=s1-eth1 --port 2=s1-eth2 --runtime s1-runtime.json``.
"""

from __future__ import annotations

import argparse
import json
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
MAX_FRAME = 65536 + 64


class SwitchPorts:
    """AF_PACKET sockets bound to the switch's interfaces, by port number."""

    def __init__(self, ports: dict[int, str]) -> None:
        self.sockets: dict[int, socket.socket] = {}
        try:
            for number, ifname in sorted(ports.items()):
                sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                sock.bind((ifname, 0))
                sock.setblocking(False)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                self.sockets[number] = sock
        except OSError:
            self.close()
            raise

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        self.sockets.clear()


def serve(switch, ports: dict[int, str], stop_after: float | None = None,
          stats_out: Path | None = None) -> Counter:
    """Forward frames between ``ports`` through ``switch`` until SIGTERM/SIGINT."""
    stats: Counter = Counter()
    running = True

    def _stop(*_: object) -> None:
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    io = SwitchPorts(ports)
    sel = selectors.DefaultSelector()
    for number, sock in io.sockets.items():
        sel.register(sock, selectors.EVENT_READ, number)
    print("ready", flush=True)
    deadline = time.monotonic() + stop_after if stop_after else None
    try:
        while running and (deadline is None or time.monotonic() < deadline):
            for key, _ in sel.select(timeout=0.2):
                _drain(switch, key.data, key.fileobj, io, stats)
    finally:
        sel.close()
        io.close()
        if stats_out:
            stats_out.write_text(json.dumps(dict(stats), indent=2, sort_keys=True))
    return stats


def _drain(switch, port: int, sock: socket.socket, io: SwitchPorts, stats: Counter) -> None:
    for _ in range(64):
        try:
            frame, addr = sock.recvfrom(MAX_FRAME)
        except BlockingIOError:
            return
        if addr[2] == PACKET_OUTGOING:
            continue
        stats[f"rx_port{port}"] += 1
        try:
            outputs = switch.process(port, frame)
        except Exception as exc:  # noqa: BLE001 - a frame must never stop the switch
            stats["switch_errors"] += 1
            print(f"switch error on port {port}: {exc!r}", file=sys.stderr, flush=True)
            continue
        if not outputs:
            stats["dropped"] += 1
        for out_port, data in outputs:
            out = io.sockets.get(out_port)
            if out is None:
                stats["dropped_no_such_port"] += 1
                continue
            try:
                out.send(data)
                stats[f"tx_port{out_port}"] += 1
            except OSError:
                stats["tx_errors"] += 1


def start_switch_process(node, program: Path, runtime: Path | None = None,
                         stats_out: Path | None = None, timeout: float = 60.0,
                         log: Path | None = None) -> subprocess.Popen:
    """Start a switch process in ``node``'s namespace and wait until it serves its ports."""
    argv = [sys.executable, "-m", "netweft.emulation.switch_process", "--program", str(program)]
    for number, ifname in sorted(node.port_map().items()):
        argv += ["--port", f"{number}={ifname}"]
    if runtime:
        argv += ["--runtime", str(runtime)]
    if stats_out:
        argv += ["--stats-out", str(stats_out)]
    # The child's error output goes to ``log``, or else to an anonymous file, so that
    # a failed start can say why (never a pipe: nobody drains it while the switch runs).
    with open(log, "w+") if log else tempfile.TemporaryFile("w+") as stderr:
        proc = node.popen(*argv, stdout=subprocess.PIPE, stderr=stderr, text=True)
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = bool(sel.select(timeout)) and proc.stdout.readline().strip() == "ready"
        sel.close()
        if not ready:
            try:  # it closed its output: it is exiting
                status = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                status = None
            proc.kill()
            proc.wait()
            stderr.seek(0)
            why = stderr.read().strip()[-2000:] or "no error output"
            state = (f"exited with status {status}" if status is not None
                     else f"was not ready after {timeout:g} s")
            raise RuntimeError(f"switch process in {node.netns} {state}: {why}")
    return proc


def _parse_port(text: str) -> tuple[int, str]:
    number, sep, ifname = text.partition("=")
    if not sep or not number.isdigit() or not ifname:
        raise argparse.ArgumentTypeError(f"--port wants NUMBER=IFNAME, got {text!r}")
    return int(number), ifname


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", required=True, type=Path, help="P4-16 v1model source")
    parser.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                        help="directory searched by #include (repeatable)")
    parser.add_argument("--port", action="append", type=_parse_port, default=[],
                        help="NUMBER=IFNAME, repeated")
    parser.add_argument("--runtime", type=Path, help="runtime file (sX-runtime.json style)")
    parser.add_argument("--stats-out", type=Path, help="write counters as JSON on exit")
    parser.add_argument("--stop-after", type=float, help="seconds to run (default: until killed)")
    args = parser.parse_args(argv)

    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import P4Error, compile_p4
    from netweft.testbed.runtime_file import RuntimeFileError, apply_runtime_file

    try:
        switch = SoftSwitch(compile_p4(str(args.program), include_dirs=tuple(args.include)))
        if args.runtime:
            apply_runtime_file(switch, args.runtime)
    except (P4Error, RuntimeFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    serve(switch, dict(args.port), args.stop_after, args.stats_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
