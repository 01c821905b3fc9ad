"""A buffer to three receivers: unicast fan-out versus multicast, with and without
ACK aggregation in the switches.

h1 sends ``length`` bytes to h2, h3 and h4 with netweft's reliable multicast
(:mod:`netweft.transport.collectives.multicast.reliable`); h1's link to leaf1 carries
``rate`` Mbit/s, the bottleneck a sender's NIC is. Three runs: unicast fan-out
(the buffer to each receiver at once, the sender's window of 64 datagrams shared
among the three streams), multicast through
the fabric's group (fabric.p4 copies each DATA along the group's tree), and
multicast with the switches aggregating the receivers' ACKs (leaf2 for h3 and
h4, leaf1 for all three). Each run reports the sender's bytes, datagrams and
retransmissions, the ACKs it had to process, the completion time, and whether
every receiver's buffer hashes as the sender's.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable

from netweft.testbed.control.fabric.multicast import MulticastGroupSpec
from netweft.testbed.control.fabric.settings import FabricSettings
from netweft.testbed.experiments.fabric_testbed import FabricTestbed

GROUP, ADDRESS = 1, "239.1.1.1"
SENDER, RECEIVERS = "h1", ("h2", "h3", "h4")
UNICAST_GROUPS = (101, 102, 103)   # no ack_groups entry: their ACKs pass as they are


def _settings(aggregate: bool) -> FabricSettings:
    group = MulticastGroupSpec(GROUP, ipaddress.IPv4Address(ADDRESS), (SENDER, *RECEIVERS),
                               SENDER if aggregate else None)
    return FabricSettings(multicast=[group])


def _run(tb: FabricTestbed, mode: str, length: int, seed: int) -> dict:
    receivers = {}
    for index, host in enumerate(RECEIVERS):
        group = GROUP if mode != "unicast" else UNICAST_GROUPS[index]
        proc = tb.start(host, "mcast-recv", str(group), str(index if mode != "unicast" else 0),
                        str(length), tb.ip(SENDER))
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the multicast receiver on {host} did not start")
        receivers[host] = proc
    if mode == "unicast":
        targets = ",".join(f"{tb.ip(h)}:{g}" for h, g in zip(RECEIVERS, UNICAST_GROUPS,
                                                              strict=True))
        sender = tb.start(SENDER, "mcast-send", str(length), str(seed), "unicast", targets)
    else:
        sender = tb.start(SENDER, "mcast-send", str(length), str(seed), "multicast", ADDRESS,
                          str(GROUP), str(len(RECEIVERS)))
    out, _ = sender.communicate(timeout=300)
    if sender.returncode != 0:
        raise RuntimeError(f"the {mode} sender on h1 failed (exit {sender.returncode})")
    sent = json.loads(out)
    got = {h: json.loads(p.communicate(timeout=60)[0]) for h, p in receivers.items()}
    return {**sent, "intact": all(g["sha256"] == sent["sha256"] for g in got.values()),
            "receivers": got}


def run_multicast(tb: FabricTestbed, length: int = 1 << 20, rate_mbit: float = 5.0,
                  log: Callable[[str], None] = print) -> dict:
    tb.control("leaf1", f"set_link 1/in:rate={rate_mbit:g}mbit")
    runs = []
    plan = (("unicast fan-out", "unicast", False), ("multicast", "multicast", False),
            ("multicast + ACK aggregation", "multicast", True))
    for number, (label, mode, aggregate) in enumerate(plan, 1):
        tb.configure(_settings(aggregate))
        log(f"  [{number}/3] {label}: {length} bytes from h1 to h2, h3, h4 "
            f"(h1's link {rate_mbit:g} Mbit/s)")
        before = _ack_counters(tb)
        result = _run(tb, mode, length, seed=number)
        after = _ack_counters(tb)
        result.update(label=label, mode=mode, aggregate=aggregate,
                      switch_acks={k: after[k] - before[k] for k in after})
        runs.append(result)
    return {"length": length, "rate_mbit": rate_mbit, "receivers": list(RECEIVERS),
            "runs": runs}


def _ack_counters(tb: FabricTestbed) -> dict[str, int]:
    """ACKs of the group the leaves absorbed and forwarded (fabric.p4's counters)."""
    out = {}
    for leaf in ("leaf1", "leaf2"):
        for name in ("acks_absorbed", "acks_forwarded"):
            out[f"{leaf}.{name}"] = tb.p4_counter(leaf, f"acks.{name}").get(GROUP, (0, 0))[0]
    return out


def format_multicast(result: dict) -> str:
    lines = [f"multicast: {result['length']} bytes from h1 to {len(result['receivers'])} "
             f"receivers, h1's link {result['rate_mbit']:g} Mbit/s",
             f"{'run':<28} {'seconds':>7} {'sender MB':>9} {'datagrams':>9} {'resent':>6} "
             f"{'ACKs at h1':>10} {'absorbed':>8} {'intact':>6}"]
    for r in result["runs"]:
        absorbed = sum(v for k, v in r["switch_acks"].items() if k.endswith("absorbed"))
        lines.append(f"{r['label']:<28} {r['seconds']:>7.2f} {r['bytes'] / 1e6:>9.2f} "
                     f"{r['datagrams']:>9} {r['retransmissions']:>6} {r['acks']:>10} "
                     f"{absorbed:>8} {str(r['intact']):>6}")
    return "\n".join(lines)
