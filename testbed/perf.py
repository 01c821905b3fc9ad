"""``netweft perf server|client|pair|sim``: goodput of netweft against kernel TCP on one path.

The server listens on a TCP control port and runs the receiving side of each
test the client asks for; the client runs the tests back to back and prints,
from the same run: goodput, messages per second and CPU per byte for netweft
(RMA writes of whole messages into a registered buffer at the server) and for
kernel TCP (``sendall`` of the same messages), the ratio netweft/TCP, and with
``--loss P`` netweft's goodput with loss P injected by netweft (a socket filter
on both endpoints' receive sockets; this kernel has no netem) against its own
loss-free goodput. ``pair`` runs a server and a client for you over loopback
or over a veth pair between two network namespaces (in
:mod:`netweft.testbed.perf_pair`); ``sim`` (in :mod:`netweft.testbed.perf_sim`)
measures the loss ratio in virtual time.

CPU is user+system time of the client and the server processes (every thread,
including netweft's I/O threads; the kernel's work on the processes' behalf),
divided by the bytes delivered. Every netweft message is checked at the end
(CRC of each slot the client wrote) and the result says whether it matched.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any

from netweft.testbed import perf_options as opt
from netweft.transport.errors import InvalidArgumentError, TransportError
from netweft.transport.reliability_policy import Reliability, parse_reliability

CONTROL_PORT = 4794
IP_UDP_HEADERS = 28
# Engine counters reported per netweft test (``extra`` in --json): the sender's ...
CLIENT_COUNTERS = ("pkts_out", "data_pkts_out", "retransmits", "fast_retransmits", "rto_fired",
                   "spurious_rtos", "spurious_loss_marks", "cwnd_cuts", "rsp_probes",
                   "rod_nacks_deferred", "pdc_closed", "ec_blocks_sent", "ec_parity_bytes_out",
                   "ec_retransmits", "io_ring_tx_frames", "io_ring_tx_fallback",
                   "io_ring_rx_frames")
# ... and the receiver's, reported as server_<name>.
SERVER_COUNTERS = ("dup_pkts", "rod_held", "drop_syn_half_open", "pdc_reclaimed", "pdc_closed",
                   "ec_pkts_recovered", "ec_blocks_recovered", "ec_blocks_repaired",
                   "io_ring_rx_frames", "io_ring_rx_drops")


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


# ---- control channel: one JSON object per line ----
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


# ---- server ----
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


def server_endpoint(req: dict[str, Any], local_ip: str) -> Any:
    """The server's netweft endpoint with the settings a client's request names."""
    from netweft.transport import udp_endpoint

    settings = {"window_pkts": req["window_pkts"], **req.get("engine", {})}
    return udp_endpoint((local_ip, 0), mtu=req["mtu"], loss=req["loss"], tx=req["tx"],
                        gro=req.get("gro", True), io=req.get("io", "thread"), **settings)


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
    from netweft.testbed import perf_latency

    op = req.get("op")
    if op == "tcp":
        _serve_tcp(ctl, local_ip)
    elif op == "udp_echo":
        perf_latency.serve_udp_echo(ctl, local_ip, busy=bool(req.get("busy")))
    elif op == "tcp_echo":
        perf_latency.serve_tcp_echo(ctl, local_ip, req["msg_size"])
    elif op in ("netweft", "netweft_echo"):
        try:
            if op == "netweft":
                _serve_netweft(ctl, req, local_ip)
            else:
                perf_latency.serve_netweft_echo(ctl, req, local_ip)
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


# ---- client ----
def _connect(host: str, control_port: int, timeout: float = 10.0) -> Control:
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
        ctl = _connect(args.host, args.control_port)
        try:
            return run(ctl)
        finally:
            ctl.close()
    except (PerfError, TransportError, OSError) as exc:
        print(f"netweft perf client: {exc}", file=sys.stderr)
        return None


def run_tcp(ctl: Control, host: str, duration: float, msg_size: int) -> PerfResult:
    """Send ``msg_size``-byte messages over kernel TCP for ``duration`` seconds."""
    ctl.send({"op": "tcp"})
    port = ctl.expect("port")["port"]
    msg = os.urandom(msg_size)
    cpu0 = cpu_seconds()
    t0 = time.monotonic()
    data = socket.create_connection((host, port))
    messages = 0
    end = t0 + duration
    while time.monotonic() < end:
        data.sendall(msg)
        messages += 1
    data.shutdown(socket.SHUT_WR)
    report = ctl.expect("bytes")
    elapsed = time.monotonic() - t0
    data.close()
    cpu = cpu_seconds() - cpu0 + report["cpu_s"]
    return PerfResult("tcp", "tcp", report["bytes"], elapsed, messages, cpu,
                      verified=report["bytes"] == messages * msg_size)


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


def run_netweft(ctl: Control, host: str, duration: float, msg_size: int, *, mtu: int,
                loss: float = 0.0, depth: int = 8, slots: int = 8, tx: str = "ports",
                window_pkts: int = 4096, name: str = "netweft",
                bind: str | None = None, engine: dict[str, int] | None = None,
                gro: bool = True, reliability: str = "sr", io: str = "thread",
                post: str = "batch") -> PerfResult:
    """RMA-write ``msg_size``-byte messages for ``duration`` s with ``depth`` in flight;
    ``post`` "batch" refills the depth with one ``write_many`` and reaps with
    ``poll_batch`` (at depth 1 it posts as "single" does), "single" posts and reaps
    one :class:`Completion` at a time."""
    if post not in ("batch", "single"):
        raise PerfError(f"post must be batch or single, got {post!r}")
    s = NetweftSession.open(ctl, host, msg_size, mtu=mtu, loss=loss, slots=slots, tx=tx,
                            window_pkts=window_pkts, bind=bind, engine=engine, gro=gro,
                            reliability=reliability, io=io)
    try:
        ep, peer, mr, remote = s.ep, s.peer, s.mr, s.remote
        cpu0 = cpu_seconds()
        t0 = time.monotonic()
        end = t0 + duration
        if post == "batch" and depth > 1:  # one write in flight: nothing to batch
            posted, done, failed = _write_batched(ep, peer, mr, remote, end, depth, slots,
                                                  msg_size)
        else:
            posted, done, failed = _write_each(ep, peer, mr, remote, end, depth, slots,
                                               msg_size)
        elapsed = time.monotonic() - t0
        cpu = cpu_seconds() - cpu0
        fin = s.finish(done)
        stats = ep.stats()
    finally:
        s.close()
    if failed:
        raise PerfError(f"{failed} of {posted} netweft writes failed")
    return PerfResult(name, "netweft", done * msg_size, elapsed, done, cpu + fin["cpu_s"],
                      loss=loss, verified=fin["verified"], extra=engine_counters(stats, fin))


def _write_each(ep: Any, peer: Any, mr: Any, remote: Any, end: float, depth: int, slots: int,
                msg_size: int) -> tuple[int, int, int]:
    inflight, posted, done, failed = 0, 0, 0, 0
    while True:
        while inflight < depth and time.monotonic() < end:
            peer.write(mr, remote, remote_offset=(posted % slots) * msg_size)
            posted += 1
            inflight += 1
        if inflight == 0:
            return posted, done, failed
        for c in ep.cq.poll(depth) or [ep.cq.wait(timeout=30.0)]:
            inflight -= 1
            if c.ok:
                done += 1
            else:
                failed += 1


def _write_batched(ep: Any, peer: Any, mr: Any, remote: Any, end: float, depth: int,
                   slots: int, msg_size: int) -> tuple[int, int, int]:
    import numpy as np

    inflight, posted, done, failed = 0, 0, 0, 0
    while True:
        want = depth - inflight
        if want and time.monotonic() < end:
            offsets = (np.arange(posted, posted + want, dtype=np.uint64) % slots) * msg_size
            n = len(peer.write_many(mr, remote, offsets, length=msg_size))
            posted += n
            inflight += n
        if inflight == 0:
            return posted, done, failed
        batch = ep.cq.poll_batch(depth)
        if not len(batch):
            c = ep.cq.wait(timeout=30.0)
            batch = np.array([c.status])
        else:
            batch = batch["status"]
        inflight -= len(batch)
        ok = int(np.count_nonzero(batch == 0))
        done += ok
        failed += len(batch) - ok


def engine_counters(stats: dict[str, int], fin: dict[str, Any]) -> dict[str, int]:
    """The client's and the server's engine counters a netweft result reports."""
    extra = {counter: stats.get(counter, 0) for counter in CLIENT_COUNTERS}
    for counter in SERVER_COUNTERS:
        extra[f"server_{counter}"] = fin["stats"].get(counter, 0)
    extra["server_drops"] = sum(v for k, v in fin["stats"].items() if k.startswith("drop_"))
    return extra


def run_client(host: str, *, control_port: int = CONTROL_PORT, proto: str = "both",
               duration: float = 3.0, msg_size: int = 1 << 20, loss: float = 0.0,
               mtu: int = 9000, depth: int = 8, tx: str = "ports",
               window_pkts: int = 4096, bind: str | None = None,
               engine: dict[str, int] | None = None, rounds: int = 3,
               reliability: str = "sr", io: str = "thread",
               post: str = "batch") -> list[PerfResult]:
    """Run the requested tests against the server at ``host`` and return their results.

    Each test gets ``duration`` seconds in total, split over ``rounds`` rounds
    that interleave the tests, so that a change in the machine's load during
    the run weighs on every test alike and the ratios stay fair.
    """
    if rounds < 1:
        raise PerfError(f"rounds must be >= 1, got {rounds}")
    if not duration > 0:
        raise PerfError(f"duration must be > 0 seconds, got {duration}")
    ctl = _connect(host, control_port)
    slice_s = duration / rounds
    tests: list[tuple[str, Any]] = []
    # The loss filter must see single datagrams, so with --loss both netweft runs go
    # without UDP GRO: the two differ in the injected loss only.
    gro = not loss
    if proto in ("netweft", "both"):
        tests.append(("netweft", lambda: run_netweft(
            ctl, host, slice_s, msg_size, mtu=mtu, depth=depth, tx=tx,
            window_pkts=window_pkts, bind=bind, engine=engine, gro=gro,
            reliability=reliability, io=io, post=post)))
        if loss:
            name = f"netweft {loss:.0%} loss*"
            tests.append((name, lambda: run_netweft(
                ctl, host, slice_s, msg_size, mtu=mtu, loss=loss, depth=depth, tx=tx,
                window_pkts=window_pkts, name=name, bind=bind, engine=engine, gro=gro,
                reliability=reliability, io=io, post=post)))
    if proto in ("tcp", "both"):
        tests.append(("tcp", lambda: run_tcp(ctl, host, slice_s, msg_size)))
    totals: dict[str, PerfResult] = {}
    try:
        _run_rounds(tests, rounds, totals)
    except OSError as exc:
        raise PerfError(f"the control connection to {host}:{control_port} failed: "
                        f"{exc.strerror or exc} (is a netweft perf server listening there?)"
                        ) from None
    finally:
        ctl.close()
    return [totals[name] for name, _ in tests]


def _run_rounds(tests: list[tuple[str, Any]], rounds: int,
                totals: dict[str, PerfResult]) -> None:
    """Run every test ``rounds`` times, interleaved, summing into ``totals``."""
    for _ in range(rounds):
        for name, run in tests:
            part = run()
            if name not in totals:
                totals[name] = part
                continue
            total = totals[name]
            total.bytes += part.bytes
            total.seconds += part.seconds
            total.messages += part.messages
            total.cpu_s += part.cpu_s
            total.verified = bool(total.verified and part.verified)
            for key, value in part.extra.items():
                total.extra[key] = total.extra.get(key, 0) + value


def ratios(results: list[PerfResult]) -> dict[str, float]:
    """Goodput ratios measured in this run: netweft/TCP and netweft with loss/without."""
    by = {r.name: r for r in results}
    plain = by.get("netweft")
    out = {}
    if plain and "tcp" in by and by["tcp"].goodput_gbps > 0:
        out["netweft/tcp goodput"] = plain.goodput_gbps / by["tcp"].goodput_gbps
    lossy = [r for r in results if r.proto == "netweft" and r.loss > 0]
    if plain and lossy and plain.goodput_gbps > 0:
        out[f"netweft {lossy[0].loss:.0%} loss / netweft loss-free goodput"] = (
            lossy[0].goodput_gbps / plain.goodput_gbps)
    return out


def format_report(results: list[PerfResult], header: str) -> str:
    """The table, the ratios and the note on how loss was injected."""
    lines = [header,
             f"{'test':<20} {'goodput Gbit/s':>14} {'msgs/s':>10} {'CPU ns/byte':>11} "
             f"{'bytes':>13} {'seconds':>8}  verified"]
    for r in results:
        lines.append(f"{r.name:<20} {r.goodput_gbps:>14.3f} {r.msgs_per_s:>10.1f} "
                     f"{r.cpu_ns_per_byte:>11.3f} {r.bytes:>13} {r.seconds:>8.2f}  "
                     f"{'yes' if r.verified else 'NO'}")
    for name, value in ratios(results).items():
        lines.append(f"ratio {name}: {value:.2f}x")
    for r in results:
        if r.proto == "netweft" and r.extra:
            x = r.extra
            lines.append(f"counters {r.name}: {x.get('retransmits', 0)} retransmits "
                         f"({x.get('fast_retransmits', 0)} fast, {x.get('rto_fired', 0)} RTOs, "
                         f"{x.get('spurious_rtos', 0)} spurious), "
                         f"{x.get('cwnd_cuts', 0)} cwnd cuts, "
                         f"{x.get('server_dup_pkts', 0)} duplicates and "
                         f"{x.get('server_drops', 0)} bad packets dropped at the server")
            if x.get("ec_blocks_sent"):
                lines.append(f"coding {r.name}: {x['ec_blocks_sent']} blocks, "
                             f"{x.get('ec_parity_bytes_out', 0)} parity bytes, "
                             f"{x.get('server_ec_pkts_recovered', 0)} packets recovered by "
                             f"parity, {x.get('ec_retransmits', 0)} coded packets resent "
                             f"({x.get('server_ec_blocks_repaired', 0)} blocks repaired by "
                             "retransmission)")
    lossy = [r for r in results if r.loss > 0]
    if lossy:
        lines.append(f"* loss injected by netweft, not the network: a socket filter on both "
                     f"endpoints' receive sockets drops {lossy[0].loss:.1%} of arriving "
                     "datagrams at random (the kernel here has no netem); both netweft runs "
                     "without UDP GRO so that they differ in the loss only")
    return "\n".join(lines)


# ---- command line ----
MODE_DEFAULTS = {  # mode: (seconds per test, message size)
    "goodput": (3.0, 1 << 20), "latency": (3.0, 64), "sweep": (0.5, 1 << 20),
    "spray": (1.0, 1 << 20)}


def _client_main(args: argparse.Namespace) -> int:
    default_time, default_size = MODE_DEFAULTS[args.mode]
    if len(args.io) > 1 and args.mode != "latency":
        print(f"netweft perf client: --io takes one mode with --mode {args.mode} (a list, "
              "side by side, is for --mode latency)", file=sys.stderr)
        return 2
    if len(args.tx) > 1 and args.mode == "goodput":
        print("netweft perf client: --tx takes one path with --mode goodput (a list, side by "
              "side, is for --mode latency, sweep and spray)", file=sys.stderr)
        return 2
    args.time = args.time or default_time
    args.msg_size = args.msg_size or default_size
    if args.mode == "latency":
        from netweft.testbed.perf_latency import latency_main

        return latency_main(args)
    args.io = args.io[0]
    if args.mode in ("sweep", "spray"):
        from netweft.testbed.perf_sweep import sweep_main

        return sweep_main(args)
    if args.plot:
        print("netweft perf client: --plot draws the latency CDF or the sweep; give "
              "--mode latency, sweep or spray", file=sys.stderr)
        return 2
    args.tx = args.tx[0]
    try:
        results = run_client(args.host, control_port=args.control_port, proto=args.proto,
                             duration=args.time, msg_size=args.msg_size, loss=args.loss,
                             mtu=args.mtu, depth=args.depth, tx=args.tx,
                             window_pkts=args.window, bind=args.bind,
                             engine=dict(args.engine), rounds=args.rounds,
                             reliability=str(args.reliability), io=args.io,
                             post=args.post)
    except (PerfError, TransportError) as exc:
        print(f"netweft perf client: {exc}", file=sys.stderr)
        return 1
    header = (f"netweft perf: client -> {args.host}, {args.time:g} s per test in "
              f"{args.rounds} interleaved rounds, "
              f"{args.msg_size}-byte messages, path MTU {args.mtu}, tx={args.tx}, io={args.io}, "
              f"{args.depth} writes in flight ({args.post} posts), window {args.window}, "
              f"reliability {args.reliability}"
              + "".join(f", {k}={v}" for k, v in args.engine))
    print(format_report(results, header), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": [asdict(r) | {"goodput_gbps": r.goodput_gbps,
                                                "msgs_per_s": r.msgs_per_s,
                                                "cpu_ns_per_byte": r.cpu_ns_per_byte}
                                   for r in results],
                       "ratios": ratios(results)}, fh, indent=2)
    return 0 if all(r.verified for r in results) else 1


def _server_main(args: argparse.Namespace) -> int:
    try:
        serve(args.bind, args.control_port, once=args.once)
    except PerfError as exc:
        print(f"netweft perf server: {exc}", file=sys.stderr)
        return 1
    return 0


def _add_client_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=tuple(MODE_DEFAULTS), default="goodput",
                   help="goodput (default): one message size, netweft vs TCP; latency: "
                        "ping-pong p50/p99/p99.9 of netweft write and send/recv vs kernel UDP "
                        "and TCP; sweep: sizes x depths x entropy bursts vs TCP; spray: the "
                        "cost of per-packet entropy at one size")
    p.add_argument("--proto", choices=("netweft", "tcp", "both"), default="both",
                   help="what to measure (default both, which prints the ratio; in latency "
                        "mode 'tcp' means the kernel's UDP and TCP ping-pongs)")
    p.add_argument("--time", type=opt.seconds, default=None,
                   help="seconds per test, > 0 (default 3; sweep and spray: per grid point, "
                        "0.5 and 1)")
    p.add_argument("--rounds", type=opt.rounds, default=3,
                   help="interleave the tests in this many rounds, >= 1 (default 3)")
    p.add_argument("--msg-size", type=opt.size, default=None,
                   help="bytes per message (default 1m; latency mode 64)")
    p.add_argument("--loss", type=opt.probability, default=0.0,
                   help="also run netweft with this random loss injected at both ends")
    p.add_argument("--mtu", type=opt.path_mtu, default=9000,
                   help=f"path MTU in bytes, {opt.MTU_MIN}..{opt.MTU_MAX} (default 9000)")
    p.add_argument("--depth", type=opt.depth, default=8,
                   help="netweft writes in flight, >= 1 (default 8)")
    p.add_argument("--tx", type=opt.tx_modes, default=("ports",),
                   help="netweft packet path at both ends: ports (default; kernel UDP "
                        "sockets, one per entropy source port), socket (one socket), raw "
                        "(IPPROTO_RAW), packet (AF_PACKET rings and a tcx program: no "
                        "kernel IP/UDP stack per packet; root, Linux 6.6+); latency, sweep "
                        "and spray take a list (ports,packet) and run each side by side"),
    p.add_argument("--io", type=opt.io_modes, default=("thread",),
                   help="netweft I/O mode at both ends: thread (default; the I/O thread moves "
                        "every packet), inline (posts send and waits receive in the "
                        "application's thread), busy (inline plus busy polling); latency "
                        "mode takes a list (thread,inline,busy) and runs each side by side")
    p.add_argument("--post", choices=("batch", "single"), default="batch",
                   help="how the netweft client posts and reaps writes: batch (default; "
                        "peer.write_many refills the depth in one call, cq.poll_batch reaps) "
                        "or single (peer.write and a Completion object per message)")
    p.add_argument("--window", type=opt.window, default=4096,
                   help="netweft window in packets, a power of two from 64 to 4096 (default "
                        "4096: room to keep sending while a loss is repaired)")
    p.add_argument("--engine", type=opt.setting, action="append", default=[],
                   metavar="KEY=VALUE",
                   help="an engine setting for both ends, e.g. reorder_pkts=64 (repeatable)")
    p.add_argument("--reliability", type=reliability_arg, default="sr",
                   help="loss repair of the netweft writes: sr (selective repeat, default), "
                        "ec:K,M (K data + M parity packets per block) or adaptive")
    p.add_argument("--json", metavar="FILE", type=opt.json_file,
                   help="also write the raw numbers to FILE")
    p.add_argument("--plot", metavar="PNG", type=opt.output_file,
                   help="latency: draw the round-trip CDFs; sweep/spray: goodput and messages/s "
                        "against size (or burst), into PNG")
    from netweft.testbed.perf_sweep import add_options

    add_options(p)


def reliability_arg(text: str) -> Reliability:
    """argparse type: sr, ec:K,M or adaptive, checked at parse time."""
    try:
        return parse_reliability(text)
    except InvalidArgumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft perf server|client|pair``."""
    p = sub.add_parser("perf", help="measure netweft against kernel TCP (iperf-like)")
    perf = p.add_subparsers(dest="perf_command", metavar="ROLE", required=True)
    s = perf.add_parser("server", help="serve perf tests")
    s.add_argument("--bind", default="0.0.0.0", help="address to listen on")
    s.add_argument("--control-port", type=opt.listen_port, default=CONTROL_PORT,
                   help=f"TCP control port (default {CONTROL_PORT}; 0 = any free port)")
    s.add_argument("--once", action="store_true", help="exit after one client")
    s.set_defaults(func=_server_main)
    c = perf.add_parser("client", help="run tests against a perf server")
    c.add_argument("host", help="the server's address")
    c.add_argument("--control-port", type=opt.port, default=CONTROL_PORT,
                   help=f"the server's TCP control port (default {CONTROL_PORT})")
    c.add_argument("--bind", help="local address for netweft (default: the route's source)")
    _add_client_options(c)
    c.set_defaults(func=_client_main)
    pr = perf.add_parser("pair", help="run a server and a client here, over loopback or veth")
    pr.add_argument("--path", choices=("loopback", "veth"), default="loopback")
    pr.add_argument("--offloads", choices=("on", "off"), default="on",
                    help="veth checksum/TSO/GSO/GRO offloads (default on, as on real hosts)")
    _add_client_options(pr)
    from netweft.testbed.perf_pair import run_pair

    pr.set_defaults(func=run_pair)
    from netweft.testbed.perf_sim import add_parser

    add_parser(perf)
