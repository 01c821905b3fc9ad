"""``netweft fabric``: the fabric controller from the command line.

``netweft fabric routes TOPO`` prints what the controller computes for a
topology (routes, ECMP groups, multicast trees) without touching a switch.
``netweft fabric install`` installs it over P4Runtime: on a testbed that
``netweft up`` runs (``--testbed NAME``; its switches serve P4Runtime on Unix
sockets), or on any switches by gRPC address (``--topology FILE --switch
NAME=HOST:PORT ...``: BMv2's simple_switch_grpc, netweft-switch, hardware).
Installing again changes only what differs::

    netweft fabric install --testbed leaf-spine --spray-default round_robin \\
        --spray 10.0.2.0/24=adaptive --ecn-threshold 20 --trim-threshold 64 \\
        --multicast 239.1.1.1=h2,h3,h4
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from netweft.emulation.network import NetworkError
from netweft.testbed import up_registry
from netweft.testbed.arg_types import existing_file, int_in
from netweft.testbed.command_line import CommandError
from netweft.testbed.control.fabric.compute import compute_fabric
from netweft.testbed.control.fabric.controller import Pipeline, configure_fabric
from netweft.testbed.control.fabric.graph import FabricGraphError, graph_from_topology
from netweft.testbed.control.fabric.installer import InstallError
from netweft.testbed.control.fabric.multicast import MulticastError
from netweft.testbed.control.fabric.plan import SwitchPlan
from netweft.testbed.control.fabric.settings import (
    SPRAY_MODES,
    FabricSettings,
    SettingsError,
    parse_multicast,
    parse_spray,
    parse_threshold,
    spray_mode,
)
from netweft.testbed.control.p4runtime_session import SessionError
from netweft.testbed.topology import TopologyError, load_topology


def _argtype(parse):
    def wrapped(text: str):
        try:
            return parse(text)
        except SettingsError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    wrapped.__name__ = "setting"
    return wrapped


def _switch_address(text: str) -> tuple[str, str]:
    name, sep, address = text.partition("=")
    if not sep or not name or not address:
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME=ADDRESS, e.g. "
                                         "s1=127.0.0.1:50051 or s1=unix:/run/s1.grpc")
    return name, address


def settings_from(args: argparse.Namespace) -> FabricSettings:
    """The settings the options give (multicast groups numbered from 1 unless given)."""
    given = [g.group_id for g in args.multicast if g.group_id]
    if len(set(given)) != len(given):
        raise CommandError("two --multicast groups have the same id; give each its own ID:")
    free = (n for n in range(1, 65536) if n not in given)
    groups = [g if g.group_id else replace(g, group_id=next(free)) for g in args.multicast]
    return FabricSettings(default_spray=getattr(args, "spray_default", "flow_hash"),
                          spray=dict(getattr(args, "spray", [])),
                          ecn=list(getattr(args, "ecn_threshold", [])),
                          trim=list(getattr(args, "trim_threshold", [])), multicast=groups)


def settings_argv(args: argparse.Namespace) -> list[str]:
    """The settings options of ``args`` as command-line words (for a child ``netweft up``)."""
    def threshold(rule) -> str:
        where = "" if rule.switch is None else (
            f"{rule.switch}=" if rule.port is None else f"{rule.switch}:{rule.port}=")
        return f"{where}{rule.packets}"

    out = ["--spray-default", args.spray_default]
    out += [f"--spray={net}={mode}" for net, mode in args.spray]
    out += [f"--ecn-threshold={threshold(r)}" for r in args.ecn_threshold]
    out += [f"--trim-threshold={threshold(r)}" for r in args.trim_threshold]
    for g in args.multicast:
        acks = f"/acks={g.sender}" if g.sender else ""
        head = f"{g.group_id}:" if g.group_id else ""
        out.append(f"--multicast={head}{g.address}={','.join(g.members)}{acks}")
    return out


def format_plan(plans: dict[str, SwitchPlan]) -> str:
    lines = []
    for name, plan in plans.items():
        lines.append(f"{name}:")
        for route in plan.routes:
            if route.group is not None:
                via = (f"group {route.group.group_id} (ports "
                       f"{', '.join(str(h.port) for h in route.group.members)})")
            else:
                via = f"port {route.next_hop.port} to {route.next_hop.mac}"
            lines.append(f"  {str(route.prefix):<18} {route.host:<8} {via}")
        for tree in plan.multicast:
            lines.append(f"  multicast {tree.group_id} {tree.address}: ports "
                         f"{', '.join(map(str, tree.ports))}")
        for host in plan.unreachable:
            lines.append(f"  {host}: unreachable")
    return "\n".join(lines)


def _routes(args: argparse.Namespace) -> int:
    try:
        graph = graph_from_topology(load_topology(args.topology))
        plans = compute_fabric(graph, settings_from(args).multicast)
    except (TopologyError, FabricGraphError, MulticastError, NetworkError) as err:
        raise CommandError(str(err)) from None
    print(format_plan(plans))
    return 0


def _pipeline(args: argparse.Namespace) -> Pipeline | None:
    if args.p4info is None and args.device_config is None:
        return None
    if args.p4info is None or args.device_config is None:
        raise CommandError("give --p4info and --device-config together (the program's P4Info "
                           "and the target's compiled program)")
    info = p4info_pb2.P4Info()
    try:
        text_format.Parse(args.p4info.read_text(), info)
    except text_format.ParseError as err:
        raise CommandError(f"{args.p4info}: {err}") from None
    return Pipeline(info, args.device_config.read_bytes())


def _install(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    try:
        if args.testbed is not None or args.topology is None:
            if args.switch:
                raise CommandError("--switch goes with --topology; --testbed finds the "
                                   "switches of a running testbed itself")
            record = up_registry.find(args.testbed)
            addresses = record.grpc_addresses()
            if not addresses:
                raise CommandError(f"testbed {record.name}'s switches serve no P4Runtime "
                                   "(started by an older netweft?); restart it with netweft up")
            topo = load_topology(record.topology)
        else:
            topo = load_topology(args.topology)
            addresses = dict(args.switch)
            unknown = sorted(set(addresses) - set(topo.switches))
            if unknown:
                raise CommandError(f"--switch names {', '.join(unknown)}, not switches of "
                                   f"{args.topology} ({', '.join(topo.switches)})")
        graph = graph_from_topology(topo)
        configure_fabric(graph, addresses, settings, election_id=args.election_id,
                         device_id=args.device_id, role=args.role, pipeline=_pipeline(args),
                         log=lambda line: print(line, flush=True))
    except (up_registry.RegistryError, TopologyError, FabricGraphError, MulticastError,
            NetworkError, InstallError, SessionError) as err:
        raise CommandError(str(err)) from None
    print(f"fabric configured: {len(graph.switches)} switches, spray {settings.default_spray}"
          + "".join(f", {net} {mode}" for net, mode in settings.spray.items()),
          file=sys.stderr)
    return 0


def add_settings_arguments(p: argparse.ArgumentParser) -> None:
    """The settings options (shared with ``netweft up --fabric``)."""
    p.add_argument("--spray-default", type=_argtype(spray_mode), default="flow_hash",
                   metavar="MODE", help=f"spray mode of every route ({', '.join(SPRAY_MODES)}; "
                   "default flow_hash)")
    p.add_argument("--spray", type=_argtype(parse_spray), action="append", default=[],
                   metavar="PREFIX=MODE", help="spray mode for destinations in PREFIX "
                   "(the longest prefix wins), e.g. 10.0.2.0/24=adaptive; repeatable")
    p.add_argument("--ecn-threshold", action="append", default=[], metavar="N|SW=N|SW:PORT=N",
                   type=_argtype(lambda t: parse_threshold(t, "--ecn-threshold")),
                   help="mark ECN-capable packets CE when the egress queue holds N packets "
                   "or more: on every port, a switch's ports or one port; repeatable")
    p.add_argument("--trim-threshold", action="append", default=[], metavar="N|SW=N|SW:PORT=N",
                   type=_argtype(lambda t: parse_threshold(t, "--trim-threshold")),
                   help="trim netweft data packets that would join an egress queue holding N "
                   "packets or more (fabric.p4); repeatable")
    p.add_argument("--multicast", action="append", default=[], metavar="[ID:]ADDR=H,H,...",
                   type=_argtype(lambda t: parse_multicast(t, 0)),
                   help="a multicast group and its member hosts, e.g. 239.1.1.1=h2,h3,h4 "
                   "(ids from 1 in order unless given); repeatable")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft fabric routes`` and ``netweft fabric install``."""
    p = sub.add_parser("fabric", help="the fabric controller: routes, ECMP groups, multicast "
                       "trees and settings over P4Runtime", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    r = verbs.add_parser("routes", help="print what the controller computes for a topology")
    r.add_argument("topology", type=existing_file, help="netweft YAML or tutorials' JSON")
    r.add_argument("--multicast", action="append", default=[], metavar="[ID:]ADDR=H,H,...",
                   type=_argtype(lambda t: parse_multicast(t, 0)), help="a multicast group to build a tree for; repeatable")
    r.set_defaults(func=_routes)
    i = verbs.add_parser("install", help="install routes, groups, trees and settings on "
                         "every switch over P4Runtime (again: only what changed)")
    where = i.add_mutually_exclusive_group()
    where.add_argument("--testbed", help="a testbed netweft up runs (default: the only one)")
    where.add_argument("--topology", type=existing_file,
                       help="the topology file of switches given by --switch")
    i.add_argument("--switch", type=_switch_address, action="append", default=[],
                   metavar="NAME=ADDRESS", help="a switch's P4Runtime address with --topology "
                   "(HOST:PORT or unix:PATH); repeatable")
    add_settings_arguments(i)
    i.add_argument("--election-id", type=int_in(1, 2**128 - 1), default=1,
                   help="election id; the highest of the role's controllers is primary "
                   "(default 1)")
    i.add_argument("--device-id", type=int_in(0, 2**64 - 1), default=0,
                   help="P4Runtime device id of every switch (default 0)")
    i.add_argument("--role", default="", help="P4Runtime role (default: the default role)")
    i.add_argument("--p4info", type=existing_file, help="set this program first: its P4Info "
                   "(text format, as p4c --p4runtime-files writes it)")
    i.add_argument("--device-config", type=existing_file,
                   help="... and the target's compiled program (BMv2 JSON, netweft-p4c output)")
    i.set_defaults(func=_install)

