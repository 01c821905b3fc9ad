"""The simulator's switched network (its "fabric"): topologies of output-queued switches.

A :class:`FabricSpec` describes the network (one switch with every host on it,
or a two-tier leaf-spine), the link rate and delay, each port's buffer, the ECN
thresholds, trimming, and how leaves spread traffic over their uplinks:
``spray`` picks the uplink from the packet's entropy (its UDP source port, a
new value every few packets), ``hash`` from the flow (source and destination
host: every packet of a flow takes one path, as ECMP does). A :class:`Fabric`
built from it over a simulation's event loop forwards :class:`FabricPacket`
objects hop by hop through :class:`OutputPort` objects and hands each one that
reaches its host to the simulation.

Host ``i`` hangs off leaf ``i // hosts_per_leaf`` at port ``i % hosts_per_leaf``;
a leaf's ports ``hosts_per_leaf ..`` go to spines ``0 ..``; spine ``s``'s port
``l`` goes to leaf ``l``. The host's own NIC (its uplink into the ToR) is the
simulation's per-endpoint link; the fabric starts at the ToR.

Sans-IO and seeded: ECN draws come from per-port ``random.Random`` instances
seeded from the fabric's seed, routing hashes are fixed functions.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from netweft.transport.errors import InvalidArgumentError
from netweft.transport.sim.event_loop import EventLoop
from netweft.transport.sim.port import WIRE_OVERHEAD, FabricPacket, OutputPort

TOPOLOGIES = ("one_switch", "leaf_spine")
ROUTINGS = ("spray", "hash")


@dataclass(frozen=True)
class FabricSpec:
    """A fabric: topology, links, buffers, ECN and trimming, uplink choice.

    Defaults are UEC's htsim defaults (100 Gbit/s, 1 us links, a buffer of one
    2-tier BDP = 120,350 B per port, ECN between 0.2 and 0.8 of it, trimming on).
    ``ecn_last_hop=False`` turns marking off on ToR-to-host ports (htsim does
    this when receiver credits are on). ``priority_bytes`` 0 means 2 x buffer.
    ``random_trim`` (htsim's rule, on by default): a full queue trims the
    arriving data packet or the last one queued, half and half
    (:class:`~netweft.transport.sim.port.OutputPort`).

    Wire sizes: a packet takes its UDP payload plus ``wire_overhead`` bytes on every
    link (default 46: Ethernet with FCS, IPv4, UDP), a trimmed header its 64 UDP
    payload bytes plus that (110); ``trimmed_wire`` > 0 and ``control_wire`` > 0 give
    trimmed headers and control packets (ACK, NACK, CTRL) that wire size instead. These
    exist so that a scenario compared with another model can use that model's sizes
    (htsim: 64-byte headers, ``cc_studies.HTSIM_SIZES``); the engines' bytes do not
    change. The host's own uplink (the simulation's link) serializes UDP payloads.
    """

    topology: str = "one_switch"
    hosts_per_leaf: int = 8
    leaves: int = 1
    spines: int = 0
    rate_bps: float = 100e9
    link_delay_ns: int = 1_000
    buffer_bytes: int = 120_350
    ecn_min: float = 0.2
    ecn_max: float = 0.8
    ecn: bool = True
    ecn_last_hop: bool = True
    trim: bool = True
    random_trim: bool = True
    priority_bytes: int = 0
    routing: str = "spray"
    seed: int = 0
    wire_overhead: int = WIRE_OVERHEAD
    trimmed_wire: int = 0
    control_wire: int = 0

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise InvalidArgumentError(f"fabric topology must be one of {', '.join(TOPOLOGIES)}, "
                                       f"got {self.topology!r}")
        if self.routing not in ROUTINGS:
            raise InvalidArgumentError(f"fabric routing must be one of {', '.join(ROUTINGS)}, "
                                       f"got {self.routing!r}")
        for name in ("hosts_per_leaf", "leaves", "buffer_bytes"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise InvalidArgumentError(f"fabric {name} must be an int >= 1, got {v!r}")
        for name in ("spines", "link_delay_ns", "priority_bytes", "seed", "wire_overhead",
                     "trimmed_wire", "control_wire"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise InvalidArgumentError(f"fabric {name} must be an int >= 0, got {v!r}")
        if self.topology == "one_switch" and (self.leaves != 1 or self.spines != 0):
            raise InvalidArgumentError("a one_switch fabric has leaves=1 and spines=0")
        if self.topology == "leaf_spine" and self.spines < 1:
            raise InvalidArgumentError("a leaf_spine fabric needs spines >= 1")
        if not self.rate_bps > 0:
            raise InvalidArgumentError(f"fabric rate_bps must be > 0, got {self.rate_bps!r}")
        if not 0.0 <= self.ecn_min <= self.ecn_max:
            raise InvalidArgumentError(f"fabric ECN thresholds need 0 <= ecn_min <= ecn_max, got "
                                       f"{self.ecn_min!r}, {self.ecn_max!r}")

    @classmethod
    def one_switch(cls, hosts: int, **kw: Any) -> FabricSpec:
        """Every host on one ToR (the anchor's 8→1 and 64→1 incast)."""
        return cls(topology="one_switch", hosts_per_leaf=hosts, leaves=1, spines=0, **kw)

    @classmethod
    def leaf_spine(cls, leaves: int, hosts_per_leaf: int, spines: int | None = None,
                   **kw: Any) -> FabricSpec:
        """``leaves`` ToRs of ``hosts_per_leaf`` hosts under ``spines`` spines (default: as
        many spines as hosts per leaf, i.e. no oversubscription)."""
        return cls(topology="leaf_spine", hosts_per_leaf=hosts_per_leaf, leaves=leaves,
                   spines=hosts_per_leaf if spines is None else spines, **kw)

    @property
    def hosts(self) -> int:
        return self.hosts_per_leaf * self.leaves

    @property
    def hops(self) -> int:
        """Links between two hosts on different leaves (or on the one switch)."""
        return 4 if self.topology == "leaf_spine" else 2


def flow_hash(src: int, dst: int) -> int:
    """A fixed 32-bit mix of a flow's endpoints (ECMP's choice, reproducible)."""
    h = (src * 0x9E3779B1 + dst * 0x85EBCA77) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & 0xFFFFFFFF
    return h ^ (h >> 12)


class Fabric:
    """The switches of a :class:`FabricSpec`, forwarding packets in virtual time.

    ``to_host(packet)`` is called when a packet reaches its destination host.
    Ports are named ``leafL:pP`` and ``spineS:pP``. ``trace_ports`` names the
    ports whose queue is recorded over time (for plots).
    """

    def __init__(self, spec: FabricSpec, loop: EventLoop,
                 to_host: Callable[[FabricPacket], Any], trace_ports: tuple[str, ...] = ()) -> None:
        self.spec = spec
        self.loop = loop
        self.to_host = to_host
        rng = random.Random(spec.seed)
        prio = spec.priority_bytes or 2 * spec.buffer_bytes
        common = dict(rate_bps=spec.rate_bps, delay_ns=spec.link_delay_ns,
                      buffer_bytes=spec.buffer_bytes, priority_bytes=prio,
                      ecn_min_bytes=int(spec.ecn_min * spec.buffer_bytes),
                      ecn_max_bytes=int(spec.ecn_max * spec.buffer_bytes), trim=spec.trim,
                      random_trim=spec.random_trim)
        h = spec.hosts_per_leaf
        self.leaf_ports: list[list[OutputPort]] = []
        self.spine_ports: list[list[OutputPort]] = []
        for leaf in range(spec.leaves):
            ports = []
            for p in range(h):
                name = f"leaf{leaf}:p{p}"
                ports.append(OutputPort(loop, name, to_host, ecn=spec.ecn and spec.ecn_last_hop,
                                        rng=random.Random(rng.getrandbits(64)),
                                        trace=name in trace_ports, **common))
            for s in range(spec.spines):
                name = f"leaf{leaf}:p{h + s}"
                ports.append(OutputPort(loop, name, self._spine_receiver(s), ecn=spec.ecn,
                                        rng=random.Random(rng.getrandbits(64)),
                                        trace=name in trace_ports, **common))
            self.leaf_ports.append(ports)
        for s in range(spec.spines):
            ports = []
            for leaf in range(spec.leaves):
                name = f"spine{s}:p{leaf}"
                ports.append(OutputPort(loop, name, self._leaf_receiver(leaf), ecn=spec.ecn,
                                        rng=random.Random(rng.getrandbits(64)),
                                        trace=name in trace_ports, **common))
            self.spine_ports.append(ports)
        self.unroutable = 0

    def packet(self, data: bytes, src_host: int, dst_host: int, src_ip: int, entropy: int,
               ecn: int, sent_ns: int) -> FabricPacket:
        """A datagram from host ``src_host`` entering the fabric, with the spec's wire sizes."""
        spec = self.spec
        return FabricPacket(data, src_host, dst_host, src_ip, entropy, ecn, sent_ns,
                            spec.wire_overhead, trimmed_wire=spec.trimmed_wire,
                            control_wire=spec.control_wire)

    def host_port(self, host: int) -> OutputPort:
        """The ToR port that serves ``host``'s downlink (where incast to it queues)."""
        return self.leaf_ports[host // self.spec.hosts_per_leaf][host % self.spec.hosts_per_leaf]

    def ports(self) -> list[OutputPort]:
        """Every output port of every switch."""
        return [p for ports in self.leaf_ports + self.spine_ports for p in ports]

    def inject(self, pkt: FabricPacket) -> None:
        """``pkt`` arrives now at its source host's ToR from the host's uplink."""
        self._at_leaf(pkt.src_host // self.spec.hosts_per_leaf, pkt)

    def _at_leaf(self, leaf: int, pkt: FabricPacket) -> None:
        spec = self.spec
        h = spec.hosts_per_leaf
        dst = pkt.dst_host
        if not 0 <= dst < spec.hosts:
            self.unroutable += 1
            return
        if dst // h == leaf:
            self.leaf_ports[leaf][dst % h].arrive(pkt)
            return
        key = pkt.entropy if spec.routing == "spray" else flow_hash(pkt.src_host, dst)
        self.leaf_ports[leaf][h + key % spec.spines].arrive(pkt)

    def _spine_receiver(self, spine: int) -> Callable[[FabricPacket], None]:
        ports = None

        def at_spine(pkt: FabricPacket) -> None:
            nonlocal ports
            ports = ports or self.spine_ports[spine]
            ports[pkt.dst_host // self.spec.hosts_per_leaf].arrive(pkt)
        return at_spine

    def _leaf_receiver(self, leaf: int) -> Callable[[FabricPacket], None]:
        return lambda pkt: self._at_leaf(leaf, pkt)

    def totals(self) -> dict[str, int]:
        """Counters summed over every port, plus the unroutable count."""
        total: dict[str, int] = {}
        for port in self.ports():
            for k, v in port.counters.as_dict().items():
                if k in ("peak_bytes", "queue_area"):
                    continue
                total[k] = total.get(k, 0) + v
        total["unroutable"] = self.unroutable
        return total
