"""``netweft bench links``: emulated links as configured versus as measured, and veth forwarding.

Part 1: for a two-host, one-switch testbed (h1 - s1 - h2, ``basic_forward.p4``)
and a few link settings on h2's link (applied by the switch, both ways), the
configured rate, delay and loss beside what hosts measure: the rate iperf3's
UDP receiver sees when offered more than the configured rate, RTT p50/p99 and
the round-trip loss fraction of ``ping`` (a link with loss p each way loses
1-(1-p)^2 of round trips). Each setting gets a fresh testbed.

Part 2: the switch process's forwarding rate over veth ports, in packets/s at
64- and 1500-byte frames, with one port receiving (h1 -> h2) and with four
(h1 -> h2 -> h3 -> h4 -> h1, iperf3 UDP as fast as it goes), beside the
in-process figure of ``netweft bench switch`` (``SoftSwitch.process`` on the
same frames, no I/O) measured in the same run, so the I/O cost shows.

Prints two tables and writes the raw numbers as JSON (``--out``). Numbers are
noisy on a loaded machine; tests never assert them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from netweft.emulation.links.link_params import LinkParams
from netweft.emulation.network import Network, NetworkError
from netweft.p4.programs import program
from netweft.testbed.arg_types import int_in
from netweft.testbed.capture import iperf3
from netweft.testbed.command_line import CommandError

UDP_IP_ETH = 8 + 20 + 14  # header bytes around an iperf3 UDP payload in a frame
NO_RATE_OFFER_BPS = 200e6  # offered load when the link sets no rate


@dataclass(frozen=True)
class Setting:
    label: str
    params: LinkParams


SETTINGS = [
    Setting("ideal", LinkParams()),
    Setting("rate 20mbit, queue 32", LinkParams.parse(rate="20mbit", queue=32)),
    Setting("delay 5ms", LinkParams.parse(delay="5ms")),
    Setting("delay 5ms, jitter 1ms", LinkParams.parse(delay="5ms", jitter="1ms")),
    Setting("loss 2%", LinkParams.parse(loss="2%")),
]


def _runtime(hosts: int) -> dict:
    return {"table_entries": [
        {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [f"10.0.9.{n}", 32]},
         "action_name": "MyIngress.ipv4_forward",
         "action_params": {"dstAddr": f"08:00:00:00:09:{n:02x}", "port": n}}
        for n in range(1, hosts + 1)]}


def _network(hosts: int, params: LinkParams, work: Path) -> Network:
    """h1..hN on s1 (port n for hn); h2's link carries ``params``."""
    runtime = work / f"s1-runtime-{hosts}.json"
    runtime.write_text(json.dumps(_runtime(hosts)))
    net = Network()
    s1 = net.add_switch("s1", program("basic_forward"), runtime=runtime,
                        log_file=work / "s1.log")
    for n in range(1, hosts + 1):
        host = net.add_host(f"h{n}", f"10.0.9.{n}/24", mac=f"08:00:00:00:09:{n:02x}")
        net.add_link(host, s1, params=params if n == 2 else None)
    return net


def _ping(net: Network, count: int) -> dict:
    out = net.host("h1").cmd("ping", "-n", "-c", str(count), "-i", "0.01", "-W", "1",
                             net.host("h2").ip_address, check=False,
                             timeout=count * 0.05 + 30).stdout
    rtts = sorted(float(x) for x in re.findall(r"time=([0-9.]+) ms", out))
    q = statistics.quantiles(rtts, n=100, method="inclusive") if len(rtts) >= 2 else rtts * 99
    return {"sent": count, "received": len(rtts), "loss": 1 - len(rtts) / count,
            "rtt_p50_ms": q[49] if rtts else None, "rtt_p99_ms": q[98] if rtts else None}


def measure_setting(setting: Setting, work: Path, pings: int, seconds: float) -> dict:
    """One fresh testbed with ``setting`` on h2's link: rate, RTT and loss as measured."""
    p = setting.params
    offer = p.rate_bps * 1.25 if p.rate_bps else NO_RATE_OFFER_BPS
    with _network(2, p, work) as net:
        ping = _ping(net, pings)
        udp = iperf3(net.host("h1"), net.host("h2"), seconds, udp_rate=offer, length=1400)
    expected_loss = 1 - (1 - p.loss) ** 2 if p.loss else 0.0
    return {"setting": setting.label, "rate_cfg_mbit": p.rate_bps / 1e6 if p.rate_bps else None,
            "offered_mbit": offer / 1e6, "rate_meas_mbit": udp["received_bps"] / 1e6,
            "delay_cfg_ms": p.delay_s * 1e3 if p.delay_s else None,
            "rtt_floor_ms": 2 * p.delay_s * 1e3 if p.delay_s else None,
            "loss_cfg": p.loss, "loss_expected_rt": expected_loss, **ping,
            "namespaces": f"{net.prefix}-*"}


def measure_forwarding(work: Path, seconds: float) -> list[dict]:
    """Delivered packets/s through the switch process at 64/1500-byte frames, 1 and 4 ports."""
    rows = []
    net = _network(4, LinkParams(), work)
    with net:
        hosts = [net.host(f"h{n}") for n in range(1, 5)]
        for frame in (64, 1500):
            for ports in (1, 4):
                pairs = [(hosts[i], hosts[(i + 1) % 4]) for i in range(ports)]
                results = _parallel_iperf(pairs, seconds, frame - UDP_IP_ETH)
                rows.append({"frame_bytes": frame, "ports": ports,
                             "namespaces": f"{net.prefix}-*",
                             "veth_pps": sum(r["delivered_pps"] for r in results),
                             "offered_pps": sum(r["packets"] for r in results) / seconds})
    return rows


def _parallel_iperf(pairs, seconds: float, length: int, attempts: int = 2) -> list[dict]:
    """iperf3 UDP floods over ``pairs`` at once, measured again if one of them fails.

    Each flood's iperf3 control connection crosses the switch it saturates, so now
    and then a run loses its end-of-test exchange; a second run measures the row
    afresh rather than failing the whole bench.
    """
    from concurrent.futures import ThreadPoolExecutor

    for attempt in range(attempts):
        with ThreadPoolExecutor(len(pairs)) as pool:
            futures = [pool.submit(iperf3, a, b, seconds, 0, length) for a, b in pairs]
            try:
                return [f.result() for f in futures]
            except NetworkError as err:
                if attempt + 1 == attempts:
                    raise
                print(f"bench links: {err}; measuring the row again", file=sys.stderr)
    raise AssertionError("unreachable")


def in_process_pps(frame: int, packets: int) -> float:
    """``netweft bench switch``'s figure for basic_forward.p4 at one frame size."""
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4
    from netweft.testbed.bench.switch import measure, udp_frame

    sw = SoftSwitch(compile_p4(str(program("basic_forward"))))
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                 "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 2})
    frames = [udp_frame(f"10.0.{i % 4}.{1 + i % 200}", frame - UDP_IP_ETH) for i in range(64)]
    measure(sw, frames, min(packets, 500))
    return measure(sw, frames, packets)[0]


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_links(rows: list[dict]) -> str:
    lines = [f"{'link setting (h2 link)':<24} {'rate cfg':>8} {'rate meas':>9} "
             f"{'rtt floor':>9} {'rtt p50':>8} {'rtt p99':>8} {'loss cfg':>8} "
             f"{'loss rt exp':>11} {'loss rt meas':>12}",
             f"{'':<24} {'Mbit/s':>8} {'Mbit/s':>9} {'ms':>9} {'ms':>8} {'ms':>8}"]
    for r in rows:
        lines.append(
            f"{r['setting']:<24} {_fmt(r['rate_cfg_mbit'], '.1f'):>8} "
            f"{r['rate_meas_mbit']:>9.1f} {_fmt(r['rtt_floor_ms'], '.1f'):>9} "
            f"{_fmt(r['rtt_p50_ms'], '.2f'):>8} {_fmt(r['rtt_p99_ms'], '.2f'):>8} "
            f"{_fmt(r['loss_cfg'], '.3f'):>8} {r['loss_expected_rt']:>11.3f} "
            f"{r['loss']:>12.3f}")
    return "\n".join(lines)


def format_forwarding(rows: list[dict]) -> str:
    lines = [f"{'frame B':>7} {'ports':>5} {'veth pkt/s':>11} {'offered pkt/s':>13} "
             f"{'in-process pkt/s':>16} {'veth/in-process':>15}"]
    for r in rows:
        lines.append(f"{r['frame_bytes']:>7} {r['ports']:>5} {r['veth_pps']:>11,.0f} "
                     f"{r['offered_pps']:>13,.0f} {r['in_process_pps']:>16,.0f} "
                     f"{r['veth_pps'] / r['in_process_pps']:>15.2f}")
    return "\n".join(lines)


def run_bench(out: Path, settings: list[Setting], pings: int, seconds: float,
              packets: int, log=print) -> dict:
    """Both parts; returns (and writes to ``out``/bench-links.json) the raw numbers."""
    out.mkdir(parents=True, exist_ok=True)
    links = []
    for setting in settings:
        log(f"link setting: {setting.label}")
        links.append(measure_setting(setting, out, pings, seconds))
    log("forwarding over veth: 64 and 1500-byte frames, 1 and 4 ports")
    forwarding = measure_forwarding(out, seconds)
    reference = {frame: in_process_pps(frame, packets) for frame in (64, 1500)}
    for row in forwarding:
        row["in_process_pps"] = reference[row["frame_bytes"]]
    results = {"links": links, "forwarding": forwarding}
    (out / "bench-links.json").write_text(json.dumps(results, indent=2))
    return results


def _main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise CommandError("needs root for network namespaces; run it as root (sudo)")
    settings = [s for s in SETTINGS if not args.setting or s.label in args.setting]
    try:
        results = run_bench(args.out, settings, args.pings, args.seconds, args.packets,
                            log=lambda m: print(m, file=sys.stderr, flush=True))
    except (NetworkError, RuntimeError, OSError) as exc:
        raise CommandError(f"{exc} (the testbed was removed)") from None
    print(format_links(results["links"]))
    print()
    print(format_forwarding(results["forwarding"]))
    print(f"raw numbers: {args.out / 'bench-links.json'}")
    return 0


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench links`` (under the ``netweft.benches`` entry points)."""
    p = benches.add_parser("links", help="emulated links configured vs measured; switch "
                                         "packets/s over veth vs in-process")
    p.add_argument("--setting", action="append", choices=[s.label for s in SETTINGS],
                   help="only this link setting (repeatable; default all)")
    p.add_argument("--pings", type=int_in(10, 100000), default=300,
                   help="pings per setting, 10 to 100000 (default 300)")
    p.add_argument("--seconds", type=int_in(1, 60), default=2,
                   help="whole seconds per iperf3 run (its -t), 1 to 60 (default 2)")
    p.add_argument("--packets", type=int_in(1000, 10**7), default=20000,
                   help="packets for the in-process figure (default 20000)")
    p.add_argument("--out", type=Path, default=Path("results") / "bench-links",
                   help="folder for bench-links.json (default results/bench-links)")
    p.set_defaults(func=_main)
