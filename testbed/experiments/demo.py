"""The demo experiment (``netweft demo``): netweft's main job, an emulated fabric on the embedded switch.

The fabric comes from a topology file shipped with netweft
(``testbed/topologies/demo-fabric.yaml``): two leaves and two spines, each a
switch process running the embedded P4 switch with ``p4/basic_forward.p4``
(IPv4 LPM forwarding, entries from runtime files), h1 and h3 on leaf1, h2 on
leaf2, 9000-byte veth links. Every leaf-spine link delays frames by 1 ms each
way, and leaf2's port to h2 sends at 500 Mbit/s from a 256-packet queue. First,
h1 and h3 send UDP datagrams of random content to an echo service on h2: every
datagram crosses three switches each way. Then h1 RMA-writes 8 MiB into memory
registered on h2 with netweft's transport (packets sprayed over UDP source
ports, selective repeat), which fills the queue towards h2, and h2 checks every
byte. Meanwhile the demo samples that queue's occupancy through leaf2's control
channel. It prints a table, the queue's summary and the switches' counters, and
writes the raw numbers (JSON), a plot of the round-trip times, a plot of the
queue's occupancy over time, the switches' logs and counters, and a pcap of
leaf2's port to h2 into the output folder. Then (unless ``--no-fabric``) it runs
the fabric program's experiments of ``netweft bench fabric`` on a second
leaf-spine running ``p4/fabric.p4``, configured by the fabric controller:
spraying with colliding flow hashes in five modes, ECN marking and trimming in
an incast, and multicast against unicast fan-out with and without ACK
aggregation (tables, ``fabric/fabric.json`` and plots in ``fabric/``). Then
(unless ``--no-allreduce``) four hosts on a switch process running
``p4/aggregation.p4`` all-reduce 256 KiB each, in the switch and by ring over
netweft's transport (:mod:`netweft.testbed.experiments.allreduce_testbed`; table and
``allreduce/allreduce.json``). Each new capability extends this experiment.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from netweft.emulation.network import Network, NetworkError
from netweft.testbed.capture import QueueSampler, start_capture, stop_capture
from netweft.testbed.plots import plot_queue_occupancy, plot_rtt_cdf
from netweft.testbed.topology import Topology, load_topology

# RFC 862's echo port: Wireshark decodes the demo's datagrams as Echo requests and
# replies (on 7007 it took them for AFS).
ECHO_PORT = 7

RMA_BYTES = 8 << 20
LINK_MTU = 9000
MAX_DATAGRAM = LINK_MTU - 28          # one UDP datagram per frame: no IPv4 fragments
MAX_COUNT = 100_000
MAX_RMA_BYTES = 1 << 30
HOSTS = [sys.executable, "-m", "netweft.testbed.experiments.demo_hosts"]
TOPOLOGY = Path(__file__).resolve().parents[1] / "topologies" / "demo-fabric.yaml"
QUEUE_SWITCH, QUEUE_PORT = "leaf2", 1   # the port towards h2, whose queue fills


def fabric() -> Topology:
    """The demo's topology, as shipped."""
    return load_topology(TOPOLOGY)


def route_via_switch(net: Network) -> None:
    """Make every host address the other hosts' frames to its switch port's MAC.

    As the p4lang tutorials' hosts send to their gateway: basic_forward.p4 then
    moves that destination MAC (the switch's) into the source MAC and sets the next
    hop's as destination, so every frame the switch forwards carries the switch's
    MAC as its source.
    """
    for host in net.hosts:
        gateway = net.peer_of(host.interfaces[0]).mac
        for other in net.hosts:
            if other is not host:
                host.cmd("ip", "neigh", "replace", other.ip_address, "lladdr", gateway,
                         "dev", "eth0", "nud", "permanent")


def run_demo(out_dir: Path, count: int = 50, size: int = 512, rma_bytes: int = RMA_BYTES,
             log=print) -> dict:
    """Run the experiment; returns (and writes to ``out_dir``) its raw results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    topo = fabric()
    net = topo.build(out_dir, pcaps=False)
    log(f"[1/5] building {topo.name} from {TOPOLOGY.name}: leaf1, leaf2, spine1, spine2; "
        f"h1, h3 on leaf1, h2 on leaf2 (namespaces {net.prefix}-*)")
    log("[2/5] starting four embedded P4 switches with basic_forward.p4 and their runtime "
        "files; 1 ms leaf-spine links, a rate-limited queue towards h2")
    queue_switch = net.switch(QUEUE_SWITCH)
    with net:
        route_via_switch(net)
        h2 = net.host("h2")
        pcap = out_dir / f"{QUEUE_SWITCH}-eth{QUEUE_PORT}.pcap"
        capture = start_capture(net, QUEUE_SWITCH, f"{QUEUE_SWITCH}-eth{QUEUE_PORT}", pcap)
        echo = h2.popen(*HOSTS, "echo", str(ECHO_PORT), stdout=subprocess.PIPE, text=True,
                        start_new_session=True)
        if echo.stdout.readline().strip() != "ready":
            raise NetworkError("echo service on h2 did not start")
        sampler = QueueSampler(queue_switch.control, QUEUE_PORT).start()
        log(f"[3/5] h1 and h3 each send {count} datagrams of {size} bytes to h2 and wait "
            "for the echo")
        senders = {name: net.host(name).popen(*HOSTS, "ping", h2.ip_address, str(ECHO_PORT),
                                              str(count), str(size), stdout=subprocess.PIPE,
                                              text=True, start_new_session=True)
                   for name in ("h1", "h3")}
        flows = {}
        for name, proc in senders.items():
            out, _ = proc.communicate(timeout=60 + count * 2)
            if proc.returncode != 0:
                raise NetworkError(f"the UDP sender on {name} failed (exit {proc.returncode})")
            flows[name] = json.loads(out)
        rma_start = sampler.mark()
        log(f"[4/5] h1 RMA-writes {rma_bytes} bytes into h2's registered memory with "
            "netweft's transport")
        rma = _rma_write(net, rma_bytes)
        rma_end = sampler.mark()
        time.sleep(0.2)
        samples = sampler.stop()
        log("[5/5] stopping the switches and collecting their counters")
        stop_capture(capture)
    results = {"topology": str(TOPOLOGY.name), "namespaces": f"{net.prefix}-*",
               "switch_macs": {s.name: {str(i.port): i.mac for i in s.interfaces}
                               for s in net.switches},
               "program": "basic_forward.p4", "size": size,
               "count": count, "flows": {}, "rma_write": rma,
               "queue": _queue_summary(queue_switch, samples, sampler.errors,
                                       (rma_start, rma_end)),
               "switches": {s.name: json.loads(s.stats_out.read_text())
                            for s in net.switches}}
    for name, records in flows.items():
        rtts = sorted(r["rtt_s"] for r in records if r["rtt_s"] is not None)
        results["flows"][f"{name}->h2"] = {
            "sent": len(records), "echoed": len(rtts),
            "intact": sum(r["intact"] for r in records),
            "rtt_p50_ms": statistics.median(rtts) * 1e3 if rtts else None,
            "rtt_max_ms": rtts[-1] * 1e3 if rtts else None,
        }
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    plot_rtt_cdf({f"{name}->h2": [r["rtt_s"] * 1e3 for r in records if r["rtt_s"] is not None]
                  for name, records in flows.items()}, out_dir / "rtt_cdf.png",
                 "UDP echo across the leaf-spine fabric (3 switches each way)")
    q = results["queue"]
    plot_queue_occupancy(samples, out_dir / "queue_occupancy.png",
                         f"{QUEUE_SWITCH} port {QUEUE_PORT} (to h2): {q['rate_mbit']:g} Mbit/s, "
                         f"{q['depth_limit']} packets", q["depth_limit"],
                         {"RMA write": (rma_start, rma_end)})
    return results


def _queue_summary(switch, samples: list[tuple[float, int]], errors: int,
                   rma: tuple[float, float]) -> dict:
    depths = [d for _, d in samples]
    during = [d for t, d in samples if rma[0] <= t <= rma[1]]
    link = next(link for link in switch.network.links
                if any(i.port == QUEUE_PORT and i.node is switch for i in (link.a, link.b)))
    return {"switch": switch.name, "port": QUEUE_PORT,
            "rate_mbit": link.rate_mbit, "depth_limit": link.params.queue_packets,
            "samples": [[round(t, 4), d] for t, d in samples], "sample_errors": errors,
            "max": max(depths, default=0),
            "mean_during_rma": statistics.fmean(during) if during else 0.0,
            "rma_window_s": [round(rma[0], 4), round(rma[1], 4)]}


def _rma_write(net: Network, length: int) -> dict:
    """h1 writes ``length`` random bytes into h2; both sides hash what they hold."""
    h1, h2 = net.host("h1"), net.host("h2")
    target = h2.popen(*HOSTS, "rma-target", h2.ip_address, str(length), str(LINK_MTU - 28),
                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                      start_new_session=True)
    port, rkey, size = target.stdout.readline().split()
    writer = h1.popen(*HOSTS, "rma-writer", h1.ip_address, h2.ip_address, port, rkey, size,
                      str(LINK_MTU - 28), stdout=subprocess.PIPE, text=True,
                      start_new_session=True)
    out, _ = writer.communicate(timeout=180)
    if writer.returncode != 0:
        raise NetworkError(f"the RMA writer on h1 failed (exit {writer.returncode})")
    result = json.loads(out)
    target.stdin.write("done\n")
    target.stdin.flush()
    result["intact"] = target.stdout.readline().strip() == result.pop("sha256")
    target.wait(timeout=10)
    return result


def format_results(results: dict) -> str:
    lines = [f"{'flow':<8} {'sent':>5} {'echoed':>7} {'intact':>7} {'rtt p50 ms':>11} "
             f"{'rtt max ms':>11}"]
    for flow, r in results["flows"].items():
        p50 = f"{r['rtt_p50_ms']:.2f}" if r["rtt_p50_ms"] is not None else "-"
        mx = f"{r['rtt_max_ms']:.2f}" if r["rtt_max_ms"] is not None else "-"
        lines.append(f"{flow:<8} {r['sent']:>5} {r['echoed']:>7} {r['intact']:>7} {p50:>11} "
                     f"{mx:>11}")
    rma = results["rma_write"]
    lines.append(f"RMA write h1->h2: {rma['bytes']} bytes in {rma['seconds'] * 1e3:.0f} ms, "
                 f"{rma['goodput_mbit_s']:.1f} Mbit/s, intact: {rma['intact']}")
    q = results["queue"]
    lines.append(f"queue {q['switch']} port {q['port']} (to h2, {q['rate_mbit']:g} Mbit/s, "
                 f"{q['depth_limit']} packets): max {q['max']}, mean during the RMA write "
                 f"{q['mean_during_rma']:.1f}, {len(q['samples'])} samples, tail drops "
                 f"{results['switches'][q['switch']].get('drop_queue_full', 0)}")
    for name, stats in results["switches"].items():
        keys = ("rx_port", "tx_port", "drop")
        counters = ", ".join(f"{k}={v}" for k, v in sorted(stats.items())
                             if k.startswith(keys) and v)
        lines.append(f"{name}: {counters}")
    return "\n".join(lines)
