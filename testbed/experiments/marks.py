"""ECN marking and trimming in an incast through one port.

h1, h2 and h4 send UET-shaped datagrams (a PDS RUD prologue, UDP port 4793,
ECT(0)) to h3 at ``offered`` Mbit/s each; leaf2's port to h3 sends at ``rate``
from a 64-packet queue, so its queue fills. Two runs: with ECN marking only
(threshold ``ecn`` packets), then with ECN and trimming (threshold ``trim``
packets, trimmed packets in the port's high-priority queue); the thresholds are
set on that port only, and the routes spray adaptively, so the incast port is
the only place packets queue, get marked or get trimmed. The marks and trims
are counted three ways: in leaf2's capture of that port (read back with scapy),
in fabric.p4's counters (``ecn_marked``, ``trimmed``, read over P4Runtime) and by
the receiver (CE in the IP header, the trimmed flag in the PDS prologue); the
switch's tail drops and the queue's occupancy (sampled through the control
channel) show what trimming replaces.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from netweft.testbed.capture import UET_PORT, QueueSampler, read_capture
from netweft.testbed.control.fabric.settings import FabricSettings, PortThreshold
from netweft.testbed.experiments.fabric_testbed import FabricTestbed

SWITCH, PORT = "leaf2", 1          # the port to h3
SENDERS = ("h1", "h2", "h4")
QUEUE = 64


def _p4_cells(tb: FabricTestbed) -> tuple[int, int]:
    marked = tb.p4_counter(SWITCH, "queues.ecn_marked").get(PORT, (0, 0))[0]
    trimmed = tb.p4_counter(SWITCH, "trim.trimmed").get(PORT, (0, 0))[0]
    return marked, trimmed


def run_marks(tb: FabricTestbed, seconds: float = 3.0, rate_mbit: float = 5.0,
              offered_mbit: float = 6.0, size: int = 1200, ecn: int = 8, trim: int = 32,
              log: Callable[[str], None] = print) -> dict:
    """Both runs on a started testbed whose leaf2 writes pcaps; the raw results."""
    import time

    tb.control(SWITCH, f"set_link {PORT}/out:rate={rate_mbit:g}mbit,queue={QUEUE}")
    pcap = tb.out_dir / "pcaps" / f"{SWITCH}-eth{PORT}_out.pcap"
    runs = []
    for number, trimming in enumerate((False, True), 1):
        # thresholds on the incast port only: a CE mark in its capture is this port's
        settings = FabricSettings(ecn=[PortThreshold(ecn, SWITCH, PORT)],
                                  trim=[PortThreshold(trim, SWITCH, PORT)] if trimming else [],
                                  default_spray="adaptive", trim_priority=1)
        tb.configure(settings)
        label = f"ECN at {ecn}" + (f", trim at {trim}" if trimming else "")
        log(f"  [{number}/2] {label}: {', '.join(SENDERS)} -> h3 at {offered_mbit:g} Mbit/s "
            f"each into a {rate_mbit:g} Mbit/s port for {seconds:g} s")
        before_p4 = _p4_cells(tb)
        before = tb.counters(SWITCH)
        since = time.time()
        sink = tb.start("h3", "sink", str(UET_PORT), str(seconds + 10))
        if sink.stdout.readline().strip() != "ready":
            raise RuntimeError("the sink on h3 did not start")
        sampler = QueueSampler(tb.net.switch(SWITCH).control, PORT).start()
        senders = [tb.start(src, "blast", tb.ip("h3"), str(UET_PORT), f"{offered_mbit:g}",
                            str(seconds), str(size), str(flow), str(41000 + flow), "--uet",
                            "--ect") for flow, src in enumerate(SENDERS, 1)]
        sent = sum(json.loads(p.communicate(timeout=seconds + 60)[0])["sent"] for p in senders)
        got = json.loads(sink.communicate(timeout=seconds + 60)[0])
        samples = sampler.stop()
        tb.settle()
        after = tb.counters(SWITCH)
        after_p4 = _p4_cells(tb)
        runs.append({
            "label": label, "trimming": trimming, "sent": sent,
            "received": sum(f["datagrams"] for f in got.values()),
            "receiver_ce": sum(f["ce"] for f in got.values()),
            "receiver_trimmed": sum(f["trimmed"] for f in got.values()),
            "counter_ecn_marked": after_p4[0] - before_p4[0],
            "counter_trimmed": after_p4[1] - before_p4[1],
            "tail_drops": after.get("drop_queue_full", 0) - before.get("drop_queue_full", 0),
            "capture": read_capture(pcap, since),
            "queue_samples": [[round(t, 4), d] for t, d in samples],
            "queue_max": max((d for _, d in samples), default=0)})
    return {"rate_mbit": rate_mbit, "offered_mbit": offered_mbit, "senders": list(SENDERS),
            "seconds": seconds, "ecn_threshold": ecn, "trim_threshold": trim, "queue": QUEUE,
            "capture": str(pcap), "runs": runs}


def format_marks(result: dict) -> str:
    lines = [f"ECN and trimming: {len(result['senders'])} -> 1 incast at "
             f"{result['offered_mbit']:g} Mbit/s each into a {result['rate_mbit']:g} Mbit/s "
             f"port ({result['queue']}-packet queue); marks and trims counted in the "
             "capture / switch counters / receiver (CE: of the full datagrams); queued: "
             "both priority queues",
             f"{'run':<22} {'sent':>6} {'received':>8} {'CE marks':>20} {'trimmed':>20} "
             f"{'tail drops':>10} {'queued max':>10}"]
    for r in result["runs"]:
        c = r["capture"]
        ce = f"{c['ce']}/{r['counter_ecn_marked']}/{r['receiver_ce']}"
        tr = f"{c['trimmed']}/{r['counter_trimmed']}/{r['receiver_trimmed']}"
        lines.append(f"{r['label']:<22} {r['sent']:>6} {r['received']:>8} {ce:>20} {tr:>20} "
                     f"{r['tail_drops']:>10} {r['queue_max']:>10}")
    return "\n".join(lines)
