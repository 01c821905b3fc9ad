"""All-reduce fabrics in virtual time: in-network aggregation on the embedded switch
running ``p4/aggregation.p4``, and ring all-reduce on the transport's simulation.

:func:`aggregation_fabric` builds an :class:`~netweft.transport.collectives.aggregation.sim.
AggregationNetwork` of ``SoftSwitch`` es running the aggregation program, either one
switch with every worker on it (``"star"``) or two leaves and two spines with the
workers split over the leaves (``"leaf-spine"``: the job aggregates on spine1, the
leaves route contributions to it and results back by IPv4). The switches are
configured from one plan (:func:`~netweft.testbed.control.aggregation.plan.
plan_aggregation`: the fabric controller's routes over :func:`fabric_graph`, the
job placed on its switch by :func:`~netweft.testbed.control.aggregation.placement.
job_on_fabric`), installed in process: the plan the same job gets over P4Runtime.
:func:`run_in_network`
and :func:`run_ring` run one all-reduce of ``n`` random float32 arrays and return
the completion time, the bytes on each host link and whether the sums are right.

The ring runs on :class:`~netweft.transport.sim.simulation.Simulation` (the C engines
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
from ipaddress import IPv4Address

import numpy as np

from netweft.testbed.control.aggregation.job import EVENTS as AGG_EVENTS
from netweft.testbed.control.aggregation.job import AggregationJob as SwitchJob
from netweft.testbed.control.aggregation.placement import (
    HierarchicalJob,
    hierarchy_on_fabric,
    job_on_fabric,
)
from netweft.testbed.control.aggregation.plan import AggregationPlan, plan_aggregation
from netweft.testbed.control.fabric.graph import FabricGraph, HostAttachment, SwitchLink
from netweft.testbed.control.in_process_installer import install_in_process
from netweft.transport.collectives.aggregation.codec import FrameTemplate
from netweft.transport.collectives.aggregation.layer import AGG_LANES, AGG_UDP_PORT, check_lanes
from netweft.transport.collectives.aggregation.sim import AggregationNetwork
from netweft.transport.collectives.aggregation.worker import AggregationJob, AggregationWorker
from netweft.transport.collectives.ring_allreduce import RingAllreduce, RingGroup
from netweft.transport.collectives.ring_allreduce import run_ring as drive_ring
from netweft.transport.sim.simulation import Simulation
from netweft.transport.sim.wire import Impairments, Link

SERVICE_IP = "10.0.0.254"
SERVICE_MAC = "02:00:00:00:00:fe"
FRAME_OVERHEAD = 14 + 20 + 8  # Ethernet, IPv4, UDP headers
TOPOLOGIES = ("star", "leaf-spine")
AGGREGATOR = {"star": "s1", "leaf-spine": "spine1"}  # the switch that aggregates the job


@functools.lru_cache(maxsize=4)
def aggregation_program(lanes: int = AGG_LANES):
    """The compiled ``p4/aggregation.p4`` with ``AGG_LANES`` = ``lanes`` (compiled once
    per process and lane count; 64, the default, needs no ``-D``)."""
    from netweft.p4.compiler import compile_p4
    from netweft.p4.programs import program, source_dir

    defines = None if lanes == AGG_LANES else {"AGG_LANES": str(check_lanes(lanes))}
    return compile_p4(str(program("aggregation")), include_dirs=(str(source_dir()),),
                      defines=defines)


def host_mac(w: int) -> str:
    return f"02:00:00:00:01:{w:02x}"


def host_ip(w: int) -> str:
    return f"10.0.1.{w + 1}"


@dataclass
class FabricSpec:
    """Shape of a run: workers, topology, host link rate and per-link delay, slots per job,
    lanes per packet (the program's ``AGG_LANES``), and whether the job is aggregated
    level by level (``hierarchical``: each leaf sums its hosts, spine1 the leaves) or on
    one switch (s1, or spine1 with the leaves routing).

    Leaf-spine uplinks run at ``uplink_rate_bps``; by default the fabric is non-blocking:
    each leaf's two uplinks together carry what its hosts' links do."""

    workers: int = 4
    topology: str = "star"
    rate_bps: float = 10e9
    link_delay_ns: int = 1_000
    window: int = 32
    timeout_ns: int = 500_000
    uplink_rate_bps: float | None = None
    lanes: int = AGG_LANES
    hierarchical: bool = False

    def __post_init__(self) -> None:
        check_lanes(self.lanes)
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


def host_name(w: int) -> str:
    return f"h{w + 1}"


def _port_mac(switch: int, port: int) -> str:
    return f"02:00:00:{switch + 2:02x}:00:{port:02x}"


def fabric_graph(spec: FabricSpec) -> FabricGraph:
    """The wiring of ``spec``'s fabric. Star: worker ``w`` on port ``w + 1`` of s1.
    Leaf-spine: the first half of the workers (rounded up) on leaf1's ports 1.., the
    others on leaf2's; each leaf's next two ports to spine1 and spine2, which reach
    leaf ``i`` by their port ``i``."""
    graph = FabricGraph()
    n = spec.workers
    if spec.topology == "star":
        graph.ports["s1"] = {w + 1: _port_mac(0, w + 1) for w in range(n)}
        for w in range(n):
            graph.hosts[host_name(w)] = HostAttachment(host_name(w), IPv4Address(host_ip(w)),
                                                       host_mac(w), "s1", w + 1)
        return graph
    half = (n + 1) // 2
    uplink = half + 1  # leaf port to spine1 (spine2 on uplink + 1)
    leaves, spines = ["leaf1", "leaf2"], ["spine1", "spine2"]
    for i, name in enumerate(leaves + spines):
        ports = range(1, uplink + 2) if name in leaves else range(1, 3)
        graph.ports[name] = {port: _port_mac(i, port) for port in ports}
        graph.links[name] = []
    for w in range(n):
        leaf, port = (0, w + 1) if w < half else (1, w - half + 1)
        graph.hosts[host_name(w)] = HostAttachment(host_name(w), IPv4Address(host_ip(w)),
                                                   host_mac(w), leaves[leaf], port)
    for i, leaf in enumerate(leaves):
        for s, spine in enumerate(spines):
            graph.links[leaf].append(SwitchLink(leaf, uplink + s, spine, i + 1,
                                                graph.ports[spine][i + 1]))
            graph.links[spine].append(SwitchLink(spine, i + 1, leaf, uplink + s,
                                                 graph.ports[leaf][uplink + s]))
    return graph


def fabric_network(spec: FabricSpec, graph: FabricGraph, seed: int = 1,
                   impairments: Impairments | None = None,
                   uplink_impairments: Impairments | None = None) -> AggregationNetwork:
    """The hosts, switches (``SoftSwitch`` es running aggregation.p4, unconfigured) and
    links of ``graph``: host links of ``spec.link``, switch-to-switch ones of
    ``spec.uplink``; ``impairments`` on every link, or ``uplink_impairments`` (when
    given) on the switch-to-switch ones."""
    from netweft.emulation.switch import SoftSwitch

    net = AggregationNetwork(seed=seed)
    hosts = [host_name(w) for w in range(spec.workers)]
    for w, name in enumerate(hosts):
        net.add_host(name, FrameTemplate(host_mac(w), SERVICE_MAC, host_ip(w), SERVICE_IP,
                                         lanes=spec.lanes))
    for name in graph.switches:
        net.add_switch(name, SoftSwitch(aggregation_program(spec.lanes)))
    for name in hosts:
        host = graph.hosts[name]
        net.link(name, 0, host.switch, host.port, spec.link, impairments)
    for name in graph.switches:
        for link in graph.neighbours(name):
            if (name, link.port) < (link.peer, link.peer_port):
                net.link(name, link.port, link.peer, link.peer_port, spec.uplink,
                         uplink_impairments or impairments)
    return net


def fabric_job(spec: FabricSpec, graph: FabricGraph, job_id: int = 1) -> SwitchJob:
    """One job of every worker over the slots ``0 .. spec.window - 1``, aggregated on s1
    (star) or spine1 (leaf-spine)."""
    return job_on_fabric(graph, AGGREGATOR[spec.topology], job_id, SERVICE_IP, 0, spec.window,
                         [host_name(w) for w in range(spec.workers)], AGG_UDP_PORT)


def fabric_hierarchy(spec: FabricSpec, graph: FabricGraph, job_id: int = 1) -> HierarchicalJob:
    """One job of every worker over the slots ``0 .. spec.window - 1`` of each switch of
    its tree: rooted at s1 (star: one level) or spine1 (leaf-spine: leaves, then spine1)."""
    return hierarchy_on_fabric(graph, AGGREGATOR[spec.topology], job_id, SERVICE_IP, 0,
                               spec.window, [host_name(w) for w in range(spec.workers)],
                               AGG_UDP_PORT)


def install_plan(net: AggregationNetwork, plan: AggregationPlan) -> None:
    """Every switch of ``net`` configured with its writes of ``plan``, in process."""
    for name, writes in plan.writes.items():
        install_in_process(net.switches[name], writes, name)


def aggregation_fabric(spec: FabricSpec, seed: int = 1, job_id: int = 1,
                       impairments: Impairments | None = None,
                       uplink_impairments: Impairments | None = None
                       ) -> tuple[AggregationNetwork, dict[str, int]]:
    """The network of ``spec`` with the aggregation program configured for one job, and
    each worker host's id in the job (its index at its switch when hierarchical)."""
    graph = fabric_graph(spec)
    net = fabric_network(spec, graph, seed, impairments, uplink_impairments)
    if spec.hierarchical:
        tree = fabric_hierarchy(spec, graph, job_id)
        install_plan(net, plan_aggregation(graph, {s: [j] for s, j in tree.levels.items()}))
        return net, tree.worker_ids
    job = fabric_job(spec, graph, job_id)
    install_plan(net, plan_aggregation(graph, {AGGREGATOR[spec.topology]: [job]}))
    return net, {host_name(w): w for w in range(spec.workers)}


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
                   impairments: Impairments | None = None,
                   uplink_impairments: Impairments | None = None) -> AllreduceRun:
    """One in-network all-reduce of ``nbytes`` per worker on the embedded switch
    (impairments as :func:`fabric_network` takes them)."""
    net, ids = aggregation_fabric(spec, seed=seed, impairments=impairments,
                                  uplink_impairments=uplink_impairments)
    arrays = _arrays(spec.workers, nbytes, seed)
    workers = {host_name(w): AggregationWorker(arrays[w], AggregationJob(
        1, ids[host_name(w)], spec.workers, spec.lanes, spec.window,
        timeout_ns=spec.timeout_ns)) for w in range(spec.workers)}
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
    return AllreduceRun("hierarchical" if spec.hierarchical else "in-network", spec.workers, spec.topology, nbytes,
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


def ring_correct(arrays: list[np.ndarray], results: list[np.ndarray]) -> bool:
    """Whether every ring result is the exact sum within float32 additions' rounding."""
    exact = np.sum([a.astype(np.float64) for a in arrays], axis=0)
    bound = (len(arrays) - 1) * 2.0**-24 * np.sum([np.abs(a) for a in arrays], axis=0)
    return all(np.all(np.abs(r - exact) <= bound + 1e-45) for r in results)


def run_ring(spec: FabricSpec, nbytes: int, seed: int = 1, mtu: int = 9000,
             impairments: Impairments | None = None,
             arrays: list[np.ndarray] | None = None) -> AllreduceRun:
    """One ring all-reduce of ``nbytes`` per worker (or of ``arrays``) over the transport
    in virtual time."""
    sim = Simulation(seed=seed, mtu=mtu, impairments=impairments)
    eps = [sim.endpoint(link=Link(rate_bps=spec.rate_bps,
                                  delay_ns=ring_path_delay_ns(spec, r), queue_pkts=4096))
           for r in range(spec.workers)]
    addresses = [ep.address for ep in eps]
    arrays = _arrays(spec.workers, nbytes, seed) if arrays is None else arrays
    jobs = [RingAllreduce(a, RingGroup(ep, r, addresses))
            for r, (a, ep) in enumerate(zip(arrays, eps, strict=True))]
    start = sim.now
    drive_ring(jobs, sim)
    seconds = sim.now - start
    correct = ring_correct(arrays, [j.result for j in jobs])
    counters = [sim.nic_counters(ep) for ep in eps]
    tx = [c["bytes_out"] + FRAME_OVERHEAD * c["pkts_out"] for c in counters]
    rx = [c["bytes_in"] + FRAME_OVERHEAD * c["pkts_in"] for c in counters]
    retransmits = sum(ep.stats()["retransmits"] for ep in eps) if "retransmits" in \
        eps[0].stats() else 0
    for ep in eps:
        ep.close()
    return AllreduceRun("ring", spec.workers, spec.topology, nbytes, seconds,
                        float(np.mean(tx)), float(np.mean(rx)), correct, retransmits)


@dataclass
class SharedJobRun:
    """One job of :func:`run_shared_switch`: how it all-reduced and whether every worker
    got the sum (within the quantization bound in the switch, float32 rounding by ring)."""

    job_id: int
    hosts: list[str]
    base: int | None  # its slot range on the switch, None if admission refused it
    method: str  # "in-network", "ring (refused)", "ring (switch stopped answering)"
    correct: bool
    retransmits: int = 0
    seconds: float = 0.0  # virtual completion time, slowest worker (ring: after the stall)


def run_shared_switch(spec: FabricSpec, jobs: list[list[int]], nbytes: int, *, seed: int = 1,
                      impairments: Impairments | None = None, slots: int = 1024,
                      restart_at_ns: int | None = None, reinstall_after_ns: int = 200_000,
                      stall_timeout_ns: int = 2_000_000) -> list[SharedJobRun]:
    """Several jobs at once on one switch (star), each asking for ``spec.window`` slots:
    admitted first fit into the switch's pool of ``slots`` (:func:`~netweft.testbed.
    control.aggregation.admission.free_base`), or refused and all-reduced by ring over the
    transport. With ``restart_at_ns`` the switch restarts then (everything it held is
    lost) and the controller puts the admitted jobs back ``reinstall_after_ns`` later;
    a job whose workers stall (no result for ``stall_timeout_ns``) is done again by ring,
    as :class:`~netweft.transport.collectives.aggregation.udp.SwitchGroup` does with a
    fallback group. ``jobs`` lists each job's worker indices (hosts of ``spec``)."""
    from netweft.emulation.switch import SoftSwitch
    from netweft.testbed.control.aggregation.admission import AdmissionRefused, free_base

    graph = fabric_graph(spec)
    net = fabric_network(spec, graph, seed, impairments)
    switch = AGGREGATOR[spec.topology]
    admitted: list[SwitchJob] = []
    runs: list[SharedJobRun] = []
    for i, members in enumerate(jobs):
        hosts = [host_name(w) for w in members]
        try:
            base = free_base(slots, [(j.base, j.size) for j in admitted], spec.window)
        except AdmissionRefused:
            runs.append(SharedJobRun(i + 1, hosts, None, "ring (refused)", False))
            continue
        admitted.append(job_on_fabric(graph, switch, i + 1, SERVICE_IP, base, spec.window,
                                      hosts, AGG_UDP_PORT))
        runs.append(SharedJobRun(i + 1, hosts, base, "in-network", False))
    plan = plan_aggregation(graph, {switch: admitted})
    install_plan(net, plan)
    if restart_at_ns is not None:
        def restart() -> None:
            net.replace_switch(switch, SoftSwitch(aggregation_program(spec.lanes)))
            net.loop.call_at(net.loop.now_ns + reinstall_after_ns, install_plan, net, plan)

        net.loop.call_at(restart_at_ns, restart)
    arrays = _arrays(spec.workers, nbytes, seed)
    workers: dict[str, AggregationWorker] = {}
    for run in runs:
        if run.base is None:
            continue
        for w, name in enumerate(run.hosts):
            workers[name] = AggregationWorker(arrays[int(name[1:]) - 1], AggregationJob(
                run.job_id, w, len(run.hosts), spec.lanes, spec.window,
                timeout_ns=spec.timeout_ns, stall_timeout_ns=stall_timeout_ns))
    times = net.run(workers) if workers else {}
    for run in runs:
        mine = [arrays[int(name[1:]) - 1] for name in run.hosts]
        if run.base is not None:
            wks = [workers[name] for name in run.hosts]
            run.retransmits = sum(wk.stats["retransmits"] for wk in wks)
            run.seconds = max(times[name] for name in run.hosts) / 1e9
            if not any(wk.stalled for wk in wks):
                exact = np.sum([a.astype(np.float64) for a in mine], axis=0)
                run.correct = all(np.all(np.abs(wk.result.astype(np.float64) - exact)
                                         <= wk.quantizer.error_bound(wk.exponents, exact))
                                  for wk in wks)
                continue
            run.method = "ring (switch stopped answering)"
        sub = FabricSpec(workers=len(run.hosts), rate_bps=spec.rate_bps,
                         link_delay_ns=spec.link_delay_ns, lanes=spec.lanes)
        ring = run_ring(sub, nbytes, seed=seed, impairments=impairments, arrays=mine)
        run.correct = ring.correct
        run.seconds += ring.seconds
    return runs
