"""``netweft perf server|client|pair|sim``: goodput of netweft against kernel TCP on one path.

The server listens on a TCP control port and runs the receiving side of each
test the client asks for; the client runs the tests back to back and prints,
from the same run: goodput, messages per second and CPU per byte for netweft
(RMA writes of whole messages into a registered buffer at the server) and for
kernel TCP (``sendall`` of the same messages), the ratio netweft/TCP, and with
``--loss P`` netweft's goodput with loss P injected by netweft (a socket filter
on both endpoints' receive sockets; this kernel has no netem) against its own
loss-free goodput. ``pair`` runs a server and a client for you over loopback
or over a veth pair between two network namespaces (in
:mod:`netweft.testbed.perf.pair`); ``sim`` (in :mod:`netweft.testbed.perf.sim`)
measures the loss ratio in virtual time.

CPU is user+system time of the client and the server processes (every thread,
including netweft's I/O threads; the kernel's work on the processes' behalf),
divided by the bytes delivered. Every netweft message is checked at the end
(CRC of each slot the client wrote) and the result says whether it matched.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from netweft.testbed.perf import options as opt
from netweft.testbed.perf.goodput import format_report, ratios, run_client
from netweft.testbed.perf.latency import latency_main
from netweft.testbed.perf.pair import run_pair
from netweft.testbed.perf.protocol import CONTROL_PORT, PerfError
from netweft.testbed.perf.server import serve
from netweft.testbed.perf.sim import add_parser as add_sim_parser
from netweft.testbed.perf.sweep import add_options as add_sweep_options
from netweft.testbed.perf.sweep import sweep_main
from netweft.transport.errors import TransportError

MODE_DEFAULTS = {  # mode: (seconds per test, message size)
    "goodput": (3.0, 1 << 20), "latency": (3.0, 64), "sweep": (0.5, 1 << 20),
    "spray": (1.0, 1 << 20)}


def _client_main(args: argparse.Namespace) -> int:
    default_time, default_size = MODE_DEFAULTS[args.mode]
    if len(args.io) > 1 and args.mode != "latency":
        print(f"netweft perf client: --io takes one mode with --mode {args.mode} (a list, "
              "side by side, is for --mode latency)", file=sys.stderr)
        return 2
    if len(args.tx) > 1 and args.mode == "goodput":
        print("netweft perf client: --tx takes one path with --mode goodput (a list, side by "
              "side, is for --mode latency, sweep and spray)", file=sys.stderr)
        return 2
    args.time = args.time or default_time
    args.msg_size = args.msg_size or default_size
    if args.mode == "latency":
        return latency_main(args)
    args.io = args.io[0]
    if args.mode in ("sweep", "spray"):
        return sweep_main(args)
    if args.plot:
        print("netweft perf client: --plot draws the latency CDF or the sweep; give "
              "--mode latency, sweep or spray", file=sys.stderr)
        return 2
    args.tx = args.tx[0]
    try:
        results = run_client(args.host, control_port=args.control_port, proto=args.proto,
                             duration=args.time, msg_size=args.msg_size, loss=args.loss,
                             mtu=args.mtu, depth=args.depth, tx=args.tx,
                             window_pkts=args.window, bind=args.bind,
                             engine=dict(args.engine), rounds=args.rounds,
                             reliability=str(args.reliability), io=args.io,
                             post=args.post)
    except (PerfError, TransportError) as exc:
        print(f"netweft perf client: {exc}", file=sys.stderr)
        return 1
    header = (f"netweft perf: client -> {args.host}, {args.time:g} s per test in "
              f"{args.rounds} interleaved rounds, "
              f"{args.msg_size}-byte messages, path MTU {args.mtu}, tx={args.tx}, io={args.io}, "
              f"{args.depth} writes in flight ({args.post} posts), window {args.window}, "
              f"reliability {args.reliability}"
              + "".join(f", {k}={v}" for k, v in args.engine))
    print(format_report(results, header), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": [asdict(r) | {"goodput_gbps": r.goodput_gbps,
                                                "msgs_per_s": r.msgs_per_s,
                                                "cpu_ns_per_byte": r.cpu_ns_per_byte}
                                   for r in results],
                       "ratios": ratios(results)}, fh, indent=2)
    return 0 if all(r.verified for r in results) else 1


def _server_main(args: argparse.Namespace) -> int:
    try:
        serve(args.bind, args.control_port, once=args.once)
    except PerfError as exc:
        print(f"netweft perf server: {exc}", file=sys.stderr)
        return 1
    return 0


def _add_client_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=tuple(MODE_DEFAULTS), default="goodput",
                   help="goodput (default): one message size, netweft vs TCP; latency: "
                        "ping-pong p50/p99/p99.9 of netweft write and send/recv vs kernel UDP "
                        "and TCP; sweep: sizes x depths x entropy bursts vs TCP; spray: the "
                        "cost of per-packet entropy at one size")
    p.add_argument("--proto", choices=("netweft", "tcp", "both"), default="both",
                   help="what to measure (default both, which prints the ratio; in latency "
                        "mode 'tcp' means the kernel's UDP and TCP ping-pongs)")
    p.add_argument("--time", type=opt.seconds, default=None,
                   help="seconds per test, > 0 (default 3; sweep and spray: per grid point, "
                        "0.5 and 1)")
    p.add_argument("--rounds", type=opt.rounds, default=3,
                   help="interleave the tests in this many rounds, >= 1 (default 3)")
    p.add_argument("--msg-size", type=opt.size, default=None,
                   help="bytes per message (default 1m; latency mode 64)")
    p.add_argument("--loss", type=opt.probability, default=0.0,
                   help="also run netweft with this random loss injected at both ends")
    p.add_argument("--mtu", type=opt.path_mtu, default=9000,
                   help=f"path MTU in bytes, {opt.MTU_MIN}..{opt.MTU_MAX} (default 9000)")
    p.add_argument("--depth", type=opt.depth, default=8,
                   help="netweft writes in flight, >= 1 (default 8)")
    p.add_argument("--tx", type=opt.tx_modes, default=("ports",),
                   help="netweft packet path at both ends: ports (default; kernel UDP "
                        "sockets, one per entropy source port), socket (one socket), raw "
                        "(IPPROTO_RAW), packet (AF_PACKET rings and a tcx program: no "
                        "kernel IP/UDP stack per packet; root, Linux 6.6+); latency, sweep "
                        "and spray take a list (ports,packet) and run each side by side"),
    p.add_argument("--io", type=opt.io_modes, default=("thread",),
                   help="netweft I/O mode at both ends: thread (default; the I/O thread moves "
                        "every packet), inline (posts send and waits receive in the "
                        "application's thread), busy (inline plus busy polling); latency "
                        "mode takes a list (thread,inline,busy) and runs each side by side")
    p.add_argument("--post", choices=("batch", "single"), default="batch",
                   help="how the netweft client posts and reaps writes: batch (default; "
                        "peer.write_many refills the depth in one call, cq.poll_batch reaps) "
                        "or single (peer.write and a Completion object per message)")
    p.add_argument("--window", type=opt.window, default=4096,
                   help="netweft window in packets, a power of two from 64 to 4096 (default "
                        "4096: room to keep sending while a loss is repaired)")
    p.add_argument("--engine", type=opt.setting, action="append", default=[],
                   metavar="KEY=VALUE",
                   help="an engine setting for both ends, e.g. reorder_pkts=64 (repeatable)")
    p.add_argument("--reliability", type=opt.reliability_arg, default="sr",
                   help="loss repair of the netweft writes: sr (selective repeat, default), "
                        "ec:K,M (K data + M parity packets per block) or adaptive")
    p.add_argument("--json", metavar="FILE", type=opt.json_file,
                   help="also write the raw numbers to FILE")
    p.add_argument("--plot", metavar="PNG", type=opt.output_file,
                   help="latency: draw the round-trip CDFs; sweep/spray: goodput and messages/s "
                        "against size (or burst), into PNG")
    add_sweep_options(p)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft perf server|client|pair``."""
    p = sub.add_parser("perf", help="measure netweft against kernel TCP (iperf-like)")
    perf = p.add_subparsers(dest="perf_command", metavar="ROLE", required=True)
    s = perf.add_parser("server", help="serve perf tests")
    s.add_argument("--bind", default="0.0.0.0", help="address to listen on")
    s.add_argument("--control-port", type=opt.listen_port, default=CONTROL_PORT,
                   help=f"TCP control port (default {CONTROL_PORT}; 0 = any free port)")
    s.add_argument("--once", action="store_true", help="exit after one client")
    s.set_defaults(func=_server_main)
    c = perf.add_parser("client", help="run tests against a perf server")
    c.add_argument("host", help="the server's address")
    c.add_argument("--control-port", type=opt.port, default=CONTROL_PORT,
                   help=f"the server's TCP control port (default {CONTROL_PORT})")
    c.add_argument("--bind", help="local address for netweft (default: the route's source)")
    _add_client_options(c)
    c.set_defaults(func=_client_main)
    pr = perf.add_parser("pair", help="run a server and a client here, over loopback or veth")
    pr.add_argument("--path", choices=("loopback", "veth"), default="loopback")
    pr.add_argument("--offloads", choices=("on", "off"), default="on",
                    help="veth checksum/TSO/GSO/GRO offloads (default on, as on real hosts)")
    _add_client_options(pr)
    pr.set_defaults(func=run_pair)
    add_sim_parser(perf)
