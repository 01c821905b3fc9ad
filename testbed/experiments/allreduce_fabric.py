"""All-reduce fabrics in virtual time: in-network aggregation on the embedded switch
running ``p4/aggregation.p4``, and ring all-reduce on the transport's simulation.

:func:`aggregation_fabric` builds an :class:`~netweft.transport.aggregation_sim.
AggregationNetwork` of ``SoftSwitch`` es running the aggregation program, either one
switch with every worker on it (``"star"``) or two leaves and two spines with the
workers split over the leaves (``"leaf-spine"``: the job aggregates on spine1, the
leaves route contributions to it and results back by IPv4). :func:`run_in_network`
and :func:`run_ring` run one all-reduce of ``n`` random float32 arrays and return
the completion time, the bytes on each host link and whether the sums are right.

The ring runs on :class:`~netweft.transport.simulation.Simulation` (the C engines
in virtual time), whose network is each endpoint's own link: rate, and a delay set
to the one-way path delay the same workers have in the switched fabric (two links
to a neighbour on the same switch, four across the spine). The ring sends to one
neighbour only, so no switch queue builds and the simulation's per-endpoint links
see what the fabric's would. Its byte counts are frames: UDP payload plus 42 bytes
of Ethernet, IPv4 and UDP headers per packet.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from netweft.testbed.control.aggregation.controller import EVENTS as AGG_EVENTS
from netweft.transport.aggregation_codec import FrameTemplate
from netweft.transport.aggregation_layer import AGG_LANES, AGG_UDP_PORT
from netweft.transport.aggregation_sim import AggregationNetwork
from netweft.transport.aggregation_worker import AggregationJob, AggregationWorker
from netweft.transport.impairments import Impairments, Link
from netweft.transport.ring_allreduce import RingAllreduce, RingGroup
from netweft.transport.ring_allreduce import run_ring as drive_ring
from netweft.transport.simulation import Simulation

SERVICE_IP = "10.0.0.254"
SERVICE_MAC = "02:00:00:00:00:fe"
FRAME_OVERHEAD = 14 + 20 + 8  # Ethernet, IPv4, UDP headers
TOPOLOGIES = ("star", "leaf-spine")


@functools.lru_cache(maxsize=1)
def aggregation_program():
    """The compiled ``p4/aggregation.p4`` (compiled once per process)."""
    from netweft.p4.compiler import compile_p4
    from netweft.p4.programs import program, source_dir

    return compile_p4(str(program("aggregation")), include_dirs=(str(source_dir()),))


def host_mac(w: int) -> str:
    return f"02:00:00:00:01:{w:02x}"


def host_ip(w: int) -> str:
    return f"10.0.1.{w + 1}"


@dataclass
class FabricSpec:
    """Shape of a run: workers, topology, host link rate and per-link delay, slots per job.

    Leaf-spine uplinks run at ``uplink_rate_bps``; by default the fabric is non-blocking:
    each leaf's two uplinks together carry what its hosts' links do."""

    workers: int = 4
    topology: str = "star"
    rate_bps: float = 10e9
    link_delay_ns: int = 1_000
    window: int = 32
    timeout_ns: int = 500_000
    uplink_rate_bps: float | None = None

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise ValueError(f"topology must be one of {', '.join(TOPOLOGIES)}, "
                             f"got {self.topology!r}")
        if self.topology == "leaf-spine" and self.workers < 2:
            raise ValueError("a leaf-spine run needs at least 2 workers")

    @property
    def link(self) -> Link:
        """A host link."""
        return Link(rate_bps=self.rate_bps, delay_ns=self.link_delay_ns, queue_pkts=1 << 20)

    @property
    def uplink(self) -> Link:
        """A leaf-spine link."""
        rate = self.uplink_rate_bps or self.rate_bps * max(1, (self.workers + 1) // 2) / 2
        return Link(rate_bps=rate, delay_ns=self.link_delay_ns, queue_pkts=1 << 20)


def _configure_job(switch, job_id: int, size: int, workers: list[tuple[int, int]],
                   base: int = 0, group: int = 1) -> None:
    """Job ``job_id`` aggregated on ``switch``: (worker id, egress port) pairs."""
    switch.table_add("MyIngress.aggregation.agg_jobs",
                     {"ipv4.dstAddr": SERVICE_IP, "agg.job_id": job_id},
                     "MyIngress.aggregation.set_job",
                     {"base": base, "size": size, "workers": len(workers), "mcast_grp": group})
    switch.mc_group_set(group, [(port, w) for w, port in workers])
    for w, _port in workers:
        switch.table_add("MyEgress.aggregation.agg_workers",
                         {"agg.job_id": job_id, "standard_metadata.egress_rid": w},
                         "MyEgress.aggregation.to_worker",
                         {"mac": host_mac(w), "addr": host_ip(w), "udp_port": AGG_UDP_PORT})


def _route(switch, ip: str, mac: str, port: int) -> None:
    switch.table_add("MyIngress.ipv4_routes", {"hdr.base.ipv4.dstAddr": (ip, 32)},
                     "MyIngress.forward", {"dmac": mac, "port": port})


def aggregation_fabric(spec: FabricSpec, seed: int = 1, job_id: int = 1,
                       impairments: Impairments | None = None) -> AggregationNetwork:
    """The network of ``spec`` with the aggregation program configured for one job."""
    from netweft.emulation.switch import SoftSwitch

    net = AggregationNetwork(seed=seed)
    n = spec.workers
    for w in range(n):
        net.add_host(f"h{w + 1}", FrameTemplate(host_mac(w), SERVICE_MAC, host_ip(w),
                                                 SERVICE_IP))
    if spec.topology == "star":
        s1 = SoftSwitch(aggregation_program())
        net.add_switch("s1", s1)
        for w in range(n):
            net.link(f"h{w + 1}", 0, "s1", w + 1, spec.link, impairments)
        _configure_job(s1, job_id, spec.window, [(w, w + 1) for w in range(n)])
        return net
    leaves = [SoftSwitch(aggregation_program()) for _ in range(2)]
    spines = [SoftSwitch(aggregation_program()) for _ in range(2)]
    for i, sw in enumerate(leaves):
        net.add_switch(f"leaf{i + 1}", sw)
    for i, sw in enumerate(spines):
        net.add_switch(f"spine{i + 1}", sw)
    half = (n + 1) // 2
    leaf_of = [0 if w < half else 1 for w in range(n)]
    local_port = [w + 1 if w < half else w - half + 1 for w in range(n)]
    uplink = half + 1  # leaf port to spine1 (spine2 on uplink + 1)
    for w in range(n):
        net.link(f"h{w + 1}", 0, f"leaf{leaf_of[w] + 1}", local_port[w], spec.link, impairments)
    for i in range(2):
        for s in range(2):
            net.link(f"leaf{i + 1}", uplink + s, f"spine{s + 1}", i + 1, spec.uplink,
                     impairments)
    spine_mac = "02:00:00:00:02:01"
    for i, leaf in enumerate(leaves):
        _route(leaf, SERVICE_IP, spine_mac, uplink)
        for w in range(n):
            if leaf_of[w] == i:
                _route(leaf, host_ip(w), host_mac(w), local_port[w])
            else:
                _route(leaf, host_ip(w), spine_mac, uplink)
    _configure_job(spines[0], job_id, spec.window, [(w, leaf_of[w] + 1) for w in range(n)])
    return net


@dataclass
class AllreduceRun:
    """One all-reduce: virtual completion time (slowest worker), bytes per host link
    (mean over the workers, each direction) and whether every result was right."""

    method: str
    workers: int
    topology: str
    nbytes: int
    seconds: float
    tx_bytes_per_host: float
    rx_bytes_per_host: float
    correct: bool
    retransmits: int = 0
    switch_events: dict[str, int] = field(default_factory=dict)  # aggregation events, summed
    max_switch_link_bytes: float = 0.0  # busiest switch-to-switch link direction (leaf-spine)


def _arrays(n: int, nbytes: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    length = max(1, nbytes // 4)
    return [rng.normal(0, 1, length).astype(np.float32) for _ in range(n)]


def run_in_network(spec: FabricSpec, nbytes: int, seed: int = 1,
                   impairments: Impairments | None = None) -> AllreduceRun:
    """One in-network all-reduce of ``nbytes`` per worker on the embedded switch."""
    net = aggregation_fabric(spec, seed=seed, impairments=impairments)
    arrays = _arrays(spec.workers, nbytes, seed)
    workers = {f"h{w + 1}": AggregationWorker(arrays[w], AggregationJob(
        1, w, spec.workers, AGG_LANES, spec.window, timeout_ns=spec.timeout_ns))
        for w in range(spec.workers)}
    times = net.run(workers)
    exact = np.sum([a.astype(np.float64) for a in arrays], axis=0)
    correct = all(np.all(np.abs(wk.result.astype(np.float64) - exact)
                         <= wk.quantizer.error_bound(wk.exponents, exact))
                  for wk in workers.values())
    hosts = [net.hosts[name].counters for name in workers]
    events = {name: sum(sw.counter_read("MyIngress.aggregation.events", i)[0]
                        for sw in net.switches.values())
              for i, name in enumerate(AGG_EVENTS)}
    fabric = [b for (node, port), b in net.link_bytes.items()
              if node in net.switches and net.peer_of(node, port) in net.switches]
    return AllreduceRun("in-network", spec.workers, spec.topology, nbytes,
                        max(times.values()) / 1e9,
                        float(np.mean([c["tx_bytes"] for c in hosts])),
                        float(np.mean([c["rx_bytes"] for c in hosts])), correct,
                        sum(wk.stats["retransmits"] for wk in workers.values()), events,
                        float(max(fabric, default=0)))


def ring_path_delay_ns(spec: FabricSpec, rank: int) -> int:
    """One-way delay from ``rank`` to its right neighbour in ``spec``'s fabric."""
    n = spec.workers
    if spec.topology == "star":
        return 2 * spec.link_delay_ns
    half = (n + 1) // 2
    same_leaf = (rank < half) == (((rank + 1) % n) < half)
    return (2 if same_leaf else 4) * spec.link_delay_ns


def run_ring(spec: FabricSpec, nbytes: int, seed: int = 1, mtu: int = 9000,
             impairments: Impairments | None = None) -> AllreduceRun:
    """One ring all-reduce of ``nbytes`` per worker over the transport in virtual time."""
    sim = Simulation(seed=seed, mtu=mtu, impairments=impairments)
    eps = [sim.endpoint(link=Link(rate_bps=spec.rate_bps,
                                  delay_ns=ring_path_delay_ns(spec, r), queue_pkts=4096))
           for r in range(spec.workers)]
    addresses = [ep.address for ep in eps]
    arrays = _arrays(spec.workers, nbytes, seed)
    jobs = [RingAllreduce(a, RingGroup(ep, r, addresses))
            for r, (a, ep) in enumerate(zip(arrays, eps, strict=True))]
    start = sim.now
    drive_ring(jobs, sim)
    seconds = sim.now - start
    exact = np.sum([a.astype(np.float64) for a in arrays], axis=0)
    bound = (spec.workers - 1) * 2.0**-24 * np.sum([np.abs(a) for a in arrays], axis=0)
    correct = all(np.all(np.abs(j.result - exact) <= bound + 1e-45) for j in jobs)
    counters = [sim.nic_counters(ep) for ep in eps]
    tx = [c["bytes_out"] + FRAME_OVERHEAD * c["pkts_out"] for c in counters]
    rx = [c["bytes_in"] + FRAME_OVERHEAD * c["pkts_in"] for c in counters]
    retransmits = sum(ep.stats()["retransmits"] for ep in eps) if "retransmits" in \
        eps[0].stats() else 0
    for ep in eps:
        ep.close()
    return AllreduceRun("ring", spec.workers, spec.topology, nbytes, seconds,
                        float(np.mean(tx)), float(np.mean(rx)), correct, retransmits)
