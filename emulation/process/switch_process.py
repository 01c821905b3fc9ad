"""A switch process: the embedded P4 switch driven by frames on real interfaces.

This is the thin I/O driver around the sans-IO :class:`~netweft.emulation.switch.SoftSwitch`:
one AF_PACKET socket per port and one select loop.  Each received frame goes
to ``switch.receive(port, frame, now)``; frames the traffic manager or a link
model hold back leave from ``switch.advance(now)``, and the loop sleeps in
``select`` until the switch's next deadline (``switch.next_deadline()``), so a
departure is timed without a busy loop.  Time is nanoseconds since the switch
started (``time.monotonic_ns``), which also gives the P4 program its
microsecond timestamps, as BMv2's clock starts at 0.

The loop drives any object with ``receive``/``advance``/``next_deadline`` (a
wrapper, e.g. a P4Runtime device, forwards them with its lock held) or, lacking
them, ``process(port, frame)`` alone.  Per loop pass it drains the switch's
``log_msg`` messages (to the trace if one is on) and digests (to
``on_digests`` if given), counting both, so memory stays bounded.

Run by hand::

    python -m netweft.emulation.process.switch_process --program basic_forward.p4 \\
        --port 1=s1-eth1 --port 2=s1-eth2 --runtime s1-runtime.json \\
        --link 2:delay=5ms,rate=100mbit,queue=64 --pcap pcaps --log-file s1.log \\
        --control /run/netweft/s1.sock

``--link`` takes ``PORT[/in|/out]:KEY=VALUE,...`` (see
:mod:`netweft.emulation.links.port_options`); ``--priority-queues N`` gives every
port N strict-priority queues; ``--pcap DIR`` writes ``<iface>_in.pcap`` and
``<iface>_out.pcap`` per port as BMv2 does; ``--log-console`` (stdout) and
``--log-file FILE`` write the per-packet trace
(:mod:`netweft.emulation.packet_trace`); ``--control PATH`` opens the control
channel (:mod:`netweft.emulation.process.control`).

A switch on the native back end (``--backend c``, or ``auto`` when the program is
covered) does not use this Python loop: the C loop moves its packets
(:mod:`netweft.emulation.process.native_loop`), with the same options.
"""

from __future__ import annotations

import argparse
import json
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from netweft.emulation.links.port_options import PortOptionError, PortOptions, parse_link_options
from netweft.emulation.process.build import SwitchBuildError, SwitchSetup, build_switch

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
KERNEL_DROPS_EVERY_S = 0.5  # how often the loop reads the kernel's drop counters
MAX_FRAME = 65536 + 64
IDLE_WAKEUP_S = 0.2        # how often an idle loop checks for a stop request
BATCH = 64                 # frames read from one port before the others get a turn
DLT_EN10MB = 1


class SwitchPorts:
    """AF_PACKET sockets bound to the switch's interfaces, by port number.

    :meth:`count_kernel_drops` adds what the kernel dropped because the switch
    did not read fast enough (the socket's receive buffer was full:
    PACKET_STATISTICS ``tp_drops``) as ``kernel_drops_portN``, so that the
    frames that reached a port = ``rx_portN`` + ``kernel_drops_portN``. (A
    veth whose peer's backlog is full refuses the frame to its sender, who sees
    ENOBUFS; a VLAN-tagged frame shorter than its tag is dropped by the kernel
    before any socket sees it.)
    """

    def __init__(self, ports: dict[int, str]) -> None:
        self.sockets: dict[int, socket.socket] = {}
        self.names = dict(ports)
        try:
            for number, ifname in sorted(ports.items()):
                sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                sock.bind((ifname, 0))
                sock.setblocking(False)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                try:  # the switch's own frames never come back (Linux 4.20 and later)
                    sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                except OSError:
                    pass
                sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)  # reading resets them
                self.sockets[number] = sock
        except OSError:
            self.close()
            raise

    def count_kernel_drops(self, stats: Counter) -> None:
        """Add the sockets' drops since the last call (reading them resets them)."""
        for number, sock in self.sockets.items():
            _received, drops = struct.unpack(
                "II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
            stats[f"kernel_drops_port{number}"] += drops

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        self.sockets.clear()


class PortCaptures:
    """``<iface>_in.pcap`` and ``<iface>_out.pcap`` for every port, as BMv2's ``--pcap``."""

    def __init__(self, folder: Path, ports: Mapping[int, str]) -> None:
        from scapy.utils import RawPcapWriter

        folder.mkdir(parents=True, exist_ok=True)
        self.files: dict[tuple[int, str], Any] = {}
        try:
            for number, ifname in ports.items():
                for direction in ("in", "out"):
                    writer = RawPcapWriter(str(folder / f"{ifname}_{direction}.pcap"),
                                           linktype=DLT_EN10MB)
                    writer.write_header(None)
                    self.files[(number, direction)] = writer
        except OSError:
            self.close()
            raise
        self._dirty = False

    def write(self, port: int, direction: str, frame: bytes) -> None:
        writer = self.files.get((port, direction))
        if writer is not None:
            writer.write_packet(frame)
            self._dirty = True

    def flush(self) -> None:
        if self._dirty:
            for writer in self.files.values():
                writer.flush()
            self._dirty = False

    def close(self) -> None:
        for writer in self.files.values():
            writer.close()
        self.files.clear()


class SwitchLoop:
    """State of one run of :func:`serve`."""

    def __init__(self, switch: Any, io: SwitchPorts, stats: Counter,
                 captures: PortCaptures | None, trace_out: TextIO | None,
                 on_digests: Callable[[list], None] | None) -> None:
        self.switch = switch
        self.io = io
        self.stats = stats
        self.captures = captures
        self.trace_out = trace_out
        self.on_digests = on_digests
        self.timed = hasattr(switch, "receive") and hasattr(switch, "advance")
        self.t0 = time.monotonic_ns()
        self.next_drop_count = 0.0

    def now(self) -> int:
        return time.monotonic_ns() - self.t0

    def drain(self, port: int, sock: socket.socket) -> None:
        """Read up to a batch of frames from one port and run them through the switch."""
        stats, captures, switch = self.stats, self.captures, self.switch
        for _ in range(BATCH):
            try:
                frame, addr = sock.recvfrom(MAX_FRAME)
            except BlockingIOError:
                return
            if addr[2] == PACKET_OUTGOING:
                continue
            stats[f"rx_port{port}"] += 1
            if captures is not None:
                captures.write(port, "in", frame)
            try:
                if self.timed:
                    outputs = switch.receive(port, frame, self.now())
                else:
                    outputs = switch.process(port, frame)
                    if not outputs:
                        stats["dropped"] += 1
            except Exception as exc:  # noqa: BLE001 - a frame must never stop the switch
                stats["switch_errors"] += 1
                print(f"switch error on port {port}: {exc!r}", file=sys.stderr, flush=True)
                continue
            self.send(outputs)

    def advance(self) -> None:
        if self.timed:
            self.send(self.switch.advance(self.now()))

    def timeout(self) -> float:
        """Seconds until the switch's next deadline (the idle wake-up at most)."""
        if not self.timed:
            return IDLE_WAKEUP_S
        deadline = self.switch.next_deadline()
        if deadline is None:
            return IDLE_WAKEUP_S
        return min(IDLE_WAKEUP_S, max(0.0, (deadline - self.now()) / 1e9))

    def send(self, outputs: Iterable[tuple[int, bytes]]) -> None:
        stats, sockets, captures = self.stats, self.io.sockets, self.captures
        for out_port, data in outputs:
            out = sockets.get(out_port)
            if out is None:
                stats["dropped_no_such_port"] += 1
                continue
            try:
                out.send(data)
                stats[f"tx_port{out_port}"] += 1
            except OSError:
                stats["tx_errors"] += 1
                continue
            if captures is not None:
                captures.write(out_port, "out", data)

    def housekeeping(self) -> None:
        """Drain log_msg texts and digests (bounded memory), flush files."""
        switch, stats = self.switch, self.stats
        logs = getattr(switch, "logs", None)
        if logs:
            stats["log_msgs"] += len(logs)
            if self.trace_out is None:
                stats["log_msgs_discarded"] += len(logs)
            elif getattr(switch, "trace", None) is None:
                for text in logs:
                    self.trace_out.write(f"log_msg: {text}\n")
            logs.clear()
        digests = getattr(switch, "digests", None)
        if digests:
            stats["digests"] += len(digests)
            if self.on_digests is not None:
                self.on_digests(list(digests))
            else:
                stats["digests_discarded"] += len(digests)
            digests.clear()
        if self.captures is not None:
            self.captures.flush()
        if self.trace_out is not None:
            self.trace_out.flush()
        if self.io is not None and time.monotonic() >= self.next_drop_count:
            self.io.count_kernel_drops(stats)
            self.next_drop_count = time.monotonic() + KERNEL_DROPS_EVERY_S


def serve(switch: Any, ports: dict[int, str], stop_after: float | None = None,
          stats_out: Path | None = None, pcap_dir: Path | None = None,
          trace_out: TextIO | None = None, control: Path | None = None,
          port_options: dict[int, PortOptions] | None = None,
          on_digests: Callable[[list], None] | None = None,
          on_ready: Callable[[SwitchPorts], None] | None = None) -> Counter:
    """Forward frames between ``ports`` through ``switch`` until SIGTERM/SIGINT.

    Prints ``ready`` once every port (and the control socket) is open;
    ``on_ready`` gets the open ports first (the P4Runtime server sends its
    PacketOut frames through them).
    """
    stats: Counter = Counter()
    running = True

    def _stop(*_: object) -> None:
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    deadline = time.monotonic() + stop_after if stop_after else None
    while True:
        if ports and _runs_native(switch):  # the C loop moves the packets (native_loop.py)
            from netweft.emulation.process.native_loop import serve_native

            outcome = serve_native(switch, ports, lambda: running, deadline, stats_out,
                                   pcap_dir, control, port_options, on_ready)
            if outcome == "stopped" or not running:
                return stats
        if not _serve_python(switch, ports, lambda: running, deadline, stats, stats_out,
                             pcap_dir, trace_out, control, port_options, on_digests, on_ready):
            return stats


def _serve_python(switch: Any, ports: dict[int, str], running: Callable[[], bool],
                  deadline: float | None, stats: Counter, stats_out: Path | None,
                  pcap_dir: Path | None, trace_out: TextIO | None, control: Path | None,
                  port_options: dict[int, PortOptions] | None,
                  on_digests: Callable[[list], None] | None,
                  on_ready: Callable[[SwitchPorts], None] | None) -> bool:
    """:func:`serve` with packets moved in Python; True if it returned because a P4Runtime
    device's new pipeline runs on the native back end (the C loop takes over)."""
    device = hasattr(switch, "packet_out")
    io = SwitchPorts(ports)
    captures = server = None
    if device:
        # a SetForwardingPipelineConfig whose pipeline the C loop will run returns once
        # that loop serves the ports (serve_native calls native_loop_started)
        handover = threading.Event()

        def pipeline_changed() -> None:
            if ports and _runs_native(switch):
                handover.wait(NATIVE_HANDOVER_WAIT_S)

        switch.pipeline_changed = pipeline_changed
        switch.native_loop_started = handover.set
    # select(2) sleeps to the microsecond (epoll rounds up to whole milliseconds), so
    # a departure's timer fires on time; a switch has far fewer than 1024 descriptors
    sel = selectors.SelectSelector()
    try:
        captures = PortCaptures(pcap_dir, io.names) if pcap_dir else None
        loop = SwitchLoop(switch, io, stats, captures, trace_out, on_digests)
        for number, sock in io.sockets.items():
            sel.register(sock, selectors.EVENT_READ, number)
        if control is not None:
            from netweft.emulation.process.control import ControlServer, execute

            server = ControlServer(control)
            sel.register(server.listener, selectors.EVENT_READ, "control")
            options = port_options if port_options is not None else {}

            def run_command(line: str) -> str:
                lock = getattr(switch, "lock", None)
                if lock is None:
                    return execute(switch, line, options, lambda: dict(stats))
                with lock:  # a P4Runtime device: the switch it runs now
                    return execute(switch.switch, line, options, lambda: dict(stats))

        if on_ready is not None:
            on_ready(io)
        print("ready", flush=True)
        while running() and (deadline is None or time.monotonic() < deadline):
            if device and ports and _runs_native(switch):
                return True
            for key, _ in sel.select(timeout=loop.timeout()):
                if isinstance(key.data, int):
                    loop.drain(key.data, key.fileobj)
                elif key.data == "control":
                    conn = server.accept()
                    if conn is not None:
                        sel.register(conn, selectors.EVENT_READ, "client")
                elif not server.handle(key.fileobj, run_command):
                    sel.unregister(key.fileobj)
            loop.advance()
            loop.housekeeping()
    finally:
        sel.close()
        io.count_kernel_drops(stats)
        io.close()
        if captures is not None:
            captures.close()
        if server is not None:
            server.close()
        if stats_out:
            counters = dict(stats)
            counters.update(getattr(switch, "stats", {}) or {})
            if getattr(switch, "lock", None) is not None and switch.switch is not None:
                counters.update(switch.switch.stats)  # a P4Runtime device's switch
            stats_out.write_text(json.dumps(counters, indent=2, sort_keys=True))
    return False


NATIVE_HANDOVER_WAIT_S = 30.0   # longest a pipeline change waits for the C loop to start


def _runs_native(target: Any) -> bool:
    """True if ``target`` (a switch, or a P4Runtime device holding one) runs the native
    pipeline: then the C loop moves its packets, with BMv2's packet flow (clones,
    resubmit, recirculate) in C and digests and log_msg drained by the control loop."""
    switch = target.switch if hasattr(target, "packet_out") else target
    return getattr(switch, "backend", None) == "c"


# A first start on the native back end compiles the program (tens of seconds for a large
# one on a loaded 2-core machine, several switches at once); later starts hit the cache.
START_TIMEOUT_S = 180.0


class SwitchStartError(RuntimeError):
    """A switch process exited or stayed silent before serving its ports."""


def start_switch_process(node, program: Path, runtime: Path | None = None,
                         stats_out: Path | None = None, timeout: float = START_TIMEOUT_S,
                         log: Path | None = None,
                         links: Mapping[int, PortOptions] | Iterable[str] = (),
                         pcap_dir: Path | None = None, trace_file: Path | None = None,
                         control: Path | None = None, priority_queues: int = 1,
                         seed: int = 0, extra_args: Iterable[str] = (),
                         grpc_address: str | None = None,
                         backend: str | None = None) -> subprocess.Popen:
    """Start a switch process in ``node``'s namespace and wait until it serves its ports.

    ``links``: per-port settings, as ``{port: PortOptions}`` or ``--link`` strings
    (by default those of the links a :class:`~netweft.emulation.network.Network`
    declared with delay, loss, rate or queue);
    ``pcap_dir``/``trace_file``/``control``: the ``--pcap``, ``--log-file`` and
    ``--control`` options; ``grpc_address``: serve P4Runtime there
    (``--grpc-server-addr``); ``backend``: ``--backend`` (auto, c or python; None:
    the child's ``$NETWEFT_SWITCH_BACKEND`` or the default); ``log``: the process's stderr; ``extra_args``: further
    options of ``python -m netweft.emulation.process.switch_process``.  A failed start
    raises :class:`SwitchStartError` with the process's error output.  The process
    gets SIGTERM if the calling thread's process dies
    (:mod:`netweft.emulation.process_lifetime`).
    """
    launch = launch_switch_process(node, program, runtime, stats_out, log, links, pcap_dir,
                                   trace_file, control, priority_queues, seed, extra_args,
                                   grpc_address, backend)
    try:
        return launch.wait_ready(timeout)
    finally:
        launch.close()


class SwitchLaunch:
    """A started switch process not known to be ready yet (see :func:`launch_switch_process`)."""

    def __init__(self, node, proc: subprocess.Popen, stderr: Any) -> None:
        self.node, self.proc, self.stderr = node, proc, stderr

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> subprocess.Popen:
        """The process once it printed ``ready``; else kill it, raise :class:`SwitchStartError`."""
        proc = self.proc
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = bool(sel.select(timeout)) and proc.stdout.readline().strip() == "ready"
        sel.close()
        if ready:
            return proc
        try:  # it closed its output: it is exiting
            status = proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        proc.kill()
        proc.wait()
        self.stderr.seek(0)
        why = self.stderr.read().strip()[-2000:] or "no error output"
        state = (f"exited with status {status}" if status is not None
                 else f"was not ready after {timeout:g} s")
        raise SwitchStartError(f"switch process in {self.node.netns} {state}: {why}")

    def close(self) -> None:
        """Close this side's copy of the error output file (the child keeps its own)."""
        self.stderr.close()


def launch_switch_process(node, program: Path, runtime: Path | None = None,
                          stats_out: Path | None = None, log: Path | None = None,
                          links: Mapping[int, PortOptions] | Iterable[str] = (),
                          pcap_dir: Path | None = None, trace_file: Path | None = None,
                          control: Path | None = None, priority_queues: int = 1,
                          seed: int = 0, extra_args: Iterable[str] = (),
                          grpc_address: str | None = None,
                          backend: str | None = None) -> SwitchLaunch:
    """Start a switch process (the options of :func:`start_switch_process`) without
    waiting for it, so that several compile side by side, all started from the
    calling thread (their parent-death signal follows that thread)."""
    argv = [sys.executable, "-m", "netweft.emulation.process.switch_process",
            "--program", str(program)]
    for number, ifname in sorted(node.port_map().items()):
        argv += ["--port", f"{number}={ifname}"]
    if not links and hasattr(node, "port_settings"):  # the links the network declared
        links = node.port_settings()
    argv += ["--link=" + text for text in link_arguments(links)]
    if runtime:
        argv += ["--runtime", str(runtime)]
    if stats_out:
        argv += ["--stats-out", str(stats_out)]
    if pcap_dir:
        argv += ["--pcap", str(pcap_dir)]
    if trace_file:
        argv += ["--log-file", str(trace_file)]
    if control:
        argv += ["--control", str(control)]
    if priority_queues != 1:
        argv += ["--priority-queues", str(priority_queues)]
    if grpc_address:
        argv += ["--grpc-server-addr", grpc_address]
    if seed:
        argv += ["--seed", str(seed)]
    if backend:
        argv += ["--backend", backend]
    argv += list(extra_args)
    # The child's error output goes to ``log``, or else to an anonymous file, so that
    # a failed start can say why (never a pipe: nobody drains it while the switch runs).
    stderr = open(log, "w+") if log else tempfile.TemporaryFile("w+")  # noqa: SIM115
    try:
        proc = node.popen(*argv, stdout=subprocess.PIPE, stderr=stderr, text=True)
    except BaseException:
        stderr.close()
        raise
    return SwitchLaunch(node, proc, stderr)


def link_arguments(links: Mapping[int, PortOptions] | Iterable[str]) -> list[str]:
    """``--link`` values for per-port settings (strings pass through, checked)."""
    if isinstance(links, Mapping):
        out: list[str] = []
        for port, opts in sorted(links.items()):
            out += opts.to_option(port)
        return out
    texts = list(links)
    parse_link_options(texts)   # refuse bad settings here, not in the child
    return texts


def _parse_port(text: str) -> tuple[int, str]:
    number, sep, ifname = text.partition("=")
    if not sep or not number.isdigit() or not ifname:
        raise argparse.ArgumentTypeError(f"--port wants NUMBER=IFNAME, got {text!r}")
    return int(number), ifname


def _parse_link(text: str) -> str:
    try:
        parse_link_options([text])
    except PortOptionError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", required=True, type=Path,
                        help="P4-16 v1model source (or a device config from netweft-p4c)")
    parser.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                        help="directory searched by #include (repeatable)")
    parser.add_argument("--port", action="append", type=_parse_port, default=[],
                        help="NUMBER=IFNAME, repeated")
    parser.add_argument("--runtime", type=Path, help="runtime file (sX-runtime.json style)")
    parser.add_argument("--commands", type=Path, metavar="FILE",
                        help="simple_switch_CLI command list applied after the runtime file "
                             "(table_add, mc_mgrp_create, mirroring_add, register_write, ...)")
    parser.add_argument("--link", action="append", type=_parse_link, default=[],
                        metavar="PORT[/in|/out]:KEY=VALUE,...",
                        help="link model and queues of a port, e.g. "
                             "2:delay=5ms,jitter=1ms,loss=0.01,rate=100mbit,queue=64 "
                             "(keys: delay jitter loss gemodel corrupt rate limit queue "
                             "queue_bytes queue_pps queue_rate); repeated")
    parser.add_argument("--priority-queues", type=int, default=1, choices=range(1, 9),
                        metavar="N", help="strict-priority queues per port, 1..8 (default 1)")
    parser.add_argument("--backend", choices=("auto", "c", "python"),
                        help="pipeline back end: the native C one, the Python one, or auto "
                             "(default: $NETWEFT_SWITCH_BACKEND, else auto)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the links' loss, corruption and jitter (default 0)")
    parser.add_argument("--pcap", type=Path, metavar="DIR",
                        help="write <iface>_in.pcap and <iface>_out.pcap per port into DIR")
    parser.add_argument("--log-console", action="store_true",
                        help="trace every packet on stdout (after the ready line)")
    parser.add_argument("--log-file", type=Path, metavar="FILE",
                        help="trace every packet into FILE")
    parser.add_argument("--control", type=Path, metavar="PATH",
                        help="control channel: a Unix socket taking simple_switch_CLI-style "
                             "commands (set_queue_depth, set_queue_rate, set_link, counters)")
    parser.add_argument("--grpc-server-addr", metavar="ADDRESS",
                        help="also serve P4Runtime at ADDRESS (HOST:PORT, or unix:PATH, which "
                             "a controller in another network namespace reaches): the "
                             "program and the runtime file's entries are its pipeline")
    parser.add_argument("--device-id", type=int, default=0,
                        help="P4Runtime device id with --grpc-server-addr (default 0)")
    parser.add_argument("--stats-out", type=Path, help="write counters as JSON on exit")
    parser.add_argument("--stop-after", type=float, help="seconds to run (default: until killed)")
    args = parser.parse_args(argv)
    if args.log_console and args.log_file:
        parser.error("give --log-console or --log-file, not both")
    ports = dict(args.port)
    options = parse_link_options(args.link)
    unknown = sorted(set(options) - set(ports))
    if unknown:
        parser.error(f"--link names port(s) {', '.join(map(str, unknown))} that no --port "
                     "gives; add --port N=IFNAME or fix the port number")
    setup = SwitchSetup(
        program=args.program, include_dirs=tuple(args.include), runtime=args.runtime,
        commands=args.commands, port_options=options, priority_queues=args.priority_queues,
        seed=args.seed, log_file=args.log_file, log_console=args.log_console,
        grpc_address=args.grpc_server_addr, device_id=args.device_id, backend=args.backend)
    try:
        built = build_switch(setup)
    except SwitchBuildError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        serve(built.target, ports, args.stop_after, args.stats_out, args.pcap, built.trace_out,
              args.control, options, on_ready=built.attach_ports)
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        built.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
