"""The perf control protocol and what both ends of a perf test share.

The client and the server of ``netweft perf`` talk over one TCP connection, one
JSON object per line each way (:class:`Control`): the client names a test, the
server runs its receiving side and reports. Here too: the result of a test
(:class:`PerfResult`), the netweft endpoint each end opens
(:func:`server_endpoint`, :class:`NetweftSession`) and the CPU clock both read.
The tests themselves are in :mod:`~netweft.testbed.perf.goodput`,
:mod:`~netweft.testbed.perf.latency` and :mod:`~netweft.testbed.perf.sweep`; the
server in :mod:`~netweft.testbed.perf.server`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from netweft.transport.errors import TransportError

CONTROL_PORT = 4794
IP_UDP_HEADERS = 28


@dataclass
class PerfResult:
    """One test's measurements; ``cpu_s`` sums client and server CPU seconds."""

    name: str
    proto: str
    bytes: int
    seconds: float
    messages: int
    cpu_s: float
    loss: float = 0.0
    verified: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def goodput_gbps(self) -> float:
        return self.bytes * 8 / self.seconds / 1e9 if self.seconds > 0 else 0.0

    @property
    def msgs_per_s(self) -> float:
        return self.messages / self.seconds if self.seconds > 0 else 0.0

    @property
    def cpu_ns_per_byte(self) -> float:
        return self.cpu_s * 1e9 / self.bytes if self.bytes else float("nan")


class PerfError(RuntimeError):
    """A perf run could not be carried out; the message says why."""


def cpu_seconds() -> float:
    """User plus system CPU seconds of this process (every thread) so far."""
    t = os.times()
    return t.user + t.system


class Control:
    """The perf control connection: one JSON object per line each way."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.file = sock.makefile("rwb")

    def send(self, obj: dict[str, Any]) -> None:
        self.file.write(json.dumps(obj).encode() + b"\n")
        self.file.flush()

    def recv(self) -> dict[str, Any] | None:
        """The peer's next message, or None if it closed the connection."""
        try:
            line = self.file.readline()
        except ConnectionError:
            return None
        if not line:
            return None
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            raise PerfError(f"the peer spoke something else than the perf control protocol "
                            f"({line[:40]!r}...): is it a netweft perf server?")
        return obj

    def expect(self, key: str) -> dict[str, Any]:
        """The server's next reply, which must carry ``key``; a clear error otherwise."""
        reply = self.recv()
        if reply is None:
            raise PerfError("the perf server closed the control connection: is a netweft perf "
                            "server (not another program) listening there, and did it log an "
                            "error?")
        if "error" in reply:
            raise PerfError(f"the perf server refused the test: {reply['error']}")
        if key not in reply:
            raise PerfError(f"the perf server's reply lacks {key!r}: is it the same netweft "
                            "version as this client?")
        return reply

    def close(self) -> None:
        try:
            self.file.close()
        except OSError:
            pass  # the peer is gone; nothing left to flush to it
        self.sock.close()


def server_endpoint(req: dict[str, Any], local_ip: str) -> Any:
    """The server's netweft endpoint with the settings a client's request names."""
    from netweft.transport import udp_endpoint

    settings = {"window_pkts": req["window_pkts"], **req.get("engine", {})}
    return udp_endpoint((local_ip, 0), mtu=req["mtu"], loss=req["loss"], tx=req["tx"],
                        gro=req.get("gro", True), io=req.get("io", "thread"), **settings)


def connect(host: str, control_port: int, timeout: float = 10.0) -> Control:
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock = socket.create_connection((host, control_port), timeout=timeout)
            sock.settimeout(None)
            return Control(sock)
        except OSError as exc:
            if time.monotonic() > deadline:
                raise PerfError(f"cannot reach the perf server at {host}:{control_port}: "
                                f"{exc.strerror or exc} (start one there with `netweft perf "
                                "server`, or give its --control-port)") from None
            time.sleep(0.05)


def run_against_server(args: argparse.Namespace, run: Any) -> Any:
    """``run(ctl)`` over a control connection to the perf server at ``args.host``; a
    failure is printed in one line and gives None (the client then exits 1)."""
    try:
        ctl = connect(args.host, args.control_port)
        try:
            return run(ctl)
        finally:
            ctl.close()
    except (PerfError, TransportError, OSError) as exc:
        print(f"netweft perf client: {exc}", file=sys.stderr)
        return None


def local_ip_towards(host: str) -> str:
    """The local address the routing table picks to reach ``host`` (nothing is sent)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((host, 9))
        return probe.getsockname()[0]
    finally:
        probe.close()


class NetweftSession:
    """A netweft endpoint here writing into a buffer the perf server registered.

    Opened by :meth:`open` (the server creates its endpoint, registers
    ``msg_size * slots`` bytes and answers with the key); :meth:`finish` has the
    server check every slot written (CRC) and returns its reply (CPU seconds,
    ``verified``, its engine counters); :meth:`close` stops the endpoint.
    """

    def __init__(self, ctl: Control, ep: Any, mr: Any, peer: Any, remote: Any, src: Any,
                 msg_size: int, slots: int) -> None:
        self.ctl = ctl
        self.ep, self.mr, self.peer, self.remote = ep, mr, peer, remote
        self.src, self.msg_size, self.slots = src, msg_size, slots

    @classmethod
    def open(cls, ctl: Control, host: str, msg_size: int, *, mtu: int, loss: float = 0.0,
             slots: int = 8, tx: str = "ports", window_pkts: int = 4096,
             bind: str | None = None, engine: dict[str, int] | None = None,
             gro: bool = True, reliability: str = "sr", io: str = "thread") -> NetweftSession:
        import numpy as np

        from netweft.transport import RemoteKey, udp_endpoint

        payload = mtu - IP_UDP_HEADERS
        engine = engine or {}
        if "mtu" in engine:
            raise PerfError("set the packet size with --mtu (the path MTU), not --engine mtu=")
        settings = {"window_pkts": window_pkts, **engine}  # --engine window_pkts=N wins
        ep = udp_endpoint((bind or local_ip_towards(host), 0), mtu=payload, loss=loss, tx=tx,
                          gro=gro, io=io, **settings)
        try:
            src = np.frombuffer(os.urandom(msg_size), dtype=np.uint8).copy()
            mr = ep.register(src)
            ctl.send({"op": "netweft", "mtu": payload, "loss": loss, "tx": tx,
                      "window_pkts": window_pkts, "buffer": msg_size * slots,
                      "client": list(ep.address), "engine": engine, "gro": gro, "io": io})
            reply = ctl.expect("rkey")
            remote = RemoteKey(reply["rkey"], reply["length"])
            peer = ep.connect((host, reply["port"]))
            peer.set_reliability(reliability)
        except BaseException:
            ep.close()
            raise
        return cls(ctl, ep, mr, peer, remote, src, msg_size, slots)

    def finish(self, written: int) -> dict[str, Any]:
        """Ask the server to check the slots written (``written`` messages) and report."""
        self.ctl.send({"op": "finish", "msg_size": self.msg_size,
                       "slots": min(self.slots, written), "crc": zlib.crc32(self.src)})
        return self.ctl.expect("verified")

    def close(self) -> None:
        self.ep.close()
