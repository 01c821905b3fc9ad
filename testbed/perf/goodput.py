"""``netweft perf client --mode goodput``: netweft RMA writes beside kernel TCP on one path.

The client runs the tests back to back in interleaved rounds (:func:`run_client`):
netweft writes of whole messages into a buffer the server registered
(:func:`run_netweft`, every slot checked by CRC at the end), kernel TCP
``sendall`` of the same messages (:func:`run_tcp`), and with loss injected, netweft
again; :func:`format_report` prints goodput, messages/s, CPU per byte and the
ratios measured in the same run.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from netweft.testbed.perf.protocol import (
    CONTROL_PORT,
    Control,
    NetweftSession,
    PerfError,
    PerfResult,
    connect,
    cpu_seconds,
)

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
    ctl = connect(host, control_port)
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
