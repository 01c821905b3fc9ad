"""``netweft demo``: the demo experiment, then the fabric experiments and the all-reduce.

Runs :func:`~netweft.testbed.experiments.demo.run_demo` (what it does is told
there), then, unless ``--no-fabric``, the experiments of ``netweft bench fabric``
and, unless ``--no-allreduce``, the all-reduce comparison on four hosts; prints
their tables and says where the raw numbers, plots and captures are.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from netweft.emulation.network import NetworkError
from netweft.testbed.arg_types import float_in, int_in
from netweft.testbed.command_line import CommandError
from netweft.testbed.experiments.demo import (
    LINK_MTU,
    MAX_COUNT,
    MAX_DATAGRAM,
    MAX_RMA_BYTES,
    RMA_BYTES,
    format_results,
    run_demo,
)
from netweft.testbed.topology import TopologyError


def _main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise CommandError("needs root for network namespaces; run it as root (sudo)")
    out_dir = args.out or Path("results") / time.strftime("demo-%Y%m%d-%H%M%S")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CommandError(f"cannot create the output folder {out_dir}: {err.strerror}; "
                           "choose another with --out") from None
    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    try:
        results = run_demo(out_dir, args.count, args.size, args.rma_bytes, log=log)
    except (NetworkError, TopologyError, RuntimeError, OSError) as err:
        raise CommandError(f"{err} (the network was removed; details in {out_dir}/)") from None
    print(format_results(results))
    print(f"raw numbers (results.json), plots (rtt_cdf.png, queue_occupancy.png), switch "
          f"logs and counters (logs/) and a capture of leaf2's port to h2 in {out_dir}/")
    ok = all(f["intact"] == f["sent"] for f in results["flows"].values())
    ok = ok and results["rma_write"]["intact"]
    if not args.no_fabric:
        from netweft.testbed.bench.fabric import (
            format_fabric,
            plot_names,
            run_fabric_experiments,
        )
        from netweft.testbed.control.fabric.installer import InstallError
        from netweft.testbed.control.p4runtime_session import SessionError

        fabric_dir = out_dir / "fabric"
        try:
            fabric = run_fabric_experiments(fabric_dir, seconds=args.fabric_seconds, log=log)
        except (NetworkError, InstallError, SessionError, RuntimeError, OSError) as err:
            raise CommandError(f"fabric experiments: {err} (the network was removed; details "
                               f"in {fabric_dir}/)") from None
        print()
        print(format_fabric(fabric))
        print(f"fabric experiments: raw numbers (fabric.json), {plot_names(fabric)} and "
              f"leaf2's pcaps in {fabric_dir}/")
        ok = ok and all(r["intact"] for r in fabric["multicast"]["runs"])
    if not args.no_allreduce:
        from netweft.testbed.control.aggregation.controller import AggregationConfigError
        from netweft.testbed.control.p4runtime_session import SessionError
        from netweft.testbed.experiments.allreduce_testbed import (
            format_emulated,
            run_emulated_allreduce,
        )

        allreduce_dir = out_dir / "allreduce"
        try:
            rows = run_emulated_allreduce(4, [256 * 1024], log=log, out_dir=allreduce_dir)
        except (NetworkError, AggregationConfigError, SessionError, RuntimeError,
                OSError) as err:
            raise CommandError(f"all-reduce: {err} (the network was removed; details in "
                               f"{allreduce_dir}/)") from None
        print()
        print(format_emulated(rows, 4))
        (allreduce_dir / "allreduce.json").write_text(json.dumps(rows, indent=1))
        print(f"all-reduce: raw numbers (allreduce.json) and the switch's log in "
              f"{allreduce_dir}/; `netweft bench allreduce` runs the full comparison")
        ok = ok and all(r["in-network"]["agree"] and r["ring"]["agree"] for r in rows)
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft demo``."""
    p = sub.add_parser("demo", help="run netweft's main job: an emulated fabric experiment")
    p.add_argument("--count", type=int_in(1, MAX_COUNT), default=50,
                   help=f"datagrams per sender, 1 to {MAX_COUNT} (default 50)")
    p.add_argument("--size", type=int_in(4, MAX_DATAGRAM), default=512,
                   help=f"bytes per datagram, 4 to {MAX_DATAGRAM} (one {LINK_MTU}-byte frame; "
                        "default 512)")
    p.add_argument("--rma-bytes", type=int_in(1, MAX_RMA_BYTES), default=RMA_BYTES,
                   help=f"bytes h1 writes into h2 with netweft's transport, 1 to {MAX_RMA_BYTES} "
                        f"(default {RMA_BYTES})")
    p.add_argument("--out", type=Path, help="output folder (default results/demo-<time>)")
    p.add_argument("--no-fabric", action="store_true",
                   help="skip the fabric program's experiments (netweft bench fabric)")
    p.add_argument("--no-allreduce", action="store_true",
                   help="skip the all-reduce comparison (in-network vs ring, 4 hosts)")
    p.add_argument("--fabric-seconds", type=float_in(0.5, 60), default=2.0,
                   help="seconds per spray mode and incast run in the fabric experiments "
                        "(default 2)")
    p.set_defaults(func=_main)
