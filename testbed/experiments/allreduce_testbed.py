"""Emulated all-reduce: in-network and ring on hosts in namespaces and a switch process.

``n`` hosts in network namespaces hang off one netweft switch process running
``p4/aggregation.p4``, configured over P4Runtime with its plan (IPv4 routes and
the aggregation job, :func:`~netweft.testbed.control.aggregation.plan.
plan_aggregation`) through the aggregation controller's session. Every host runs
one worker process that does, for each buffer size, an in-network all-reduce
(:class:`~netweft.transport.collectives.aggregation.udp.SwitchGroup`, the kernel's
UDP, its worker in C where the engine has it) and then a ring all-reduce
(:class:`~netweft.transport.collectives.ring_allreduce.RingGroup` over netweft's
transport on UDP, through the same switch, which forwards it by IPv4); with
``python_worker`` also an in-network all-reduce on the Python worker (the reference,
``SwitchGroup(worker="python")``) between the two, method ``in-network-python``. The parent starts every
phase on all hosts at once (a line on each worker's stdin) and each worker
reports its time and the bytes its ``eth0`` sent and received during the phase
(the kernel's interface counters: everything on the host link). Real sockets,
real clocks, a switch written in Python: the times are an emulator's, the bytes
per link are what hardware would carry. A 4 KiB round of both warms the switch
process and the hosts up first; it is not reported.

The host links run at ``rate_mbit`` (the switch's traffic manager and link model
emulate the rate both ways; None: veth speed), the switch on ``backend`` (auto, c
or python; None: ``$NETWEFT_SWITCH_BACKEND`` or the default). ``lanes`` is the
program's ``AGG_LANES`` (a wrapper source defines it before including
``aggregation.p4``: a switch process takes a source file, not ``-D``) and the
workers' K; ``window`` the job's slots. Each row also has the CPU seconds the
switch process and every worker used in each phase (``/proc``), which the
wall-clock times on a shared machine do not show.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from netweft.emulation.network import Network
from netweft.p4.programs import program
from netweft.transport.collectives.aggregation.layer import AGG_LANES, check_lanes

SERVICE, SERVICE_MAC = "10.0.1.254", "02:00:00:00:00:fe"
AGG_PORT, RING_PORT = 45000, 4793
WINDOW = 32

WORKER = r"""
import json, sys, time
import numpy as np
from netweft.transport import RingGroup, SwitchGroup, allreduce, udp_endpoint

def link_bytes():
    base = "/sys/class/net/eth0/statistics/"
    return [int(open(base + n).read()) for n in ("tx_bytes", "rx_bytes")]

w, n, sizes = int(sys.argv[1]), int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",")]
ips = sys.argv[4].split(",")
group = SwitchGroup("{service}", 1, w, n, bind=(ips[w], {agg_port}), window={window},
                    timeout=0.2, lanes={lanes})
default_worker = group.worker
ep = udp_endpoint((ips[w], {ring_port}), mtu=8972)
ring = RingGroup(ep, w, [(ip, {ring_port}) for ip in ips])
print("ready", flush=True)
for size in [4096] + sizes:  # the first size warms the switch process and the hosts up
    array = np.random.default_rng(w + size).normal(0, 1, max(1, size // 4)).astype(np.float32)
    row = {{"size": size}}
    for method in {methods}:
        grp = ring if method == "ring" else group
        group.worker = "python" if method == "in-network-python" else default_worker
        sys.stdin.readline()  # the parent starts the phase on every host at once
        before = link_bytes()
        resent = group.stats["retransmits"]
        c0, t0 = time.process_time(), time.monotonic()
        result = allreduce(array, grp, timeout=300)
        row[method] = {{"seconds": time.monotonic() - t0, "cpu_seconds": time.process_time() - c0,
                        "retransmits": group.stats["retransmits"] - resent,
                        "tx_bytes": link_bytes()[0] - before[0],
                        "rx_bytes": link_bytes()[1] - before[1],
                        "checksum": float(np.float64(result.astype(np.float64).sum())),
                        "worker": group.worker if grp is group else "ring"}}
        print("done", flush=True)
    print(json.dumps(row), flush=True)
group.close()
ep.close()
"""


def run_emulated_allreduce(workers: int, sizes: list[int], log=lambda msg: None,
                           out_dir: Path | None = None, *, rate_mbit: float | None = None,
                           backend: str | None = None, lanes: int = AGG_LANES,
                           window: int = WINDOW, python_worker: bool = False) -> list[dict]:
    """One row per size: for each method the slowest worker's seconds, the mean bytes per
    host link each way, whether every worker got the same sum, and CPU seconds (the
    slowest worker's, the switch process's)."""
    from netweft.testbed.control.aggregation.controller import AggregationController
    from netweft.testbed.control.aggregation.placement import job_on_fabric
    from netweft.testbed.control.aggregation.plan import plan_aggregation
    from netweft.testbed.control.fabric.graph import graph_from_network
    from netweft.testbed.control.p4runtime_installer import install_writes

    with tempfile.TemporaryDirectory(prefix="nw-allreduce-") as tmp:
        folder = Path(out_dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        net = Network()
        hosts = [net.add_host(f"h{w + 1}", f"10.0.1.{w + 1}/24", f"02:00:00:00:01:{w + 1:02x}")
                 for w in range(workers)]
        grpc = f"unix:{tmp}/s1.grpc"
        s1 = net.add_switch("s1", aggregation_source(lanes, Path(tmp)), grpc_address=grpc,
                            log_file=folder / "s1.log", backend=backend)
        for h in hosts:
            net.add_link(h, s1, mtu=9000, rate_mbit=rate_mbit)
        graph = graph_from_network(net)
        job = job_on_fabric(graph, "s1", 1, SERVICE, 0, window, [h.name for h in hosts],
                            AGG_PORT)
        plan = plan_aggregation(graph, {"s1": [job]})
        procs: list[subprocess.Popen] = []
        try:
            log(f"all-reduce: starting {workers} hosts and a switch process (aggregation.p4)")
            net.start()
            for h in hosts:  # the service address is the switch's: no ARP for it
                h.cmd("ip", "neigh", "replace", SERVICE, "lladdr", SERVICE_MAC, "dev", "eth0",
                      "nud", "permanent")
            with AggregationController.connect("s1", grpc) as ctl:
                install_writes(ctl.session, plan.writes["s1"], ctl.encoder)  # routes, the job
                methods = _methods(python_worker)
                script = WORKER.format(service=SERVICE, agg_port=AGG_PORT, ring_port=RING_PORT,
                                       window=window, lanes=lanes, methods=methods)
                ips = ",".join(h.ip_address for h in hosts)
                procs = [h.popen(sys.executable, "-c", script, str(w), str(workers),
                                 ",".join(map(str, sizes)), ips, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                         for w, h in enumerate(hosts)]
                for p in procs:
                    _expect(p, "ready")
                rows = []
                for size in [4096, *sizes]:
                    switch_cpu = {}
                    for method in methods:
                        log(f"all-reduce: {method}, {workers} workers, {size} bytes each")
                        cpu0 = _cpu_seconds(s1.process)
                        for p in procs:
                            p.stdin.write("go\n")
                            p.stdin.flush()
                        for p in procs:
                            _expect(p, "done")
                        switch_cpu[method] = _cpu_seconds(s1.process) - cpu0
                    reports = [json.loads(_line(p)) for p in procs]
                    rows.append(_summarise(size, reports, switch_cpu, methods))
                rows = rows[1:]  # the warm-up
                events = ctl.events()
            for p in procs:
                p.wait(timeout=30)
            rows[-1]["switch_events"] = events
            return rows
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            net.stop()


def aggregation_source(lanes: int, folder: Path) -> Path:
    """``p4/aggregation.p4`` itself for the default K, else a source in ``folder`` that
    defines ``AGG_LANES`` and includes it (what ``-D AGG_LANES=K`` does)."""
    if check_lanes(lanes) == AGG_LANES:
        return program("aggregation")
    wrapper = folder / f"aggregation_{lanes}.p4"
    wrapper.write_text(f"#define AGG_LANES {lanes}\n"
                       f"#include \"{program('aggregation')}\"\n")
    return wrapper


def _cpu_seconds(proc: subprocess.Popen | None) -> float:
    """User + system CPU seconds of a running process and its threads (0 if unknown)."""
    if proc is None:
        return 0.0
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _line(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()
    if not line:
        try:  # stdout closed: the worker ended, or is ending
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        err = proc.stderr.read() if proc.poll() is not None else ""
        raise RuntimeError(f"an all-reduce worker stopped (exit status {proc.returncode}): "
                           f"{err.strip()[-400:]}")
    return line.strip()


def _expect(proc: subprocess.Popen, word: str) -> None:
    got = _line(proc)
    if got != word:
        raise RuntimeError(f"an all-reduce worker said {got!r}, expected {word!r}")


def _methods(python_worker: bool) -> tuple[str, ...]:
    return ("in-network", "in-network-python", "ring") if python_worker else \
        ("in-network", "ring")


def _summarise(size: int, reports: list[dict], switch_cpu: dict[str, float],
               methods: tuple[str, ...] = ("in-network", "ring")) -> dict:
    row: dict = {"size": size}
    for method in methods:
        per = [r[method] for r in reports]
        sums = {round(p["checksum"], 3) for p in per}
        row[method] = {"seconds": max(p["seconds"] for p in per),
                       "worker_cpu_seconds": max(p["cpu_seconds"] for p in per),
                       "switch_cpu_seconds": switch_cpu.get(method, 0.0),
                       "retransmits": sum(p["retransmits"] for p in per),
                       "tx_bytes": sum(p["tx_bytes"] for p in per) / len(per),
                       "rx_bytes": sum(p["rx_bytes"] for p in per) / len(per),
                       "agree": len(sums) == 1, "worker": per[0].get("worker")}
    row["speedup"] = row["ring"]["seconds"] / row["in-network"]["seconds"]
    row["bytes_ratio"] = row["ring"]["tx_bytes"] / row["in-network"]["tx_bytes"]
    if "in-network-python" in row:
        row["python_speedup"] = row["ring"]["seconds"] / row["in-network-python"]["seconds"]
    return row


def format_emulated(rows: list[dict], workers: int, setting: str = "") -> str:
    """The table: times, the CPU seconds behind them (the slowest worker's, the switch
    process's), bytes per host link, and whether the workers agree; one line per
    in-network worker (C, and the Python reference when it ran) against the same ring."""
    lines = [f"emulated all-reduce, {workers} hosts on one switch process (aggregation.p4)"
             f"{', ' + setting if setting else ''}, real sockets and clocks:",
             f"{'size':>8} {'worker':>6} | {'in-net s':>9} {'ring s':>8} {'ring/in-net':>11} | "
             f"{'cpu s: in-net wkr/sw':>20} {'ring wkr/sw':>11} | "
             f"{'in-net B/link':>13} {'ring B/link':>12} {'ring/in-net':>11} | agree"]
    for r in rows:
        b = r["ring"]
        for method in ("in-network", "in-network-python"):
            if method not in r:
                continue
            a = r[method]
            lines.append(
                f"{r['size']:>8} {a.get('worker') or '':>6} | {a['seconds']:>9.3f} "
                f"{b['seconds']:>8.3f} {b['seconds'] / a['seconds']:>10.2f}x | "
                f"{a['worker_cpu_seconds']:>12.2f}/{a['switch_cpu_seconds']:<7.2f} "
                f"{b['worker_cpu_seconds']:>5.2f}/{b['switch_cpu_seconds']:<5.2f} | "
                f"{a['tx_bytes']:>13.0f} {b['tx_bytes']:>12.0f} "
                f"{b['tx_bytes'] / a['tx_bytes']:>10.2f}x | {a['agree'] and b['agree']}")
    return "\n".join(lines)
