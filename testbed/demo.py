"""``netweft demo``: netweft's main job, the smallest end-to-end experiment that exists.

Today: two emulated hosts in network namespaces joined by a veth link; host 1
sends UDP datagrams to host 2 over the kernel's stack, host 2 checks each
payload with the C engine's checksum and the demo prints a table. Each new
capability (the embedded switch between the hosts, the transport) extends it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import time
import uuid

from netweft.nic_offload import csum16

_RECEIVER = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.0.0.2", 4793)); s.settimeout(5)
    print("ready", flush=True)
    for _ in range(int(sys.argv[1])):
        data, _ = s.recvfrom(65535)
        print(data.hex(), flush=True)
""")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def run_demo(count: int = 5, size: int = 1000) -> list[dict]:
    """Send ``count`` datagrams of ``size`` bytes from h1 to h2; return per-packet records."""
    tag = uuid.uuid4().hex[:6]
    h1, h2 = f"nw-h1-{tag}", f"nw-h2-{tag}"
    created: list[str] = []
    try:
        for ns in (h1, h2):
            _ip("netns", "add", ns)
            created.append(ns)
        _ip("-n", h1, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", h2)
        for ns, addr in ((h1, "10.0.0.1/24"), (h2, "10.0.0.2/24")):
            _ip("-n", ns, "addr", "add", addr, "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        rx = subprocess.Popen(["ip", "netns", "exec", h2, sys.executable, "-c", _RECEIVER,
                               str(count)], stdout=subprocess.PIPE, text=True)
        assert rx.stdout is not None
        if rx.stdout.readline().strip() != "ready":
            raise RuntimeError("receiver in h2 did not start")
        payloads = [os.urandom(size) for _ in range(count)]
        sender = ("import socket,sys\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                  "for h in sys.argv[1:]: s.sendto(bytes.fromhex(h), ('10.0.0.2', 4793))\n")
        t0 = time.perf_counter()
        subprocess.run(["ip", "netns", "exec", h1, sys.executable, "-c", sender,
                        *[p.hex() for p in payloads]], check=True)
        out, _ = rx.communicate(timeout=10)
        elapsed = time.perf_counter() - t0
        received = [bytes.fromhex(line) for line in out.split()]
        records = []
        for i, sent in enumerate(payloads):
            got = received[i] if i < len(received) else b""
            records.append({"seq": i, "bytes": len(sent), "csum_sent": csum16(sent),
                            "csum_received": csum16(got) if got else None,
                            "intact": got == sent})
        print(f"{count} datagrams h1 -> h2 in {elapsed * 1e3:.1f} ms", file=sys.stderr)
        return records
    finally:
        for ns in created:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


def _main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("netweft demo: needs root (network namespaces)", file=sys.stderr)
        return 1
    records = run_demo(args.count, args.size)
    print(f"{'seq':>4} {'bytes':>6} {'csum sent':>10} {'csum recv':>10}  intact")
    for r in records:
        recv = f"{r['csum_received']:#06x}" if r["csum_received"] is not None else "lost"
        print(f"{r['seq']:>4} {r['bytes']:>6} {r['csum_sent']:#10x} {recv:>10}  {r['intact']}")
    return 0 if all(r["intact"] for r in records) else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft demo``."""
    p = sub.add_parser("demo", help="run netweft's end-to-end demonstration")
    p.add_argument("--count", type=int, default=5, help="datagrams to send")
    p.add_argument("--size", type=int, default=1000, help="payload bytes per datagram")
    p.set_defaults(func=_main)
