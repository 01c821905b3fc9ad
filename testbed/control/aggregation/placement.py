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
from dataclasses import dataclass, replace

from netweft.testbed.control.aggregation.job import (
    AggregationConfigError,
    AggregationJob,
    JobParent,
    JobWorker,
)
from netweft.testbed.control.fabric.graph import FabricGraph, SwitchLink
from netweft.transport.collectives.aggregation.layer import AGG_UDP_PORT


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


def _check_names(graph: FabricGraph, switch: str, hosts: list[str]) -> None:
    """Refuse a switch or worker the fabric does not have, or a worker named twice."""
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


def job_on_fabric(graph: FabricGraph, switch: str, job_id: int, service_address: str,
                  base: int, size: int, hosts: list[str], udp_port: int,
                  multicast_group: int | None = None) -> AggregationJob:
    """The job whose workers are ``hosts`` (in that order), aggregated on ``switch``."""
    _check_names(graph, switch, hosts)
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


@dataclass(frozen=True)
class HierarchicalJob:
    """A job aggregated level by level (docs/collectives.md): the part each switch of the
    tree holds (the root's has no parent), and each worker host's id at its switch,
    which is what the host's worker puts in its packets."""

    root: str
    levels: dict[str, AggregationJob]
    worker_ids: dict[str, int]

    @property
    def workers(self) -> int:
        """Worker hosts in the whole job (what quantization is sized for)."""
        return len(self.worker_ids)


def tree_towards(graph: FabricGraph, root: str) -> dict[str, SwitchLink]:
    """For every switch that reaches ``root``: the link of its first hop on a shortest
    path to ``root`` (the lowest port among equal ones)."""
    up: dict[str, SwitchLink] = {}
    distance = {root: 0}
    frontier = [root]
    while frontier:
        nxt: list[str] = []
        for here in frontier:
            for link in graph.neighbours(here):
                if link.peer not in distance:
                    distance[link.peer] = distance[here] + 1
                    nxt.append(link.peer)
        frontier = sorted(nxt)
    for name, d in distance.items():
        if name == root:
            continue
        links = [link for link in graph.neighbours(name)
                 if distance.get(link.peer, -1) == d - 1]
        up[name] = min(links, key=lambda link: link.port)
    return up


def hierarchy_on_fabric(graph: FabricGraph, root: str, job_id: int, service_address: str,
                        base: int, size: int, hosts: list[str], udp_port: int,
                        multicast_group: int | None = None) -> HierarchicalJob:
    """The job whose workers are ``hosts`` aggregated along the tree of shortest paths
    towards ``root``: every switch with a worker below it sums its children (its own
    hosts first, in ``hosts`` order, then the switches below it, by name) and sends one
    partial sum up; the root's sum comes back down level by level. Every level uses the
    slots ``base .. base+size-1`` of its own switch."""
    _check_names(graph, root, hosts)
    up = tree_towards(graph, root)
    local: dict[str, list[str]] = {}
    below: dict[str, set[str]] = {}
    for name in hosts:
        switch = graph.hosts[name].switch
        if switch != root and switch not in up:
            raise AggregationConfigError(f"host {name} hangs off {switch}, which no link "
                                         f"joins to {root}")
        local.setdefault(switch, []).append(name)
        while switch != root:
            parent = up[switch].peer
            below.setdefault(parent, set()).add(switch)
            switch = parent
    levels: dict[str, AggregationJob] = {}
    worker_ids: dict[str, int] = {}
    child_ids: dict[str, int] = {}
    for switch in sorted(set(local) | set(below) | {root}):
        workers = []
        for name in local.get(switch, []):
            host = graph.hosts[name]
            worker_ids[name] = len(workers)
            workers.append(JobWorker(len(workers), host.port, host.mac, str(host.ip),
                                     udp_port))
        for child in sorted(below.get(switch, ())):
            down = min((li for li in graph.neighbours(switch) if li.peer == child),
                       key=lambda li: li.port)
            child_ids[child] = len(workers)
            workers.append(JobWorker(len(workers), down.port, down.peer_mac, service_address,
                                     AGG_UDP_PORT))
        levels[switch] = AggregationJob(job_id, service_address, base, size, workers,
                                        multicast_group)
    for switch, job in levels.items():
        if switch != root:
            link = up[switch]
            levels[switch] = replace(job, parent=JobParent(link.port, link.peer_mac,
                                                           child_ids[switch]))
    return HierarchicalJob(root, levels, worker_ids)
