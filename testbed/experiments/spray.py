"""Spraying on a 2-spine leaf-spine: two flows whose flow hashes collide, five spray modes.

h1 sends to h3 and h2 to h4, both across leaf1's two uplinks, which send at
``rate`` from 32-packet queues (everything else is faster). The two flows' UDP
source ports are chosen so that fabric.p4's flow hash (asked of an in-process
replica of leaf1, with the program's own hash) puts both on the same uplink.
Each flow offers 90% of one uplink. For each spray mode the controller modifies
the routes' mode on the running switches, then the flows run for ``seconds``:
the sinks on h3 and h4 count what arrives (goodput, datagrams out of order,
missing) and the spines' counters give each spine's share of the packets. In
the entropy mode the senders put a random source port on every datagram (UET's
per-packet entropy: the hosts decide the spread); in the others the ports stay
fixed and the switch decides. Flow hashing should carry about one uplink's
worth (half of what the two flows offer is lost); the other modes both.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.p4.programs import program
from netweft.testbed.control.fabric.compute import compute_fabric
from netweft.testbed.control.fabric.path_probe import SwitchReplica
from netweft.testbed.control.fabric.settings import SPRAY_MODES, FabricSettings
from netweft.testbed.experiments.fabric_hosts import WIRE_OVERHEAD
from netweft.testbed.experiments.fabric_testbed import FabricTestbed

SINK_PORT = 5001
UPLINKS = (3, 4)          # leaf1's ports to spine1 and spine2
FLOWS = (("h1", "h3", 1), ("h2", "h4", 2))


def colliding_ports(tb: FabricTestbed) -> dict[int, int]:
    """Source ports for the two flows that leaf1's flow hash sends up the same uplink."""
    plan = compute_fabric(tb.graph)["leaf1"]
    replica = SwitchReplica(program("fabric"), plan, FabricSettings(default_spray="flow_hash"))

    def uplink(src: str, dst: str, sport: int) -> int:
        frame = bytes(Ether() / IP(src=tb.ip(src), dst=tb.ip(dst))
                      / UDP(sport=sport, dport=SINK_PORT) / (b"\0" * 64))
        return replica.ports(tb.graph.hosts[src].port, frame)[0]

    first = uplink("h1", "h3", 40001)
    for sport in range(40002, 40100):
        if uplink("h2", "h4", sport) == first:
            return {1: 40001, 2: sport}
    raise RuntimeError("no colliding source port in 40002..40099 (a hash this uneven "
                       "would be a bug in the program)")


def run_spray(tb: FabricTestbed, seconds: float = 3.0, rate_mbit: float = 5.0,
              size: int = 1200, log: Callable[[str], None] = print) -> dict:
    """Run the five modes on a started testbed; the raw results."""
    for port in UPLINKS:
        tb.control("leaf1", f"set_link {port}/out:rate={rate_mbit:g}mbit,queue=32")
    ports = colliding_ports(tb)
    offered = 0.9 * rate_mbit
    rows = []
    for number, mode in enumerate(SPRAY_MODES, 1):
        tb.configure(FabricSettings(default_spray=mode))
        log(f"  [{number}/{len(SPRAY_MODES)}] {mode}: h1->h3 and h2->h4 at {offered:g} Mbit/s "
            f"each for {seconds:g} s")
        before = {s: tb.counters(s) for s in ("spine1", "spine2", "leaf1")}
        sinks = {dst: tb.start(dst, "sink", str(SINK_PORT), str(seconds + 10))
                 for _, dst, _ in FLOWS}
        for proc in sinks.values():
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError("a sink did not start")
        sport = (lambda flow: "entropy") if mode == "entropy_hash" else ports.get
        senders = [tb.start(src, "blast", tb.ip(dst), str(SINK_PORT), f"{offered:g}",
                            str(seconds), str(size), str(flow), str(sport(flow)))
                   for src, dst, flow in FLOWS]
        sent = [json.loads(p.communicate(timeout=seconds + 60)[0]) for p in senders]
        got = {}
        for proc in sinks.values():
            got.update(json.loads(proc.communicate(timeout=seconds + 60)[0]))
        tb.settle()
        after = {s: tb.counters(s) for s in ("spine1", "spine2", "leaf1")}
        load = {s: sum(v - before[s].get(k, 0) for k, v in after[s].items()
                       if k.startswith("rx_port")) for s in ("spine1", "spine2")}
        received = sum(f["bytes"] for f in got.values())
        # the receivers' window: first arrival of either flow to the last of either
        window = (max(f["last"] for f in got.values()) - min(f["first"] for f in got.values())
                  if got else seconds)
        datagrams = sum(f["datagrams"] for f in got.values())
        rows.append({
            "mode": mode, "entropy": mode == "entropy_hash",
            "offered_mbit": 2 * offered * size / (size + WIRE_OVERHEAD), "sent": sum(s["sent"] for s in sent),
            "received": datagrams,
            "goodput_mbit": received * 8 / max(window, 1e-3) / 1e6,
            "uplink_queue_drops": (after["leaf1"].get("drop_queue_full", 0)
                                   - before["leaf1"].get("drop_queue_full", 0)),
            "spine_packets": load,
            "spine1_share": load["spine1"] / max(1, sum(load.values())),
            "reordered": sum(f["reordered"] for f in got.values()),
            "reordered_fraction": sum(f["reordered"] for f in got.values()) / max(1, datagrams),
            "flows": got})
    return {"rate_mbit": rate_mbit, "seconds": seconds, "size": size,
            "source_ports": ports, "modes": rows}


def format_spray(result: dict) -> str:
    lines = [f"spraying: two flows whose flow hashes collide, {result['rate_mbit']:g} Mbit/s "
             f"uplinks, {result['seconds']:g} s per mode (source ports "
             f"{result['source_ports'][1]}, {result['source_ports'][2]}); Mbit/s of UDP "
             "payload, goodput over the receivers' arrival window",
             f"{'mode':<13} {'offered':>8} {'goodput':>8} {'of offer':>8} {'spine1':>7} "
             f"{'spine2':>7} {'reordered':>9} {'queue drops':>11}"]
    for r in result["modes"]:
        share = r["spine1_share"]
        lines.append(f"{r['mode']:<13} {r['offered_mbit']:>8.1f} {r['goodput_mbit']:>8.2f} "
                     f"{r['goodput_mbit'] / r['offered_mbit']:>8.0%} {share:>7.0%} "
                     f"{1 - share:>7.0%} {r['reordered_fraction']:>9.2%} "
                     f"{r['uplink_queue_drops']:>11}")
    return "\n".join(lines)
