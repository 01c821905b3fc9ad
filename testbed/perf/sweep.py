"""``netweft perf ... --mode sweep|spray``: message rate, goodput and CPU per byte
across message sizes, depths and spray settings, netweft beside kernel TCP.

``sweep`` runs, for every size in ``--sizes``, kernel TCP (a stream of
``sendall`` messages) and netweft RMA writes at every depth in ``--depths``
and every ``entropy_burst`` in ``--bursts`` (1 = a new UDP source port per
packet, what per-packet spraying needs). ``spray`` is the same grid for one
size and depth with more bursts, to show what per-packet entropy costs. With
several ``--tx`` paths (``ports,packet``) every grid point runs each. Each
row's TCP figures come from a run right beside the netweft runs, so the ratio
columns compare like with like.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from typing import Any

from netweft.testbed.perf import options as opt
from netweft.testbed.perf.goodput import run_netweft, run_tcp
from netweft.testbed.perf.protocol import Control, PerfError, PerfResult, run_against_server

DEFAULT_SIZES = (64, 4 << 10, 64 << 10, 1 << 20, 4 << 20)
DEFAULT_DEPTHS = (1, 8, 64)
DEFAULT_BURSTS = (1, 2)
SPRAY_BURSTS = (1, 2, 4, 16, 64)


@dataclass
class SweepRow:
    """One grid point: netweft at (size, depth, burst) on one packet path, and TCP
    at that size."""

    size: int
    depth: int
    burst: int
    netweft: PerfResult
    tcp: PerfResult | None
    tx: str = "ports"

    @property
    def goodput_ratio(self) -> float:
        t = self.tcp
        return self.netweft.goodput_gbps / t.goodput_gbps if t and t.goodput_gbps else float("nan")

    @property
    def cpu_ratio(self) -> float:
        t = self.tcp
        return (self.netweft.cpu_ns_per_byte / t.cpu_ns_per_byte if t and t.bytes
                else float("nan"))

    def summary(self) -> dict[str, Any]:
        """Raw numbers for --json."""
        def figures(r: PerfResult | None) -> dict[str, Any] | None:
            if r is None:
                return None
            return asdict(r) | {"goodput_gbps": r.goodput_gbps, "msgs_per_s": r.msgs_per_s,
                                "cpu_ns_per_byte": r.cpu_ns_per_byte}
        return {"size": self.size, "depth": self.depth, "entropy_burst": self.burst,
                "tx": self.tx,
                "netweft": figures(self.netweft), "tcp": figures(self.tcp),
                "goodput_ratio": self.goodput_ratio, "cpu_ratio": self.cpu_ratio}


def size_list(text: str) -> tuple[int, ...]:
    """argparse type: comma-separated sizes (64,4k,1m)."""
    return tuple(opt.size(t) for t in text.split(","))


def count_list(what: str, low: int, high: int | None = None) -> Any:
    """argparse type: comma-separated integers in [low, high]."""
    one = opt.int_range(what, low, high)

    def parse(text: str) -> tuple[int, ...]:
        return tuple(one(t) for t in text.split(","))
    parse.__name__ = what
    return parse


def run_sweep(ctl: Control, host: str, *, duration: float, sizes: tuple[int, ...],
              depths: tuple[int, ...], bursts: tuple[int, ...], proto: str,
              engine: dict[str, int] | None = None, tx: tuple[str, ...] = ("ports",),
              **options: Any) -> list[SweepRow]:
    """The grid; ``duration`` seconds per netweft run (one per path in ``tx``) and per
    TCP run, which all rows of a grid point share."""
    engine = dict(engine or {})
    if "entropy_burst" in engine:
        raise PerfError("the sweep sets entropy_burst itself: give --bursts, not --engine "
                        "entropy_burst=")
    rows = []
    for size in sizes:
        for depth in depths:
            for burst in bursts:
                nws = [(path, run_netweft(ctl, host, duration, size, depth=depth, tx=path,
                                          engine={**engine, "entropy_burst": burst},
                                          name=f"netweft {size}B d{depth} b{burst} {path}",
                                          **options))
                       for path in tx]
                tcp = run_tcp(ctl, host, duration, size) if proto == "both" else None
                rows += [SweepRow(size, depth, burst, nw, tcp, path) for path, nw in nws]
    return rows


def human_size(n: int) -> str:
    """64, 4K, 1M, ... (binary units)."""
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def format_sweep(rows: list[SweepRow], header: str) -> str:
    """The sweep (or spray) table: netweft and TCP side by side with their ratios."""
    lines = [header,
             f"{'size':>5} {'depth':>5} {'burst':>5} {'tx':>6} | {'netweft msgs/s':>14} "
             f"{'Gbit/s':>7} "
             f"{'ns/B':>7} | {'tcp msgs/s':>11} {'Gbit/s':>7} {'ns/B':>7} | "
             f"{'goodput x':>9} {'CPU/B x':>7}  verified"]
    for r in rows:
        n, t = r.netweft, r.tcp
        tcp_cols = (f"{t.msgs_per_s:>11.0f} {t.goodput_gbps:>7.3f} {t.cpu_ns_per_byte:>7.2f}"
                    if t else f"{'-':>11} {'-':>7} {'-':>7}")
        ok = n.verified and (t is None or t.verified)
        lines.append(f"{human_size(r.size):>5} {r.depth:>5} {r.burst:>5} {r.tx:>6} | "
                     f"{n.msgs_per_s:>14.0f} {n.goodput_gbps:>7.3f} {n.cpu_ns_per_byte:>7.2f} | "
                     f"{tcp_cols} | {r.goodput_ratio:>8.2f}x {r.cpu_ratio:>6.2f}x  "
                     f"{'yes' if ok else 'NO'}")
    lines.append("burst = entropy_burst, packets per UDP source port (1: a new port per "
                 "packet, as per-packet spraying needs); tx = the packet path; goodput x "
                 "and CPU/B x are netweft/TCP from the runs side by side")
    return "\n".join(lines)


def add_options(p: argparse.ArgumentParser) -> None:
    """The sweep's grid options."""
    p.add_argument("--sizes", type=size_list, default=None,
                   help="sweep: message sizes (default 64,4k,64k,1m,4m)")
    p.add_argument("--depths", type=count_list("depths", 1), default=None,
                   help="sweep: netweft writes in flight (default 1,8,64)")
    p.add_argument("--bursts", type=count_list("bursts", 1, 1 << 16), default=None,
                   help="sweep/spray: entropy_burst values (default 1,2; spray 1,2,4,16,64)")


def sweep_main(args: Any) -> int:
    """``netweft perf client --mode sweep|spray``: run the grid, print, --json, --plot."""
    import json

    spray = args.mode == "spray"
    sizes = (args.msg_size,) if spray else (args.sizes or DEFAULT_SIZES)
    depths = (args.depth,) if spray else (args.depths or DEFAULT_DEPTHS)
    bursts = args.bursts or (SPRAY_BURSTS if spray else DEFAULT_BURSTS)
    rows = run_against_server(args, lambda ctl: run_sweep(
        ctl, args.host, duration=args.time, sizes=sizes, depths=depths, bursts=bursts,
        proto=args.proto, engine=dict(args.engine), mtu=args.mtu, tx=args.tx,
        window_pkts=args.window, bind=args.bind, reliability=str(args.reliability),
        io=args.io, post=args.post))
    if rows is None:
        return 1
    header = (f"netweft perf {args.mode}: client -> {args.host}, {args.time:g} s per run, "
              f"path MTU {args.mtu}, tx={','.join(args.tx)}, io={args.io}, {args.post} posts, "
              f"window {args.window}"
              + "".join(f", {k}={v}" for k, v in args.engine))
    print(format_sweep(rows, header), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"mode": args.mode, "rows": [r.summary() for r in rows]}, fh, indent=2)
    if args.plot:
        from pathlib import Path

        from netweft.testbed.plots import plot_sweep

        plot_sweep(rows, Path(args.plot), spray=spray)
        print(f"plot: {args.plot}")
    ok = all(r.netweft.verified and (r.tcp is None or r.tcp.verified) for r in rows)
    return 0 if ok else 1
