"""The soak: the demo's fabric under the demo's traffic for a long time, memory sampled.

``python -m netweft.testbed.experiments.soak [--minutes 30]`` (or ``scripts/soak``) builds
the demo's leaf-spine (:func:`netweft.testbed.experiments.demo.fabric`: four switch
processes running basic_forward.p4), starts the demo's echo service and RMA
target on h2, and then keeps the demo's two kinds of traffic going: h3 sends a
datagram to the echo service every ``--ping-interval`` seconds and waits for it,
while one long-lived netweft endpoint on h1 RMA-writes ``--rma-bytes`` into h2
again and again, ``--pause`` seconds apart. Every ``--interval`` seconds it
samples the resident memory (VmRSS) of the four switch processes and of the
four host programs (echo, RMA target, RMA writer, pinger), prints a table row, and at the end writes every sample and the
verdict to ``soak.json`` in ``--out``.

The verdict: for each process, growth = its largest RSS after the warm-up minus
its RSS at the end of the warm-up (``--warmup`` seconds, default a tenth of the
run, at least 60 s); the soak fails (exit 1) if any growth exceeds
``--bound-mib``, if a process died, or if the traffic stopped making progress.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

from netweft.emulation.network import NetworkError
from netweft.testbed.experiments.demo import ECHO_PORT, HOSTS, LINK_MTU, fabric, route_via_switch

SOAK_HOSTS = [sys.executable, "-m", "netweft.testbed.experiments.soak_hosts"]
DEFAULT_BOUND_MIB = 16.0


def rss_kib(pid: int) -> int | None:
    """The resident set size of ``pid`` in KiB (None once it has exited)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class LineCounter:
    """Keeps the last JSON line of each process's output without blocking."""

    def __init__(self, procs: dict[str, subprocess.Popen]) -> None:
        self.last: dict[str, dict] = {name: {} for name in procs}
        self.sel = selectors.DefaultSelector()
        for name, proc in procs.items():
            os.set_blocking(proc.stdout.fileno(), False)
            self.sel.register(proc.stdout, selectors.EVENT_READ, name)

    def poll(self) -> None:
        for key, _ in self.sel.select(timeout=0):
            for line in (key.fileobj.read() or "").splitlines():
                try:
                    self.last[key.data] = json.loads(line)
                except ValueError:
                    continue


def growth_verdict(samples: list[dict], warmup_s: float, bound_mib: float) -> dict:
    """Per process: RSS at the end of the warm-up, largest after it, growth in MiB."""
    names = sorted({name for s in samples for name in s["rss_kib"]})
    after = [s for s in samples if s["t"] >= warmup_s]
    per: dict[str, dict] = {}
    for name in names:
        values = [s["rss_kib"].get(name) for s in after]
        if not values or any(v is None for v in values):
            per[name] = {"died": True}
            continue
        per[name] = {"rss_warm_mib": values[0] / 1024, "rss_max_mib": max(values) / 1024,
                     "rss_last_mib": values[-1] / 1024,
                     "growth_mib": (max(values) - values[0]) / 1024}
    ok = bool(per) and all(not p.get("died") and p["growth_mib"] <= bound_mib
                           for p in per.values())
    return {"bound_mib": bound_mib, "warmup_s": warmup_s, "processes": per, "ok": ok}


def run_soak(out_dir: Path, minutes: float = 30.0, interval: float = 5.0,
             warmup: float | None = None, bound_mib: float = DEFAULT_BOUND_MIB,
             rma_bytes: int = 8 << 20, pause: float = 1.0, ping_interval: float = 0.05,
             log=print) -> dict:
    """Run the soak; returns (and writes to ``out_dir/soak.json``) samples and verdict."""
    out_dir.mkdir(parents=True, exist_ok=True)
    duration = minutes * 60
    warmup_s = warmup if warmup is not None else max(60.0, duration / 10)
    net = fabric().build(out_dir, pcaps=False)
    samples: list[dict] = []
    with net:
        route_via_switch(net)
        h1, h2, h3 = net.host("h1"), net.host("h2"), net.host("h3")
        echo = h2.popen(*HOSTS, "echo", str(ECHO_PORT), stdout=subprocess.PIPE, text=True)
        if echo.stdout.readline().strip() != "ready":
            raise NetworkError("the echo service on h2 did not start")
        target = h2.popen(*HOSTS, "rma-target", h2.ip_address, str(rma_bytes),
                          str(LINK_MTU - 28), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True)
        port, rkey, size = target.stdout.readline().split()
        writer = h1.popen(*SOAK_HOSTS, "rma-writer-loop", h1.ip_address, h2.ip_address, port,
                          rkey, size, str(LINK_MTU - 28), str(pause),
                          stdout=subprocess.PIPE, text=True)
        pinger = h3.popen(*SOAK_HOSTS, "ping-loop", h2.ip_address, str(ECHO_PORT), "512",
                          str(ping_interval), stdout=subprocess.PIPE, text=True)
        progress = LineCounter({"writer": writer, "pinger": pinger})
        # ``ip netns exec`` execs the program, so each Popen's pid is the program's own
        watched = {f"switch {s.name}": s.process.pid for s in net.switches}
        watched.update({"echo h2": echo.pid, "rma-target h2": target.pid,
                        "rma-writer h1": writer.pid, "ping-loop h3": pinger.pid})
        log(f"soak: {minutes:g} min, a sample every {interval:g} s, warm-up {warmup_s:g} s, "
            f"bound {bound_mib:g} MiB growth per process")
        log(f"{'t s':>6} " + " ".join(f"{name:>14}" for name in watched)
            + f" {'writes':>7} {'echoed':>9}")
        start = time.monotonic()
        while True:
            t = time.monotonic() - start
            progress.poll()
            sample = {"t": round(t, 1), "rss_kib": {n: rss_kib(p) for n, p in watched.items()},
                      "writes": progress.last["writer"].get("writes", 0),
                      "write_failures": progress.last["writer"].get("failed", 0),
                      "pings_sent": progress.last["pinger"].get("sent", 0),
                      "pings_intact": progress.last["pinger"].get("intact", 0)}
            samples.append(sample)
            log(f"{t:>6.0f} " + " ".join(
                f"{(v / 1024 if v else 0):>10.1f} MiB" for v in sample["rss_kib"].values())
                + f" {sample['writes']:>7} {sample['pings_intact']:>4}/{sample['pings_sent']:<4}")
            if t >= duration or any(p.poll() is not None for p in (writer, pinger, echo, target)):
                break
            time.sleep(min(interval, max(0.0, duration - t)))
    verdict = growth_verdict(samples, warmup_s, bound_mib)
    last = samples[-1]
    verdict["traffic"] = {k: last[k] for k in ("writes", "write_failures", "pings_sent",
                                                "pings_intact")}
    progressed = last["writes"] > 0 and last["pings_intact"] > 0
    verdict["ok"] = verdict["ok"] and progressed and last["t"] >= duration
    results = {"minutes": minutes, "interval_s": interval, "rma_bytes": rma_bytes,
               "pause_s": pause, "ping_interval_s": ping_interval, "samples": samples,
               "verdict": verdict}
    (out_dir / "soak.json").write_text(json.dumps(results, indent=1))
    return results


def format_verdict(verdict: dict) -> str:
    lines = [f"{'process':<16} {'warm MiB':>9} {'max MiB':>8} {'growth MiB':>11}"]
    for name, p in verdict["processes"].items():
        if p.get("died"):
            lines.append(f"{name:<16} died")
            continue
        lines.append(f"{name:<16} {p['rss_warm_mib']:>9.1f} {p['rss_max_mib']:>8.1f} "
                     f"{p['growth_mib']:>11.2f}")
    tr = verdict["traffic"]
    lines.append(f"traffic: {tr['writes']} RMA writes ({tr['write_failures']} failed), "
                 f"{tr['pings_intact']}/{tr['pings_sent']} echoes intact")
    lines.append(f"verdict: {'within' if verdict['ok'] else 'NOT within'} the bound of "
                 f"{verdict['bound_mib']:g} MiB growth after {verdict['warmup_s']:g} s of warm-up"
                 + ("" if verdict["ok"] else " (or a process died / traffic stopped)"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m netweft.testbed.experiments.soak",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="duration (default 30)")
    parser.add_argument("--interval", type=float, default=5.0,
                        help="seconds between memory samples (default 5)")
    parser.add_argument("--warmup", type=float,
                        help="seconds of warm-up (default a tenth of the run, at least 60)")
    parser.add_argument("--bound-mib", type=float, default=DEFAULT_BOUND_MIB,
                        help=f"allowed RSS growth per process after the warm-up "
                             f"(default {DEFAULT_BOUND_MIB:g} MiB)")
    parser.add_argument("--rma-bytes", type=int, default=8 << 20,
                        help="bytes per RMA write (default 8 MiB, as the demo)")
    parser.add_argument("--pause", type=float, default=1.0,
                        help="seconds between RMA writes (default 1)")
    parser.add_argument("--ping-interval", type=float, default=0.05,
                        help="seconds between echo datagrams (default 0.05)")
    parser.add_argument("--out", type=Path, help="output folder (default results/soak-<time>)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("needs root for network namespaces; run it as root (sudo)")
    out_dir = args.out or Path("results") / time.strftime("soak-%Y%m%d-%H%M%S")

    def log(msg: str) -> None:
        print(msg, flush=True)

    try:
        results = run_soak(out_dir, args.minutes, args.interval, args.warmup, args.bound_mib,
                           args.rma_bytes, args.pause, args.ping_interval, log)
    except (NetworkError, OSError) as err:
        print(f"soak: error: {err}", file=sys.stderr)
        return 1
    print(format_verdict(results["verdict"]))
    print(f"samples and verdict in {out_dir}/soak.json")
    return 0 if results["verdict"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
