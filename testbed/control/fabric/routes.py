"""Shortest-path routes with every equal-cost next hop, computed from a fabric's wiring.

Sans-IO: a :class:`~.graph.FabricGraph` in, one :class:`~.plan.SwitchPlan` per
switch out. Each switch gets a /32 route per host: out of the host's port on the
switch the host hangs off, elsewhere over the links that lie on a shortest path
(hop count between switches) to that switch. Several such links make an ECMP
group; groups with the same members are one group, numbered from 1 per switch
in order of first use (hosts by name), so the result is the same on every run.
"""

from __future__ import annotations

import ipaddress
from collections import deque

from netweft.testbed.control.fabric.graph import FabricGraph
from netweft.testbed.control.fabric.plan import EcmpGroup, NextHop, PortPlan, Route, SwitchPlan


def switch_distances(graph: FabricGraph, target: str) -> dict[str, int]:
    """Hops from every switch that can reach ``target`` to ``target`` (BFS)."""
    dist = {target: 0}
    todo = deque([target])
    while todo:
        here = todo.popleft()
        for link in graph.neighbours(here):
            if link.peer not in dist:
                dist[link.peer] = dist[here] + 1
                todo.append(link.peer)
    return dist


def equal_cost_next_hops(graph: FabricGraph, switch: str,
                         dist: dict[str, int]) -> tuple[NextHop, ...]:
    """``switch``'s links to neighbours one hop closer to the target of ``dist``."""
    if switch not in dist or dist[switch] == 0:
        return ()
    return tuple(sorted(NextHop(link.port, link.peer_mac) for link in graph.neighbours(switch)
                        if dist.get(link.peer) == dist[switch] - 1))


def port_plans(graph: FabricGraph, switch: str) -> list[PortPlan]:
    """Every linked port of ``switch`` with its MAC and its neighbour's."""
    out = [PortPlan(link.port, graph.ports[switch][link.port], link.peer, link.peer_mac, False)
           for link in graph.neighbours(switch)]
    out += [PortPlan(h.port, graph.ports[switch][h.port], h.host, h.mac, True)
            for h in graph.hosts_on(switch)]
    return sorted(out, key=lambda p: p.port)


def compute_routes(graph: FabricGraph) -> dict[str, SwitchPlan]:
    """Every switch's host routes and ECMP groups (multicast trees are left empty)."""
    plans = {name: SwitchPlan(name, port_plans(graph, name)) for name in graph.switches}
    groups: dict[str, dict[tuple[NextHop, ...], EcmpGroup]] = {name: {} for name in plans}
    distances: dict[str, dict[str, int]] = {}
    for host in sorted(graph.hosts.values(), key=lambda h: h.host):
        prefix = ipaddress.IPv4Network(f"{host.ip}/32")
        if host.switch not in distances:
            distances[host.switch] = switch_distances(graph, host.switch)
        dist = distances[host.switch]
        for name, plan in plans.items():
            if name == host.switch:
                plan.routes.append(Route(prefix, host.host, next_hop=NextHop(host.port,
                                                                              host.mac)))
                continue
            hops = equal_cost_next_hops(graph, name, dist)
            if not hops:
                plan.unreachable.append(host.host)
            elif len(hops) == 1:
                plan.routes.append(Route(prefix, host.host, next_hop=hops[0]))
            else:
                known = groups[name]
                if hops not in known:
                    known[hops] = EcmpGroup(len(known) + 1, hops)
                    plan.groups.append(known[hops])
                plan.routes.append(Route(prefix, host.host, group=known[hops]))
    return plans
