"""The fabric controller: compute every switch's plan from the wiring and install it.

Switches are reached by gRPC address, so the same call configures netweft's
switch processes (``unix:PATH``), ``netweft-switch``, BMv2's
``simple_switch_grpc`` or a hardware switch (``HOST:PORT``)::

    graph = graph_from_topology(load_topology("leaf-spine.yaml"))
    configure_fabric(graph, {"leaf1": "unix:/.../leaf1.grpc", ...},
                     FabricSettings(default_spray="round_robin",
                                    ecn=[PortThreshold(20)]))
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from p4.config.v1 import p4info_pb2

from netweft.emulation.network import Network
from netweft.p4.programs import program as shipped_program
from netweft.testbed.control.fabric.compute import compute_fabric
from netweft.testbed.control.fabric.graph import FabricGraph, graph_from_network
from netweft.testbed.control.fabric.installer import InstallError, InstallReport, install_switch
from netweft.testbed.control.fabric.settings import FabricSettings
from netweft.testbed.control.p4runtime_session import SwitchSession
from netweft.testbed.topology import DEFAULT_PROGRAM


@dataclass(frozen=True)
class Pipeline:
    """A program to set on every switch first: its P4Info and the target's device config
    (BMv2's JSON for simple_switch_grpc, netweft-p4c's output for netweft-switch)."""

    p4info: p4info_pb2.P4Info
    device_config: bytes


def configure_fabric(graph: FabricGraph, addresses: Mapping[str, str],
                     settings: FabricSettings | None = None, *, election_id: int = 1,
                     device_id: int = 0, role: str = "", pipeline: Pipeline | None = None,
                     timeout: float = 10.0, switches: Collection[str] | None = None,
                     log: Callable[[str], None] = lambda _msg: None) -> list[InstallReport]:
    """Install routes, ECMP groups, multicast trees and settings on every switch of
    ``graph`` (or only on ``switches``; the plans are the whole fabric's);
    ``addresses`` maps each switch to its gRPC address."""
    settings = settings or FabricSettings()
    chosen = sorted(graph.switches if switches is None else switches)
    missing = sorted(set(chosen) - set(addresses))
    if missing:
        raise InstallError(f"no P4Runtime address for switch(es) {', '.join(missing)}")
    for rule in settings.ecn + settings.trim:
        if rule.switch is not None and rule.switch not in graph.ports:
            raise InstallError(f"a threshold names switch {rule.switch!r}, which the fabric "
                               f"does not have (switches: {', '.join(graph.switches)})")
        if rule.port is not None and rule.port not in graph.ports.get(rule.switch, {}):
            raise InstallError(f"a threshold names port {rule.port} of {rule.switch}, which "
                               f"has ports {', '.join(map(str, graph.ports[rule.switch]))}")
    plans = compute_fabric(graph, settings.multicast)
    reports = []
    for name in chosen:
        with SwitchSession(name, addresses[name], device_id, election_id, role,
                           timeout) as session:
            if pipeline is not None:
                session.set_pipeline(pipeline.p4info, pipeline.device_config)
            report = install_switch(session, plans[name], settings)
        log(report.describe())
        reports.append(report)
    return reports


def fabric_switches(net: Network) -> list[str]:
    """The switches of ``net`` the controller configures: those running fabric.p4 (the
    default program) with no runtime file or command list of their own."""
    fabric = shipped_program(DEFAULT_PROGRAM).resolve()
    return [s.name for s in net.switches
            if s.program is not None and s.program.resolve() == fabric
            and s.runtime is None and s.commands is None and s.grpc_address]


def configure_network(net: Network, settings: FabricSettings | None = None,
                      log: Callable[[str], None] = lambda _msg: None) -> list[InstallReport]:
    """Configure the fabric.p4 switches of a running network (see :func:`fabric_switches`)
    over their P4Runtime servers; nothing if none runs fabric.p4."""
    chosen = fabric_switches(net)
    if not chosen:
        return []
    addresses = {s.name: s.grpc_address for s in net.switches if s.grpc_address}
    return configure_fabric(graph_from_network(net), addresses, settings, switches=chosen,
                            log=log)
