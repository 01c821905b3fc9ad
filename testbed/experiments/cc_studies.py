"""Congestion-control studies in the simulator: incast, permutation, mixed flows.

Each study is a list of flows (source host, destination host, bytes, start time)
run on a :class:`FabricSpec` with one congestion-control scheme: real C engines
(one per host) write each flow's bytes by RMA into the destination's memory, in
virtual time, through output-queued switches that mark ECN and trim. The result
holds per-flow completion times, what the switches did (queues, marks, trims,
drops) and what the engines did (new packets, retransmissions, NACKs, RTOs);
:func:`summarise` turns it into the metrics of ``netweft bench cc``: peak and
mean queue, drops and trims, receiver link utilization, Jain's fairness,
completion-time slowdown.

The parameters default to UEC's htsim model (``docs/cc-studies.md`` and the
anchor figures in :data:`HTSIM_ANCHOR`): 100 Gbit/s, 4,086 payload bytes per
packet, 1 us links, a buffer of 120,350 B (one 2-tier BDP) per port, ECN
between 0.2 and 0.8 of it, trimming on.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from netweft.transport import Simulation
from netweft.transport.engine_handle import CC_MODES, EngineHandle, make_config
from netweft.transport.sim.network import FabricSpec
from netweft.transport.sim.port import WIRE_OVERHEAD

MIB = 1 << 20
MSS = 4086                 # payload bytes per packet (htsim: MTU 4150 with a 64 B header)
RATE_BPS = 100e9
BUFFER_BYTES = 120_350     # htsim's 2-tier BDP, one per port
RTO_NS = 73_000            # htsim's minimum RTO with 2 tiers (15 us + 6 buffer drains)
HTSIM_HEADER = 64          # htsim's data header, ACK, NACK and trimmed packet: 64 B on the wire
SCHEMES = ("none", "dcqcn", "nscc", "rccc", "nscc+rccc")


def engine_mtu(payload: int = MSS) -> int:
    """UDP payload bytes per packet (headers included) that carry ``payload`` data bytes."""
    probe = 4096
    overhead = probe - EngineHandle(make_config(mtu=probe)).max_payload()
    return payload + overhead


def htsim_wire_sizes(mtu: int | None = None) -> dict[str, int]:
    """``FabricSpec`` settings that give packets htsim's sizes on the wire: a data packet
    its MSS bytes of data plus a 64-byte header (4,150 B when full, where netweft's frame
    is 4,188 B: 56 B of UET headers in the UDP payload and 46 of Ethernet with FCS, IPv4
    and UDP), an ACK, NACK or CTRL 64 B (netweft: 62-90 B), a trimmed header 64 B
    (netweft: 110 B)."""
    mtu = engine_mtu() if mtu is None else mtu
    return {"wire_overhead": HTSIM_HEADER - (mtu - MSS), "trimmed_wire": HTSIM_HEADER,
            "control_wire": HTSIM_HEADER}


def ack_wire(spec: FabricSpec) -> int:
    """Wire bytes of the ACK in the base RTT: 64 bytes of UDP payload (htsim's ACK size)
    plus the frame, or the spec's control packet size."""
    return spec.control_wire or 64 + spec.wire_overhead


def base_rtt_ns(spec: FabricSpec, mtu: int) -> int:
    """The unloaded RTT between two hosts: a full data packet out, an ACK back."""
    pkt = (mtu + spec.wire_overhead) * 8e9 / spec.rate_bps
    ack = ack_wire(spec) * 8e9 / spec.rate_bps
    return int(spec.hops * (pkt + ack + 2 * spec.link_delay_ns))


def scheme_settings(scheme: str, spec: FabricSpec | None = None,
                    mtu: int | None = None) -> dict[str, Any] | None:
    """Engine settings that select ``scheme`` on ``spec``, or None if the engine built
    here has no such mode (docs/congestion.md names the settings)."""
    if scheme not in CC_MODES:
        return None
    settings: dict[str, Any] = {"cc_mode": scheme}
    if spec is not None:
        settings["link_rate_mbps"] = int(spec.rate_bps / 1e6)
        settings["cc_base_rtt_ns"] = base_rtt_ns(spec, mtu or engine_mtu())
    return settings


def available_schemes() -> dict[str, bool]:
    """Each scheme name and whether the engine built here has it."""
    return {s: scheme_settings(s) is not None for s in SCHEMES}


def uses_credits(scheme: str) -> bool:
    return "rccc" in scheme


@dataclass(frozen=True)
class Flow:
    """``size`` bytes from host ``src`` to host ``dst``, posted at ``start_ns``."""

    src: int
    dst: int
    size: int
    start_ns: int = 0
    tag: str = ""


@dataclass
class StudyResult:
    """What one run of one scheme measured."""

    scenario: str
    scheme: str
    spec: FabricSpec
    flows: list[Flow]
    fct_ns: list[int]                    # per flow, -1 if it did not finish
    switch: dict[str, int]               # counters summed over every port
    receivers: dict[str, dict[str, Any]]  # per destination host's ToR port: peak, mean, ...
    engines: dict[str, int]              # engine counters summed over every host
    queue_trace: tuple[list[int], list[int]]  # (time ns, bytes) of the first receiver's port
    makespan_ns: int
    wall_s: float
    events: int
    ideal_ns: list[int] = field(default_factory=list)
    stopped: str = ""                    # why the run ended early ("" = every flow finished)
    cpu_s: float = 0.0                   # CPU seconds of this process (wall time on a loaded
                                         # machine includes waiting for a core)
    failed: list[tuple[int, str]] = field(default_factory=list)  # (flow, error): the engine
                                         # gave the write up (e.g. its retry limit)

    @property
    def finished(self) -> int:
        return sum(1 for t in self.fct_ns if t >= 0)


def packets_for(size: int) -> int:
    return max(1, math.ceil(size / MSS))


def wire_bytes(size: int, mtu: int, overhead: int = WIRE_OVERHEAD) -> int:
    """Bytes on the wire for ``size`` payload bytes (full packets plus the tail), each
    packet's UDP payload taking ``overhead`` more (``FabricSpec.wire_overhead``)."""
    n = packets_for(size)
    return size + n * (mtu - MSS + overhead)


def ideal_fct_ns(size: int, spec: FabricSpec, mtu: int) -> int:
    """Completion on an idle fabric: the flow's bytes at line rate plus one base RTT."""
    ser = wire_bytes(size, mtu, spec.wire_overhead) * 8e9 / spec.rate_bps
    pkt = (mtu + spec.wire_overhead) * 8e9 / spec.rate_bps
    ack = ack_wire(spec) * 8e9 / spec.rate_bps
    hops = spec.hops
    return int(ser + (hops - 1) * pkt + hops * ack + 2 * hops * spec.link_delay_ns)


def run_flows(scenario: str, spec: FabricSpec, flows: list[Flow], scheme: str, *, seed: int = 1,
              max_virtual_s: float = 2.0, wall_budget_s: float | None = None,
              trace_host: int | None = None, engine_settings: dict[str, Any] | None = None,
              progress: Callable[[str], None] | None = None) -> StudyResult:
    """Run ``flows`` on ``spec`` with ``scheme``; every engine is a real C engine.

    A flow whose write fails (the engine gave up, e.g. at its retry limit) counts as
    done, with FCT -1, and is listed in :attr:`StudyResult.failed`. The run stops when
    every flow completed, when ``max_virtual_s`` of virtual time
    passed, or when ``wall_budget_s`` of wall time passed (a trim storm can need hours
    of wall time); :attr:`StudyResult.stopped` says which, unfinished flows have FCT -1.
    ``engine_settings`` override the scheme's engine settings (e.g. ``cc_spec_bytes``)."""
    mtu = engine_mtu()
    settings = scheme_settings(scheme, spec, mtu)
    if settings is None:
        raise ValueError(f"scheme {scheme!r} is not in this engine")
    settings.update(engine_settings or {})
    if uses_credits(scheme) and spec.ecn_last_hop:
        spec = replace(spec, ecn_last_hop=False)  # htsim: no marking on ToR → host with credits
    hosts = max(max(f.src, f.dst) for f in flows) + 1
    if hosts > spec.hosts:
        raise ValueError(f"flows use {hosts} hosts, the fabric has {spec.hosts}")
    dsts = sorted({f.dst for f in flows})
    trace_host = dsts[0] if trace_host is None else trace_host
    trace_name = (f"leaf{trace_host // spec.hosts_per_leaf}:p{trace_host % spec.hosts_per_leaf}")
    sim = Simulation(seed=seed, fabric=spec, mtu=mtu, trace_ports=(trace_name,),
                     rto_init_ns=RTO_NS, rto_per_packet=1, **settings)
    peers_of = [0] * hosts
    for f in flows:
        peers_of[f.src] += 1
        peers_of[f.dst] += 1
    eps = [sim.endpoint(max_peers=max(8, peers_of[h] + 4), max_wrs=4096) for h in range(hosts)]
    # Destination memory: one buffer per destination host that every incoming flow writes
    # from offset 0 (the bytes are not the point of a study; the delivery tests check them):
    # a 256→1 incast touches 1 MiB at the receiver, not 256 MiB of fresh pages.
    inbound: dict[int, int] = {}
    for f in flows:
        inbound[f.dst] = max(inbound.get(f.dst, 0), f.size)
    offsets = [0] * len(flows)
    dst_regions = {h: eps[h].register(np.zeros(n, dtype=np.uint8)) for h, n in inbound.items()}
    src_data = np.frombuffer(random.Random(seed).randbytes(max(f.size for f in flows)),
                             dtype=np.uint8).copy()
    src_regions = {h: eps[h].register(src_data) for h in sorted({f.src for f in flows})}
    peers: dict[tuple[int, int], Any] = {}
    fct = [-1] * len(flows)
    pending: dict[tuple[int, int], int] = {}  # (src host, wr id) -> flow index
    failed: list[tuple[int, str]] = []        # flows whose write failed, with the error
    done = [0]

    def poller(h: int) -> Callable[[], None]:
        ep = eps[h]

        def poll() -> None:
            if not ep.outstanding:
                return
            for c in ep.cq.poll():
                i = pending.pop((h, c.wr_id), None)
                if i is not None:
                    if c.ok:
                        fct[i] = sim.loop.now_ns - flows[i].start_ns
                    else:
                        failed.append((i, c.error or str(c.status)))
                    done[0] += 1
        return poll

    for h in src_regions:
        sim.watch(eps[h], poller(h))

    def post(i: int) -> None:
        f = flows[i]
        key = (f.src, f.dst)
        if key not in peers:
            peers[key] = eps[f.src].connect(eps[f.dst].address)
        wr = peers[key].write(src_regions[f.src], dst_regions[f.dst].remote(), local_offset=0,
                              remote_offset=offsets[i], length=f.size)
        pending[(f.src, wr)] = i

    for i, f in enumerate(flows):
        sim.loop.call_at(f.start_ns, post, i)
    wall0, cpu0 = time.monotonic(), time.process_time()
    total = len(flows)
    limit = int(max_virtual_s * 1e9)
    step_ns = 100_000
    next_report = step_ns
    stopped = ""
    while done[0] < total:
        until = min(limit, next_report)
        if sim.loop.run_until(lambda: done[0] >= total, until):
            break
        if sim.loop.next_time() is None:
            stopped = "idle with flows unfinished"
            break
        if sim.loop.now_ns >= limit:
            stopped = f"virtual time limit {max_virtual_s * 1e3:g} ms"
            break
        if wall_budget_s is not None and time.monotonic() - wall0 > wall_budget_s:
            stopped = (f"wall budget {wall_budget_s:g} s at {sim.loop.now_ns / 1e3:,.0f} us "
                       "virtual")
            break
        if sim.loop.now_ns >= next_report:
            next_report += step_ns * (10 if sim.loop.now_ns >= 10 * step_ns else 1)
            next_report = max(next_report, sim.loop.now_ns + 1)
            if progress:
                progress(f"{scenario}/{scheme}: {done[0]}/{total} flows done at "
                         f"{sim.loop.now_ns / 1e3:,.0f} us virtual, {sim.loop.events_run:,} "
                         f"events ({time.monotonic() - wall0:.1f} s)")
    wall, cpu = time.monotonic() - wall0, time.process_time() - cpu0
    now = sim.loop.now_ns
    fabric = sim.fabric
    receivers = {}
    for h in dsts:
        port = fabric.host_port(h)
        receivers[str(h)] = {"peak_bytes": port.counters.peak_bytes,
                             "mean_bytes": port.mean_bytes(now),
                             "busy_ns": port.counters.busy_ns,
                             "data_bytes": port.counters.data_bytes,
                             **{k: getattr(port.counters, k) for k in
                                ("ce_marked", "trimmed", "dropped", "trim_dropped")}}
    engines: dict[str, int] = {}
    for ep in eps:
        for k, v in ep.stats().items():
            engines[k] = engines.get(k, 0) + v
    tport = fabric.host_port(trace_host)
    trace = (list(tport.trace_t or ()), list(tport.trace_q or ()))
    starts = [f.start_ns for f in flows]
    ends = [s + t for s, t in zip(starts, fct, strict=True) if t >= 0]
    makespan = (max(ends) - min(starts)) if ends else now
    switch = fabric.totals()
    switch["peak_bytes_any_port"] = max(p.counters.peak_bytes for p in fabric.ports())
    return StudyResult(scenario, scheme, spec, flows, fct, switch, receivers, engines,
                       trace, makespan, wall, sim.loop.events_run,
                       [ideal_fct_ns(f.size, spec, mtu) for f in flows], stopped, cpu, failed)


# ---- scenarios ----------------------------------------------------------------------------

def incast_spec(n: int, *, htsim_sizes: bool = False, **kw: Any) -> FabricSpec:
    """The anchor's fabric for an N→1 incast: one switch up to 64 senders, else a 2-tier
    leaf-spine of 32-host leaves (288 hosts for 256 senders, as htsim). ``htsim_sizes``:
    packets take htsim's sizes on the wire (:func:`htsim_wire_sizes`), for the
    comparison with its figures; otherwise netweft's own frames."""
    base = dict(rate_bps=RATE_BPS, buffer_bytes=BUFFER_BYTES,
                **(htsim_wire_sizes() if htsim_sizes else {}), **kw)
    if n <= 64:
        return FabricSpec.one_switch(n + 1, **base)
    leaves = max(2, math.ceil((n + 1) / 32))
    return FabricSpec.leaf_spine(leaves, 32, 32, **base)


def incast_flows(n: int, size: int = MIB) -> list[Flow]:
    """N senders (hosts 1..N) each write ``size`` bytes to host 0, all at time 0."""
    return [Flow(src, 0, size, 0, "incast") for src in range(1, n + 1)]


def permutation_flows(hosts: int, size: int, seed: int, hosts_per_leaf: int) -> list[Flow]:
    """Each host sends ``size`` bytes to one other host, every host receiving once; a seeded
    permutation in which no host sends to its own leaf (all traffic crosses the spines)."""
    rng = random.Random(seed)
    while True:
        perm = list(range(hosts))
        rng.shuffle(perm)
        if all(p // hosts_per_leaf != i // hosts_per_leaf for i, p in enumerate(perm)):
            return [Flow(i, p, size, 0, "permutation") for i, p in enumerate(perm)]


def mixed_flows(hosts: int, long_size: int, short_size: int, shorts: int, seed: int,
                hosts_per_leaf: int, span_ns: int) -> list[Flow]:
    """Long flows host i → host i + hosts/2 (across leaves) from time 0, and ``shorts``
    short flows between random host pairs on different leaves, starting at seeded
    uniform times in ``[0, span_ns)``: short flows meet the long flows' queues."""
    rng = random.Random(seed)
    half = hosts // 2
    flows = [Flow(i, i + half, long_size, 0, "long") for i in range(half)]
    for _ in range(shorts):
        while True:
            a, b = rng.randrange(hosts), rng.randrange(hosts)
            if a // hosts_per_leaf != b // hosts_per_leaf:
                break
        flows.append(Flow(a, b, short_size, rng.randrange(span_ns), "short"))
    return flows


# ---- metrics ------------------------------------------------------------------------------

def jain(values: list[float]) -> float:
    """Jain's fairness index: 1 when all equal, 1/n when one takes everything."""
    if not values:
        return float("nan")
    s, sq = sum(values), sum(v * v for v in values)
    return s * s / (len(values) * sq) if sq else 1.0


def summarise(r: StudyResult, tag: str | None = None) -> dict[str, Any]:
    """The metrics of one run (restricted to flows with ``tag`` if given)."""
    idx = [i for i, f in enumerate(r.flows) if tag is None or f.tag == tag]
    fcts = [r.fct_ns[i] for i in idx if r.fct_ns[i] >= 0]
    slow = [r.fct_ns[i] / r.ideal_ns[i] for i in idx if r.fct_ns[i] >= 0]
    tput = [r.flows[i].size * 8 / r.fct_ns[i] for i in idx if r.fct_ns[i] > 0]  # Gbit/s
    rx = list(r.receivers.values())
    payload = sum(r.flows[i].size for i in idx if r.fct_ns[i] >= 0)
    span = r.makespan_ns or 1
    rate = r.spec.rate_bps
    out = {
        "scenario": r.scenario, "scheme": r.scheme, "flows": len(idx), "finished": len(fcts),
        "fct_min_us": min(fcts) / 1e3 if fcts else float("nan"),
        "fct_mean_us": float(np.mean(fcts)) / 1e3 if fcts else float("nan"),
        "fct_p99_us": float(np.percentile(fcts, 99)) / 1e3 if fcts else float("nan"),
        "fct_max_us": max(fcts) / 1e3 if fcts else float("nan"),
        "slowdown_p50": float(np.percentile(slow, 50)) if slow else float("nan"),
        "slowdown_p99": float(np.percentile(slow, 99)) if slow else float("nan"),
        "jain": jain(tput),
        "peak_queue_kb": max(x["peak_bytes"] for x in rx) / 1e3,
        "mean_queue_kb": float(np.mean([x["mean_bytes"] for x in rx])) / 1e3,
        "fabric_peak_queue_kb": r.switch.get("peak_bytes_any_port", 0) / 1e3,
        "drops": r.switch["dropped"], "trims": r.switch["trimmed"],
        "trim_drops": r.switch["trim_dropped"], "prio_drops": r.switch["priority_dropped"],
        "ce_marks": r.switch["ce_marked"],
        "rx_utilization": float(np.mean([min(1.0, x["busy_ns"] / span) for x in rx])),
        "goodput_gbps": payload * 8 / span / max(1, len(rx)),  # per receiver
        "line_gbps": rate / 1e9,
        "new_pkts": r.engines.get("data_pkts_out", 0),
        "retransmits": r.engines.get("retransmits", 0),
        "rtos": r.engines.get("rto_fired", 0),
        "nacks": r.engines.get("nacks_in", 0),
        "makespan_us": r.makespan_ns / 1e3,
        "wall_s": r.wall_s, "cpu_s": r.cpu_s, "events": r.events, "stopped": r.stopped,
        "failed": sum(1 for i, _ in r.failed if i in set(idx)),
        "first_error": r.failed[0][1] if r.failed else "",
    }
    return out


def over_seeds(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """One scheme's runs of one scenario over several seeds, from their :func:`summarise`
    dicts: each run reduced to its earliest, mean and last completion time, their spread
    (last - earliest), Jain's index, retransmissions and timeouts, and each of those as
    (min, median, max) across the runs whose flows all finished. One run of a scheme is one
    draw of its ECN and trimming decisions: two simulators compare by these distributions,
    not by one seed each (``docs/cc-studies.md``, "Over seeds")."""
    done = [s for s in summaries if s["finished"] == s["flows"] and not s["failed"]]

    def spread(values: list[float]) -> tuple[float, float, float] | None:
        if not values:
            return None
        return (float(min(values)), float(np.median(values)), float(max(values)))

    return {
        "runs": len(summaries), "complete": len(done),
        "earliest_us": spread([s["fct_min_us"] for s in done]),
        "mean_us": spread([s["fct_mean_us"] for s in done]),
        "last_us": spread([s["fct_max_us"] for s in done]),
        "spread_us": spread([s["fct_max_us"] - s["fct_min_us"] for s in done]),
        "jain": spread([s["jain"] for s in done]),
        "retransmits": spread([s["retransmits"] for s in done]),
        "rtos": spread([s["rtos"] for s in done]),
    }
