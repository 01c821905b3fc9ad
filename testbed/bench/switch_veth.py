"""The switch over veth: delivered packets/s, loss and latency, for every switch side by side.

Two veth pairs in the root namespace around the switch under test::

    generator --l1a==l1b-- [port 1  switch  port 2] --l2a==l2b-- sink

The generator and the sink are C (``dataplane_traffic.c``) so that they are
not the bottleneck: the generator stamps a sequence number and its send time
into every frame, the sink takes the kernel's receive time of each one.  For
each switch (the minimal forwarder, the native loop with the stand-in
pipeline, the native loop with ``basic_forward.p4`` compiled to C by the native
back end, the switch process running ``basic_forward.p4`` on the C loop and on
Python, and BMv2's ``simple_switch_grpc`` running p4c's compilation of the same
program where p4c-bm2-ss and simple_switch_grpc are on PATH, :mod:`.bmv2_switch`)
and each frame size, the offered load is swept upwards until the switch saturates, then once more unpaced.  Every
switch runs as its own process, so its CPU time is read from ``/proc``.

Tests never assert these figures: they depend on the machine and its load.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from netweft.emulation.native.dataplane_build import load
from netweft.emulation.process_lifetime import stop_process

NEXT_HOP_MAC = "08:00:00:00:01:11"
DEFAULT_RATES = (50_000, 100_000, 200_000, 400_000, 800_000, 1_600_000)
STAMP_OFFSET = 14 + 20 + 8   # after Ethernet, IPv4 and UDP headers
SATURATED = 0.9              # delivered below this share of offered: saturated


# ---------------------------------------------------------------------- links

@dataclass
class BenchLinks:
    """Interface names: generator end, switch ports 1 and 2, sink end."""

    generator: str
    port1: str
    port2: str
    sink: str


def _ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True, text=True)


def quiet_interface(name: str) -> None:
    """Offloads off (frames cross AF_PACKET as they are), no IPv6 chatter, up."""
    subprocess.run(["ethtool", "-K", name, "tx", "off", "rx", "off", "tso", "off", "gso", "off",
                    "gro", "off"], check=True, capture_output=True)
    Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1\n")
    _ip("link", "set", name, "up")


@contextmanager
def root_veth_pairs(ports: Iterable[int], prefix: str | None = None
                    ) -> Iterator[dict[int, tuple[str, str]]]:
    """Port N's veth pair ``(<prefix>lNa, <prefix>lNb)`` in the root namespace, offloads
    off and up, removed on exit (also on failure).

    Names follow the network builder's ``<prefix><5 hex>l<N>a|b``, with its owner
    file, so that ``netweft clean`` (or a ``netweft up`` running meanwhile) leaves them
    alone while this process lives and removes pairs a killed run left behind.
    """
    from netweft.emulation.network import OWNER_DIR
    from netweft.emulation.process_lifetime import owner_stamp

    head = prefix or f"nw{uuid.uuid4().hex[:5]}"
    made: list[str] = []
    owner = OWNER_DIR / head
    try:
        OWNER_DIR.mkdir(parents=True, exist_ok=True)
        owner.write_text(owner_stamp() + "\n")
        pairs = {n: (f"{head}l{n}a", f"{head}l{n}b") for n in ports}
        for a, b in pairs.values():
            _ip("link", "add", a, "type", "veth", "peer", "name", b)
            made.append(a)
            for name in (a, b):
                quiet_interface(name)
        yield pairs
    finally:
        for name in made:
            subprocess.run(["ip", "link", "del", name], capture_output=True)
        owner.unlink(missing_ok=True)


@contextmanager
def veth_links(prefix: str | None = None) -> Iterator[BenchLinks]:
    """The bench's two pairs (:func:`root_veth_pairs` 1 and 2): generator to switch port
    1, switch port 2 to sink."""
    with root_veth_pairs((1, 2), prefix) as pairs:
        yield BenchLinks(pairs[1][0], pairs[1][1], pairs[2][0], pairs[2][1])


def udp_frame(size: int, dst: str = "10.0.2.2") -> bytes:
    """An Ethernet/IPv4/UDP frame of ``size`` bytes (>= 62) with a valid IPv4 checksum."""
    if size < STAMP_OFFSET + 20:
        raise ValueError(f"frames of at least {STAMP_OFFSET + 20} bytes carry a stamp")
    eth = bytes.fromhex("000000000001" "020000000002" "0800")
    total = size - 14
    src_ip, dst_ip = bytes([10, 0, 1, 1]), bytes(int(x) for x in dst.split("."))
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 17, 0, src_ip, dst_ip)
    s = sum(struct.unpack(">10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    hdr = hdr[:10] + struct.pack(">H", ~s & 0xFFFF) + hdr[12:]
    udp = struct.pack(">HHHH", 1234, 4793, total - 20, 0)
    return (eth + hdr + udp).ljust(size, b"\0")


# ---------------------------------------------------------------------- switches

@dataclass
class SwitchUnderTest:
    """How to start one switch on the bench's two ports: its command line, and how to
    tell that it forwards (by default it prints ``ready``; ``ready(proc, tmp, timeout)``
    instead returns once the started process forwards, raising if it cannot)."""

    name: str
    argv: Callable[[BenchLinks, Path], list[str]]
    ready: Callable[[subprocess.Popen, Path, float], None] | None = None


def forwarder_switch() -> SwitchUnderTest:
    return SwitchUnderTest("minimal forwarder (C, no P4)", lambda links, _tmp: [
        sys.executable, "-m", "netweft.emulation.native.dataplane", "--pipeline", "forwarder",
        "--port", f"1={links.port1}", "--port", f"2={links.port2}"])


def standin_switch() -> SwitchUnderTest:
    return SwitchUnderTest("native loop + stand-in basic_forward (C)", lambda links, _tmp: [
        sys.executable, "-m", "netweft.emulation.native.dataplane", "--pipeline", "standin",
        "--port", f"1={links.port1}", "--port", f"2={links.port2}",
        "--route", f"10.0.0.0/8=2,{NEXT_HOP_MAC}"])


def basic_forward_runtime() -> dict:
    """basic_forward.p4's one route, 10.0.0.0/8 -> port 2, in the runtime-file format."""
    return {"table_entries": [{
        "table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.0", 8]},
        "action_name": "MyIngress.ipv4_forward",
        "action_params": {"dstAddr": NEXT_HOP_MAC, "port": 2}}]}


def runtime_file(tmp: Path) -> Path:
    """basic_forward.p4's one route as a runtime file."""
    path = tmp / "basic_forward-runtime.json"
    path.write_text(json.dumps(basic_forward_runtime()))
    return path


def generated_switch() -> SwitchUnderTest:
    def argv(links: BenchLinks, tmp: Path) -> list[str]:
        from netweft.p4.programs import source_dir

        return [sys.executable, "-m", "netweft.emulation.native.dataplane", "--pipeline", "p4",
                "--program", str(source_dir() / "basic_forward.p4"),
                "--runtime", str(runtime_file(tmp)),
                "--port", f"1={links.port1}", "--port", f"2={links.port2}"]
    return SwitchUnderTest("native loop + generated basic_forward.p4", argv)


def process_switch(backend: str) -> SwitchUnderTest:
    """The switch process testbeds run (``--backend c``: its packets in the C loop;
    ``python``: in Python)."""
    def argv(links: BenchLinks, tmp: Path) -> list[str]:
        from netweft.p4.programs import source_dir

        return [sys.executable, "-m", "netweft.emulation.process.switch_process",
                "--program", str(source_dir() / "basic_forward.p4"),
                "--port", f"1={links.port1}", "--port", f"2={links.port2}",
                "--runtime", str(runtime_file(tmp)), "--backend", backend]
    if backend == "python":
        return SwitchUnderTest("Python switch process, basic_forward.p4", argv)
    return SwitchUnderTest("switch process on the C loop, basic_forward", argv)


def python_switch() -> SwitchUnderTest:
    return process_switch("python")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def running(switch: SwitchUnderTest, links: BenchLinks, timeout: float = 120.0
            ) -> Iterator[subprocess.Popen]:
    """The switch as a process, ready to forward; stopped (SIGTERM) on exit."""
    with tempfile.TemporaryDirectory(prefix="netweft-veth-bench-") as tmp:
        try:
            proc = subprocess.Popen(switch.argv(links, Path(tmp)), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        except OSError as err:
            raise RuntimeError(f"{switch.name} did not start: {err}") from None
        try:
            problem = ""
            if switch.ready is None:
                deadline = time.monotonic() + timeout
                line = ""
                while time.monotonic() < deadline and proc.poll() is None:
                    line = proc.stdout.readline().strip()   # type: ignore[union-attr]
                    if line == "ready":
                        break
                problem = "" if line == "ready" else "no ready line"
            else:
                try:
                    switch.ready(proc, Path(tmp), timeout)
                except Exception as err:  # noqa: BLE001 - any failure to start is reported
                    problem = str(err)
            if problem:
                proc.kill()
                err = proc.communicate()[1][-2000:].strip()
                detail = "\n".join(part for part in (problem, err) if part)
                raise RuntimeError(f"{switch.name} did not start: {detail}")
            yield proc
        finally:
            stop_process(proc, timeout=10)


# ---------------------------------------------------------------------- one load point

@dataclass
class Point:
    """One offered load through one switch."""

    switch: str
    frame_bytes: int
    offered_pps: float | None      # None: unpaced
    sent: int
    generated_pps: float
    delivered: int
    delivered_pps: float
    loss: float
    p50_us: float | None
    p99_us: float | None
    switch_cpu: float              # switch CPU seconds per wall second
    reordered: int = 0

    @property
    def generator_limited(self) -> bool:
        """The generator could not offer the asked rate (the machine was too busy)."""
        return self.offered_pps is not None and self.generated_pps < SATURATED * self.offered_pps

    @property
    def saturated(self) -> bool:
        """Less came out than went in, or nothing more could be offered."""
        return self.delivered_pps < SATURATED * self.generated_pps or self.generator_limited

    @property
    def pps_per_cpu(self) -> float | None:
        """Delivered packets per second of the switch's CPU time: what one whole core
        would forward at this load, whatever share of a core the switch was given."""
        return self.delivered_pps / self.switch_cpu if self.switch_cpu > 0.02 else None


@dataclass(frozen=True)
class Offer:
    """What the generator sends: ``templates`` in turn (all of one length), its stamp at
    ``stamp_offset`` and, where ``seq32_offset`` > 0, its sequence number there too."""

    templates: tuple[bytes, ...]
    stamp_offset: int = STAMP_OFFSET
    seq32_offset: int = 0


def measure(links: BenchLinks, frame: bytes | Offer, rate: float | None, seconds: float,
            switch_pid: int | None, switch_name: str, run_id: int,
            count: int | None = None) -> Point:
    """Offer ``rate`` packets/s (None: unpaced) of ``frame`` (one frame, or an
    :class:`Offer`) for ``seconds`` (or ``count`` frames, whichever ends first); what
    came out."""
    import numpy as np

    offer = frame if isinstance(frame, Offer) else Offer((frame,))
    size = len(offer.templates[0])
    if any(len(t) != size for t in offer.templates):
        raise ValueError("an offer's frames must all have one length")

    mod = load()
    ffi, lib = mod.ffi, mod.lib
    err = ffi.new("int32_t *")
    sink = lib.nw_dp_sink_open(links.sink.encode(), 16384, err)
    if sink == ffi.NULL:
        raise OSError(-err[0], f"cannot open the sink on {links.sink}")
    try:
        stop_sink, stop_gen = ffi.new("int32_t *", 0), ffi.new("int32_t *", 0)
        if count is None:
            count = int((rate or 3_000_000) * seconds)
        cap = count + 1024
        lat = ffi.new("int64_t[]", cap)
        sres = ffi.new("nw_dp_sink_result_t *")
        t_sink = threading.Thread(target=lib.nw_dp_sink_run, args=(
            sink, offer.stamp_offset, run_id, stop_sink, lat, cap, sres))
        t_sink.start()
        cfg = ffi.new("nw_dp_gen_config_t *", {
            "count": count, "rate_pps": rate or 0.0, "stamp_offset": offer.stamp_offset,
            "run_id": run_id, "templates": len(offer.templates),
            "seq32_offset": offer.seq32_offset})
        gres = ffi.new("nw_dp_gen_result_t *")
        cpu0 = _cpu_seconds(switch_pid) if switch_pid else 0.0
        wall0 = time.monotonic()
        timer = threading.Timer(seconds, lambda: stop_gen.__setitem__(0, 1))
        timer.start()
        rc = lib.nw_dp_gen_run(links.generator.encode(), b"".join(offer.templates), size, cfg,
                               stop_gen, gres)
        timer.cancel()
        time.sleep(0.3)                       # what is still in the switch arrives
        cpu = (_cpu_seconds(switch_pid) - cpu0) if switch_pid else 0.0
        wall = time.monotonic() - wall0
        stop_sink[0] = 1
        t_sink.join()
        if rc < 0:
            raise OSError(-rc, f"the generator failed on {links.generator}")
        sent = int(gres.sent)
        span = (gres.end_ns - gres.start_ns) / 1e9
        got = int(sres.matched)
        rx_span = (sres.last_ns - sres.first_ns) / 1e9 if got > 1 else 0.0
        samples = np.frombuffer(ffi.buffer(lat, 8 * int(sres.latencies)), dtype=np.int64)
        p50 = p99 = None
        if samples.size:
            p50, p99 = (float(x) / 1000 for x in np.percentile(samples, [50, 99]))
        return Point(switch_name, size, rate, sent, sent / span if span > 0 else 0.0,
                     got, got / max(rx_span, span) if got else 0.0,
                     1 - got / sent if sent else 0.0, p50, p99, cpu / wall,
                     int(sres.reordered))
    finally:
        lib.nw_dp_sink_close(sink)


# ---------------------------------------------------------------------- the sweep

@dataclass
class BenchResult:
    points: list[Point] = field(default_factory=list)

    def best(self, switch: str, size: int) -> Point | None:
        rows = [p for p in self.points if p.switch == switch and p.frame_bytes == size]
        return max(rows, key=lambda p: p.delivered_pps) if rows else None


def sweep(switches: Sequence[SwitchUnderTest], sizes: Sequence[int] = (64, 1500),
          rates: Sequence[int] = DEFAULT_RATES, seconds: float = 1.0,
          log: Callable[[str], None] = print) -> BenchResult:
    """Every switch, every size, offered loads upwards to saturation, then unpaced."""
    result = BenchResult()
    run_id = 1
    with veth_links() as links:
        for switch in switches:
            with contextlib.ExitStack() as stack:
                try:
                    proc = stack.enter_context(running(switch, links))
                except RuntimeError as err:  # e.g. no C compiler for the generated pipeline
                    log(f"{switch.name}: skipped ({str(err).splitlines()[-1]})")
                    continue
                for size in sizes:
                    run_id = _sweep_offer(links, proc.pid, switch.name, udp_frame(size), rates,
                                          seconds, run_id, result, log)
    return result


def _sweep_offer(links: BenchLinks, pid: int, name: str, frame: bytes | Offer,
                 rates: Sequence[int], seconds: float, run_id: int, result: BenchResult,
                 log: Callable[[str], None]) -> int:
    """Offered loads upwards until the switch saturates, then once unpaced; the next run id."""
    for rate in [*rates, None]:
        point = measure(links, frame, rate, seconds, pid, name, run_id)
        run_id += 1
        result.points.append(point)
        log(format_point(point))
        if rate is not None and point.saturated:
            # saturated: one unpaced point shows the ceiling, then stop
            point = measure(links, frame, None, seconds, pid, name, run_id)
            run_id += 1
            result.points.append(point)
            log(format_point(point))
            break
    return run_id


def format_point(p: Point) -> str:
    offered = "unpaced" if p.offered_pps is None else f"{p.offered_pps / 1e3:,.0f}k"
    lat = ("-" if p.p50_us is None
           else f"{p.p50_us:,.1f}/{p.p99_us:,.1f}")
    per_cpu = "-" if p.pps_per_cpu is None else f"{p.pps_per_cpu / 1e3:,.0f}k"
    return (f"{p.switch:<44} {p.frame_bytes:>5} B  offered {offered:>8}  "
            f"generated {p.generated_pps / 1e3:>6,.0f}k  delivered {p.delivered_pps / 1e3:>6,.0f}k"
            f"  loss {100 * p.loss:>5.1f}%  p50/p99 {lat:>17} us  switch CPU {p.switch_cpu:4.2f}"
            f"  per CPU-s {per_cpu:>7}")


def summary(result: BenchResult, switches: Sequence[SwitchUnderTest],
            sizes: Sequence[int]) -> list[str]:
    """The best delivered rate per switch and size, with the ratios between them."""
    lines = []
    forwarder = switches[0].name
    python = next((s.name for s in switches if s.name.startswith("Python")), None)
    bmv2 = next((s.name for s in switches if s.name.startswith("BMv2")), None)
    for size in sizes:
        base = result.best(forwarder, size)
        py = result.best(python, size) if python else None
        bm = result.best(bmv2, size) if bmv2 else None
        for s in switches:
            b = result.best(s.name, size)
            if b is None:
                continue
            parts = [f"{s.name:<44} {size:>5} B  best {b.delivered_pps / 1e3:>7,.0f}k pps"]
            if base and base.delivered_pps:
                parts.append(f"{100 * b.delivered_pps / base.delivered_pps:5.1f}% of forwarder")
            if py and py.delivered_pps:
                parts.append(f"{b.delivered_pps / py.delivered_pps:5.1f}x Python")
            if bm and bm.delivered_pps:
                parts.append(f"{b.delivered_pps / bm.delivered_pps:5.1f}x BMv2")
            cpu, cpu_base, cpu_py, cpu_bm = (_best_per_cpu(result, name, size)
                                             for name in (s.name, forwarder, python, bmv2))
            if cpu is not None:
                parts.append(f"per CPU-s {cpu / 1e3:>6,.0f}k")
                if cpu_base:
                    parts.append(f"{100 * cpu / cpu_base:5.1f}% of forwarder")
                if cpu_py:
                    parts.append(f"{cpu / cpu_py:5.1f}x Python")
                if cpu_bm:
                    parts.append(f"{cpu / cpu_bm:5.1f}x BMv2")
            lines.append("  ".join(parts))
    return lines


def _best_per_cpu(result: BenchResult, switch: str | None, size: int) -> float | None:
    values = [p.pps_per_cpu for p in result.points
              if p.switch == switch and p.frame_bytes == size and p.pps_per_cpu is not None]
    return max(values) if values else None


def run(sizes: Sequence[int] = (64, 1500), rates: Sequence[int] = DEFAULT_RATES,
        seconds: float = 1.0, json_out: Path | None = None, include_python: bool = True,
        include_bmv2: bool = True, extra: Sequence[SwitchUnderTest] = (),
        log: Callable[[str], None] = print) -> BenchResult:
    """The whole bench: print every point and the summary, write the raw JSON. BMv2 is
    among the switches when its tools are on PATH; otherwise a line says it is skipped."""
    from netweft.testbed.bench.bmv2_switch import bmv2_switches

    switches = [forwarder_switch(), standin_switch(), generated_switch(), process_switch("c"),
                *extra]
    if include_bmv2:
        found, skipped = bmv2_switches()
        switches.extend(found)
        if skipped:
            log(skipped)
    if include_python:
        switches.append(python_switch())
    log("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    result = sweep(switches, sizes, rates, seconds, log)
    log("")
    for line in summary(result, switches, sizes):
        log(line)
    log("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if json_out is not None:
        json_out.write_text(json.dumps({
            "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()},
            "seconds_per_point": seconds,
            "points": [{**asdict(p), "generator_limited": p.generator_limited,
                        "saturated": p.saturated, "pps_per_cpu": p.pps_per_cpu}
                       for p in result.points]}, indent=2))
        log(f"raw results: {json_out}")
    return result


# ---------------------------------------------------------------------- the other programs

AGG_SERVICE = "10.0.9.1"      # the aggregation job's service address
AGG_JOB, AGG_SLOTS_USED = 1, 256
AGG_LANES = 64
AGG_OFFSET = 14 + 20 + 8      # the aggregation header, after Ethernet, IPv4 and UDP


@dataclass
class ProgramBench:
    """A program of ``p4/`` on the switch process over the bench's ports: its runtime
    file's entries, and what the generator offers it per frame size."""

    program: str
    runtime: dict
    offers: dict[int, Offer]


def fabric_bench() -> ProgramBench:
    """fabric.p4 routing 10.0.0.0/8 to port 2 (UET's UDP port: the UET parser runs)."""
    runtime = {"table_entries": [{
        "table": "FabricIngress.forwarding.ipv4_routes",
        "match": {"ipv4.dstAddr": ["10.0.0.0", 8]},
        "action_name": "FabricIngress.forwarding.route_to_port", "action_params": {"port": 2}}]}
    return ProgramBench("fabric.p4", runtime, {n: Offer((udp_frame(n),)) for n in (64, 1500)})


def aggregation_frame(slot: int, pool: int) -> bytes:
    """A worker's contribution (job AGG_JOB, worker 0 of 1) to ``slot`` of ``pool``; the
    generator writes the block number and its stamp (into the lanes)."""
    lanes = bytes(4 * AGG_LANES)
    payload = struct.pack(">BBHHBBIhH", 1, 0, AGG_JOB, slot, pool << 7, 0, 0, 0,
                          AGG_LANES) + lanes
    frame = bytearray(udp_frame(AGG_OFFSET + len(payload), dst=AGG_SERVICE))
    frame[36:38] = struct.pack(">H", 61440)            # the aggregation UDP port
    frame[AGG_OFFSET:] = payload
    return bytes(frame)


def aggregation_bench() -> ProgramBench:
    """aggregation.p4 with one job of one worker over AGG_SLOTS_USED slots: every packet
    is a new contribution that completes its slot (the most work per packet: the lanes
    summed and stored, the result multicast and rewritten for its worker), blocks in
    SwitchML's order (block b: slot b mod size, pool (b div size) mod 2)."""
    runtime = {
        "table_entries": [
            {"table": "MyIngress.aggregation.agg_jobs",
             "match": {"ipv4.dstAddr": AGG_SERVICE, "agg.job_id": AGG_JOB},
             "action_name": "MyIngress.aggregation.set_job",
             "action_params": {"base": 0, "size": AGG_SLOTS_USED, "workers": 1,
                               "mcast_grp": 1}},
            {"table": "MyEgress.aggregation.agg_workers",
             "match": {"agg.job_id": AGG_JOB, "standard_metadata.egress_rid": 0},
             "action_name": "MyEgress.aggregation.to_worker",
             "action_params": {"mac": NEXT_HOP_MAC, "addr": "10.0.2.2",
                               "udp_port": 61440}}],
        "multicast_group_entries": [{"multicast_group_id": 1,
                                     "replicas": [{"egress_port": 2, "instance": 0}]}]}
    templates = tuple(aggregation_frame(b % AGG_SLOTS_USED, (b // AGG_SLOTS_USED) % 2)
                      for b in range(2 * AGG_SLOTS_USED))
    # the stamp in lanes 0..4 (a one-worker sum is the lanes themselves); block = sequence
    offer = Offer(templates, stamp_offset=AGG_OFFSET + 16, seq32_offset=AGG_OFFSET + 8)
    return ProgramBench("aggregation.p4", runtime, {len(templates[0]): offer})


def program_switch(bench: ProgramBench, backend: str) -> SwitchUnderTest:
    """The switch process running ``bench.program`` (``backend`` c or python)."""
    def argv(links: BenchLinks, tmp: Path) -> list[str]:
        from netweft.p4.programs import source_dir

        runtime = tmp / "runtime.json"
        runtime.write_text(json.dumps(bench.runtime))
        return [sys.executable, "-m", "netweft.emulation.process.switch_process",
                "--program", str(source_dir() / bench.program),
                "--port", f"1={links.port1}", "--port", f"2={links.port2}",
                "--runtime", str(runtime), "--backend", backend]
    where = "on the C loop" if backend == "c" else "on Python"
    return SwitchUnderTest(f"switch process {where}, {bench.program}", argv)


def run_programs(benches: Sequence[ProgramBench] | None = None,
                 backends: Sequence[str] = ("c", "python"), rates: Sequence[int] = DEFAULT_RATES,
                 seconds: float = 1.0, include_bmv2: bool = True,
                 log: Callable[[str], None] = print) -> BenchResult:
    """fabric.p4 and aggregation.p4 (by default) on the switch process, each back end in
    turn after the minimal forwarder with the same frames (and BMv2 with the same
    entries when its tools are on PATH), offered loads upwards to saturation; the best
    of each, as a share of the forwarder's and beside Python and BMv2."""
    from netweft.testbed.bench.bmv2_switch import (
        bmv2_program_name,
        bmv2_program_switch,
        missing_tools,
    )

    benches = list(benches) if benches is not None else [fabric_bench(), aggregation_bench()]
    forwarder = forwarder_switch()
    result = BenchResult()
    run_id = 1 << 12
    missing = missing_tools() if include_bmv2 else []
    with_bmv2 = include_bmv2 and not missing
    if missing:
        log(f"BMv2 simple_switch_grpc: skipped ({', '.join(missing)} not on PATH)")
    log("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with veth_links() as links:
        for bench in benches:
            bmv2 = [bmv2_program_switch(bench)] if with_bmv2 else []
            for switch in [forwarder, *(program_switch(bench, b) for b in backends), *bmv2]:
                try:
                    with running(switch, links) as proc:
                        for offer in bench.offers.values():
                            run_id = _sweep_offer(links, proc.pid, switch.name, offer, rates,
                                                  seconds, run_id, result, log)
                except RuntimeError as err:
                    log(f"{switch.name}: skipped ({str(err).splitlines()[-1]})")
    log("")
    for bench in benches:
        for size in bench.offers:
            base = result.best(forwarder.name, size)
            base_cpu = _best_per_cpu(result, forwarder.name, size)
            python_name = program_switch(bench, "python").name
            bmv2_name = bmv2_program_name(bench)
            python, bmv2 = result.best(python_name, size), result.best(bmv2_name, size)
            for name in [*(program_switch(bench, b).name for b in backends), bmv2_name]:
                best = result.best(name, size)
                if best is None:
                    continue
                parts = [f"{name:<44} {size:>5} B  best {best.delivered_pps / 1e3:>7,.0f}k pps"]
                if base and base.delivered_pps:
                    parts.append(f"{100 * best.delivered_pps / base.delivered_pps:5.1f}% of "
                                 "forwarder")
                if python and python.delivered_pps and name != python_name:
                    parts.append(f"{best.delivered_pps / python.delivered_pps:5.1f}x Python")
                if bmv2 and bmv2.delivered_pps and name != bmv2_name:
                    parts.append(f"{best.delivered_pps / bmv2.delivered_pps:5.1f}x BMv2")
                cpu = _best_per_cpu(result, name, size)
                if cpu is not None:
                    parts.append(f"per CPU-s {cpu / 1e3:>6,.0f}k")
                    if base_cpu:
                        parts.append(f"{100 * cpu / base_cpu:5.1f}% of forwarder")
                log("  ".join(parts))
    log("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return result
