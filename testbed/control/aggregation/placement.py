"""Where a job's workers are, seen from the switch that aggregates: a job from a
fabric's wiring (sans-IO: no switch is touched).

Worker ``i`` is the ``i``-th host named. On the aggregating switch its result
copies leave by the port towards it and carry the MAC of whoever is on that
port: the host itself when it hangs off the switch, else the neighbouring
switch on the first link of a shortest path towards the host's switch (the
lowest such port, so the choice is the same every time); that switch routes
the copy on by its IPv4 destination, the worker's address.
"""

from __future__ import annotations

from collections import deque

from netweft.testbed.control.aggregation.job import (
    AggregationConfigError,
    AggregationJob,
    JobWorker,
)
from netweft.testbed.control.fabric.graph import FabricGraph


def first_hops(graph: FabricGraph, switch: str) -> dict[str, tuple[int, str]]:
    """For every switch reachable from ``switch``: (port, neighbour MAC) of the first link
    of a shortest path to it."""
    first: dict[str, tuple[int, str]] = {}
    queue = deque()
    for link in graph.neighbours(switch):
        if link.peer not in first and link.peer != switch:
            first[link.peer] = (link.port, link.peer_mac)
            queue.append(link.peer)
    while queue:
        here = queue.popleft()
        for link in graph.neighbours(here):
            if link.peer != switch and link.peer not in first:
                first[link.peer] = first[here]
                queue.append(link.peer)
    return first


def job_on_fabric(graph: FabricGraph, switch: str, job_id: int, service_address: str,
                  base: int, size: int, hosts: list[str], udp_port: int,
                  multicast_group: int | None = None) -> AggregationJob:
    """The job whose workers are ``hosts`` (in that order), aggregated on ``switch``."""
    if switch not in graph.ports:
        raise AggregationConfigError(f"no switch named {switch!r} (switches: "
                                     f"{', '.join(graph.switches)})")
    unknown = [h for h in hosts if h not in graph.hosts]
    if unknown:
        raise AggregationConfigError(f"no host named {', '.join(unknown)} (hosts: "
                                     f"{', '.join(sorted(graph.hosts))})")
    if len(set(hosts)) != len(hosts):
        raise AggregationConfigError(f"a host is named twice among the workers: "
                                     f"{', '.join(hosts)}")
    hops = first_hops(graph, switch)
    workers = []
    for worker_id, name in enumerate(hosts):
        host = graph.hosts[name]
        if host.switch == switch:
            port, mac = host.port, host.mac
        elif host.switch in hops:
            port, mac = hops[host.switch]
        else:
            raise AggregationConfigError(f"host {name} hangs off {host.switch}, which no "
                                         f"link joins to {switch}")
        workers.append(JobWorker(worker_id, port, mac, str(host.ip), udp_port))
    return AggregationJob(job_id, service_address, base, size, workers, multicast_group)
