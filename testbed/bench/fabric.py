"""``netweft bench fabric``: the fabric program's experiments on an emulated leaf-spine.

One testbed (``testbed/topologies/fabric-leaf-spine.yaml``: fabric.p4 on every
switch, configured over P4Runtime by the fabric controller) runs, in turn:

- ``spray``: two flows whose flow hashes collide, five spray modes
  (:mod:`netweft.testbed.experiments.spray`);
- ``marks``: ECN marking and trimming in a 3-to-1 incast
  (:mod:`netweft.testbed.experiments.marks`);
- ``multicast``: a buffer to three receivers by unicast fan-out, multicast, and
  multicast with ACK aggregation (:mod:`netweft.testbed.experiments.multicast`).

Each prints a table; the raw numbers go to ``fabric.json`` and the plots to
``spray.png``, ``marks_queue.png`` and ``multicast.png`` in the output folder,
with leaf2's pcaps in ``pcaps/``. ``netweft demo`` runs the same experiments
after its own. Figures are noisy on a loaded machine; tests never assert them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from netweft.emulation.network import NetworkError
from netweft.testbed.arg_types import float_in, int_in
from netweft.testbed.command_line import CommandError
from netweft.testbed.control.fabric.installer import InstallError
from netweft.testbed.control.p4runtime_session import SessionError
from netweft.testbed.experiments.fabric_testbed import TOPOLOGY, FabricTestbed
from netweft.testbed.experiments.marks import format_marks, run_marks
from netweft.testbed.experiments.multicast import format_multicast, run_multicast
from netweft.testbed.experiments.spray import format_spray, run_spray
from netweft.testbed.plots import plot_multicast, plot_queue_runs, plot_spray

EXPERIMENTS = ("spray", "marks", "multicast")


def run_fabric_experiments(out_dir: Path, experiments: Sequence[str] = EXPERIMENTS,
                           seconds: float = 3.0, rate_mbit: float = 5.0,
                           length: int = 1 << 20,
                           log: Callable[[str], None] = print) -> dict:
    """Start the testbed, run the experiments, write JSON and plots; the raw results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict = {"topology": TOPOLOGY.name}
    log(f"fabric experiments: starting {TOPOLOGY.name} (fabric.p4 on leaf1, leaf2, spine1, "
        "spine2, configured by the fabric controller over P4Runtime)")
    with FabricTestbed(out_dir, pcap_switches=("leaf2",)) as tb:
        results["namespaces"] = f"{tb.net.prefix}-*"
        if "spray" in experiments:
            log("spraying:")
            results["spray"] = run_spray(tb, seconds, rate_mbit, log=log)
        if "marks" in experiments:
            log("ECN and trimming:")
            results["marks"] = run_marks(tb, seconds, rate_mbit, offered_mbit=0.6 * rate_mbit,
                                         log=log)
        if "multicast" in experiments:
            log("multicast:")
            results["multicast"] = run_multicast(tb, length, rate_mbit, log=log)
    (out_dir / "fabric.json").write_text(json.dumps(results, indent=2))
    if "spray" in results:
        plot_spray(results["spray"]["modes"], out_dir / "spray.png",
                   f"two colliding flows, {rate_mbit:g} Mbit/s uplinks")
    if "marks" in results:
        m = results["marks"]
        plot_queue_runs({r["label"]: r["queue_samples"] for r in m["runs"]},
                        out_dir / "marks_queue.png",
                        f"leaf2 port 1 (to h3), {m['rate_mbit']:g} Mbit/s, 3-to-1 incast",
                        {"ECN threshold": m["ecn_threshold"],
                         "trim threshold": m["trim_threshold"], "queue depth": m["queue"]})
    if "multicast" in results:
        plot_multicast(results["multicast"]["runs"], out_dir / "multicast.png",
                       f"{length} bytes to 3 receivers, {rate_mbit:g} Mbit/s sender link")
    return results


def plot_names(results: dict) -> str:
    names = {"spray": "spray.png", "marks": "marks_queue.png", "multicast": "multicast.png"}
    return "plots (" + ", ".join(v for k, v in names.items() if k in results) + ")"


def format_fabric(results: dict) -> str:
    parts = []
    if "spray" in results:
        parts.append(format_spray(results["spray"]))
    if "marks" in results:
        parts.append(format_marks(results["marks"]))
    if "multicast" in results:
        parts.append(format_multicast(results["multicast"]))
    return "\n\n".join(parts)


def _experiments(text: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of "
                                         f"{', '.join(EXPERIMENTS)}")
    return names


def _main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise CommandError("needs root for network namespaces; run it as root (sudo)")
    out_dir = args.out or Path("results") / time.strftime("fabric-%Y%m%d-%H%M%S")
    try:
        results = run_fabric_experiments(out_dir, args.experiments, args.seconds, args.rate,
                                         args.length,
                                         log=lambda m: print(m, file=sys.stderr, flush=True))
    except (NetworkError, InstallError, SessionError, RuntimeError, OSError) as err:
        raise CommandError(f"{err} (the network was removed; details in {out_dir}/)") from None
    print(format_fabric(results))
    print(f"raw numbers (fabric.json), {plot_names(results)} and leaf2's pcaps in {out_dir}/")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seconds", type=float_in(0.5, 60), default=3.0,
                   help="seconds each spray mode and incast runs, 0.5 to 60 (default 3)")
    p.add_argument("--rate", type=float_in(1, 1000), default=5.0,
                   help="Mbit/s of the studied links (uplinks, incast port, sender link), "
                        "1 to 1000 (default 5: a switch on the Python back end forwards a "
                        "few kpps, fewer on a loaded machine; the C loop "
                        "(NETWEFT_SWITCH_BACKEND=c) takes gigabit links)")
    p.add_argument("--length", type=int_in(1, 64 << 20), default=1 << 20,
                   help="bytes of the multicast buffer (default 1 MiB)")


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench fabric``."""
    p = benches.add_parser("fabric", help="spraying, ECN and trimming, multicast on an "
                           "emulated leaf-spine running fabric.p4", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--experiments", type=_experiments, default=list(EXPERIMENTS),
                   metavar="LIST", help=f"which to run (default {','.join(EXPERIMENTS)})")
    add_arguments(p)
    p.add_argument("--out", type=Path, help="output folder (default results/fabric-<time>)")
    p.set_defaults(func=_main)
