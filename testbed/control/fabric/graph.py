"""A fabric's wiring as the controller needs it: which host hangs off which switch port,
which switch ports join which switches, and every port's MAC address.

:func:`graph_from_network` reads a declared (or running)
:class:`~netweft.emulation.network.Network`; :func:`graph_from_topology` declares
the network a topology file describes (as ``Topology.build`` does, without
starting anything) and reads that, so the ports and MACs are those ``netweft up``
gives the testbed.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from netweft.emulation.network import Host, Network, Switch


class FabricGraphError(ValueError):
    """The wiring cannot be routed (e.g. a host on no switch); the message names the node."""


@dataclass(frozen=True)
class HostAttachment:
    """A host, its address, and the switch port it hangs off."""

    host: str
    ip: ipaddress.IPv4Address
    mac: str
    switch: str
    port: int


@dataclass(frozen=True)
class SwitchLink:
    """One switch-to-switch link seen from ``switch``: its port, and the peer's port and MAC."""

    switch: str
    port: int
    peer: str
    peer_port: int
    peer_mac: str


@dataclass
class FabricGraph:
    """Hosts by name, every switch's ports (number to MAC) and its links to other switches."""

    hosts: dict[str, HostAttachment] = field(default_factory=dict)
    ports: dict[str, dict[int, str]] = field(default_factory=dict)
    links: dict[str, list[SwitchLink]] = field(default_factory=dict)

    @property
    def switches(self) -> list[str]:
        return sorted(self.ports)

    def neighbours(self, switch: str) -> list[SwitchLink]:
        """``switch``'s links to other switches, by port number."""
        return sorted(self.links.get(switch, []), key=lambda link: link.port)

    def hosts_on(self, switch: str) -> list[HostAttachment]:
        return sorted((h for h in self.hosts.values() if h.switch == switch),
                      key=lambda h: h.port)


def graph_from_network(net: Network) -> FabricGraph:
    """The wiring of a declared network (its ports and MACs are fixed at declaration)."""
    graph = FabricGraph()
    for switch in net.switches:
        graph.ports[switch.name] = {i.port: i.mac for i in switch.interfaces}
        graph.links[switch.name] = []
    for switch in net.switches:
        for iface in switch.interfaces:
            peer = net.peer_of(iface)
            if isinstance(peer.node, Switch):
                graph.links[switch.name].append(
                    SwitchLink(switch.name, iface.port, peer.node.name, peer.port, peer.mac))
    for host in net.hosts:
        if not host.interfaces or host.ip is None:
            continue  # unlinked or unaddressed: nothing routes to it
        peer = net.peer_of(host.interfaces[0])
        if not isinstance(peer.node, Switch):
            raise FabricGraphError(f"host {host.name} is linked to host {peer.node.name}, "
                                   "not to a switch: the fabric controller routes between "
                                   "switches")
        graph.hosts[host.name] = HostAttachment(host.name, host.ip.ip, host.interfaces[0].mac,
                                                peer.node.name, peer.port)
    _check_unique_addresses(net.hosts)
    return graph


def graph_from_topology(topo) -> FabricGraph:
    """The wiring of a :class:`~netweft.testbed.topology.Topology`, declared as
    ``Topology.build`` declares it (hosts, then switches, then links, in file order)."""
    net = Network("nwgraph")
    for h in topo.hosts.values():
        net.add_host(h.name, h.ip, h.mac, auto_routes=h.auto_routes)
    for s in topo.switches.values():
        net.add_switch(s.name)
    for link in topo.links:
        net.add_link(net.node(link.a), net.node(link.b), port_a=link.port_a,
                     port_b=link.port_b, mtu=link.mtu)
    return graph_from_network(net)


def _check_unique_addresses(hosts: list[Host]) -> None:
    seen: dict[ipaddress.IPv4Address, str] = {}
    for host in hosts:
        if host.ip is None:
            continue
        other = seen.setdefault(host.ip.ip, host.name)
        if other != host.name:
            raise FabricGraphError(f"hosts {other} and {host.name} share the address "
                                   f"{host.ip.ip}: give each host its own")
