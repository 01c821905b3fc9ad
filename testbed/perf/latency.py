"""``netweft perf ... --mode latency``: ping-pong round trips, netweft beside the kernel.

Four tests on the same path, one message in flight at a time, interleaved in
rounds so that a change of the machine's load weighs on each alike:

- ``netweft write``: an RMA write of ``msg_size`` bytes into the server's
  registered buffer, timed from the post to its completion (the completion
  needs the receiver's ACK: one round trip through both engines);
- ``netweft send/recv``: a send that the server answers with a send of the
  same size from its receive buffer, timed from the post to the reply's
  receive completion;
- ``udp``: a kernel UDP datagram echoed by the server (``recvfrom``/``sendto``);
- ``udp busy`` (when ``busy`` is among the I/O modes): the same with both ends
  spinning on non-blocking receives instead of sleeping, the kernel baseline
  for netweft's busy-polling mode;
- ``tcp``: a message over a kernel TCP connection (``TCP_NODELAY``) echoed
  whole by the server.

Both ends of every test are Python processes, so interpreter costs fall on
each test alike. The report gives p50, p99, p99.9 and the mean in
microseconds, and each test's p50 over the UDP ping-pong's p50 measured in
the same run; ``--plot`` draws the CDFs.
"""

from __future__ import annotations

import select
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from netweft.testbed.perf.protocol import (
    IP_UDP_HEADERS,
    Control,
    NetweftSession,
    PerfError,
    cpu_seconds,
    local_ip_towards,
    run_against_server,
    server_endpoint,
)
from netweft.transport.errors import CompletionTimeout

WARMUP = 20  # round trips dropped at the start of each round (caches, ARP, PDC setup)
_ECHO_BUFFERS = 16  # receive buffers the echo server keeps posted
_UDP_TIMEOUT_S = 1.0  # a UDP round trip slower than this counts as lost


@dataclass
class LatencyResult:
    """Round-trip samples of one test (nanoseconds) and what it cost."""

    name: str
    samples_ns: list[int] = field(default_factory=list)
    lost: int = 0
    cpu_s: float = 0.0
    seconds: float = 0.0
    busy: bool = False  # the ends busy poll (set beside the busy UDP ping-pong too)

    def percentile_us(self, q: float) -> float:
        """The ``q``-th percentile (0..100) in microseconds (nan without samples)."""
        if not self.samples_ns:
            return float("nan")
        import numpy as np

        return float(np.percentile(np.asarray(self.samples_ns, dtype=np.float64), q)) / 1e3

    @property
    def mean_us(self) -> float:
        n = len(self.samples_ns)
        return sum(self.samples_ns) / n / 1e3 if n else float("nan")

    @property
    def cpu_us_per_round_trip(self) -> float:
        n = len(self.samples_ns) + self.lost
        return self.cpu_s * 1e6 / n if n else float("nan")

    def summary(self) -> dict[str, Any]:
        """The figures written to --json (without the raw samples)."""
        return {"name": self.name, "round_trips": len(self.samples_ns), "lost": self.lost,
                "p50_us": self.percentile_us(50), "p99_us": self.percentile_us(99),
                "p999_us": self.percentile_us(99.9), "mean_us": self.mean_us,
                "cpu_us_per_round_trip": self.cpu_us_per_round_trip, "seconds": self.seconds,
                "busy": self.busy}


# ---- server side ----
def serve_udp_echo(ctl: Control, local_ip: str, busy: bool = False) -> None:
    """Echo UDP datagrams until the client's ``finish`` (``busy``: spin, never sleep)."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.bind((local_ip, 0))
        ctl.send({"port": udp.getsockname()[1]})
        cpu0 = cpu_seconds()
        buf = bytearray(65536)
        if busy:
            _spin_echo(udp, ctl, buf)
        while not busy:
            ready, _, _ = select.select([udp, ctl.sock], [], [])
            if udp in ready:
                n, addr = udp.recvfrom_into(buf)
                udp.sendto(memoryview(buf)[:n], addr)
            if ctl.sock in ready:
                break
        if ctl.recv() is None:
            return
        ctl.send({"cpu_s": cpu_seconds() - cpu0, "verified": True, "stats": {}})
    finally:
        udp.close()


def _spin_echo(udp: socket.socket, ctl: Control, buf: bytearray) -> None:
    """The busy echo loop: non-blocking receives; looks at the control socket every
    1024 empty polls."""
    udp.setblocking(False)
    spins = 0
    while True:
        try:
            n, addr = udp.recvfrom_into(buf)
        except BlockingIOError:
            spins += 1
            if spins % 1024 == 0 and select.select([ctl.sock], [], [], 0)[0]:
                return
            continue
        udp.sendto(memoryview(buf)[:n], addr)


def serve_tcp_echo(ctl: Control, local_ip: str, msg_size: int) -> None:
    """Echo ``msg_size``-byte messages over one TCP connection until it closes."""
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind((local_ip, 0))
    lst.listen(1)
    ctl.send({"port": lst.getsockname()[1]})
    conn, _ = lst.accept()
    lst.close()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    cpu0 = cpu_seconds()
    buf = bytearray(msg_size)
    view = memoryview(buf)
    try:
        while _recv_exactly(conn, view):
            conn.sendall(view)
    finally:
        conn.close()
    ctl.send({"cpu_s": cpu_seconds() - cpu0, "verified": True, "stats": {}})


def serve_netweft_echo(ctl: Control, req: dict[str, Any], local_ip: str) -> None:
    """Answer each netweft send with a send of the same bytes, until ``finish``."""
    size = req["msg_size"]
    ep = server_endpoint(req, local_ip)
    try:
        import numpy as np

        # Replies go to the client's listen port (its packets leave from entropy ports).
        ep.connect((req["client"][0], req["client"][1]))
        pool = ep.register(np.zeros(size * _ECHO_BUFFERS, dtype=np.uint8))
        for i in range(_ECHO_BUFFERS):
            ep.post_recv(pool, offset=i * size, length=size, context=i)
        ctl.send({"port": ep.address[1]})
        cpu0 = cpu_seconds()
        verified = True
        peers: dict[int, Any] = {}
        while True:
            # Waiting in cq.wait (not select on ep.fileno()) lets the inline and busy I/O
            # modes receive in this thread; the control socket is looked at when idle.
            try:
                ready = [ep.cq.wait(timeout=0.05)] + ep.cq.poll(64)
            except CompletionTimeout:
                if select.select([ctl.sock], [], [], 0)[0]:
                    break
                continue
            for c in ready:
                if c.opcode.name == "RECV":
                    verified &= c.ok and c.nbytes == size
                    peer = peers.get(c.peer) or peers.setdefault(c.peer, ep.peer(c.peer))
                    peer.send(pool, offset=c.context * size, length=size, context=c.context)
                elif c.ok:  # our reply left: the buffer takes the next request
                    ep.post_recv(pool, offset=c.context * size, length=size, context=c.context)
                else:
                    verified = False
        if ctl.recv() is None:
            return
        ctl.send({"cpu_s": cpu_seconds() - cpu0, "verified": verified, "stats": ep.stats()})
    finally:
        ep.close()


def _recv_exactly(conn: socket.socket, view: memoryview) -> bool:
    """Fill ``view`` from ``conn``; False if the peer closed first."""
    got = 0
    while got < len(view):
        n = conn.recv_into(view[got:])
        if n == 0:
            return False
        got += n
    return True


# ---- client side ----
def _timed_loop(duration: float, one: Any, result: LatencyResult) -> None:
    """Call ``one()`` (returns a round trip in ns, or None if lost) for ``duration`` s."""
    end = time.monotonic() + duration
    n = 0
    while time.monotonic() < end:
        rtt = one()
        n += 1
        if rtt is None:
            result.lost += 1
        elif n > WARMUP:
            result.samples_ns.append(rtt)


def ping_udp(ctl: Control, host: str, duration: float, msg_size: int,
             result: LatencyResult, busy: bool = False) -> None:
    """Kernel UDP ping-pong (``busy``: both ends spin on non-blocking receives)."""
    if msg_size > 65507:
        raise PerfError(f"the UDP ping-pong sends one datagram: --msg-size {msg_size} is over "
                        "65507 bytes")
    ctl.send({"op": "udp_echo", "busy": busy})
    port = ctl.expect("port")["port"]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.connect((host, port))
    msg, buf = bytes(msg_size), bytearray(msg_size)
    clock = time.perf_counter_ns
    timeout_ns = int(_UDP_TIMEOUT_S * 1e9)

    def one() -> int | None:
        t0 = clock()
        udp.send(msg)
        try:
            udp.recv_into(buf)
        except TimeoutError:
            return None
        return clock() - t0

    def one_busy() -> int | None:
        t0 = clock()
        udp.send(msg)
        while True:
            try:
                udp.recv_into(buf)
                return clock() - t0
            except BlockingIOError:
                if clock() - t0 > timeout_ns:
                    return None

    if busy:
        udp.setblocking(False)
    else:
        udp.settimeout(_UDP_TIMEOUT_S)
    _finish_timed(ctl, duration, one_busy if busy else one, result, udp.close)


def ping_udp_busy(ctl: Control, host: str, duration: float, msg_size: int,
                  result: LatencyResult) -> None:
    """Kernel UDP ping-pong with both ends busy polling."""
    ping_udp(ctl, host, duration, msg_size, result, busy=True)


def ping_tcp(ctl: Control, host: str, duration: float, msg_size: int,
             result: LatencyResult) -> None:
    """Kernel TCP ping-pong: one whole message echoed per round trip."""
    ctl.send({"op": "tcp_echo", "msg_size": msg_size})
    port = ctl.expect("port")["port"]
    conn = socket.create_connection((host, port))
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    msg, view = bytes(msg_size), memoryview(bytearray(msg_size))
    clock = time.perf_counter_ns

    def one() -> int | None:
        t0 = clock()
        conn.sendall(msg)
        if not _recv_exactly(conn, view):
            raise PerfError("the perf server closed the TCP ping-pong connection")
        return clock() - t0

    cpu0, t0 = cpu_seconds(), time.monotonic()
    _timed_loop(duration, one, result)
    conn.close()
    report = ctl.expect("cpu_s")
    result.cpu_s += cpu_seconds() - cpu0 + report["cpu_s"]
    result.seconds += time.monotonic() - t0


def _finish_timed(ctl: Control, duration: float, one: Any, result: LatencyResult,
                  close: Any) -> None:
    cpu0, t0 = cpu_seconds(), time.monotonic()
    try:
        _timed_loop(duration, one, result)
    finally:
        close()
    ctl.send({"op": "finish"})
    report = ctl.expect("verified")
    result.cpu_s += cpu_seconds() - cpu0 + report["cpu_s"]
    result.seconds += time.monotonic() - t0
    if not report["verified"]:
        raise PerfError(f"{result.name}: the perf server saw a wrong or failed message")


def ping_netweft_write(ctl: Control, host: str, duration: float, msg_size: int,
                       result: LatencyResult, **options: Any) -> None:
    """netweft RMA write, post to completion, one in flight."""
    s = NetweftSession.open(ctl, host, msg_size, slots=1, **options)
    written = 0
    try:
        peer, mr, remote, cq = s.peer, s.mr, s.remote, s.ep.cq
        clock = time.perf_counter_ns

        def one() -> int | None:
            nonlocal written
            t0 = clock()
            peer.write(mr, remote)
            c = cq.wait(timeout=30.0)
            t1 = clock()
            if not c.ok:
                raise PerfError(f"a netweft write failed: {c.error}")
            written += 1
            return t1 - t0

        cpu0, t0 = cpu_seconds(), time.monotonic()
        _timed_loop(duration, one, result)
        fin = s.finish(written)
        result.cpu_s += cpu_seconds() - cpu0 + fin["cpu_s"]
        result.seconds += time.monotonic() - t0
    finally:
        s.close()
    if not fin["verified"]:
        raise PerfError("netweft write: the server's buffer does not hold what was written")


def ping_netweft_send(ctl: Control, host: str, duration: float, msg_size: int,
                      result: LatencyResult, *, mtu: int, tx: str = "ports",
                      window_pkts: int = 4096, bind: str | None = None,
                      engine: dict[str, int] | None = None, io: str = "thread",
                      **_: Any) -> None:
    """netweft send answered by a send: post to the reply's receive completion."""
    import numpy as np

    from netweft.transport import udp_endpoint

    payload = mtu - IP_UDP_HEADERS
    engine = engine or {}
    settings = {"window_pkts": window_pkts, **engine}
    ep = udp_endpoint((bind or local_ip_towards(host), 0), mtu=payload, tx=tx, io=io,
                      **settings)
    try:
        ctl.send({"op": "netweft_echo", "mtu": payload, "tx": tx, "loss": 0.0,
                  "window_pkts": window_pkts, "msg_size": msg_size, "engine": engine,
                  "client": list(ep.address), "io": io})
        port = ctl.expect("port")["port"]
        peer = ep.connect((host, port))
        msg = ep.register(np.frombuffer(bytes(range(256)) * (msg_size // 256 + 1),
                                        dtype=np.uint8)[:msg_size].copy())
        back = ep.register(np.zeros(msg_size, dtype=np.uint8))
        cq, clock = ep.cq, time.perf_counter_ns
        wrong = 0

        def one() -> int | None:
            nonlocal wrong
            t0 = clock()
            ep.post_recv(back)
            peer.send(msg)
            got_reply = got_sent = False
            while not (got_reply and got_sent):
                c = cq.wait(timeout=30.0)
                if not c.ok:
                    raise PerfError(f"a netweft {c.opcode.name.lower()} failed: {c.error}")
                if c.opcode.name == "RECV":
                    got_reply, t1 = True, clock()
                else:
                    got_sent = True
            return t1 - t0

        _finish_timed(ctl, duration, one, result, lambda: None)
        if not np.array_equal(back.buffer, msg.buffer):
            wrong += 1
    finally:
        ep.close()
    if wrong:
        raise PerfError("netweft send/recv: the reply differs from the message sent")


TESTS = {"netweft write": ping_netweft_write, "netweft send/recv": ping_netweft_send,
         "udp": ping_udp, "tcp": ping_tcp}


def run_latency(ctl: Control, host: str, *, duration: float, rounds: int, msg_size: int,
                proto: str, io: tuple[str, ...] = ("thread",), tx: tuple[str, ...] = ("ports",),
                **options: Any) -> list[LatencyResult]:
    """Every ping-pong test of ``proto`` for ``duration`` s in ``rounds`` interleaved rounds;
    the netweft tests once per packet path in ``tx`` and I/O mode in ``io`` (named
    ``... [path mode]`` when several), and a busy-polling UDP ping-pong when ``busy`` is
    among the modes."""
    plan: list[tuple[str, Any, dict[str, str] | None]] = []
    for n, run in TESTS.items():
        if n.startswith("netweft"):
            if proto not in ("netweft", "both"):
                continue
            for path in tx:
                for mode in io:
                    tags = ([path] if len(tx) > 1 else []) + ([mode] if len(io) > 1 else [])
                    name = f"{n} [{' '.join(tags)}]" if tags else n
                    plan.append((name, run, {"tx": path, "io": mode}))
        elif proto in ("tcp", "both"):
            plan.append((n, run, None))
            if n == "udp" and "busy" in io:
                plan.append(("udp busy", ping_udp_busy, None))
    results = {name: LatencyResult(name, busy=(how or {}).get("io") == "busy" or
                                   name == "udp busy") for name, _, how in plan}
    for _ in range(rounds):
        for name, run, how in plan:
            if how is None:
                run(ctl, host, duration / rounds, msg_size, results[name])
            else:
                run(ctl, host, duration / rounds, msg_size, results[name], **how, **options)
    return list(results.values())


def latency_ratios(results: list[LatencyResult]) -> dict[str, float]:
    """p50 of each test over the UDP ping-pong's p50, from the same run; busy-polling
    tests also over the busy UDP ping-pong's."""
    by = {r.name: r for r in results}
    out: dict[str, float] = {}
    for base_name, pick in (("udp", lambda r: not r.name.startswith("udp")),
                            ("udp busy", lambda r: r.busy and r.name != "udp busy")):
        base = by.get(base_name)
        if base is None or not base.samples_ns:
            continue
        p50 = base.percentile_us(50)
        out.update({f"{r.name}/{base_name} p50": r.percentile_us(50) / p50 for r in results
                    if pick(r) and r.samples_ns})
    return out


def format_latency(results: list[LatencyResult], header: str) -> str:
    """The latency table and its ratios."""
    lines = [header,
             f"{'test':<26} {'round trips':>11} {'p50 us':>9} {'p99 us':>9} {'p99.9 us':>9} "
             f"{'mean us':>9} {'CPU us/rt':>9} {'lost':>5}"]
    for r in results:
        lines.append(f"{r.name:<26} {len(r.samples_ns):>11} {r.percentile_us(50):>9.1f} "
                     f"{r.percentile_us(99):>9.1f} {r.percentile_us(99.9):>9.1f} "
                     f"{r.mean_us:>9.1f} {r.cpu_us_per_round_trip:>9.1f} {r.lost:>5}")
    for name, value in latency_ratios(results).items():
        lines.append(f"ratio {name}: {value:.2f}x")
    return "\n".join(lines)


def _netweft_options(args: Any) -> dict[str, Any]:
    return {"mtu": args.mtu, "tx": args.tx, "window_pkts": args.window, "bind": args.bind,
            "engine": dict(args.engine), "io": args.io}  # tx, io: tuples of modes


def latency_main(args: Any) -> int:
    """``netweft perf client --mode latency``: run, print, write --json and --plot."""
    import json

    results = run_against_server(args, lambda ctl: run_latency(
        ctl, args.host, duration=args.time, rounds=args.rounds, msg_size=args.msg_size,
        proto=args.proto, **_netweft_options(args)))
    if results is None:
        return 1
    header = (f"netweft perf latency: client -> {args.host}, ping-pong of {args.msg_size}-byte "
              f"messages, one in flight, {args.time:g} s per test in {args.rounds} interleaved "
              f"rounds, path MTU {args.mtu}, tx={','.join(args.tx)}, io={','.join(args.io)}"
              + "".join(f", {k}={v}" for k, v in args.engine))
    print(format_latency(results, header), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"mode": "latency", "msg_size": args.msg_size,
                       "results": [r.summary() for r in results],
                       "ratios": latency_ratios(results)}, fh, indent=2)
    if args.plot:
        from pathlib import Path

        from netweft.testbed.plots import plot_latency_cdf

        plot_latency_cdf({r.name: [s / 1e3 for s in r.samples_ns] for r in results},
                         Path(args.plot), f"ping-pong round trips, {args.msg_size}-byte messages")
        print(f"plot: {args.plot}")
    return 0
