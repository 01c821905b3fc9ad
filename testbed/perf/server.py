"""``netweft perf server``: runs the receiving side of each test a client asks for."""

from __future__ import annotations

import socket
import sys
import zlib
from typing import Any

from netweft.testbed.perf import latency
from netweft.testbed.perf.protocol import (
    CONTROL_PORT,
    Control,
    PerfError,
    cpu_seconds,
    server_endpoint,
)
from netweft.transport.errors import TransportError


def _serve_tcp(ctl: Control, local_ip: str) -> None:
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind((local_ip, 0))
    lst.listen(1)
    ctl.send({"port": lst.getsockname()[1]})
    conn, _ = lst.accept()
    lst.close()
    cpu0, nbytes = cpu_seconds(), 0
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    while True:
        n = conn.recv_into(view)
        if n == 0:
            break
        nbytes += n
    cpu = cpu_seconds() - cpu0
    conn.close()
    ctl.send({"bytes": nbytes, "cpu_s": cpu})


def _serve_netweft(ctl: Control, req: dict[str, Any], local_ip: str) -> None:
    import numpy as np

    ep = server_endpoint(req, local_ip)
    try:
        buf = np.zeros(req["buffer"], dtype=np.uint8)
        mr = ep.register(buf)
        ep.connect((req["client"][0], req["client"][1]))  # replies go to the client's port
        cpu0 = cpu_seconds()
        ctl.send({"port": ep.address[1], "rkey": mr.rkey, "length": mr.length})
        fin = ctl.recv()
        if fin is None:
            return
        cpu = cpu_seconds() - cpu0
        size, slots = fin["msg_size"], fin["slots"]
        ok = all(zlib.crc32(mr.view[i * size:(i + 1) * size]) == fin["crc"]
                 for i in range(slots))
        ctl.send({"cpu_s": cpu, "verified": ok, "stats": ep.stats()})
    finally:
        ep.close()


def _serve_one(ctl: Control, req: dict[str, Any], local_ip: str) -> None:
    """Run the receiving side of one test the client asked for."""
    op = req.get("op")
    if op == "tcp":
        _serve_tcp(ctl, local_ip)
    elif op == "udp_echo":
        latency.serve_udp_echo(ctl, local_ip, busy=bool(req.get("busy")))
    elif op == "tcp_echo":
        latency.serve_tcp_echo(ctl, local_ip, req["msg_size"])
    elif op in ("netweft", "netweft_echo"):
        try:
            if op == "netweft":
                _serve_netweft(ctl, req, local_ip)
            else:
                latency.serve_netweft_echo(ctl, req, local_ip)
        except TransportError as exc:
            print(f"netweft perf server: netweft test failed: {exc}", file=sys.stderr,
                  flush=True)
            ctl.send({"error": str(exc)})
    else:
        ctl.send({"error": f"unknown request {req!r}"})


def serve(bind: str = "0.0.0.0", control_port: int = CONTROL_PORT, once: bool = False,
          ready: Any = None) -> None:
    """Accept clients on ``bind:control_port`` and run their tests (forever, or once)."""
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        lst.bind((bind, control_port))
    except OSError as exc:
        raise PerfError(f"cannot listen on {bind}:{control_port}: {exc.strerror}") from None
    lst.listen(4)
    print(f"netweft perf server listening on {bind}:{lst.getsockname()[1]}", flush=True,
          file=ready or sys.stdout)
    try:
        while True:
            sock, _ = lst.accept()
            ctl = Control(sock)
            local_ip = sock.getsockname()[0]
            try:
                while (req := ctl.recv()) is not None:
                    _serve_one(ctl, req, local_ip)
            except (OSError, ValueError, KeyError) as exc:
                print(f"netweft perf server: client session ended: {exc}", file=sys.stderr)
            finally:
                ctl.close()
            if once:
                return
    finally:
        lst.close()
