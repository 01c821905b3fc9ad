"""``netweft demo``: netweft's main job, an emulated fabric experiment on the embedded switch.

Three hosts in network namespaces hang off one switch process running the
embedded P4 switch with ``p4/basic_forward.p4`` (IPv4 LPM forwarding, entries
from a runtime file), over veth links with a 9000-byte MTU. First, hosts h1 and
h3 send UDP datagrams of random content to an echo service on h2: every
datagram crosses the P4 pipeline twice. Then h1 RMA-writes 8 MiB into memory
registered on h2 with netweft's transport (packets sprayed over UDP source
ports, selective repeat), and h2 checks every byte. The demo prints a table,
the switch's counters, and writes the raw numbers (JSON), a plot of the
round-trip times, the runtime file and a pcap of the switch's port to h2 into
the output folder. Each new capability
extends this experiment.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from netweft.emulation.network import Network, NetworkError
from netweft.emulation.switch_process import start_switch_process
from netweft.p4.programs import program
from netweft.testbed.arg_types import int_in
from netweft.testbed.cli import CommandError
from netweft.testbed.plots import plot_rtt_cdf

# RFC 862's echo port: Wireshark decodes the demo's datagrams as Echo requests and
# replies (on 7007 it took them for AFS).
ECHO_PORT = 7

RMA_BYTES = 8 << 20
LINK_MTU = 9000
MAX_DATAGRAM = LINK_MTU - 28          # one UDP datagram per frame: no IPv4 fragments
MAX_COUNT = 100_000
MAX_RMA_BYTES = 1 << 30
HOSTS = [sys.executable, "-m", "netweft.testbed.demo_hosts"]


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
        net.add_link(host, s1, mtu=LINK_MTU)
    return net


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
    net = build_network()
    log(f"[1/5] building h1, h2, h3 on switch s1 (namespaces {net.prefix}-*)")
    with net:
        route_via_switch(net)
        s1, h2 = net.switch("s1"), net.host("h2")
        runtime = out_dir / "s1-runtime.json"
        runtime.write_text(json.dumps(_runtime(net), indent=2))
        stats_file = out_dir / "s1-counters.json"
        log("[2/5] starting the embedded P4 switch with basic_forward.p4")
        switch = start_switch_process(s1, program("basic_forward"), runtime, stats_file,
                                      log=out_dir / "s1.log")
        pcap = out_dir / "s1-eth2.pcap"
        capture = s1.popen("tcpdump", "-Z", "root", "-n", "--immediate-mode", "-U",
                           "-i", "s1-eth2", "-w", str(pcap), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = capture.stderr.readline()
        if "listening on" not in line:
            raise NetworkError(f"tcpdump on s1-eth2 did not start: {line.strip()}")
        echo = h2.popen(*HOSTS, "echo", str(ECHO_PORT), stdout=subprocess.PIPE, text=True,
                        start_new_session=True)
        if echo.stdout.readline().strip() != "ready":
            raise NetworkError("echo service on h2 did not start")
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
        log(f"[4/5] h1 RMA-writes {rma_bytes} bytes into h2's registered memory with "
            "netweft's transport")
        rma = _rma_write(net, rma_bytes)
        time.sleep(0.2)
        log("[5/5] stopping the switch and collecting its counters")
        for proc in (capture, switch):
            proc.terminate()
            proc.wait(timeout=10)
    results = {"topology": "h1,h2,h3 - s1", "namespaces": f"{net.prefix}-*",
               "switch_macs": {str(i.port): i.mac for i in net.switch("s1").interfaces},
               "program": "basic_forward.p4", "size": size,
               "count": count, "flows": {}, "rma_write": rma,
               "switch": json.loads(stats_file.read_text())}
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
                 "UDP echo through the embedded P4 switch")
    return results


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
    counters = ", ".join(f"{k}={v}" for k, v in sorted(results["switch"].items()))
    lines.append(f"switch s1: {counters}")
    return "\n".join(lines)


def _main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise CommandError("needs root for network namespaces; run it as root (sudo)")
    out_dir = args.out or Path("results") / time.strftime("demo-%Y%m%d-%H%M%S")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CommandError(f"cannot create the output folder {out_dir}: {err.strerror}; "
                           "choose another with --out") from None
    try:
        results = run_demo(out_dir, args.count, args.size, args.rma_bytes,
                           log=lambda msg: print(msg, file=sys.stderr, flush=True))
    except (NetworkError, RuntimeError, OSError) as err:
        raise CommandError(f"{err} (the network was removed; details in {out_dir}/)") from None
    print(format_results(results))
    print(f"raw numbers (results.json), plot (rtt_cdf.png), runtime file and capture in "
          f"{out_dir}/")
    ok = all(f["intact"] == f["sent"] for f in results["flows"].values())
    ok = ok and results["rma_write"]["intact"]
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft demo``."""
    p = sub.add_parser("demo", help="run netweft's main job: an emulated fabric experiment")
    p.add_argument("--count", type=int_in(1, MAX_COUNT), default=50,
                   help=f"datagrams per sender, 1 to {MAX_COUNT} (default 50)")
    p.add_argument("--size", type=int_in(4, MAX_DATAGRAM), default=512,
                   help=f"bytes per datagram, 4 to {MAX_DATAGRAM} (one {LINK_MTU}-byte frame; "
                        "default 512)")
    p.add_argument("--rma-bytes", type=int_in(1, MAX_RMA_BYTES), default=RMA_BYTES,
                   help=f"bytes h1 writes into h2 with netweft's transport, 1 to {MAX_RMA_BYTES} "
                        f"(default {RMA_BYTES})")
    p.add_argument("--out", type=Path, help="output folder (default results/demo-<time>)")
    p.set_defaults(func=_main)
