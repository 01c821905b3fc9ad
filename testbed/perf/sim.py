"""``netweft perf sim``: netweft's goodput in the deterministic simulation, in virtual time.

Two endpoints on a simulated link (rate, delay) move ``count`` RMA writes of
``msg_size`` bytes, once on a clean path and once with seeded random loss, and
the tool prints both goodputs (bytes over virtual seconds) and their ratio.
The numbers depend only on the engine's algorithms, the link and the seed,
never on the machine's load, so they isolate the transport's loss recovery
from the noise of a shared host.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass

import numpy as np

from netweft.testbed.perf import options as opt
from netweft.transport import Impairments, Link, Simulation


@dataclass
class SimRun:
    """One simulated transfer."""

    loss: float
    bytes: int
    virtual_s: float
    retransmits: int
    lost: int

    @property
    def goodput_gbps(self) -> float:
        return self.bytes * 8 / self.virtual_s / 1e9


def simulate(loss: float, *, msg_size: int, count: int, rate_gbps: float, delay_us: float,
             mtu: int, seed: int, depth: int, engine: dict[str, int],
             reliability: str = "sr") -> SimRun:
    """Write ``count`` messages with ``depth`` in flight; return the virtual-time result."""
    sim = Simulation(seed=seed, impairments=Impairments(loss=loss),
                     link=Link(rate_bps=rate_gbps * 1e9, delay_ns=int(delay_us * 1000)),
                     mtu=mtu - 28, **engine)
    a, b = sim.endpoint(), sim.endpoint()
    src = a.register(np.frombuffer(np.random.default_rng(seed).bytes(msg_size), np.uint8).copy())
    dst_buf = np.zeros(msg_size * depth, dtype=np.uint8)
    dst = b.register(dst_buf)
    peer = a.connect(b.address)
    peer.set_reliability(reliability)
    posted = done = 0
    while done < count:
        while posted < count and posted - done < depth:
            peer.write(src, dst.remote(), remote_offset=(posted % depth) * msg_size)
            posted += 1
        a.cq.wait(timeout=60).check()
        done += 1
    for slot in range(min(depth, count)):
        if not np.array_equal(dst_buf[slot * msg_size:(slot + 1) * msg_size], src.buffer):
            raise AssertionError(f"simulated slot {slot} differs from what was written")
    return SimRun(loss, count * msg_size, sim.now, a.stats()["retransmits"],
                  sim.path_counters()["lost"])


def _main(args: argparse.Namespace) -> int:
    kwargs = dict(msg_size=args.msg_size, count=args.count, rate_gbps=args.rate_gbps,
                  delay_us=args.delay_us, mtu=args.mtu, seed=args.seed, depth=args.depth,
                  engine=dict(args.engine), reliability=str(args.reliability))
    runs = [simulate(0.0, **kwargs), simulate(args.loss, **kwargs)]
    ratio = runs[1].goodput_gbps / runs[0].goodput_gbps
    print(f"netweft perf sim: simulated {args.rate_gbps:g} Gbit/s link, {args.delay_us:g} us "
          f"one way, MTU {args.mtu}, {args.count} writes of {args.msg_size} bytes, "
          f"{args.depth} in flight, seed {args.seed}, reliability {args.reliability} "
          "(virtual time; every byte checked)")
    print(f"{'test':<20} {'goodput Gbit/s':>14} {'virtual s':>10} {'lost pkts':>10} "
          f"{'retransmits':>11}")
    for run in runs:
        name = "netweft" if run.loss == 0 else f"netweft {run.loss:.0%} loss"
        print(f"{name:<20} {run.goodput_gbps:>14.3f} {run.virtual_s:>10.6f} {run.lost:>10} "
              f"{run.retransmits:>11}")
    print(f"ratio netweft {args.loss:.0%} loss / netweft loss-free goodput: {ratio:.2f}x")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"settings": {k: v for k, v in kwargs.items()} | {"loss": args.loss},
                       "results": [asdict(r) | {"goodput_gbps": r.goodput_gbps} for r in runs],
                       "ratios": {f"netweft {args.loss:.0%} loss / netweft loss-free goodput":
                                  ratio}}, fh, indent=2)
    return 0


def add_parser(perf: argparse._SubParsersAction) -> None:
    """Add ``netweft perf sim`` to the ``perf`` subcommands."""
    p = perf.add_parser("sim", help="goodput with and without loss in the deterministic simulation")
    p.add_argument("--loss", type=opt.probability, default=0.01, help="loss probability (0.01)")
    p.add_argument("--msg-size", type=opt.size, default=1 << 20, help="bytes per write (1m)")
    p.add_argument("--count", type=opt.count, default=32, help="writes, >= 1 (32)")
    p.add_argument("--depth", type=opt.depth, default=8, help="writes in flight, >= 1 (8)")
    p.add_argument("--rate-gbps", type=opt.float_above("rate-gbps", 0.0), default=10.0,
                   help="link rate, > 0 (10)")
    p.add_argument("--delay-us", type=opt.float_above("delay-us", 0.0, inclusive=True),
                   default=5.0, help="one-way delay, >= 0 (5)")
    p.add_argument("--mtu", type=opt.path_mtu, default=9000,
                   help=f"path MTU, {opt.MTU_MIN}..{opt.MTU_MAX} (9000)")
    p.add_argument("--seed", type=opt.int_range("seed", 0), default=1)
    p.add_argument("--engine", type=opt.setting, action="append", default=[],
                   metavar="KEY=VALUE",
                   help="an engine setting, e.g. reorder_pkts=16 (repeatable)")
    p.add_argument("--json", metavar="FILE", type=opt.json_file,
                   help="also write the raw numbers to FILE")
    p.add_argument("--reliability", type=opt.reliability_arg, default="sr",
                   help="loss repair: sr (default), ec:K,M or adaptive")
    p.set_defaults(func=_main)
