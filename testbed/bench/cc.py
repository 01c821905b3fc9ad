"""``netweft bench cc``: congestion-control schemes side by side in the simulator.

Scenarios (``--scenario``), each run once per scheme with the same seed:

- ``incast``: N senders (``-n``, default 8, 64 and 256) each write ``--size``
  (1 MiB) to one receiver at time 0; one switch up to 64 senders, a 2-tier
  leaf-spine of 32-host leaves beyond (288 hosts for 256, as UEC's htsim runs).
  UEC's htsim figures for the same scenarios are printed beside netweft's, and
  packets take htsim's sizes on the wire (a 4,150-byte data packet, 64-byte
  ACKs, NACKs and trimmed headers) so that the comparison is like for like;
  ``--wire-sizes netweft`` runs it with netweft's own frames (4,188 B data
  packets, 62-90 B control packets, 110 B trimmed headers). ``--seeds K`` runs
  each incast over K seeds and prints distributions (min/median/max across the
  seeds) beside htsim's own runs over seeds 1-20.
- ``permutation``: every host of a 32-host leaf-spine sends ``--size`` (4 MiB)
  to another host on another leaf (a seeded permutation), with uplinks chosen
  by spraying (entropy) and by flow hash, side by side.
- ``mixed``: long flows (``--size``) between leaf pairs plus short 64 KiB
  flows starting at random times in the first 200 us; slowdown of the short
  flows separately.

Fabric parameters are htsim's defaults (``netweft.testbed.experiments.cc_studies``);
permutation and mixed flows run with netweft's frames unless ``--wire-sizes htsim``. Each
scheme is a real C engine mode (``docs/congestion.md``); a scheme this build's
engine lacks is listed as not available. Runs that would take too long (a trim
storm without congestion control) stop at ``--budget`` seconds of wall time and
say so. Writes ``cc.json`` (every metric and per-flow completion time) and
plots (queue over time, FCT CDF, per-sender goodput) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from netweft.testbed.arg_types import float_in, int_in
from netweft.testbed.experiments.cc_studies import (
    MIB,
    SCHEMES,
    StudyResult,
    available_schemes,
    htsim_wire_sizes,
    incast_flows,
    incast_spec,
    mixed_flows,
    over_seeds,
    permutation_flows,
    run_flows,
    summarise,
)
from netweft.transport.sim.network import FabricSpec

KIB = 1 << 10

#: UEC's htsim model at commit 40ccb05 (team anchor ``uec-htsim.md``): incast, 1 MiB each.
HTSIM_ANCHOR: dict[tuple[int, str], dict[str, Any]] = {
    (8, "nscc"): {"fct": (633, 664, 702, 702), "retx": 136, "new": 2056, "max_queue_kb": 121},
    (8, "rccc"): {"fct": (668, 683, 687, 687), "retx": 106, "new": 2056, "max_queue_kb": 121},
    (64, "nscc"): {"fct": (5203, 5536, 5612, 5612), "retx": 29682, "new": 16448,
                   "max_queue_kb": 127},
    (64, "rccc"): {"fct": (5435, 5481, 5516, 5516), "retx": 961, "new": 16448,
                   "max_queue_kb": 127},
    (256, "nscc"): {"fct": (18790, 23853, 24602, 24621), "retx": 545495, "new": 65792,
                    "trim_drops": 3119, "goodput": 87.2},
    (256, "rccc"): {"fct": (21727, 21915, 22093, 22132), "retx": 8270, "new": 65792,
                    "trim_drops": 1352, "goodput": 97.0},
}
HTSIM_IDEAL_US = {8: 681.6, 64: 5452.9, 256: 21811.7}

#: The same model run here over seeds 1-20 (``docs/cc-studies.md``, "Over seeds"; htsim
#: built from 40ccb05 outside the repository): 1 MiB per sender, all at time 0, up to 64
#: senders on one ToR of 72 hosts (the topology with which its seed 13 gives the anchor's
#: rows: 8 -> 1 NSCC 136 retransmissions, 64 -> 1 mean 5,537 us), 256 on its 288-host
#: 2-tier fat tree. (min, median, max) over the seeds of each run's earliest, mean and
#: last completion time (us), their spread, Jain's index and retransmissions.
HTSIM_SEEDS: dict[tuple[int, str], dict[str, tuple[float, float, float]]] = {
    (8, "nscc"): {"earliest_us": (500, 581, 619), "mean_us": (630, 645, 660),
                  "last_us": (687, 696, 710), "spread_us": (84, 118, 187),
                  "jain": (0.989, 0.997, 0.999), "retransmits": (135, 140, 144)},
    (8, "rccc"): {"earliest_us": (668, 677, 679), "mean_us": (682, 683, 684),
                  "last_us": (686, 686, 687), "spread_us": (7, 10, 19),
                  "jain": (1.0, 1.0, 1.0), "retransmits": (106, 106, 107)},
    (64, "nscc"): {"earliest_us": (5127, 5294, 5380), "mean_us": (5520, 5529, 5546),
                   "last_us": (5611, 5616, 5623), "spread_us": (231, 318, 496),
                   "jain": (1.0, 1.0, 1.0), "retransmits": (29434, 29596, 29769)},
    (64, "rccc"): {"earliest_us": (5435, 5437, 5439), "mean_us": (5479, 5481, 5484),
                   "last_us": (5516, 5518, 5521), "spread_us": (78, 82, 84),
                   "jain": (1.0, 1.0, 1.0), "retransmits": (961, 966, 976)},
    (256, "nscc"): {"earliest_us": (15100, 18852, 21779), "mean_us": (23771, 23878, 23945),
                    "last_us": (24604, 24626, 24654), "spread_us": (2875, 5774, 9507),
                    "jain": (0.997, 0.999, 0.999),
                    "retransmits": (542070, 546126, 549093)},
    (256, "rccc"): {"earliest_us": (21724, 21740, 21741), "mean_us": (21913, 21915, 21918),
                    "last_us": (22129, 22133, 22136), "spread_us": (391, 395, 410),
                    "jain": (1.0, 1.0, 1.0), "retransmits": (8216, 8246, 8488)},
}
HTSIM_SEEDS_RUN = (1, 20)


def _schemes(text: str) -> list[str]:
    names = [s.strip().lower() for s in text.split(",") if s.strip()]
    bad = [s for s in names if s not in SCHEMES]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"unknown scheme {', '.join(bad) or text!r}; "
                                         f"choose from {', '.join(SCHEMES)}")
    return list(dict.fromkeys(names))


def _size(text: str) -> int:
    t = text.strip().lower()
    units = {"k": KIB, "m": MIB}
    try:
        value = int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 256k, 1m)") from None
    if not 1 <= value <= 64 * MIB:
        raise argparse.ArgumentTypeError(f"size must be 1 byte to 64m, got {text!r}")
    return value


# ---- scenarios ----------------------------------------------------------------------------

def wire_sizes(args: argparse.Namespace, scenario: str) -> str:
    """The packet sizes a scenario runs with: ``--wire-sizes``, else htsim's for the
    incast (compared with htsim's figures) and netweft's frames for the others."""
    return getattr(args, "wire_sizes", None) or ("htsim" if scenario == "incast" else "netweft")


def scenario_runs(args: argparse.Namespace) -> list[tuple[str, FabricSpec, list, dict]]:
    """(name, fabric, flows, extra) for each run the options ask for, per scheme."""
    runs = []
    quick = args.quick
    if args.scenario in ("incast", "all"):
        ns = args.n or ([8] if quick else [8, 64, 256])
        size = args.size or (256 * KIB if quick else MIB)
        sizes = wire_sizes(args, "incast")
        for n in ns:
            runs.append((f"incast {n}->1",
                         incast_spec(n, htsim_sizes=sizes == "htsim", seed=args.seed),
                         incast_flows(n, size),
                         {"n": n, "size": size, "wire_sizes": sizes}))
    if args.scenario in ("permutation", "all"):
        leaves, per_leaf = (2, 4) if quick else (4, 8)
        size = args.size or (128 * KIB if quick else 4 * MIB)
        flows = permutation_flows(leaves * per_leaf, size, args.seed, per_leaf)
        sizes = wire_sizes(args, "permutation")
        for routing in ("spray", "hash"):
            spec = FabricSpec.leaf_spine(leaves, per_leaf, routing=routing, seed=args.seed,
                                         **(htsim_wire_sizes() if sizes == "htsim" else {}))
            runs.append((f"permutation {leaves * per_leaf} hosts, {routing}",
                         spec, flows, {"routing": routing, "wire_sizes": sizes}))
    if args.scenario in ("mixed", "all"):
        leaves, per_leaf = (2, 4) if quick else (4, 8)
        hosts = leaves * per_leaf
        size = args.size or (256 * KIB if quick else 2 * MIB)
        flows = mixed_flows(hosts, size, 64 * KIB, 8 if quick else 64, args.seed, per_leaf,
                            200_000)
        sizes = wire_sizes(args, "mixed")
        spec = FabricSpec.leaf_spine(leaves, per_leaf, seed=args.seed,
                                     **(htsim_wire_sizes() if sizes == "htsim" else {}))
        runs.append((f"mixed {hosts} hosts", spec, flows,
                     {"mixed": True, "wire_sizes": sizes}))
    return runs


# ---- tables -------------------------------------------------------------------------------

def _htsim_n(extra: dict[str, Any]) -> int | None:
    """The incast's N when htsim's figures (1 MiB per sender) compare with the run's."""
    return extra.get("n") if extra.get("size") == MIB else None


def _fct(s: dict) -> str:
    return "/".join(f"{s[k]:,.0f}" if not math.isnan(s[k]) else "-"
                    for k in ("fct_min_us", "fct_mean_us", "fct_p99_us", "fct_max_us"))


def format_table(name: str, summaries: list[dict], missing: list[str], n: int | None) -> str:
    """One scenario: a row per scheme, and htsim's rows for the same incast."""
    head = (f"{'scheme':<11} {'done':>7} {'FCT min/mean/p99/max us':>29} {'slow p50/p99':>12} "
            f"{'retx (new)':>16} {'peakQ KB':>8} {'meanQ KB':>8} {'fabQ KB':>7} {'drops':>6} "
            f"{'trims':>6} "
            f"{'trimdrop':>8} {'util%':>6} {'Gbit/s':>6} {'Jain':>5}")
    lines = [f"== {name}", head]
    for s in summaries:
        lines.append(
            f"{s['scheme']:<11} {s['finished']:>3}/{s['flows']:<3} {_fct(s):>29} "
            f"{s['slowdown_p50']:>5.2f}/{s['slowdown_p99']:<6.2f} "
            f"{s['retransmits']:>7,} ({s['new_pkts']:>6,}) {s['peak_queue_kb']:>8.1f} "
            f"{s['mean_queue_kb']:>8.1f} {s['fabric_peak_queue_kb']:>7.1f} {s['drops']:>6,} "
            f"{s['trims']:>6,} "
            f"{s['trim_drops']:>8,} {100 * s['rx_utilization']:>6.1f} "
            f"{s['goodput_gbps']:>6.1f} {s['jain']:>5.3f}")
        if s["failed"]:
            lines.append(f"{'':<11} {s['failed']} write(s) failed: {s['first_error']}")
        if s["stopped"]:
            lines.append(f"{'':<11} stopped: {s['stopped']} (unfinished flows are left out)")
    for scheme in missing:
        lines.append(f"{scheme:<11} not available in this engine build")
    if n is None and name.startswith("incast"):
        lines.append("htsim's figures are for 1 MiB per sender: not shown for this size")
    if n is not None:
        for scheme in ("nscc", "rccc"):
            a = HTSIM_ANCHOR.get((n, scheme))
            if a is None:
                continue
            fct = "/".join(f"{v:,}" for v in a["fct"])
            extra = (f"{a['max_queue_kb']:>8}" if "max_queue_kb" in a else f"{'':>8}")
            tail = (f" trimdrop {a['trim_drops']:,}, {a['goodput']} Gbit/s"
                    if "trim_drops" in a else "")
            lines.append(f"{'htsim ' + scheme:<11} {'':>7} {fct:>29} {'':>12} "
                         f"{a['retx']:>7,} ({a['new']:>6,}) {extra}{tail}")
        if n in HTSIM_IDEAL_US:
            lines.append(f"ideal drain time at line rate (htsim's figure, its 4,150-byte "
                         f"packets): {HTSIM_IDEAL_US[n]:,} us")
    return "\n".join(lines)


def _triple(t: tuple[float, float, float] | None, fmt: str = ",.0f") -> str:
    return "/".join(format(v, fmt) for v in t) if t else "-"


def format_seeds_table(name: str, rows: list[tuple[str, dict[str, Any]]], missing: list[str],
                       n: int | None) -> str:
    """One scenario over seeds: a row per scheme (min/median/max across the seeds) and
    htsim's rows over its own seeds for the same incast."""
    head = (f"{'scheme':<11} {'complete':>8} {'earliest FCT us':>20} {'mean FCT us':>20} "
            f"{'last FCT us':>20} {'spread us':>17} {'Jain':>17} {'retx':>23} {'RTOs':>9}")
    lines = [f"== {name}: min/median/max over the seeds", head]

    def row(label: str, complete: str, d: dict[str, Any]) -> str:
        rtos = _triple(d.get("rtos")) if "rtos" in d else ""
        return (f"{label:<11} {complete:>8} {_triple(d['earliest_us']):>20} "
                f"{_triple(d['mean_us']):>20} {_triple(d['last_us']):>20} "
                f"{_triple(d['spread_us']):>17} {_triple(d['jain'], '.3f'):>17} "
                f"{_triple(d['retransmits']):>23} {rtos:>9}")

    for scheme, d in rows:
        lines.append(row(scheme, f"{d['complete']}/{d['runs']}", d))
    for scheme in missing:
        lines.append(f"{scheme:<11} not available in this engine build")
    if n is None:
        lines.append("htsim's figures are for 1 MiB per sender: not shown for this size")
    if n is not None:
        for scheme in ("nscc", "rccc"):
            a = HTSIM_SEEDS.get((n, scheme))
            if a is not None:
                lo, hi = HTSIM_SEEDS_RUN
                lines.append(row(f"htsim {scheme}", f"{hi - lo + 1}", a))
        lines.append(f"htsim: UEC's model at 40ccb05 over its seeds {HTSIM_SEEDS_RUN[0]}-"
                     f"{HTSIM_SEEDS_RUN[1]}, its 4,150-byte packets (docs/cc-studies.md)")
    return "\n".join(lines)


def run_seeds(args: argparse.Namespace, usable: list[str], missing: list[str],
              out: Path) -> int:
    """``--seeds K``: each incast and scheme once per seed (the fabric's ECN and trimming
    draws and the engines' seeded alike), reduced to distributions beside htsim's."""
    from netweft.testbed.command_line import CommandError

    if args.scenario != "incast":
        raise CommandError("--seeds runs the incast (htsim's distributions are for it); "
                           "drop --scenario")
    seeds = list(range(args.seed, args.seed + args.seeds))
    runs = scenario_runs(args)
    print(f"netweft bench cc --seeds: simulator, {len(runs)} incast(s) x {len(usable)} "
          f"scheme(s) [{', '.join(usable)}] x seeds {seeds[0]}-{seeds[-1]}; wall budget "
          f"{args.budget:g} s per run", flush=True)
    wall0 = time.monotonic()
    record: dict[str, Any] = {"seeds": seeds, "scenarios": []}
    for name, spec, flows, extra in runs:
        rows, per_seed = [], {}
        for scheme in usable:
            summaries = []
            for k in seeds:
                r = run_flows(name, replace(spec, seed=k), flows, scheme, seed=k,
                              wall_budget_s=args.budget,
                              max_virtual_s=args.max_virtual_ms / 1e3)
                s = summarise(r)
                summaries.append(s)
                note = f", stopped: {s['stopped']}" if s["stopped"] else ""
                print(f"  {name}: {scheme} seed {k}: {s['finished']}/{s['flows']} flows, "
                      f"FCT {_fct(s)} us, Jain {s['jain']:.3f} ({r.wall_s:.1f} s wall"
                      f"{note})", flush=True)
            rows.append((scheme, over_seeds(summaries)))
            per_seed[scheme] = summaries
        print(format_seeds_table(f"{name} ({extra['wire_sizes']} wire sizes)", rows, missing,
                                 _htsim_n(extra)))
        record["scenarios"].append({"name": name, "extra": extra, "missing": missing,
                                    "over_seeds": dict(rows), "per_seed": per_seed})
    (out / "cc_seeds.json").write_text(json.dumps(record, indent=1))
    print(f"wrote {out / 'cc_seeds.json'} ({time.monotonic() - wall0:.0f} s)")
    return 0


# ---- plots --------------------------------------------------------------------------------

def plot_scenario(name: str, results: list[StudyResult], path: Path) -> Path:
    """Queue of the (first) receiver's ToR port over time, FCT CDF, per-sender goodput."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4), dpi=100)
    for r in results:
        color = f"C{SCHEMES.index(r.scheme)}"  # one colour per scheme in every panel
        t, q = r.queue_trace
        if t:
            step = max(1, len(t) // 4000)
            axes[0].plot([x / 1e3 for x in t[::step]], [y / 1e3 for y in q[::step]],
                         label=r.scheme, lw=0.8, color=color)
        fcts = sorted(x / 1e3 for x in r.fct_ns if x >= 0)
        if fcts:
            axes[1].step(fcts, [(i + 1) / len(fcts) for i in range(len(fcts))], where="post",
                         label=r.scheme, color=color)
        gp = [f.size * 8 / t for f, t in zip(r.flows, r.fct_ns, strict=True) if t > 0]
        if gp:
            axes[2].plot(range(len(gp)), sorted(gp), ".-", ms=2, label=r.scheme, color=color)
    if results:
        axes[0].axhline(results[0].spec.buffer_bytes / 1e3, color="grey", lw=0.8, ls="--")
    axes[0].set_xlabel("time (us)")
    axes[0].set_ylabel("receiver ToR queue (KB)")
    axes[0].set_title("queue over time")
    axes[1].set_xlabel("flow completion time (us)")
    axes[1].set_ylabel("fraction of flows")
    axes[1].set_title("FCT CDF")
    axes[2].set_xlabel("flow (sorted)")
    axes[2].set_ylabel("goodput (Gbit/s)")
    axes[2].set_title("per-sender goodput")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(name)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


# ---- the command --------------------------------------------------------------------------

def run_cc_bench(args: argparse.Namespace) -> int:
    if args.testbed and args.seeds:
        from netweft.testbed.command_line import CommandError

        raise CommandError("--seeds runs the simulator's incast over seeds; the testbed's "
                           "runs are one each (drop --seeds or --testbed)")
    if args.testbed:
        return _run_testbed(args)
    if args.rate_mbit:
        from netweft.testbed.command_line import CommandError

        raise CommandError("--rate-mbit sets the emulated links of --testbed; the simulator "
                           "runs htsim's 100 Gbit/s fabric")
    avail = available_schemes()
    schemes = args.schemes or list(SCHEMES)
    usable = [s for s in schemes if avail.get(s)]
    missing = [s for s in schemes if not avail.get(s)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.seeds:
        return run_seeds(args, usable, missing, out)
    runs = scenario_runs(args)
    print(f"netweft bench cc: simulator, C engines per host, {len(runs)} scenario(s) x "
          f"{len(usable)} scheme(s) [{', '.join(usable)}]; 100 Gbit/s, 1 us links, "
          f"buffer 120,350 B per port, ECN 0.2-0.8 of it, trimming on; seed {args.seed}; "
          f"wall budget {args.budget:g} s per run", flush=True)
    print("  wire sizes: htsim = its 4,150-byte data packets and 64-byte ACKs, NACKs and "
          "trimmed headers (the engines' bytes unchanged); netweft = netweft's own frames "
          "(4,188-byte data packets, 62-90-byte control packets, 110-byte trimmed headers)",
          flush=True)
    wall0 = time.monotonic()
    record: dict[str, Any] = {"seed": args.seed, "scenarios": []}
    progress = (lambda msg: print(f"  {msg}", flush=True)) if args.verbose else None
    for name, spec, flows, extra in runs:
        results, summaries = [], []
        for scheme in usable:
            print(f"  {name}: {scheme} ...", flush=True)
            r = run_flows(name, spec, flows, scheme, seed=args.seed, wall_budget_s=args.budget,
                          max_virtual_s=args.max_virtual_ms / 1e3, progress=progress)
            s = summarise(r)
            print(f"  {name}: {scheme} done: {s['finished']}/{s['flows']} flows in "
                  f"{r.makespan_ns / 1e3:,.0f} us virtual, {r.wall_s:.1f} s wall "
                  f"({r.cpu_s:.1f} s CPU), {r.events:,} events", flush=True)
            if extra.get("mixed"):
                for tag in ("short", "long"):
                    t = summarise(r, tag)
                    s[f"{tag}_slowdown_p50"] = t["slowdown_p50"]
                    s[f"{tag}_slowdown_p99"] = t["slowdown_p99"]
            results.append(r)
            summaries.append(s)
        print(format_table(f"{name} ({extra['wire_sizes']} wire sizes)", summaries, missing,
                           _htsim_n(extra)))
        if extra.get("mixed"):
            for s in summaries:
                print(f"{s['scheme']:<11} short flows slowdown p50/p99 "
                      f"{s['short_slowdown_p50']:.2f}/{s['short_slowdown_p99']:.2f}, long "
                      f"{s['long_slowdown_p50']:.2f}/{s['long_slowdown_p99']:.2f}")
        slug = name.replace(" ", "_").replace(">", "").replace(",", "")
        png = plot_scenario(name, results, out / f"cc_{slug}.png") if results else None
        record["scenarios"].append({
            "name": name, "extra": extra, "summaries": summaries, "missing": missing,
            "flows": [[f.src, f.dst, f.size, f.start_ns, f.tag] for f in flows],
            "fct_ns": {r.scheme: r.fct_ns for r in results},
            "plot": str(png) if png else None})
    (out / "cc.json").write_text(json.dumps(record, indent=1))
    print("FCT in us; slow = FCT / FCT on an idle fabric; retx = retransmitted packets "
          "(new data packets); peakQ/meanQ = the receiver's ToR port, fabQ = the largest peak of "
          "any port; util = that port busy "
          "over the makespan; Gbit/s = payload per receiver over the makespan; Jain over "
          "per-flow throughput")
    print(f"wrote {out / 'cc.json'} and plots in {out} ({time.monotonic() - wall0:.0f} s)")
    return 0


TESTBED_SCHEMES = ["none", "nscc", "rccc"]


def _run_testbed(args: argparse.Namespace) -> int:
    import os

    from netweft.testbed.command_line import CommandError
    from netweft.testbed.experiments.cc_testbed import (
        RATE_MBIT,
        format_testbed_table,
        run_incast_testbed,
    )

    if os.geteuid() != 0:
        raise CommandError("--testbed builds network namespaces and needs root; run it as "
                           "root or leave --testbed out for the simulator")
    if args.scenario != "incast" or (args.n and args.n != [8]):
        raise CommandError("--testbed runs the 8->1 incast only; drop --scenario and -n")
    rate = args.rate_mbit or RATE_MBIT
    schemes = args.schemes or TESTBED_SCHEMES
    size = args.size or 256 * KIB
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"netweft bench cc --testbed: 8 senders -> r1 through s1 (netweft's switch "
          f"process, fabric.p4) whose port to r1 sends {rate} Mbit/s from a 64-packet "
          f"queue, ECN at {args.ecn} packets, trimming at {args.trim}; {size:,} bytes per "
          f"sender; schemes {', '.join(schemes)}; real sockets and clocks", flush=True)
    results = run_incast_testbed(schemes, size, out, ecn=args.ecn, trim=args.trim,
                                 rate_mbit=rate)
    print(format_testbed_table(results, size))
    print("@sw: fabric.p4's counters on s1's port to r1 (P4Runtime) and the switch "
          "process's drops; cap: that port's capture (scapy); CE@rx: CE-marked packets the "
          "receiver's engine saw; trimNACK: trimmed-packet NACKs the senders got")
    (out / "cc_testbed.json").write_text(json.dumps({"size": size, "rate_mbit": rate,
                                                     "results": results}, indent=1))
    print(f"wrote {out / 'cc_testbed.json'}; capture in {out / 'pcaps'}")
    return 0


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench cc``."""
    p = benches.add_parser("cc", help="congestion-control schemes side by side in the "
                                      "simulator (incast, permutation, mixed), with htsim's "
                                      "figures beside netweft's")
    p.add_argument("--scenario", choices=("incast", "permutation", "mixed", "all"),
                   default="incast", help="what to run (default incast)")
    p.add_argument("-n", "--senders", dest="n", type=int_in(1, 287), action="append",
                   help="incast senders (repeatable; default 8, 64 and 256; --quick: 8)")
    p.add_argument("--size", type=_size,
                   help="bytes per flow, e.g. 256k, 1m (default: incast 1m, permutation "
                        "4m, mixed long flows 2m; --quick smaller)")
    p.add_argument("--schemes", type=_schemes,
                   help=f"comma-separated subset of {','.join(SCHEMES)} (default all)")
    p.add_argument("--seed", type=int_in(0), default=1,
                   help="seed of the fabric's ECN and trimming draws, the engines and the "
                        "flows (default 1)")
    p.add_argument("--seeds", type=int_in(1, 1000),
                   help="incast: run each case over this many seeds from --seed and print "
                        "min/median/max across them of the earliest, mean and last FCT, "
                        "the spread, Jain and retransmissions, beside htsim's over its "
                        "seeds 1-20; writes cc_seeds.json")
    p.add_argument("--quick", action="store_true",
                   help="small cases that finish in seconds (incast 8->1 of 256 KiB, "
                        "8-host permutation and mixed)")
    p.add_argument("--budget", type=float_in(1.0, 86_400.0), default=300.0,
                   help="wall seconds per run before it is stopped and reported as such "
                        "(default 300)")
    p.add_argument("--max-virtual-ms", type=float_in(0.1, 10_000.0), default=200.0,
                   help="virtual milliseconds per run (default 200)")
    p.add_argument("--out", default="cc-results",
                   help="directory for cc.json and the plots (default cc-results)")
    p.add_argument("--verbose", action="store_true", help="progress every 100 us (virtual)")
    p.add_argument("--wire-sizes", choices=("htsim", "netweft"),
                   help="packet sizes on the simulated wire: htsim's (4,150-byte data "
                        "packets, 64-byte ACKs, NACKs and trimmed headers) or netweft's own "
                        "frames (4,188 B, 62-90 B, 110 B); default htsim for the incast "
                        "(compared with htsim's figures), netweft for the others")
    p.add_argument("--testbed", action="store_true",
                   help="the 8->1 incast on namespaces through netweft's switch process "
                        "running fabric.p4 with ECN marking and trimming (root; default "
                        "schemes none, nscc, rccc, 256 KiB per sender)")
    p.add_argument("--ecn", type=int_in(1, 64), default=16,
                   help="--testbed: ECN threshold of the receiver's port, packets (default 16)")
    p.add_argument("--trim", type=int_in(1, 64), default=48,
                   help="--testbed: trim threshold of the receiver's port, packets (default 48)")
    p.add_argument("--rate-mbit", type=int_in(1, 10_000),
                   help="--testbed: every link's rate, Mbit/s (default 50; 1000 for gigabit "
                        "links, where the senders on two shared cores still congest the port)")
    p.set_defaults(func=run_cc_bench)
