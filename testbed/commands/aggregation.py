"""``netweft aggregation``: aggregation jobs on a switch from the command line.

On a testbed that ``netweft up`` runs (``--testbed NAME``, default the only
one), workers are named by host and placed from the topology's wiring; on any
switch by gRPC address (``--topology FILE --address HOST:PORT``: BMv2's
simple_switch_grpc, netweft-switch)::

    netweft aggregation add --switch s1 --job 1 --service 10.0.0.254 \\
        --slots 0:64 --workers h1,h2,h3,h4 --udp-port 40000
    netweft aggregation show --switch s1
    netweft aggregation remove --switch s1 --job 1 --service 10.0.0.254

The controller speaks as P4Runtime role ``aggregation`` by default, so the
fabric controller (the default role) can configure the same switch.
"""

from __future__ import annotations

import argparse
import ipaddress

from netweft.emulation.network import NetworkError
from netweft.testbed import up_registry
from netweft.testbed.arg_types import existing_file, int_in
from netweft.testbed.command_line import CommandError
from netweft.testbed.control.aggregation.controller import (
    EVENTS,
    AggregationConfigError,
    AggregationController,
)
from netweft.testbed.control.aggregation.placement import job_on_fabric
from netweft.testbed.control.fabric.graph import FabricGraphError, graph_from_topology
from netweft.testbed.control.p4runtime_session import SessionError
from netweft.testbed.topology import TopologyError, load_topology


def _ipv4(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IPv4 address") from None


def _slots(text: str) -> tuple[int, int]:
    base, sep, size = text.partition(":")
    if not sep or not base.isdigit() or not size.isdigit() or int(size) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: write BASE:SIZE, e.g. 0:64 (slots 0..63)")
    return int(base), int(size)


def _hosts(text: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    if not names:
        raise argparse.ArgumentTypeError("name the worker hosts, e.g. h1,h2,h3,h4")
    return names


def _where(args: argparse.Namespace):
    """(graph or None, gRPC address) of the switch the command is for."""
    try:
        if args.address is not None:
            if args.testbed is not None:
                raise CommandError("--address goes with --topology; --testbed finds the "
                                   "switch's address itself")
            topo = load_topology(args.topology) if args.topology is not None else None
            address = args.address
        else:
            record = up_registry.find(args.testbed)
            address = record.grpc_addresses().get(args.switch)
            if address is None:
                raise CommandError(f"testbed {record.name} has no switch {args.switch!r} "
                                   "serving P4Runtime (switches: "
                                   f"{', '.join(record.grpc_addresses()) or 'none'})")
            topo = load_topology(record.topology)
        return (graph_from_topology(topo) if topo is not None else None), address
    except (up_registry.RegistryError, TopologyError, FabricGraphError, NetworkError) as err:
        raise CommandError(str(err)) from None


def _connect(args: argparse.Namespace, address: str) -> AggregationController:
    try:
        return AggregationController.connect(args.switch, address, role=args.role,
                                             election_id=args.election_id)
    except (SessionError, AggregationConfigError) as err:
        raise CommandError(str(err)) from None


def _add(args: argparse.Namespace) -> int:
    graph, address = _where(args)
    if graph is None:
        raise CommandError("--workers are host names: give the wiring with --topology FILE "
                           "(or use --testbed)")
    base, size = args.slots
    try:
        job = job_on_fabric(graph, args.switch, args.job, args.service, base, size,
                            args.workers, args.udp_port, args.group)
        with _connect(args, address) as ctl:
            ctl.add_job(job)
    except (AggregationConfigError, SessionError) as err:
        raise CommandError(str(err)) from None
    print(f"{args.switch}: job {job.job_id} at {job.service_address}: slots {base}.."
          f"{base + size - 1}, multicast group {job.group}")
    for w in job.workers:
        print(f"  worker {w.worker_id}: {args.workers[w.worker_id]} {w.address}:{w.udp_port} "
              f"via port {w.port} ({w.mac})")
    return 0


def _show(args: argparse.Namespace) -> int:
    _, address = _where(args)
    try:
        with _connect(args, address) as ctl:
            jobs, events = ctl.jobs(), ctl.events()
    except (AggregationConfigError, SessionError) as err:
        raise CommandError(str(err)) from None
    print(f"{args.switch}: {len(jobs)} job(s)")
    for j in jobs:
        print(f"  job {j.job_id} at {j.service_address}: slots {j.base}..{j.base + j.size - 1}, "
              f"{j.workers} workers, multicast group {j.multicast_group}")
    print("  events: " + ", ".join(f"{name} {events[name]}" for name in EVENTS))
    return 0


def _remove(args: argparse.Namespace) -> int:
    _, address = _where(args)
    try:
        with _connect(args, address) as ctl:
            job = ctl.remove(args.job, args.service)
    except (AggregationConfigError, SessionError) as err:
        raise CommandError(str(err)) from None
    print(f"{args.switch}: removed job {job.job_id} at {job.service_address}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``netweft aggregation`` (under the ``netweft.commands`` entry points)."""
    cmd = subparsers.add_parser("aggregation", help="in-network aggregation jobs on a switch "
                                                    "(over P4Runtime)")
    verbs = cmd.add_subparsers(dest="verb", required=True, metavar="VERB")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--switch", required=True, help="the switch that aggregates")
        p.add_argument("--testbed", help="a testbed netweft up runs (default: the only one)")
        p.add_argument("--topology", type=existing_file,
                       help="the wiring, with --address (netweft YAML or tutorials' JSON)")
        p.add_argument("--address", help="the switch's P4Runtime address, HOST:PORT or "
                                         "unix:PATH (instead of --testbed)")
        p.add_argument("--role", default="aggregation",
                       help="P4Runtime role (default aggregation; '' for the default role)")
        p.add_argument("--election-id", type=int_in(1, 2**64 - 1), default=1,
                       help="election id within the role (default 1)")

    add = verbs.add_parser("add", help="add a job: workers by host name")
    common(add)
    add.add_argument("--job", type=int_in(0, 0xFFFF), required=True, help="job id, 0..65535")
    add.add_argument("--service", type=_ipv4, required=True,
                     help="the job's service address (IPv4) the workers send to")
    add.add_argument("--slots", type=_slots, required=True, help="BASE:SIZE of the job's range")
    add.add_argument("--workers", type=_hosts, required=True,
                     help="worker hosts in worker-id order, comma-separated")
    add.add_argument("--udp-port", type=int_in(1, 65535), default=40000,
                     help="UDP port the workers' results go to (default 40000)")
    add.add_argument("--group", type=int_in(1, 65535), default=None,
                     help="multicast group (default 32768 + job id)")
    add.set_defaults(func=_add)

    show = verbs.add_parser("show", help="the switch's jobs and aggregation events")
    common(show)
    show.set_defaults(func=_show)

    remove = verbs.add_parser("remove", help="remove a job (read back from the switch)")
    common(remove)
    remove.add_argument("--job", type=int_in(0, 0xFFFF), required=True, help="job id")
    remove.add_argument("--service", type=_ipv4, required=True, help="its service address")
    remove.set_defaults(func=_remove)
