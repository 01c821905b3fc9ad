"""``netweft bench allreduce``: in-network aggregation against ring all-reduce.

For 4 and 8 workers (``--workers 16`` too), on one switch and on a leaf-spine
(two leaves, two spines), and for buffer sizes from 64 KiB to 64 MiB, it
measures in virtual time (:mod:`netweft.testbed.experiments.allreduce_fabric`):

- **in-network**: every worker runs the host library's worker core against the
  embedded switch running ``p4/aggregation.p4`` (the real P4 program, packet
  by packet, ``--lanes`` 32-bit lanes per packet: ``-D AGG_LANES``), links of
  ``--rate-gbps`` with ``--link-delay-us`` each; on the leaf-spine both on one
  switch (spine1; the leaves route) and **hierarchically** (each leaf sums its
  hosts, spine1 the leaves' partial sums);
- **ring**: ring all-reduce over netweft's transport (the C engines) in the
  transport's simulation, with the same link rate and path delays.

It prints, per point, the completion time (slowest worker) and the bytes each
host link carries (frames, each direction), and the ratios ring / in-network
side by side; it writes JSON, CSV and a plot. The embedded switch is Python:
a 64 MiB in-network all-reduce of 8 workers is about 2 million packets through
it (many minutes of wall time), so in-network points above ``--switch-max``
(default 4 MiB) are *projected*: bytes from the packet rule the measured
points obey exactly ((blocks + window) frames of 314 bytes per direction), time
from a straight-line fit of the measured times against size (the pipeline is
full, so time grows linearly). The table marks them ``fit``; ``--full`` runs
every point on the switch.

``--jobs J`` adds several concurrent jobs: the workers split into ``J`` jobs on
one switch at once, each admitted into its own slot range
(:func:`~netweft.testbed.experiments.allreduce_fabric.run_shared_switch`).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from netweft.testbed.arg_types import float_in, int_in, message_size
from netweft.transport.collectives.aggregation.layer import AGG_LANES, packet_len

KIB, MIB = 1 << 10, 1 << 20
DEFAULT_SIZES = (64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB)
METHODS = ("switch", "hierarchical")  # in-network on one switch, level by level
FRAME = 14 + 20 + 8 + packet_len(AGG_LANES)  # a 64-lane aggregation frame: 314 bytes


def size_name(size: int) -> str:
    return f"{size // MIB}M" if size >= MIB else f"{size // KIB}K"


def frame_bytes(lanes: int = AGG_LANES) -> int:
    """Bytes of one aggregation frame of ``lanes`` lanes (``FRAME`` for 64)."""
    return 14 + 20 + 8 + packet_len(lanes)


def in_network_frames(nbytes: int, window: int, lanes: int = AGG_LANES) -> int:
    """Frames each host sends (and receives) for one clean in-network all-reduce."""
    blocks = -(-max(1, nbytes // 4) // lanes)
    return blocks + window  # every slot of the window sends its exponent-only round


def _measure(spec, sizes: list[int], switch_max: int, seed: int, verbose: bool
             ) -> tuple[dict, np.ndarray | None]:
    """In-network runs of ``spec`` at the sizes up to ``switch_max``, and a straight-line
    fit of their times (None with fewer than two)."""
    from netweft.testbed.experiments.allreduce_fabric import run_in_network

    measured = {}
    for size in sizes:
        if size <= switch_max:
            t0 = time.monotonic()
            run = run_in_network(spec, size, seed=seed)
            if not run.correct:
                raise AssertionError(f"in-network result outside the bound: {run}")
            measured[size] = run
            if verbose:
                print(f"  {run.method} {spec.topology} n={spec.workers} {size_name(size)}: "
                      f"{run.seconds * 1e3:.3f} ms virtual "
                      f"({time.monotonic() - t0:.0f} s wall)", flush=True)
    xs = np.array(sorted(measured), dtype=float)
    ys = np.array([measured[int(x)].seconds for x in xs])
    return measured, (np.polyfit(xs, ys, 1) if len(xs) >= 2 else None)


def run_bench(workers: list[int], topologies: list[str], sizes: list[int], *, switch_max: int,
              rate_gbps: float, link_delay_us: float, window: int, seed: int,
              lanes: int = AGG_LANES, methods: tuple[str, ...] = METHODS,
              verbose: bool = False) -> list[dict]:
    """Measure every point; returns one row per (topology, workers, size). On the
    leaf-spine, ``methods`` says which in-network variants run: on one switch
    (``in_network_*`` fields) and level by level (``hierarchical_*``)."""
    from netweft.testbed.experiments.allreduce_fabric import FabricSpec, run_ring

    frame = frame_bytes(lanes)
    rows = []
    for topology in topologies:
        for n in workers:
            spec = FabricSpec(workers=n, topology=topology, rate_bps=rate_gbps * 1e9,
                              link_delay_ns=int(link_delay_us * 1000), window=window,
                              lanes=lanes)
            single = topology == "star" or "switch" in methods
            measured, fit = _measure(spec, sizes, switch_max, seed, verbose) if single \
                else ({}, None)
            hier, hier_fit = {}, None
            if topology == "leaf-spine" and "hierarchical" in methods:
                hspec = FabricSpec(**{**spec.__dict__, "hierarchical": True})
                hier, hier_fit = _measure(hspec, sizes, switch_max, seed, verbose)
            for size in sizes:
                t0 = time.monotonic()
                ring = run_ring(spec, size, seed=seed)
                if not ring.correct:
                    raise AssertionError(f"ring result wrong: {ring}")
                if verbose:
                    print(f"  ring {topology} n={n} {size_name(size)}: "
                          f"{ring.seconds * 1e3:.3f} ms virtual "
                          f"({time.monotonic() - t0:.0f} s wall)", flush=True)
                row = {"topology": topology, "workers": n, "size": size, "lanes": lanes,
                       "ring_ms": ring.seconds * 1e3, "ring_tx_bytes": ring.tx_bytes_per_host,
                       "ring_rx_bytes": ring.rx_bytes_per_host,
                       "ideal_bytes_ratio": 2 * (n - 1) / n}
                for prefix, runs, line in (("in_network", measured, fit),
                                           ("hierarchical", hier, hier_fit)):
                    if prefix == "in_network" and not single:
                        continue
                    if prefix == "hierarchical" and topology != "leaf-spine":
                        continue
                    if prefix == "hierarchical" and "hierarchical" not in methods:
                        continue
                    run = runs.get(size)
                    if run is not None:
                        inn_s, inn_tx, inn_rx, source = run.seconds, run.tx_bytes_per_host, \
                            run.rx_bytes_per_host, "switch"
                    elif line is not None:
                        inn_s = float(np.polyval(line, size))
                        inn_tx = inn_rx = float(in_network_frames(size, window, lanes) * frame)
                        source = "fit"
                    else:
                        raise ValueError("projecting in-network points needs two measured "
                                         "sizes at or below --switch-max")
                    row.update({
                        f"{prefix}_ms": inn_s * 1e3, f"{prefix}_source": source,
                        f"{prefix}_tx_bytes": inn_tx, f"{prefix}_rx_bytes": inn_rx,
                        f"{prefix}_speedup": ring.seconds / inn_s,
                        f"{prefix}_bytes_ratio": ring.tx_bytes_per_host / inn_tx,
                        f"{prefix}_max_uplink_bytes": run.max_switch_link_bytes if run else None,
                        f"{prefix}_switch_events": asdict(run)["switch_events"] if run else {},
                    })
                if "in_network_ms" in row:  # the fields the table and plot read first
                    row["speedup"] = row["in_network_speedup"]
                    row["bytes_ratio"] = row["in_network_bytes_ratio"]
                rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    """One line per point and in-network variant (``switch``: one switch aggregates;
    ``hier``: level by level)."""
    lines = [f"{'topology':<10} {'n':>2} {'size':>5} {'method':>6} | {'in-net ms':>10} "
             f"{'':>6} {'ring ms':>9} {'ring/in-net':>11} | {'in-net B/link':>13} "
             f"{'ring B/link':>12} {'ring/in-net':>11} {'2(n-1)/n':>8}"]
    for r in rows:
        for prefix, method in (("in_network", "switch"), ("hierarchical", "hier")):
            if f"{prefix}_ms" not in r:
                continue
            lines.append(
                f"{r['topology']:<10} {r['workers']:>2} {size_name(r['size']):>5} "
                f"{method:>6} | {r[f'{prefix}_ms']:>10.3f} {r[f'{prefix}_source']:>6} "
                f"{r['ring_ms']:>9.3f} {r[f'{prefix}_speedup']:>10.2f}x | "
                f"{r[f'{prefix}_tx_bytes']:>13.0f} {r['ring_tx_bytes']:>12.0f} "
                f"{r[f'{prefix}_bytes_ratio']:>10.2f}x {r['ideal_bytes_ratio']:>8.2f}")
    return "\n".join(lines)


def run_jobs_bench(jobs: int, workers: int, size: int, *, rate_gbps: float,
                   link_delay_us: float, window: int, seed: int, lanes: int) -> list[dict]:
    """``jobs`` concurrent jobs of ``workers // jobs`` workers each on one switch (star),
    against one of them alone: per-job completion time and how each job ran."""
    from netweft.testbed.experiments.allreduce_fabric import FabricSpec, run_shared_switch

    per = workers // jobs
    spec = FabricSpec(workers=per * jobs, topology="star", rate_bps=rate_gbps * 1e9,
                      link_delay_ns=int(link_delay_us * 1000), window=window, lanes=lanes)
    groups = [list(range(j * per, (j + 1) * per)) for j in range(jobs)]
    alone = run_shared_switch(spec, groups[:1], size, seed=seed)[0]
    together = run_shared_switch(spec, groups, size, seed=seed)
    return [{"job": r.job_id, "workers": per, "size": size, "base": r.base,
             "method": r.method, "ms": r.seconds * 1e3, "alone_ms": alone.seconds * 1e3,
             "correct": r.correct} for r in together]


TESTBED_SIZES = (64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB)
# --testbed's packets and window: 1024 lanes (4154-byte frames: the testbed's links have a
# 9000-byte MTU) and 64 slots, whose burst of results fits the switch's default 64-packet
# port queue. On a shared 2-core machine the emulated job is bound by CPU, most of it spent
# per packet (the kernel's UDP, veth and AF_PACKET paths, the switch process's loop), so
# the widest packets cost least per byte: ring time / in-network time was 0.56-1.67x at
# 256 lanes and 0.79-2.07x at 1024, median 0.78-1.17x and 1.18-1.48x by size
# (docs/collectives.md, 4 December). A switch process's
# first start at 1024 lanes compiles its C once (36 s of gcc), cached afterwards.
TESTBED_LANES, TESTBED_WINDOW = 1024, 64


EMULATED_METHODS = ("in-network", "in-network-python", "ring")
_MEDIANS = ("seconds", "worker_cpu_seconds", "switch_cpu_seconds", "retransmits", "tx_bytes",
            "rx_bytes")


def median_rows(runs: list[dict]) -> list[dict]:
    """One row per size from the emulated runs (several per size with ``--repeat``): per
    method the median of each figure and every run's seconds; ``agree`` only if every
    run's workers agreed. A shared machine's load comes and goes between runs; the
    median of runs that alternate the methods compares them under the same load."""
    by_size: dict[int, list[dict]] = {}
    for run in runs:
        by_size.setdefault(run["size"], []).append(run)
    rows = []
    for size, same in by_size.items():
        row: dict = {"size": size, "runs": len(same)}
        for method in EMULATED_METHODS:
            if method not in same[0]:
                continue
            per = [r[method] for r in same]
            row[method] = {k: float(np.median([p[k] for p in per])) for k in _MEDIANS}
            row[method].update(agree=all(p["agree"] for p in per), worker=per[0].get("worker"),
                               runs_seconds=[p["seconds"] for p in per])
        row["speedup"] = row["ring"]["seconds"] / row["in-network"]["seconds"]
        row["bytes_ratio"] = row["ring"]["tx_bytes"] / row["in-network"]["tx_bytes"]
        if "in-network-python" in row:
            row["python_speedup"] = row["ring"]["seconds"] / row["in-network-python"]["seconds"]
        rows.append(row)
    return rows


def _run_testbed(args: argparse.Namespace) -> int:
    import os

    from netweft.testbed.command_line import CommandError
    from netweft.testbed.experiments.allreduce_testbed import (
        format_emulated,
        run_emulated_allreduce,
    )

    if os.geteuid() != 0:
        raise CommandError("--testbed builds network namespaces and needs root; run it as "
                           "root or leave --testbed out for the virtual-time fabric")
    if args.topology and args.topology != ["star"]:
        raise CommandError("--testbed runs one switch only (--topology star); the leaf-spine "
                           "points come from the virtual-time fabric")
    sizes = sorted(set(args.size or TESTBED_SIZES))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    rate = None if args.rate_mbit == 0 else args.rate_mbit
    lanes = args.lanes or TESTBED_LANES
    window = args.window or TESTBED_WINDOW
    setting = (f"links {rate:g} Mbit/s" if rate else "links at veth speed") + \
        f", K={lanes} lanes, window {window}, switch back end " \
        f"{args.backend or os.environ.get('NETWEFT_SWITCH_BACKEND') or 'default'}"
    if args.repeat > 1:
        setting += f", median of {args.repeat} runs"
    for n in sorted(set(args.workers or (4,))):
        runs = run_emulated_allreduce(n, [s for s in sizes for _ in range(args.repeat)],
                                      log=lambda m: print(f"  {m}", flush=True)
                                      if args.verbose else None, out_dir=out / f"testbed-{n}",
                                      rate_mbit=rate, backend=args.backend, lanes=lanes,
                                      window=window, python_worker=args.python_worker)
        rows = median_rows(runs)
        print(format_emulated(rows, n, setting))
        if args.repeat > 1:
            for r in rows:
                print(f"  {size_name(r['size'])}: seconds per run " + "; ".join(
                    f"{m} {' '.join(f'{t:.3f}' for t in r[m]['runs_seconds'])}"
                    for m in EMULATED_METHODS if m in r))
        results[n] = {"rows": rows, "runs": runs}
    print("times: real clocks on a shared machine (cpu s: the slowest worker's CPU seconds "
          "and the switch process's, per phase); B/link: the hosts' eth0 counters, what "
          "hardware would carry")
    (out / "allreduce_testbed.json").write_text(json.dumps(results, indent=1))
    print(f"wrote {out / 'allreduce_testbed.json'}")
    return 0


def run_allreduce_bench(args: argparse.Namespace) -> int:
    if args.testbed:
        return _run_testbed(args)
    sizes = sorted(set(args.size or DEFAULT_SIZES))
    workers = sorted(set(args.workers or (4, 8)))
    topologies = args.topology or ["star", "leaf-spine"]
    switch_max = max(sizes) if args.full else args.switch_max
    if not args.full and sum(s <= switch_max for s in sizes) < 2 and max(sizes) > switch_max:
        from netweft.testbed.command_line import CommandError

        raise CommandError("sizes above --switch-max are projected from at least two sizes "
                           "measured on the switch: add sizes at or below it, raise "
                           "--switch-max, or use --full")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wall0 = time.monotonic()
    methods = tuple(args.method or METHODS)
    args.lanes = args.lanes or AGG_LANES
    args.window = args.window or 32
    print(f"netweft bench allreduce: virtual time; links {args.rate_gbps:g} Gbit/s, "
          f"{args.link_delay_us:g} us each; in-network = p4/aggregation.p4 on the embedded "
          f"switch, K={args.lanes} lanes, window {args.window} slots; ring = netweft's "
          f"transport (C engines) in its simulator, MTU 9000", flush=True)
    rows = run_bench(workers, topologies, sizes, switch_max=switch_max,
                     rate_gbps=args.rate_gbps, link_delay_us=args.link_delay_us,
                     window=args.window, seed=args.seed, lanes=args.lanes, methods=methods,
                     verbose=args.verbose)
    print(format_table(rows))
    print("B/link: bytes each host link carries per direction (frames, mean over workers); "
          "'fit': in-network point projected from the measured sizes (see --full); switch: "
          "one switch aggregates (spine1 on the leaf-spine), hier: leaves, then spine1")
    for prefix, what in (("in_network", "the job aggregates on spine1 only"),
                         ("hierarchical", "one partial sum per leaf")):
        for r in rows:
            if r["topology"] == "leaf-spine" and r.get(f"{prefix}_max_uplink_bytes"):
                print(f"leaf-spine n={r['workers']} {size_name(r['size'])} {prefix}: the "
                      f"busiest leaf-spine link carries "
                      f"{r[f'{prefix}_max_uplink_bytes'] / r[f'{prefix}_tx_bytes']:.1f}x a "
                      f"host link's bytes ({what})")
                break
    for topology in topologies:
        for n in workers:
            pts = [r for r in rows if r["topology"] == topology and r["workers"] == n]
            big = pts[-1]
            for prefix in ("in_network", "hierarchical"):
                if f"{prefix}_ms" not in big:
                    continue
                label = "" if prefix == "in_network" else " hierarchical"
                print(f"{topology} n={n}{label}: ring/in-network time "
                      f"{min(p[f'{prefix}_speedup'] for p in pts):.2f}x.."
                      f"{max(p[f'{prefix}_speedup'] for p in pts):.2f}x, bytes per host link "
                      f"{big[f'{prefix}_bytes_ratio']:.2f}x at {size_name(big['size'])} "
                      f"(2(n-1)/n = {big['ideal_bytes_ratio']:.2f} before headers)")
    jobs_rows = []
    if args.jobs:
        jobs_rows = run_jobs_bench(args.jobs, max(workers), max(s for s in sizes
                                                                if s <= switch_max),
                                   rate_gbps=args.rate_gbps, link_delay_us=args.link_delay_us,
                                   window=args.window, seed=args.seed, lanes=args.lanes)
        print(f"{args.jobs} concurrent jobs on one switch:")
        for j in jobs_rows:
            print(f"  job {j['job']}: {j['workers']} workers, {size_name(j['size'])}, slots "
                  f"from {j['base']}, {j['method']}: {j['ms']:.3f} ms (alone "
                  f"{j['alone_ms']:.3f} ms), correct {j['correct']}")
    settings = {"rate_gbps": args.rate_gbps, "link_delay_us": args.link_delay_us,
                "window": args.window, "lanes": args.lanes, "seed": args.seed,
                "switch_max": switch_max, "methods": list(methods)}
    (out / "allreduce.json").write_text(json.dumps(
        {"settings": settings, "rows": rows, "jobs": jobs_rows}, indent=1))
    with open(out / "allreduce.csv", "w", newline="") as fh:
        fields = list(dict.fromkeys(k for r in rows for k in r
                                    if not k.endswith("switch_events")))
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: r.get(k) for k in fields})
    from netweft.testbed.plots import plot_allreduce

    png = plot_allreduce(rows, out / "allreduce.png")
    print(f"wrote {out / 'allreduce.json'}, {out / 'allreduce.csv'}, {png} "
          f"({time.monotonic() - wall0:.0f} s)")
    return 0


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench allreduce``."""
    p = benches.add_parser("allreduce",
                           help="in-network aggregation vs ring all-reduce: time and bytes "
                                "per host link")
    p.add_argument("--workers", type=int_in(2, 32), action="append",
                   help="workers (repeatable; default 4 and 8)")
    p.add_argument("--topology", choices=("star", "leaf-spine"), action="append",
                   help="one switch or a leaf-spine (repeatable; default both)")
    p.add_argument("--size", type=message_size, action="append",
                   help="buffer size per worker, e.g. 64k, 16m (repeatable; default "
                        "64k 256k 1m 4m 16m 64m)")
    p.add_argument("--switch-max", type=message_size, default=4 * MIB,
                   help="largest size run on the embedded switch; larger in-network points "
                        "are projected (default 4m)")
    p.add_argument("--full", action="store_true",
                   help="run every in-network point on the switch (an hour or more at 64m)")
    p.add_argument("--rate-gbps", type=float_in(0.1, 400.0), default=10.0,
                   help="every link's rate (default 10)")
    p.add_argument("--link-delay-us", type=float_in(0.0, 10_000.0), default=1.0,
                   help="every link's one-way delay (default 1)")
    p.add_argument("--window", type=int_in(1, 1024),
                   help="aggregation slots per job (default 32; --testbed 64)")
    p.add_argument("--lanes", type=int_in(64, 1024),
                   help="32-bit lanes per aggregation packet: the program compiled with "
                        "-D AGG_LANES=N (a multiple of 32; default 64, Tofino-sized; "
                        "--testbed 1024)")
    p.add_argument("--method", choices=METHODS, action="append",
                   help="in-network variants on the leaf-spine: one switch, hierarchical "
                        "(repeatable; default both)")
    p.add_argument("--jobs", type=int_in(2, 16),
                   help="also run this many concurrent jobs on one switch (the largest "
                        "--workers split between them, the largest measured size)")
    p.add_argument("--seed", type=int_in(0), default=1)
    p.add_argument("--out", default="allreduce-results",
                   help="directory for the JSON, CSV and plot (default allreduce-results)")
    p.add_argument("--verbose", action="store_true", help="print progress")
    p.add_argument("--testbed", action="store_true",
                   help="measure on hosts in network namespaces and a switch process instead "
                        "(root; one switch, default 4 workers, 64k 256k 1m 4m)")
    p.add_argument("--rate-mbit", type=float_in(0.0, 100_000.0), default=1000.0,
                   help="--testbed: the host links' rate, emulated by the switch (default "
                        "1000; 0: veth speed)")
    p.add_argument("--repeat", type=int_in(1, 100), default=1,
                   help="--testbed: run every size this many times (the methods alternate) "
                        "and report medians (default 1)")
    p.add_argument("--python-worker", action="store_true",
                   help="--testbed: also run the in-network all-reduce on the Python worker "
                        "(the reference; the default worker is the C one), beside the others")
    p.add_argument("--backend", choices=("auto", "c", "python"),
                   help="--testbed: the switch process's back end (default "
                        "$NETWEFT_SWITCH_BACKEND or auto)")
    p.set_defaults(func=run_allreduce_bench)
