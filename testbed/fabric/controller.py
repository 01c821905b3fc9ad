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

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from p4.config.v1 import p4info_pb2

from netweft.testbed.fabric.compute import compute_fabric
from netweft.testbed.fabric.graph import FabricGraph
from netweft.testbed.fabric.installer import InstallError, InstallReport, install_switch
from netweft.testbed.fabric.p4runtime_session import SwitchSession
from netweft.testbed.fabric.settings import FabricSettings


@dataclass(frozen=True)
class Pipeline:
    """A program to set on every switch first: its P4Info and the target's device config
    (BMv2's JSON for simple_switch_grpc, netweft-p4c's output for netweft-switch)."""

    p4info: p4info_pb2.P4Info
    device_config: bytes


def configure_fabric(graph: FabricGraph, addresses: Mapping[str, str],
                     settings: FabricSettings | None = None, *, election_id: int = 1,
                     device_id: int = 0, role: str = "", pipeline: Pipeline | None = None,
                     timeout: float = 10.0,
                     log: Callable[[str], None] = lambda _msg: None) -> list[InstallReport]:
    """Install routes, ECMP groups, multicast trees and settings on every switch of
    ``graph``; ``addresses`` maps each switch to its gRPC address."""
    settings = settings or FabricSettings()
    missing = sorted(set(graph.switches) - set(addresses))
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
    for name in graph.switches:
        with SwitchSession(name, addresses[name], device_id, election_id, role,
                           timeout) as session:
            if pipeline is not None:
                session.set_pipeline(pipeline.p4info, pipeline.device_config)
            report = install_switch(session, plans[name], settings)
        log(report.describe())
        reports.append(report)
    return reports
