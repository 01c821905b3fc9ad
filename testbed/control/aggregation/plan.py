"""What every switch of a fabric running ``p4/aggregation.p4`` holds for a set of jobs,
computed once from the wiring and the jobs (sans-IO).

Per switch, as writes by name (:mod:`..entries`): a ``MyIngress.ipv4_routes``
entry per host (``forward(dmac, port)``, from the fabric controller's route
computation, :func:`~..fabric.routes.compute_routes`), one per job's service
address on every switch but the one that aggregates the job (towards it), and on
that switch the job's multicast group and entries (:meth:`~.job.AggregationJob.
writes`). The program has one next hop per route: where the fabric has several
of equal cost, the route takes the lowest port. The plan is installed in process
(:func:`~..in_process_installer.install_in_process`) or over P4Runtime
(:func:`~..p4runtime_installer.install_writes`), to the same state.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from netweft.testbed.control.aggregation.job import (
    AggregationConfigError,
    AggregationJob,
    clash,
)
from netweft.testbed.control.entries import Lpm, TableWrite, Write
from netweft.testbed.control.fabric.graph import FabricGraph
from netweft.testbed.control.fabric.plan import NextHop
from netweft.testbed.control.fabric.routes import (
    compute_routes,
    equal_cost_next_hops,
    switch_distances,
)


@dataclass
class AggregationPlan:
    """Each switch's writes, in the order they go in (a job's ``agg_jobs`` entry after
    its group and workers), and the jobs, by the switch that aggregates them."""

    writes: dict[str, list[Write]]
    jobs: dict[str, list[AggregationJob]]


def route_write(address: str, hop: NextHop) -> TableWrite:
    """aggregation.p4's route to ``address``/32: out of ``hop``'s port to its MAC."""
    return TableWrite("ipv4_routes", (("dstAddr", Lpm(address, 32)),), "forward",
                      (("dmac", hop.mac), ("port", hop.port)))


def plan_aggregation(graph: FabricGraph, jobs: Mapping[str, Sequence[AggregationJob]]
                     ) -> AggregationPlan:
    """The plan of ``graph`` with ``jobs`` (by the switch that aggregates them); raises
    :class:`~.job.AggregationConfigError` for jobs that cannot sit together."""
    services = _aggregators(graph, jobs)
    routes = compute_routes(graph)
    writes: dict[str, list[Write]] = {}
    for name in graph.switches:
        out: list[Write] = [route_write(str(r.prefix.network_address), r.next_hops[0])
                            for r in routes[name].routes]
        for service, aggregator in services.items():
            if aggregator != name:
                hops = equal_cost_next_hops(graph, name, switch_distances(graph, aggregator))
                if hops:  # else: no link joins the two (as for an unreachable host)
                    out.append(route_write(service, hops[0]))
        for job in jobs.get(name, ()):
            out += job.writes()
        writes[name] = out
    return AggregationPlan(writes, {name: list(js) for name, js in jobs.items()})


def _aggregators(graph: FabricGraph, jobs: Mapping[str, Sequence[AggregationJob]]
                 ) -> dict[str, str]:
    """Service address -> the switch that aggregates its jobs; checks the jobs."""
    services: dict[str, str] = {}
    hosts = {str(h.ip): h.host for h in graph.hosts.values()}
    for name, on_switch in sorted(jobs.items()):
        if name not in graph.ports:
            raise AggregationConfigError(f"no switch named {name!r} (switches: "
                                         f"{', '.join(graph.switches)})")
        for i, job in enumerate(on_switch):
            service = str(ipaddress.IPv4Address(job.service_address))
            if service in hosts:
                raise AggregationConfigError(f"job {job.job_id}: service address {service} "
                                             f"is host {hosts[service]}'s")
            for earlier in on_switch[:i]:
                why = clash(job, earlier)
                if why:
                    raise AggregationConfigError(f"{name}: {why}")
            if job.parent is not None:
                continue  # a level of a hierarchical job: routes lead to its root
            other = services.setdefault(service, name)
            if other != name:
                raise AggregationConfigError(f"service address {service} is aggregated on "
                                             f"both {other} and {name}; give each switch its "
                                             "own")
    return services
