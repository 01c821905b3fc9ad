"""``netweft demo``: netweft's main job, an emulated fabric experiment on the embedded switch.

Three hosts in network namespaces hang off one switch process running the
embedded P4 switch with ``p4/basic_forward.p4`` (IPv4 LPM forwarding, entries
from a runtime file). Hosts h1 and h3 send UDP datagrams of random content to
an echo service on h2; every datagram crosses the P4 pipeline twice. The demo
prints a table (delivered, intact, round-trip times), the switch's counters,
and writes the raw numbers (JSON), the runtime file and a pcap of the switch's
port to h2 into the output folder. Each new capability extends this experiment.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from netweft.emulation.network import Network, NetworkError
from netweft.emulation.switch_process import start_switch_process
from netweft.p4 import program

ECHO_PORT = 7007

_ECHO_SERVER = textwrap.dedent("""
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", ECHO_PORT))
    print("ready", flush=True)
    while True:
        data, peer = s.recvfrom(65535)
        s.sendto(data, peer)
""".replace("ECHO_PORT", str(ECHO_PORT)))

_CLIENT = textwrap.dedent("""
    import json, os, socket, sys, time
    dst, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    out = []
    for seq in range(count):
        payload = seq.to_bytes(4, "big") + os.urandom(size - 4)
        t0 = time.perf_counter()
        s.sendto(payload, (dst, ECHO_PORT))
        rtt, intact = None, False
        try:
            while True:
                data, _ = s.recvfrom(65535)
                if data[:4] == payload[:4]:
                    rtt, intact = time.perf_counter() - t0, data == payload
                    break
        except socket.timeout:
            pass
        out.append({"seq": seq, "rtt_s": rtt, "intact": intact})
    print(json.dumps(out))
""".replace("ECHO_PORT", str(ECHO_PORT)))


def _runtime(net: Network) -> dict:
    """Runtime file for basic_forward.p4: a /32 route per host out of its switch port."""
    entries = [{"table": "MyIngress.ipv4_lpm", "default_action": True,
                "action_name": "MyIngress.drop", "action_params": {}}]
    switch = net.switch("s1")
    for host in net.hosts:
        peer = net.peer_of(host.interfaces[0])
        if peer.node is not switch:
            raise NetworkError(f"{host.name} is not linked to {switch.name}")
        port = peer.port
        entries.append({"table": "MyIngress.ipv4_lpm",
                        "match": {"hdr.ipv4.dstAddr": [host.ip_address, 32]},
                        "action_name": "MyIngress.ipv4_forward",
                        "action_params": {"dstAddr": host.mac, "port": port}})
    return {"target": "netweft-embedded", "table_entries": entries}


def build_network() -> Network:
    """h1, h2, h3 on switch s1 (ports 1, 2, 3)."""
    net = Network()
    s1 = net.add_switch("s1")
    for n in (1, 2, 3):
        host = net.add_host(f"h{n}", f"10.0.1.{n}/24")
        net.add_link(host, s1)
    return net


def run_demo(out_dir: Path, count: int = 50, size: int = 512,
             log=print) -> dict:
    """Run the experiment; returns (and writes to ``out_dir``) its raw results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    net = build_network()
    log(f"[1/4] building h1, h2, h3 on switch s1 (namespaces {net.prefix}-*)")
    with net:
        s1, h2 = net.switch("s1"), net.host("h2")
        runtime = out_dir / "s1-runtime.json"
        runtime.write_text(json.dumps(_runtime(net), indent=2))
        stats_file = out_dir / "s1-counters.json"
        log("[2/4] starting the embedded P4 switch with basic_forward.p4")
        switch = start_switch_process(s1, program("basic_forward"), runtime, stats_file,
                                      log=out_dir / "s1.log")
        pcap = out_dir / "s1-eth2.pcap"
        capture = s1.popen("tcpdump", "-Z", "root", "-n", "--immediate-mode", "-U",
                           "-i", "s1-eth2", "-w", str(pcap),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = capture.stderr.readline()
        if "listening on" not in line:
            raise NetworkError(f"tcpdump on s1-eth2 did not start: {line.strip()}")
        echo = h2.popen(sys.executable, "-c", _ECHO_SERVER, stdout=subprocess.PIPE, text=True)
        if echo.stdout.readline().strip() != "ready":
            raise NetworkError("echo service on h2 did not start")
        log(f"[3/4] h1 and h3 each send {count} datagrams of {size} bytes to h2 and wait "
            "for the echo")
        senders = {name: net.host(name).popen(sys.executable, "-c", _CLIENT, h2.ip_address,
                                              str(count), str(size), stdout=subprocess.PIPE,
                                              text=True)
                   for name in ("h1", "h3")}
        flows = {}
        for name, proc in senders.items():
            out, _ = proc.communicate(timeout=60 + count * 2)
            flows[name] = json.loads(out)
        time.sleep(0.2)
        log("[4/4] stopping the switch and collecting its counters")
        for proc in (capture, switch):
            proc.terminate()
            proc.wait(timeout=10)
    results = {"topology": "h1,h2,h3 - s1", "program": "basic_forward.p4", "size": size,
               "count": count, "flows": {}, "switch": json.loads(stats_file.read_text())}
    for name, records in flows.items():
        rtts = sorted(r["rtt_s"] for r in records if r["rtt_s"] is not None)
        results["flows"][f"{name}->h2"] = {
            "sent": len(records), "echoed": len(rtts),
            "intact": sum(r["intact"] for r in records),
            "rtt_p50_ms": statistics.median(rtts) * 1e3 if rtts else None,
            "rtt_max_ms": rtts[-1] * 1e3 if rtts else None,
        }
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    return results


def format_results(results: dict) -> str:
    lines = [f"{'flow':<8} {'sent':>5} {'echoed':>7} {'intact':>7} {'rtt p50 ms':>11} "
             f"{'rtt max ms':>11}"]
    for flow, r in results["flows"].items():
        p50 = f"{r['rtt_p50_ms']:.2f}" if r["rtt_p50_ms"] is not None else "-"
        mx = f"{r['rtt_max_ms']:.2f}" if r["rtt_max_ms"] is not None else "-"
        lines.append(f"{flow:<8} {r['sent']:>5} {r['echoed']:>7} {r['intact']:>7} {p50:>11} "
                     f"{mx:>11}")
    counters = ", ".join(f"{k}={v}" for k, v in sorted(results["switch"].items()))
    lines.append(f"switch s1: {counters}")
    return "\n".join(lines)


def _main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("netweft demo: needs root (network namespaces)", file=sys.stderr)
        return 1
    out_dir = args.out or Path("results") / time.strftime("demo-%Y%m%d-%H%M%S")
    results = run_demo(out_dir, args.count, args.size,
                       log=lambda msg: print(msg, file=sys.stderr, flush=True))
    print(format_results(results))
    print(f"raw numbers, runtime file and capture in {out_dir}/")
    ok = all(f["intact"] == f["sent"] for f in results["flows"].values())
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft demo``."""
    p = sub.add_parser("demo", help="run netweft's main job: an emulated fabric experiment")
    p.add_argument("--count", type=int, default=50, help="datagrams per sender")
    p.add_argument("--size", type=int, default=512, help="bytes per datagram (>= 4)")
    p.add_argument("--out", type=Path, help="output folder (default results/demo-<time>)")
    p.set_defaults(func=_main)
