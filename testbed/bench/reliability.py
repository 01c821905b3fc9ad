"""``netweft bench reliability``: message completion time under SR, coding and adaptive.

In the deterministic simulator (two C engines, seeded loss on every datagram
in both directions, a link of ``--rate-gbps`` with a one-way delay of RTT/2),
one endpoint RMA-writes ``--messages`` messages one after another (each posted
when the previous one completed) with each reliability: selective repeat
(``sr``), a fixed code (``--code``, default ec:16,4) and ``adaptive``. Every
message's completion time (post to completion, virtual time) is recorded;
the tool prints p50, p99 and p99.9 per point, the speed-up of coding and
adaptive over SR, and how close adaptive comes to the better fixed choice, and
writes the raw numbers (JSON), a CSV table and a plot of the speed-ups.

The default grid runs in a few minutes on a loaded 2-core host; ``--full``
runs drop rates 1e-4..1e-1, RTTs 10 us..10 ms (3.5 ms: about 350 km) and sizes
64 KiB..64 MiB (hours: the simulator is packet by packet). Percentiles come
from the messages of a point: with fewer than 1000 messages p99.9 is close to
the maximum, and the table says how many there were.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from netweft.testbed.arg_types import float_in, int_in, message_size
from netweft.transport import Impairments, Link, Simulation
from netweft.transport.reliability_policy import parse_reliability

KIB, MIB = 1 << 10, 1 << 20
DEFAULT_GRID = {"drops": (1e-3, 1e-2, 1e-1), "rtts_us": (10.0, 3500.0),
                "sizes": (64 * KIB, 1 * MIB)}
FULL_GRID = {"drops": (1e-4, 1e-3, 1e-2, 1e-1), "rtts_us": (10.0, 100.0, 1000.0, 3500.0, 10000.0),
             "sizes": (64 * KIB, 1 * MIB, 16 * MIB, 64 * MIB)}
MTU = 8972          # UDP payload bytes per packet (a 9000-byte IP MTU)
WINDOW = 4096       # the engine's largest window: a 10 ms path at 25 Gbit/s needs ~3500
PACKET_BUDGET = 60_000  # packets per point and policy in the default grid


@dataclass
class PointResult:
    """One (drop, RTT, size, reliability) point: completion times in seconds."""

    drop: float
    rtt_us: float
    size: int
    reliability: str
    times_s: list[float]
    codes: dict[str, int]
    retransmits: int
    recovered: int

    def pct(self, q: float) -> float:
        return float(np.percentile(self.times_s, q))

    @property
    def mean(self) -> float:
        return float(np.mean(self.times_s))


def messages_for(size: int, requested: int | None, budget: int) -> int:
    """Messages per point: as asked, else what fits the packet budget (10..1000)."""
    if requested:
        return requested
    pkts = math.ceil(size / (MTU - 72))
    return max(10, min(1000, budget // pkts))


def run_point(drop: float, rtt_us: float, size: int, reliability: str, messages: int, *,
              rate_gbps: float, seed: int) -> PointResult:
    """Write ``messages`` messages of ``size`` bytes one after another; time each."""
    sim = Simulation(seed=seed, impairments=Impairments(loss=drop),
                     link=Link(rate_bps=rate_gbps * 1e9, delay_ns=int(rtt_us * 500),
                               queue_pkts=2 * WINDOW),
                     mtu=MTU, window_pkts=WINDOW)
    a, b = sim.endpoint(), sim.endpoint()
    data = np.frombuffer(np.random.default_rng(seed).bytes(size), np.uint8).copy()
    src = a.register(data)
    dst_buf = np.zeros(size, dtype=np.uint8)
    dst = b.register(dst_buf)
    peer = a.connect(b.address)
    peer.set_reliability(reliability)
    times, codes = [], {}
    for _ in range(messages):
        start = sim.now
        wr = peer.write(src, dst.remote())
        a.cq.wait_for(wr, timeout=120).check()
        times.append(sim.now - start)
        code = "sr" if peer.code == (0, 0) else f"ec:{peer.code[0]},{peer.code[1]}"
        codes[code] = codes.get(code, 0) + 1
    if not np.array_equal(dst_buf, data):
        raise AssertionError(f"bytes differ at drop={drop} rtt={rtt_us}us size={size}")
    return PointResult(drop, rtt_us, size, reliability, times, codes,
                       a.stats()["retransmits"], b.stats()["ec_pkts_recovered"])


def _size_name(size: int) -> str:
    return f"{size // MIB}M" if size >= MIB else f"{size // KIB}K"


def summarise(results: list[PointResult], fixed: str) -> list[dict]:
    """One row per grid point: percentiles per reliability, speed-ups, adaptive's gap."""
    by: dict[tuple, dict[str, PointResult]] = {}
    for r in results:
        by.setdefault((r.drop, r.rtt_us, r.size), {})[r.reliability] = r
    rows = []
    for (drop, rtt, size), rs in by.items():
        sr, ec, ad = rs["sr"], rs[fixed], rs["adaptive"]
        row = {"drop": drop, "rtt_us": rtt, "size": size, "messages": len(sr.times_s)}
        for name, r in (("sr", sr), ("ec", ec), ("adaptive", ad)):
            for q in (50, 99, 99.9):
                row[f"{name}_p{q:g}_ms"] = r.pct(q) * 1e3
            row[f"{name}_mean_ms"] = r.mean * 1e3
        for stat in ("mean", "p50", "p99", "p99.9"):
            s, e, a = (row[f"{n}_{stat}_ms"] for n in ("sr", "ec", "adaptive"))
            row[f"ec_speedup_{stat}"] = s / e
            row[f"adaptive_speedup_{stat}"] = s / a
            row[f"adaptive_vs_best_{stat}"] = a / min(s, e)  # 1.0 = as good as the better one
        row["adaptive_codes"] = ad.codes
        rows.append(row)
    return rows


def format_table(rows: list[dict], fixed: str) -> str:
    lines = [f"{'drop':>7} {'RTT':>7} {'size':>5} {'n':>5} | "
             f"{'SR p50/p99/p99.9 ms':>24} | {fixed + ' p50/p99/p99.9':>24} | "
             f"{'adaptive p50/p99/p99.9':>24} | {'EC x':>5} {'AD x':>5} {'AD/best':>7}"]
    def trio(r: dict, n: str) -> str:
        return "/".join(f"{r[f'{n}_p{q}_ms']:.3g}" for q in ("50", "99", "99.9"))

    for r in rows:
        lines.append(f"{r['drop']:>7.0e} {r['rtt_us']:>5.0f}us {_size_name(r['size']):>5} "
                     f"{r['messages']:>5} | {trio(r, 'sr'):>24} | {trio(r, 'ec'):>24} | "
                     f"{trio(r, 'adaptive'):>24} | {r['ec_speedup_mean']:>5.2f} "
                     f"{r['adaptive_speedup_mean']:>5.2f} {r['adaptive_vs_best_mean']:>7.2f}")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path, fixed: str) -> Path:
    """Speed-up over SR (mean and p99) against drop rate, one panel per (RTT, size)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["rtt_us"], r["size"]) for r in rows})
    cols = min(4, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.0 * nrows), dpi=100,
                             squeeze=False)
    for ax, (rtt, size) in zip(axes.flat, panels, strict=False):
        pts = sorted((r for r in rows if (r["rtt_us"], r["size"]) == (rtt, size)),
                     key=lambda r: r["drop"])
        drops = [r["drop"] for r in pts]
        for key, label, style in (("ec_speedup_mean", f"{fixed} mean", "-o"),
                                  ("ec_speedup_p99", f"{fixed} p99", "--o"),
                                  ("adaptive_speedup_mean", "adaptive mean", "-s"),
                                  ("adaptive_speedup_p99", "adaptive p99", "--s")):
            ax.plot(drops, [r[key] for r in pts], style, label=label, markersize=3)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"RTT {rtt:g} us, {_size_name(size)}B", fontsize=9)
        ax.set_xlabel("drop rate", fontsize=8)
        ax.set_ylabel("speed-up over SR", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


TESTBED_GRID = {"drops": (1e-2, 1e-1), "rtts_us": (3500.0,), "sizes": (64 * KIB,)}


def run_testbed_points(args: argparse.Namespace, drops, rtts, sizes, fixed: str
                       ) -> list[PointResult]:
    """The same measurement on two hosts and a switch in namespaces (needs root)."""
    from netweft.testbed.experiments.reliability_testbed import run_testbed_point

    results = []
    for size in sizes:
        for rtt in rtts:
            for drop in drops:
                n = args.messages or 40
                got = run_testbed_point(drop, rtt, size, n, ["sr", fixed, "adaptive"])
                for rel in ("sr", fixed, "adaptive"):
                    results.append(PointResult(drop, rtt, size, rel, got[rel]["times_s"], {},
                                               0, 0))
                if args.verbose:
                    print(f"  testbed drop={drop:g} rtt={rtt:g}us size={size}: measured "
                          f"srtt {got['sr']['srtt_ns'] / 1e3:.0f} us", flush=True)
    return results


def run_reliability_bench(args: argparse.Namespace) -> int:
    if args.testbed:
        return _run_testbed(args)
    grid = FULL_GRID if args.full else DEFAULT_GRID
    drops = args.drop or grid["drops"]
    rtts = args.rtt_us or grid["rtts_us"]
    sizes = args.size or grid["sizes"]
    fixed = str(args.code)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    budget = PACKET_BUDGET * (4 if args.full else 1)
    results: list[PointResult] = []
    wall0 = time.monotonic()
    print(f"netweft bench reliability: simulator, {args.rate_gbps:g} Gbit/s, MTU {MTU + 28}, "
          f"window {WINDOW}, loss on every datagram both ways, messages written one after "
          f"another; coding = {fixed}", flush=True)
    for size in sizes:
        n = messages_for(size, args.messages, budget)
        for rtt in rtts:
            for drop in drops:
                for rel in ("sr", fixed, "adaptive"):  # one seed: the same loss draws
                    results.append(run_point(drop, rtt, size, rel, n, rate_gbps=args.rate_gbps,
                                             seed=args.seed))
                if args.verbose:
                    print(f"  done drop={drop:g} rtt={rtt:g}us size={size} "
                          f"({time.monotonic() - wall0:.0f} s)", flush=True)
    rows = summarise(results, fixed)
    rows.sort(key=lambda r: (r["size"], r["rtt_us"], r["drop"]))
    print(format_table(rows, fixed))
    worst = max(rows, key=lambda r: r["adaptive_vs_best_mean"])
    within = sum(r["adaptive_vs_best_mean"] <= 1.10 for r in rows)
    print(f"adaptive within 10% of the better fixed choice (mean) at {within} of {len(rows)} "
          f"points; worst {worst['adaptive_vs_best_mean']:.2f}x at drop={worst['drop']:g} "
          f"RTT={worst['rtt_us']:g}us size={_size_name(worst['size'])}")
    print("EC x / AD x: speed-up of the mean over SR; AD/best: adaptive's mean over the "
          f"better of SR and {fixed} (1.00 = as good)")
    (out / "reliability.json").write_text(json.dumps(
        {"settings": {"rate_gbps": args.rate_gbps, "mtu": MTU + 28, "window": WINDOW,
                      "code": fixed, "seed": args.seed},
         "rows": rows, "points": [asdict(r) for r in results]}, indent=1))
    with open(out / "reliability.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[k for k in rows[0] if k != "adaptive_codes"])
        writer.writeheader()
        for r in rows:
            writer.writerow({k: v for k, v in r.items() if k != "adaptive_codes"})
    png = plot(rows, out / "reliability_speedup.png", fixed)
    print(f"wrote {out / 'reliability.json'}, {out / 'reliability.csv'}, {png} "
          f"({time.monotonic() - wall0:.0f} s)")
    return 0


def _run_testbed(args: argparse.Namespace) -> int:
    import os

    from netweft.testbed.command_line import CommandError

    if os.geteuid() != 0:
        raise CommandError("--testbed builds network namespaces and needs root; run it as "
                           "root or leave --testbed out for the simulator")
    fixed = str(args.code)
    g = TESTBED_GRID
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"netweft bench reliability --testbed: h1 -- s1 -- h2 in namespaces, s1 = netweft's "
          f"switch process (basic_forward) delaying and dropping on the s1--h2 link, MTU "
          f"9000, real sockets and clocks; coding = {fixed}", flush=True)
    results = run_testbed_points(args, args.drop or g["drops"], args.rtt_us or g["rtts_us"],
                                 args.size or g["sizes"], fixed)
    rows = summarise(results, fixed)
    rows.sort(key=lambda r: (r["size"], r["rtt_us"], r["drop"]))
    print(format_table(rows, fixed))
    print("RTT is the link delay configured in the switch (both ways); the measured RTT "
          "adds the switch process and the hosts' scheduling")
    (out / "reliability_testbed.json").write_text(json.dumps(
        {"rows": rows, "points": [asdict(r) for r in results]}, indent=1))
    print(f"wrote {out / 'reliability_testbed.json'}")
    return 0


def _code(text: str) -> str:
    try:
        rel = parse_reliability(text)
    except Exception as exc:  # InvalidArgumentError: its message names the rule
        raise argparse.ArgumentTypeError(str(exc)) from None
    if rel.kind != "ec":
        raise argparse.ArgumentTypeError(f"--code must be ec:K,M, got {text!r}")
    return str(rel)


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench reliability``."""
    p = benches.add_parser("reliability",
                           help="completion time of SR, coding and adaptive in the simulator")
    p.add_argument("--full", action="store_true",
                   help="the whole grid: drops 1e-4..1e-1, RTT 10us..10ms, 64k..64m (hours)")
    p.add_argument("--drop", type=float_in(0.0, 0.5), action="append",
                   help="a drop rate (repeatable; replaces the grid's)")
    p.add_argument("--rtt-us", type=float_in(1.0, 100_000.0), action="append",
                   help="a round-trip time in microseconds (repeatable)")
    p.add_argument("--size", type=message_size, action="append",
                   help="a message size, e.g. 64k, 16m (repeatable)")
    p.add_argument("--messages", type=int_in(1, 100_000),
                   help="messages per point (default: 10..1000, by a packet budget)")
    p.add_argument("--code", type=_code, default="ec:16,4",
                   help="the fixed code compared with SR and adaptive (default ec:16,4)")
    p.add_argument("--rate-gbps", type=float_in(0.1, 400.0), default=25.0,
                   help="link rate (default 25)")
    p.add_argument("--seed", type=int_in(0), default=1)
    p.add_argument("--out", default="reliability-results",
                   help="directory for the JSON, CSV and plot (default reliability-results)")
    p.add_argument("--verbose", action="store_true", help="print progress")
    p.add_argument("--testbed", action="store_true",
                   help="measure on two hosts and a switch process in network namespaces "
                        "instead (root; default drops 1e-2 and 1e-1, 3.5 ms, 64k, 40 messages)")
    p.set_defaults(func=run_reliability_bench)
