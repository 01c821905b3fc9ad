"""Loop-free multicast trees over a fabric's switches, one shared tree per group.

Sans-IO. A group is a set of member hosts. Its tree joins the switches the
members hang off: it is rooted at the switch closest to all of them (smallest
largest hop count, then name), and it is the union of the shortest paths from
the root to each member's switch along a breadth-first tree (lowest port first),
so it is a tree and every switch on it knows the ports of its tree links and of
its member hosts. A packet of the group is copied to every tree port of a switch
but the one it came in on: it reaches each member once, whoever sends.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass

from netweft.testbed.fabric.graph import FabricGraph, SwitchLink
from netweft.testbed.fabric.plan import MulticastTree
from netweft.testbed.fabric.routes import switch_distances


class MulticastError(ValueError):
    """A group cannot be built (unknown member, members in parts not joined)."""


@dataclass(frozen=True)
class MulticastGroupSpec:
    """A multicast group: its id in the switches' replication engine, the IPv4 group
    address senders send to, and its member hosts."""

    group_id: int
    address: ipaddress.IPv4Address
    members: tuple[str, ...]


def _bfs_tree(graph: FabricGraph, root: str) -> dict[str, SwitchLink]:
    """For every switch reachable from ``root``: the link that leads to it from its parent."""
    parent: dict[str, SwitchLink] = {}
    seen = {root}
    todo = deque([root])
    while todo:
        here = todo.popleft()
        for link in graph.neighbours(here):
            if link.peer not in seen:
                seen.add(link.peer)
                parent[link.peer] = link
                todo.append(link.peer)
    return parent


def tree_root(graph: FabricGraph, switches: set[str]) -> str:
    """The switch whose largest hop count to any of ``switches`` is smallest (then by name)."""
    reach = {name: [switch_distances(graph, t).get(name) for t in sorted(switches)]
             for name in graph.switches}
    candidates = [(max(d), name) for name, d in reach.items() if None not in d]
    if not candidates:
        raise MulticastError("the group's members hang off switches that no switch joins")
    return min(candidates)[1]


def compute_tree(graph: FabricGraph, group: MulticastGroupSpec) -> dict[str, MulticastTree]:
    """The group's tree: per switch on it, the ports to copy to."""
    unknown = [m for m in group.members if m not in graph.hosts]
    if unknown:
        raise MulticastError(f"multicast group {group.group_id}: no host named "
                             f"{', '.join(unknown)} (hosts: {', '.join(sorted(graph.hosts))})")
    if not group.members:
        raise MulticastError(f"multicast group {group.group_id} has no members")
    member_switches = {graph.hosts[m].switch for m in group.members}
    root = tree_root(graph, member_switches)
    parent = _bfs_tree(graph, root)
    ports: dict[str, set[int]] = {}
    host_ports: dict[str, set[int]] = {}
    for member in group.members:
        host = graph.hosts[member]
        ports.setdefault(host.switch, set()).add(host.port)
        host_ports.setdefault(host.switch, set()).add(host.port)
    for switch in member_switches:
        here = switch
        while here != root:  # climb to the root, adding both ends of every link
            link = parent[here]
            ports.setdefault(link.switch, set()).add(link.port)
            ports.setdefault(here, set()).add(link.peer_port)
            here = link.switch
    return {name: MulticastTree(group.group_id, group.address, tuple(sorted(p)),
                                tuple(sorted(host_ports.get(name, ()))))
            for name, p in sorted(ports.items())}
