"""``netweft bench train``: data-parallel training with netweft's all-reduce, in virtual time.

Trains a two-layer MLP on a seeded Gaussian-mixture classification set with
``--workers`` data-parallel workers three times from the same start and the same
minibatches (:mod:`netweft.testbed.experiments.training`): the gradients summed
exactly (float32 reference), by in-network aggregation through the embedded switch
running ``p4/aggregation.p4`` (block-wise fixed point), and by ring all-reduce over
netweft's transport. Prints the final loss and accuracy of each, how far each loss
curve and each set of weights strays from the exact run's, the largest all-reduce
error as a fraction of its documented bound, and the virtual time per all-reduce;
writes JSON and a plot of the loss curves and their gaps to the exact run.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

from netweft.testbed.arg_types import float_in, int_in
from netweft.testbed.experiments.training import METHODS, TrainingSpec, compare, summary


def format_table(rows: list[dict]) -> str:
    head = (f"{'method':<11} {'final loss':>11} {'train acc':>9} {'test acc':>8} "
            f"{'max |loss - exact|':>18} {'weights gap':>11} {'err/bound':>9} "
            f"{'us/allreduce':>12}")
    lines = [head]
    for r in rows:
        lines.append(f"{r['method']:<11} {r['final_loss']:>11.6f} {r['train_accuracy']:>9.4f} "
                     f"{r['test_accuracy']:>8.4f} {r.get('max_loss_gap', 0):>18.2e} "
                     f"{r.get('weights_rel_gap', 0):>11.2e} {r['max_bound_fraction']:>9.3f} "
                     f"{r['comm_ms_per_step'] * 1e3:>12.1f}")
    return "\n".join(lines)


def run_train_bench(args: argparse.Namespace) -> int:
    spec = TrainingSpec(workers=args.workers, steps=args.steps, batch=args.batch,
                        hidden=args.hidden, lr=args.lr, seed=args.seed,
                        rate_gbps=args.rate_gbps, topology=args.topology)
    methods = tuple(args.method or METHODS)
    if "exact" not in methods:
        methods = ("exact", *methods)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from netweft.testbed.experiments.training import MLP

    params = MLP(spec.features, spec.hidden, spec.classes).size
    print(f"netweft bench train: {spec.workers} workers, MLP {spec.features}-{spec.hidden}-"
          f"{spec.classes} ({params} float32 weights, {params * 4} B all-reduced per step), "
          f"{spec.steps} steps of {spec.batch} samples per worker, SGD lr {spec.lr}; "
          f"{spec.topology}, {spec.rate_gbps:g} Gbit/s links; seed {spec.seed}", flush=True)
    wall0 = time.monotonic()
    runs = compare(spec, methods, progress=(lambda m: print("  " + m, flush=True))
                   if args.verbose else None)
    rows = summary(runs)
    print(format_table(rows))
    print("max |loss - exact|: largest gap between the method's training-loss curve and the "
          "exact run's; weights gap: |w - w_exact| / |w_exact| at the end; err/bound: the "
          "largest all-reduce error over the documented bound (<= 1: within it)")
    data = {"settings": asdict(spec), "rows": rows,
            "losses": {m: [r.initial_loss, *r.losses] for m, r in runs.items()}}
    (out / "train.json").write_text(json.dumps(data, indent=1))
    from netweft.testbed.plots import plot_training

    png = plot_training(data["losses"], out / "train.png",
                        f"data-parallel MLP, {spec.workers} workers: gradients all-reduced "
                        "exactly, in-network, by ring")
    print(f"wrote {out / 'train.json'}, {png} ({time.monotonic() - wall0:.0f} s)")
    return 0


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench train``."""
    p = benches.add_parser("train", help="data-parallel training whose gradients netweft "
                                         "all-reduces (in-network, ring) beside exact sums")
    p.add_argument("--workers", type=int_in(2, 16), default=4, help="workers (default 4)")
    p.add_argument("--steps", type=int_in(1, 100_000), default=100,
                   help="SGD steps (default 100)")
    p.add_argument("--batch", type=int_in(1, 1024), default=16,
                   help="samples per worker per step (default 16)")
    p.add_argument("--hidden", type=int_in(1, 4096), default=32,
                   help="hidden units of the MLP (default 32)")
    p.add_argument("--lr", type=float_in(0.0, 10.0, low_open=True), default=0.3,
                   help="SGD learning rate (default 0.3)")
    p.add_argument("--method", choices=METHODS, action="append",
                   help="all-reduce (repeatable; default all; exact always runs)")
    p.add_argument("--topology", choices=("star", "leaf-spine"), default="star",
                   help="the in-network fabric (default star)")
    p.add_argument("--rate-gbps", type=float_in(0.1, 400.0), default=10.0,
                   help="link rate, Gbit/s (default 10)")
    p.add_argument("--seed", type=int, default=1, help="data, weights and batches (default 1)")
    p.add_argument("--out", default="train-results", help="output folder")
    p.add_argument("-v", "--verbose", action="store_true", help="progress every 25 steps")
    p.set_defaults(func=run_train_bench)
