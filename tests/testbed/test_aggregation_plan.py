"""One plan per program: aggregation.p4's plan for the leaf-spine's wiring and a job, and
its two installers. In process (SoftSwitch's API) and over P4Runtime (a switch served
by an in-process P4Runtime server) leave the same tables, groups and registers, read
back through SoftSwitch's API on both."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.programs import program as shipped_program
from netweft.testbed.control.aggregation.job import AggregationConfigError
from netweft.testbed.control.aggregation.placement import job_on_fabric
from netweft.testbed.control.aggregation.plan import plan_aggregation, route_write
from netweft.testbed.control.entries import (
    InstallError,
    Lpm,
    MulticastWrite,
    RegisterWrite,
    TableWrite,
)
from netweft.testbed.control.fabric.graph import graph_from_topology
from netweft.testbed.control.fabric.plan import NextHop
from netweft.testbed.control.in_process_installer import install_in_process
from netweft.testbed.control.p4runtime_installer import install_writes
from netweft.testbed.control.p4runtime_session import SwitchSession
from netweft.testbed.topology import load_topology

TOPOLOGY = Path(__file__).resolve().parents[2] / "testbed" / "topologies" / "leaf-spine.yaml"
SERVICE = "10.0.0.254"
HOSTS = ["h1", "h2", "h3", "h4"]


@pytest.fixture(scope="module")
def graph():
    return graph_from_topology(load_topology(TOPOLOGY))


@pytest.fixture(scope="module")
def compiled():
    return compile_p4(str(shipped_program("aggregation")))


def _job(graph, job_id=1, base=0, size=16, hosts=HOSTS, switch="spine1", service=SERVICE):
    return job_on_fabric(graph, switch, job_id, service, base, size, hosts, 40000)


def _hop(graph, switch, peer):
    link = next(lk for lk in graph.neighbours(switch) if lk.peer == peer)
    return NextHop(link.port, link.peer_mac)


def test_routes_and_the_job_per_switch(graph):
    job = _job(graph)
    plan = plan_aggregation(graph, {"spine1": [job]})
    assert sorted(plan.writes) == graph.switches and plan.jobs == {"spine1": [job]}
    # leaf1: its own hosts out of their ports, the rest and the service over spine1
    # (two equal-cost spines: aggregation.p4 routes by one next hop, the lowest port)
    to_spine1 = _hop(graph, "leaf1", "spine1")
    h1 = graph.hosts["h1"]
    assert plan.writes["leaf1"] == [
        route_write("10.0.1.1", NextHop(h1.port, h1.mac)),
        route_write("10.0.1.2", NextHop(graph.hosts["h2"].port, graph.hosts["h2"].mac)),
        route_write("10.0.2.3", to_spine1), route_write("10.0.2.4", to_spine1),
        route_write(SERVICE, to_spine1)]
    # spine2 reaches spine1's service through a leaf (the lowest port)
    assert plan.writes["spine2"][-1] == route_write(SERVICE, _hop(graph, "spine2", "leaf1"))
    # spine1 aggregates: host routes, no service route, the job last (agg_jobs last of all)
    assert plan.writes["spine1"][4:] == job.writes()
    assert not any(w == route_write(SERVICE, _hop(graph, "spine1", "leaf1"))
                   for w in plan.writes["spine1"])
    assert route_write("10.0.0.1", NextHop(1, "02:00:00:00:00:01")) == TableWrite(
        "ipv4_routes", (("dstAddr", Lpm("10.0.0.1", 32)),), "forward",
        (("dmac", "02:00:00:00:00:01"), ("port", 1)))


def test_jobs_that_cannot_sit_together_are_refused(graph):
    with pytest.raises(AggregationConfigError, match="overlap job 1's 0..15"):
        plan_aggregation(graph, {"spine1": [_job(graph), _job(graph, 2, base=8)]})
    with pytest.raises(AggregationConfigError, match="10.0.0.254 is aggregated on both "
                                                     "leaf1 and spine1"):
        plan_aggregation(graph, {"spine1": [_job(graph)],
                                 "leaf1": [_job(graph, 2, 16, switch="leaf1")]})
    with pytest.raises(AggregationConfigError, match="10.0.1.1 is host h1's"):
        plan_aggregation(graph, {"spine1": [_job(graph, service="10.0.1.1")]})
    with pytest.raises(AggregationConfigError, match="no switch named 's9'"):
        plan_aggregation(graph, {"s9": [_job(graph)]})
    two = plan_aggregation(graph, {"spine1": [_job(graph), _job(graph, 2, base=16)]})
    assert two.writes["spine1"][4:] == _job(graph).writes() + _job(graph, 2, 16).writes()


def _state(switch: SoftSwitch) -> dict:
    """Everything the control plane set, through SoftSwitch's API and state."""
    return {
        "tables": {name: ([(e.match, e.action, e.args, e.priority)
                           for e in switch.table_entries(name)],
                          table.default_action, table.default_args)
                   for name, table in switch.tables.items()},
        "groups": dict(switch.pre.groups),
        "registers": {name: list(reg.cells) for name, reg in switch.registers.items()},
    }


def _over_p4runtime(compiled, name: str, writes) -> SoftSwitch:
    """A switch given ``writes`` through its P4Runtime server, by the P4Runtime installer."""
    def no_loader(_config: bytes):
        raise ValueError("the test loads its program directly")

    switch = SoftSwitch(compiled)
    device = Device(no_loader, device_id=0)
    device.install(build_p4info(compiled), b"", switch=switch)
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    try:
        with SwitchSession(name, server.target) as session:
            install_writes(session, writes)
    finally:
        server.stop(0)
    return switch


def test_both_installers_leave_the_same_state(graph, compiled):
    job = _job(graph)
    plan = plan_aggregation(graph, {"spine1": [job], "leaf2": [_job(
        graph, 2, 0, 8, ["h3", "h4"], "leaf2", "10.0.0.253")]})
    # and every other kind of write: a default action, register cells
    extra = {"leaf1": [TableWrite("ipv4_routes", (), "drop", default=True),
                       RegisterWrite("bitmap", 3, 0b101), RegisterWrite("count", 2047, 2)]}
    for name in graph.switches:
        writes = plan.writes[name] + extra.get(name, [])
        here = SoftSwitch(compiled)
        install_in_process(here, writes, name)
        there = _over_p4runtime(compiled, name, writes)
        assert _state(here) == _state(there), name
        routes = here.table_entries("MyIngress.ipv4_routes")
        # a route per host and per service address aggregated elsewhere
        assert len(routes) == len(HOSTS) + 2 - (name in ("spine1", "leaf2"))
    state = _state(here)  # the last switch, spine2: routes only
    assert state["groups"] == {}
    spine1 = SoftSwitch(compiled)
    install_in_process(spine1, plan.writes["spine1"], "spine1")
    assert spine1.pre.groups == {job.group: [(w.port, w.worker_id) for w in job.workers]}
    assert len(spine1.table_entries("agg_workers")) == len(HOSTS)


def test_a_refused_write_is_named_by_both_installers(compiled):
    duplicate = MulticastWrite(7, ((1, 0),))
    with pytest.raises(InstallError, match=r"s1: multicast group 7 -> ports 1: .*exists"):
        install_in_process(SoftSwitch(compiled), [duplicate, duplicate], "s1")
    with pytest.raises(InstallError, match=r"s1 \(127.*\) refused 1 update\(s\): multicast "
                                           r"group 7 -> ports 1: ALREADY_EXISTS"):
        _over_p4runtime(compiled, "s1", [duplicate, duplicate])
    with pytest.raises(InstallError, match=r"s1: table ipv4_routes .* -> forward\(dmac=x.*"):
        install_in_process(SoftSwitch(compiled), [TableWrite(
            "ipv4_routes", (("dstAddr", Lpm("10.0.0.1", 32)),), "forward",
            (("dmac", "x"), ("port", 1)))], "s1")
