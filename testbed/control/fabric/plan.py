"""What the controller installs on one switch, as plain data: host routes, ECMP groups
and multicast trees. :mod:`.routes` and :mod:`.multicast` compute it; a program binding
(:mod:`.fabric_entries`) turns it into the table entries of a P4 program."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class NextHop:
    """Send out of ``port`` to the device whose MAC is ``mac``."""

    port: int
    mac: str


@dataclass(frozen=True)
class EcmpGroup:
    """A set of equal-cost next hops, by port; ``group_id`` is unique within its switch."""

    group_id: int
    members: tuple[NextHop, ...]


@dataclass(frozen=True)
class Route:
    """The way to one host: straight out of a port (``next_hop``) or over an ECMP group.

    ``host`` names the destination; ``prefix`` is its /32.
    """

    prefix: ipaddress.IPv4Network
    host: str
    next_hop: NextHop | None = None
    group: EcmpGroup | None = None

    @property
    def next_hops(self) -> tuple[NextHop, ...]:
        return self.group.members if self.group is not None else (self.next_hop,)


@dataclass(frozen=True)
class PortPlan:
    """One port of a switch: its own MAC and the device at the other end of its link."""

    port: int
    mac: str
    peer: str
    peer_mac: str
    to_host: bool


@dataclass(frozen=True)
class MulticastTree:
    """One multicast group on one switch: the ports it replicates to.

    The tree is shared by every sender of the group: a copy goes out of every port
    in ``ports`` except the one the packet came in on, and since the ports of all
    switches form a tree, no copy loops. ``host_ports`` are the ports to members
    (the others lead to switches of the tree).
    """

    group_id: int
    address: ipaddress.IPv4Address
    ports: tuple[int, ...]
    host_ports: tuple[int, ...]
    host_addresses: tuple[tuple[int, ipaddress.IPv4Address], ...] = ()  # (port, member IP)
    ack_expected: int | None = None  # receivers' bits whose ACKs this switch aggregates


@dataclass
class SwitchPlan:
    """Everything the controller installs on one switch."""

    switch: str
    ports: list[PortPlan] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    groups: list[EcmpGroup] = field(default_factory=list)
    multicast: list[MulticastTree] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)  # hosts with no path from here
