"""``netweft perf pair``: a perf server and client started together on one machine.

Over loopback the server and the client take two addresses of a random
127.x.y.0/24, so their engines' entropy ports never collide (with each other or
with another run). Over veth, two namespaces joined by one veth pair come from
the network builder
(:class:`netweft.emulation.network.Network`, all-or-nothing start, removed on
exit even when a side fails); host offloads are switched back on unless
``--offloads off``. Both sides run as subprocesses with faulthandler on, and a
death by signal is reported, never silent.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import time

from netweft.emulation.process_lifetime import die_with_parent, stop_process
from netweft.testbed.perf.protocol import CONTROL_PORT, PerfError


def _client_argv(args: argparse.Namespace, host: str, control_port: int,
                 bind: str | None = None) -> list[str]:
    argv = [sys.executable, "-X", "faulthandler", "-m", "netweft.testbed.command_line", "perf", "client",
            host,
            "--control-port", str(control_port), "--mode", args.mode, "--proto", args.proto,
            "--loss", str(args.loss), "--mtu", str(args.mtu),
            "--depth", str(args.depth), "--tx", ",".join(args.tx), "--io", ",".join(args.io), "--post", args.post,
            "--window", str(args.window),
            "--rounds", str(args.rounds), "--reliability", str(args.reliability)]
    for name in ("time", "msg_size", "json", "plot"):
        if getattr(args, name):
            argv += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    for name in ("sizes", "depths", "bursts"):
        if getattr(args, name):
            argv += [f"--{name}", ",".join(str(v) for v in getattr(args, name))]
    if bind:
        argv += ["--bind", bind]
    for key, value in args.engine:
        argv += ["--engine", f"{key}={value}"]
    return argv


def _start_server(argv: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen(die_with_parent(argv), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening" not in line:
        proc.kill()
        proc.wait()
        raise PerfError(f"the perf server did not start: {line.strip() or 'no output'}")
    return proc


def run_pair(args: argparse.Namespace) -> int:
    """Start a server, run the client against it, stop the server; return the exit code."""
    server_cmd = [sys.executable, "-X", "faulthandler", "-m", "netweft.testbed.command_line", "perf",
                  "server", "--once"]
    if args.path == "loopback":
        server_ip, client_ip = _loopback_pair()
        port = _free_tcp_port(server_ip)
        server = _start_server([*server_cmd, "--bind", server_ip, "--control-port", str(port)])
        try:
            print(f"loopback between {server_ip} (server) and {client_ip} (client)", flush=True)
            return _client_status(subprocess.run(
                _client_argv(args, server_ip, port, bind=client_ip), check=False).returncode)
        finally:
            _stop(server)
    if os.geteuid() != 0:
        print("netweft perf pair --path veth: needs root (network namespaces)", file=sys.stderr)
        return 1
    from netweft.emulation.network import Network, NetworkError

    net = Network()
    h1 = net.add_host("h1", "10.0.0.1/24")
    h2 = net.add_host("h2", "10.0.0.2/24")
    net.add_link(h1, h2, mtu=args.mtu)
    try:
        with net:
            if args.offloads == "on":  # the builder turns them off for switches; hosts have them
                for host in (h1, h2):
                    host.cmd("ethtool", "-K", "eth0", "tx", "on", "rx", "on", "tso", "on",
                             "gso", "on", "gro", "on")
            server = _start_server(["ip", "netns", "exec", h1.netns, *server_cmd, "--bind",
                                    "10.0.0.1"])
            try:
                print(f"veth pair between namespaces {h1.netns} and {h2.netns}, MTU {args.mtu}, "
                      f"checksum/TSO/GSO/GRO offloads {args.offloads}", flush=True)
                return _client_status(subprocess.run(
                    ["ip", "netns", "exec", h2.netns,
                     *_client_argv(args, "10.0.0.1", CONTROL_PORT)], check=False).returncode)
            finally:
                _stop(server)
    except NetworkError as exc:
        print(f"netweft perf pair: {exc}", file=sys.stderr)
        return 1


def _client_status(code: int) -> int:
    """The client's exit code; a death by signal is said out loud, never silent."""
    if code < 0:
        print(f"netweft perf pair: the client was killed by signal {-code}", file=sys.stderr)
        return 1
    return code


def _loopback_pair() -> tuple[str, str]:
    """Two addresses of a random 127.x.y.0/24: each engine binds its own entropy ports,
    so neither the two sides nor two runs at once ever collide."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    net = f"127.{rng.randrange(1, 255)}.{rng.randrange(0, 256)}"
    return f"{net}.1", f"{net}.2"


def _free_tcp_port(ip: str) -> int:
    s = socket.socket()
    s.bind((ip, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _stop(proc: subprocess.Popen) -> None:
    code = proc.poll()
    if code is not None and code < 0:
        print(f"netweft perf pair: the server was killed by signal {-code}", file=sys.stderr)
    stop_process(proc, timeout=5)
