"""Captures, queue sampling and iperf3 runs on an emulated network's nodes.

Shared by the commands (``netweft up``'s prompt, ``netweft bench links``) and the
experiments (the demo, the fabric and congestion-control testbeds): ``tcpdump`` on a
node's interface into a pcap (:func:`start_capture`, :func:`stop_capture`), a
switch's egress queue sampled through its control channel in a thread
(:class:`QueueSampler`), UET datagrams counted in a switch's pcap
(:func:`read_capture`) and an iperf3 run between two hosts (:func:`iperf3`).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from netweft.emulation.network import Host, Network, NetworkError
from netweft.emulation.process.control import ControlError, send_command
from netweft.emulation.process_lifetime import stop_process
from netweft.testbed.experiments.fabric_hosts import HEADER, PDS_F_TRIMMED

IPERF_PORT = 5201  # inside the server host's own namespace, so no clash with anyone
UET_PORT = 4793  # the UDP port of UET datagrams


def start_capture(net: Network, node: str, iface: str, path: Path) -> subprocess.Popen:
    """tcpdump on ``iface`` of ``node`` into ``path``; returns once it listens."""
    path.parent.mkdir(parents=True, exist_ok=True)
    proc = net.node(node).popen("tcpdump", "-Z", "root", "-n", "--immediate-mode", "-U",
                                "-i", iface, "-w", str(path), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    if "listening on" not in line:
        proc.kill()
        proc.wait()
        raise NetworkError(f"tcpdump on {iface} did not start: {line.strip()}")
    return proc


def stop_capture(proc: subprocess.Popen) -> None:
    """Stop a capture (or any helper process): terminate, then kill after 5 s."""
    stop_process(proc, timeout=5)


def iperf3(client: Host, server: Host, seconds: float = 2.0, udp_rate: float | None = None,
           length: int | None = None) -> dict:
    """Run iperf3 from ``client`` to ``server``: sent and received bits/s (and UDP loss).

    With ``udp_rate`` (bits/s; 0 for as fast as it goes) it sends UDP datagrams of
    ``length`` bytes and also reports the datagrams delivered per second.
    """
    srv = server.popen("iperf3", "-s", "-1", "-p", str(IPERF_PORT), "--forceflush",
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = srv.stdout.readline()
        while line and "listening" not in line.lower():
            line = srv.stdout.readline()
        if not line:
            raise NetworkError(f"iperf3 server on {server.name} did not start")
        # iperf3 reads -t as whole seconds, and 0 as "forever"
        argv = ["iperf3", "-c", server.ip_address, "-p", str(IPERF_PORT), "-t",
                str(max(1, round(seconds))), "-J"]
        if udp_rate is not None:
            argv += ["-u", "-b", f"{udp_rate:.0f}"]  # 0: unlimited
        if length is not None:
            argv += ["-l", str(length)]
        try:
            done = client.cmd(*argv, check=False, timeout=seconds + 30)
        except subprocess.TimeoutExpired:
            # the control connection shares the data path: a flooded switch can
            # lose its end-of-test exchange long enough for TCP to back off
            raise NetworkError(f"iperf3 {client.name} -> {server.name} did not finish "
                               f"within {seconds + 30:.0f} s") from None
        try:
            report = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise NetworkError(f"iperf3 {client.name} -> {server.name} failed: "
                               f"{(done.stderr or done.stdout).strip()[:300]}") from None
        if "error" in report:
            raise NetworkError(f"iperf3 {client.name} -> {server.name}: {report['error']}")
        end = report["end"]
        if udp_rate is not None:
            sent, got = end.get("sum_sent", end["sum"]), end.get("sum_received", end["sum"])
            delivered = got.get("packets", 0) - got.get("lost_packets", 0)
            seconds = got.get("seconds") or seconds
            return {"sent_bps": sent["bits_per_second"],
                    "received_bps": got["bits_per_second"],
                    "lost_fraction": got.get("lost_percent", 0) / 100,
                    "packets": got.get("packets", 0), "delivered_pps": delivered / seconds}
        return {"sent_bps": end["sum_sent"]["bits_per_second"],
                "received_bps": end["sum_received"]["bits_per_second"]}
    finally:
        stop_capture(srv)


class QueueSampler:
    """Samples one port's egress queue through a switch's control channel, in a thread."""

    def __init__(self, control: Path, port: int, interval_s: float = 0.002) -> None:
        self.control, self.port, self.interval_s = control, port, interval_s
        self.samples: list[tuple[float, int]] = []
        self.errors = 0
        self._stop = threading.Event()
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> QueueSampler:
        self._thread.start()
        return self

    def mark(self) -> float:
        """Seconds since sampling started (to label the experiment's phases)."""
        return time.monotonic() - self._start

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                depth = int(send_command(self.control, f"queue_depth {self.port}", timeout=2))
                self.samples.append((self.mark(), depth))
            except (OSError, ControlError, ValueError):
                self.errors += 1
            self._stop.wait(self.interval_s)

    def stop(self) -> list[tuple[float, int]]:
        self._stop.set()
        self._thread.join(timeout=10)
        return self.samples


def read_capture(path: Path, since: float) -> dict:
    """Datagrams to UDP 4793 in a switch's pcap after ``since`` (epoch s): CE-marked,
    trimmed (PDS flag, 72-byte UDP), and all."""
    from scapy.layers.inet import IP, UDP
    from scapy.utils import PcapReader

    out = {"packets": 0, "ce": 0, "trimmed": 0, "trimmed_udp_len_72": 0}
    with PcapReader(str(path)) as packets:
        for pkt in packets:
            if float(pkt.time) < since or UDP not in pkt or pkt[UDP].dport != UET_PORT:
                continue
            out["packets"] += 1
            out["ce"] += (pkt[IP].tos & 3) == 3
            payload = bytes(pkt[UDP].payload)
            if len(payload) >= HEADER.size and HEADER.unpack_from(payload)[0] & PDS_F_TRIMMED:
                out["trimmed"] += 1
                out["trimmed_udp_len_72"] += pkt[UDP].len == 72
    return out
