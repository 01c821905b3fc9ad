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

from netweft.testbed.control.fabric.graph import FabricGraph, SwitchLink
from netweft.testbed.control.fabric.plan import MulticastTree
from netweft.testbed.control.fabric.routes import switch_distances


class MulticastError(ValueError):
    """A group cannot be built (unknown member, members in parts not joined)."""


@dataclass(frozen=True)
class MulticastGroupSpec:
    """A multicast group: its id in the switches' replication engine, the IPv4 group
    address senders send to, and its member hosts.

    With ``sender`` (a member), the switches aggregate the receivers' ACKs
    (``nw_mcast_t``, docs/fabric.md): receiver ``i`` is the ``i``-th member other
    than the sender, in the order given, and acknowledges with bit ``1 << i``.
    """

    group_id: int
    address: ipaddress.IPv4Address
    members: tuple[str, ...]
    sender: str | None = None

    @property
    def receivers(self) -> tuple[str, ...]:
        return tuple(m for m in self.members if m != self.sender)


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
    if not 1 <= group.group_id < 0x8000:
        raise MulticastError(f"multicast group {group.group_id}: the fabric's group ids are "
                             "1..32767 (from 32768 up they are aggregation jobs')")
    if group.sender is not None and group.sender not in group.members:
        raise MulticastError(f"multicast group {group.group_id}: the sender {group.sender} "
                             "must be one of its members")
    if group.sender is not None and len(group.receivers) > 32:
        raise MulticastError(f"multicast group {group.group_id}: ACKs carry a 32-bit "
                             f"receiver bitmap; {len(group.receivers)} receivers do not fit")
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
    addresses: dict[str, list] = {}
    for member in group.members:
        host = graph.hosts[member]
        addresses.setdefault(host.switch, []).append((host.port, host.ip))
    expected = ack_aggregation(graph, group)
    return {name: MulticastTree(group.group_id, group.address, tuple(sorted(p)),
                                tuple(sorted(host_ports.get(name, ()))),
                                tuple(sorted(addresses.get(name, ()))), expected.get(name))
            for name, p in sorted(ports.items())}


def ack_aggregation(graph: FabricGraph, group: MulticastGroupSpec) -> dict[str, int]:
    """Where the receivers' ACKs are aggregated, and the bits each such switch waits for.

    Every ACK crosses the switch its receiver hangs off and the sender's switch,
    whatever path (ECMP) it takes between them: so each receiver's switch
    aggregates the receivers below it, and the sender's switch all of them;
    switches in between pass ACKs as they come.
    """
    if group.sender is None:
        return {}
    expected: dict[str, int] = {}
    for index, receiver in enumerate(group.receivers):
        switch = graph.hosts[receiver].switch
        expected[switch] = expected.get(switch, 0) | (1 << index)
    expected[graph.hosts[group.sender].switch] = (1 << len(group.receivers)) - 1
    return expected
