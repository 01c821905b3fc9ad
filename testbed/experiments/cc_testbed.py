"""The emulated 8→1 incast of ``netweft bench cc --testbed``: real engines, real sockets,
netweft's switch process running fabric.p4 with ECN marking and trimming.

``testbed/topologies/cc-incast.yaml``: eight senders and a receiver in network
namespaces on one switch, whose port to the receiver is the bottleneck (64
packets; every link at 50 Mbit/s, the file's rate, or at ``rate_mbit``). The fabric controller installs routes and, on that port only, an ECN
threshold and a trim threshold (trimmed packets go to the high-priority queue).
For each congestion-control scheme the receiver registers a buffer, the eight
senders connect with that ``cc_mode`` (``link_rate_mbps`` = the bottleneck's
rate in UDP payload terms) and, on one signal, each RMA-writes ``size`` bytes into its slice; every
sender times its write with its host's clock. What the switch did is counted in
fabric.p4's counters (``ecn_marked``, ``trimmed``, over P4Runtime), in the switch
process's counters (tail drops) and in its capture of the receiver's port (CE
in the IP header, the trimmed flag in the PDS prologue, read with scapy); what
the engines did in their counters (CE received, trimmed packets NACKed,
retransmissions). Times include the machine's load, unlike the simulator's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from netweft.testbed.capture import read_capture
from netweft.testbed.control.fabric.settings import FabricSettings, PortThreshold
from netweft.testbed.experiments.fabric_testbed import FabricTestbed
from netweft.testbed.topology import load_topology

TOPOLOGY = Path(__file__).resolve().parents[1] / "topologies" / "cc-incast.yaml"
SWITCH, RX_PORT = "s1", 1
RECEIVER = "r1"
SENDERS = tuple(f"h{i}" for i in range(1, 9))
RATE_MBIT = 50   # every link's rate in the topology file


def engine_rate_mbit(rate_mbit: int) -> int:
    """The engines' link_rate_mbps for links of ``rate_mbit``: the bottleneck in UDP
    payload terms (1472 of the 1514 bytes a full frame takes on the link); RCCC's
    pacer counts payload bytes, so at the link's rate it would grant 2% more than
    the port drains and its queue would grow until it trims and drops."""
    return rate_mbit * 1472 // 1514


UET_PORT = 4793

RECEIVER_SCRIPT = """
import json, sys
import numpy as np
from netweft.transport import udp_endpoint
ip, total, mode, rate = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ep = udp_endpoint((ip, {port}), cc_mode=mode, link_rate_mbps=rate, max_peers=32)
mr = ep.register(np.zeros(total, dtype=np.uint8))
print(json.dumps({{"rkey": mr.rkey, "length": mr.length}}), flush=True)
sys.stdin.readline()
print(json.dumps(ep.stats()), flush=True)
ep.close()
"""

SENDER_SCRIPT = """
import json, sys, time
import numpy as np
from netweft.transport import RemoteKey, udp_endpoint
ip, rx, size, rkey, length, offset, mode, rate = sys.argv[1:9]
size, rkey, length, offset, rate = int(size), int(rkey), int(length), int(offset), int(rate)
ep = udp_endpoint((ip, {port}), cc_mode=mode, link_rate_mbps=rate)
src = ep.register(np.frombuffer(np.random.default_rng(offset).bytes(size), np.uint8).copy())
peer = ep.connect((rx, {port}))
print("ready", flush=True)
sys.stdin.readline()
t0 = time.monotonic()
try:
    ep.cq.wait_for(peer.write(src, RemoteKey(rkey, length), remote_offset=offset),
                   timeout=float(sys.argv[9])).check()
    out = {{"fct_s": time.monotonic() - t0}}
except Exception as exc:
    out = {{"fct_s": None, "error": str(exc)}}
out["stats"] = ep.stats()
print(json.dumps(out), flush=True)
ep.close()
"""


def incast_testbed(out_dir: Path, rate_mbit: int = RATE_MBIT) -> FabricTestbed:
    """The cc-incast topology with every link at ``rate_mbit``, fabric.p4 on s1,
    capturing s1's ports (``with`` starts it)."""
    topology = load_topology(TOPOLOGY)
    for link in topology.links:
        link.params = replace(link.params, rate_bps=rate_mbit * 1e6)
    return FabricTestbed(out_dir, pcap_switches=(SWITCH,), topology=topology)


def _counters(tb: FabricTestbed) -> dict[str, int]:
    p4 = {name: tb.p4_counter(SWITCH, name).get(RX_PORT, (0, 0))[0]
          for name in ("queues.ecn_marked", "trim.trimmed")}
    sw = tb.counters(SWITCH)
    return {"ecn_marked": p4["queues.ecn_marked"], "trimmed": p4["trim.trimmed"],
            "switch_drops": sw.get("dropped", 0), "queue_full": sw.get("drop_queue_full", 0),
            "tx_errors": sw.get("tx_errors", 0)}  # frames the port's socket refused after egress


def run_scheme(tb: FabricTestbed, scheme: str, size: int, timeout_s: float,
               log: Callable[[str], None], rate_mbit: int = RATE_MBIT) -> dict[str, Any]:
    """One 8→1 incast with every engine in ``scheme``; FCTs, engine and switch counters."""
    engine_rate = engine_rate_mbit(rate_mbit)
    rx_ip = tb.ip(RECEIVER)
    receiver = tb.net.host(RECEIVER).popen(
        sys.executable, "-c", RECEIVER_SCRIPT.format(port=UET_PORT), rx_ip,
        str(size * len(SENDERS)), scheme, str(engine_rate),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    senders: list[subprocess.Popen] = []
    try:
        hello = json.loads(receiver.stdout.readline())
        for i, host in enumerate(SENDERS):
            senders.append(tb.net.host(host).popen(
                sys.executable, "-c", SENDER_SCRIPT.format(port=UET_PORT), tb.ip(host), rx_ip,
                str(size), str(hello["rkey"]), str(hello["length"]), str(i * size), scheme,
                str(engine_rate), str(timeout_s),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for proc in senders:
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a sender of {scheme} did not start")
        before = _counters(tb)
        since = time.time()
        for proc in senders:  # as close to together as separate processes allow
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [json.loads(proc.stdout.readline()) for proc in senders]
        tb.settle(switches=(SWITCH,))
        after = _counters(tb)
        receiver.stdin.write("done\n")
        receiver.stdin.flush()
        rx_stats = json.loads(receiver.stdout.readline())
    finally:
        for proc in [receiver, *senders]:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    capture = read_capture(tb.out_dir / "pcaps" / f"{SWITCH}-eth{RX_PORT}_out.pcap", since)
    fcts = [r["fct_s"] for r in results]
    tx = {k: sum(r["stats"].get(k, 0) for r in results)
          for k in ("data_pkts_out", "retransmits", "rto_fired", "trim_nacks_in",
                    "ecn_echoes_in", "credit_bytes_in")}
    out = {"scheme": scheme, "fct_s": fcts,
           "errors": [r.get("error") for r in results if r.get("error")],
           "switch": {k: after[k] - before[k] for k in after}, "capture": capture,
           "senders": tx,
           "receiver": {k: rx_stats.get(k, 0) for k in ("ce_pkts_in", "trimmed_pkts_in",
                                                       "placed_bytes", "credit_pkts_out")}}
    log(f"  {scheme}: {sum(f is not None for f in fcts)}/{len(fcts)} writes done, "
        f"switch marked {out['switch']['ecn_marked']} / trimmed {out['switch']['trimmed']} / "
        f"dropped {out['switch']['switch_drops']}")
    return out


def run_incast_testbed(schemes: list[str], size: int, out_dir: Path, *, ecn: int = 16,
                       trim: int = 48, timeout_s: float = 60.0,
                       log: Callable[[str], None] = print,
                       rate_mbit: int = RATE_MBIT) -> list[dict[str, Any]]:
    """Every scheme on one started testbed with links at ``rate_mbit``; the raw results."""
    settings = FabricSettings(ecn=[PortThreshold(ecn, SWITCH, RX_PORT)],
                              trim=[PortThreshold(trim, SWITCH, RX_PORT)], trim_priority=1)
    with incast_testbed(out_dir, rate_mbit) as tb:
        tb.configure(settings)
        return [run_scheme(tb, scheme, size, timeout_s, log, rate_mbit) for scheme in schemes]


def format_testbed_table(results: list[dict[str, Any]], size: int) -> str:
    lines = [f"{'scheme':<11} {'done':>5} {'FCT min/mean/max ms':>22} {'Mbit/s':>7} "
             f"{'CE@sw':>6} {'trim@sw':>7} {'drop@sw':>7} {'CE cap':>6} {'trim cap':>8} "
             f"{'CE@rx':>6} {'trimNACK':>8} {'retx':>6} {'RTOs':>5}"]
    for r in results:
        fcts = [f for f in r["fct_s"] if f is not None]
        trio = ("/".join(f"{x * 1e3:.0f}" for x in (min(fcts), sum(fcts) / len(fcts),
                                                     max(fcts))) if fcts else "-")
        gput = (len(fcts) * size * 8 / max(fcts) / 1e6) if fcts else 0.0
        sw, cap, tx, rx = r["switch"], r["capture"], r["senders"], r["receiver"]
        lines.append(f"{r['scheme']:<11} {len(fcts):>2}/{len(r['fct_s']):<2} {trio:>22} "
                     f"{gput:>7.1f} {sw['ecn_marked']:>6} {sw['trimmed']:>7} "
                     f"{sw['switch_drops']:>7} {cap['ce']:>6} {cap['trimmed']:>8} "
                     f"{rx['ce_pkts_in']:>6} {tx['trim_nacks_in']:>8} {tx['retransmits']:>6} "
                     f"{tx['rto_fired']:>5}")
        for err in r["errors"][:2]:
            lines.append(f"{'':<11} error: {err}")
    return "\n".join(lines)
