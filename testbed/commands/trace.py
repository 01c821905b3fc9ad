"""``netweft trace``: the engine's event trace as JSON lines and a time-sequence plot.

``netweft trace sim`` runs an N -> 1 incast in the deterministic simulation
with every engine tracing (``Endpoint.trace_start``), writes all events as
JSON lines (one object per event: t_ns, host, pdc, event, psn, value, flags)
and draws one sender's time-sequence plot: PSN over time with resends, losses
and trim NACKs marked, and its window, credit or rate over time. ``netweft
trace plot FILE`` draws the plot from a JSON-lines file, e.g. one written from
``Endpoint.trace_events()`` of UDP endpoints.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from netweft.testbed.arg_types import existing_file, int_in
from netweft.testbed.command_line import CommandError

MODES = ("none", "nscc", "rccc", "nscc+rccc", "dcqcn")


def _run_sim(args: argparse.Namespace) -> int:
    import numpy as np

    from netweft.testbed.plots import plot_time_sequence
    from netweft.transport import Simulation
    from netweft.transport.sim.wire import Link
    from netweft.transport.trace import write_jsonl

    rate = args.rate_gbps * 1e9
    link = Link(rate_bps=rate, delay_ns=args.delay_ns, queue_pkts=args.queue,
                ecn_threshold_pkts=args.ecn_threshold, trim=not args.no_trim)
    sim = Simulation(seed=args.seed, link=link, mtu=args.mtu, cc_mode=args.cc,
                     link_rate_mbps=int(args.rate_gbps * 1000),
                     cc_base_rtt_ns=args.base_rtt_ns or
                     2 * args.delay_ns + 2 * link.serialization_ns(args.mtu),
                     max_peers=max(64, args.senders + 1))
    dst = sim.endpoint()
    senders = [sim.endpoint() for _ in range(args.senders)]
    for ep in (dst, *senders):
        ep.trace_start(args.capacity)
    region = dst.register(np.zeros(args.size * args.senders, np.uint8))
    for i, ep in enumerate(senders):
        data = np.full(args.size, i % 256, np.uint8)
        ep.connect(dst.address).write(ep.register(data), region.remote(),
                                      remote_offset=i * args.size)
    done: dict[int, int] = {}
    while len(done) < len(senders):
        for i, ep in enumerate(senders):
            if i not in done and (c := ep.cq.poll()):
                c[0].check()
                done[i] = sim.loop.now_ns
        if len(done) < len(senders) and not sim.loop.step():
            raise CommandError("the simulation went idle before every write completed")
    per_host = {ep: ep.trace_events() for ep in (dst, *senders)}
    events = sorted((e for evs in per_host.values() for e in evs), key=lambda e: e.t_ns)
    n = write_jsonl(events, args.out)
    counts = Counter(e.event for e in events)
    print(f"{args.senders} -> 1 incast, {args.size} bytes each, cc {args.cc}, "
          f"{args.rate_gbps:g} Gbit/s, queue {args.queue} packets, "
          f"{'no trimming' if args.no_trim else 'trimming'}: finished at "
          f"{sim.now * 1e6:.1f} us (virtual)")
    print(f"{n} events -> {args.out}")
    for name, count in sorted(counts.items()):
        print(f"  {name:18s} {count}")
    fct = sorted(t / 1e3 for t in done.values())
    ideal = args.senders * args.size * 8 / rate * 1e6
    thr = [args.size / t for t in fct]
    jain = sum(thr) ** 2 / (len(thr) * sum(x * x for x in thr))
    resent = sum(ep.stats()["retransmits"] for ep in senders)
    print(f"completion min/mean/max {fct[0]:.0f}/{sum(fct) / len(fct):.0f}/{fct[-1]:.0f} us, "
          f"ideal {ideal:.0f} us, utilization {ideal / fct[-1]:.3f}, Jain {jain:.3f}, "
          f"peak queue {sim.downlink(dst).counters.peak_packets} packets")
    print(f"queue drops {sim.counters['queue_drops']}, trims {sim.counters['trims']}, "
          f"CE marks {sim.counters['ce_marks']}, resent {resent}")
    if args.plot:
        flow = per_host[senders[args.flow]]
        title = (f"sender {args.flow} of {args.senders} -> 1, cc {args.cc}")
        plot_time_sequence(flow, args.plot, title)
        print(f"time-sequence plot of sender {args.flow} -> {args.plot}")
    return 0


def _run_plot(args: argparse.Namespace) -> int:
    from netweft.testbed.plots import plot_time_sequence
    from netweft.transport.trace import read_jsonl

    try:
        events = read_jsonl(args.file)
    except (ValueError, TypeError, KeyError) as exc:
        raise CommandError(f"{args.file} is not a netweft trace (JSON lines from "
                           f"'netweft trace sim' or write_jsonl): {exc}") from None
    hosts = sorted({e.host for e in events})
    host = args.host or next((h for h in hosts if any(
        e.host == h and e.event == "sent" for e in events)), None)
    if host is None:
        raise CommandError(f"{args.file} has no sent packets to plot")
    if host not in hosts:
        raise CommandError(f"no events of host {host} in {args.file}; hosts: {', '.join(hosts)}")
    sel = [e for e in events if e.host == host and (args.pdc is None or e.pdc == args.pdc)]
    out = args.plot or args.file.with_suffix(".png")
    plot_time_sequence(sel, out, f"{host}" + (f" PDC {args.pdc}" if args.pdc is not None else ""))
    print(f"time-sequence plot of {host} ({len(sel)} events) -> {out}")
    return 0


def _check(args: argparse.Namespace) -> int:
    if args.flow >= args.senders:
        raise CommandError(f"--flow {args.flow} names no sender: give 0..{args.senders - 1}")
    return _run_sim(args)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``netweft trace``."""
    p = subparsers.add_parser("trace", help="the transport engine's event trace: JSON lines "
                                            "and a time-sequence plot")
    sub = p.add_subparsers(dest="trace_command", metavar="WHAT", required=True)
    s = sub.add_parser("sim", help="trace an N -> 1 incast in the simulation")
    s.add_argument("--senders", type=int_in(1, 256), default=8, help="senders (default 8)")
    s.add_argument("--size", type=int_in(1, 1 << 30), default=1 << 20,
                   help="bytes each sender writes (default 1048576)")
    s.add_argument("--cc", choices=MODES, default="rccc",
                   help="congestion-control mode of every engine (default rccc)")
    s.add_argument("--rate-gbps", type=int_in(1, 1600), default=100,
                   help="link rate, Gbit/s (default 100)")
    s.add_argument("--delay-ns", type=int_in(0, 10_000_000), default=3500,
                   help="propagation delay per link, ns (default 3500: an unloaded RTT of "
                        "about 7.7 us with full packets, near UEC's two-tier 9.35 us)")
    s.add_argument("--mtu", type=int_in(1024, 9000), default=4096,
                   help="UDP payload bytes per packet (default 4096)")
    s.add_argument("--queue", type=int_in(1, 1 << 20), default=29,
                   help="receiver downlink queue, packets (default 29, about one BDP)")
    s.add_argument("--ecn-threshold", type=int_in(0, 1 << 20), default=12,
                   help="mark CE from this queue depth on, packets; 0 = never (default 12, "
                        "about half a BDP)")
    s.add_argument("--no-trim", action="store_true", help="drop instead of trimming when full")
    s.add_argument("--base-rtt-ns", type=int_in(0, 10_000_000_000), default=0,
                   help="the engines' cc_base_rtt_ns; 0 = 2 x delay + 2 packet times "
                        "(the unloaded RTT of a full packet)")
    s.add_argument("--seed", type=int_in(0), default=1, help="simulation seed (default 1)")
    s.add_argument("--capacity", type=int_in(1, 1 << 24), default=1 << 20,
                   help="events each engine's ring holds (default 1048576)")
    s.add_argument("--flow", type=int_in(0), default=0, help="sender to plot (default 0)")
    s.add_argument("--out", type=Path, default=Path("trace.jsonl"),
                   help="JSON-lines output (default trace.jsonl)")
    s.add_argument("--plot", type=Path, help="PNG of the plotted sender's time sequence")
    s.set_defaults(func=_check)
    pl = sub.add_parser("plot", help="draw the time-sequence plot of a JSON-lines trace")
    pl.add_argument("file", type=existing_file, help="JSON lines (netweft trace sim, write_jsonl)")
    pl.add_argument("--host", help="ip:port of the sender to plot (default: the first that sent)")
    pl.add_argument("--pdc", type=int_in(0), help="only this PDC (peer handle)")
    pl.add_argument("--plot", type=Path, help="PNG to write (default FILE with .png)")
    pl.set_defaults(func=_run_plot)
