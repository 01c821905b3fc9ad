"""A switch process under a junk flood: the scenario of test_switch_flood.py, and its
measurement (``python tests/emulation/junk_flood.py --help``).

s1 runs basic_forward.p4 in a switch process with three ports: h1 (port 1) sends a
valid UDP flow to h2 (port 2) at a fixed rate, first alone, then while h3 (port 3,
a 9000-byte-MTU link) floods junk (``frame_sender.c``: random lengths 0..9,000,
half IPv4/UDP to unrouted addresses, parser corner cases). The junk has no route,
so port 2 carries only the valid flow and h2's ``rx_packets`` counts its delivery.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from netweft.emulation.network import Network
from netweft.emulation.process.control import send_command

SENDER_SOURCE = Path(__file__).with_name("frame_sender.c")


def build_sender(folder: Path) -> Path:
    """Compile frame_sender.c into ``folder``."""
    binary = folder / "frame_sender"
    subprocess.run(["gcc", "-O2", "-Wall", "-o", str(binary), str(SENDER_SOURCE)],
                   check=True, capture_output=True)
    return binary


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rx_packets(node, ifname: str = "eth0") -> int:
    return int(node.cmd("cat", f"/sys/class/net/{ifname}/statistics/rx_packets").stdout)


def _settled_counters(control: Path) -> dict:
    """The switch's counters once nothing changes any more (kernel drops included)."""
    before = json.loads(send_command(control, "counters"))
    for _ in range(30):
        time.sleep(0.7)  # longer than the loop's kernel-drop reading interval
        now = json.loads(send_command(control, "counters"))
        if now == before:
            return now
        before = now
    raise AssertionError(f"the switch's counters still change 20 s after the traffic: {now}")


def _phase(net: Network, sender: Path, switch_pid: int, control: Path, valid_rate: int,
           seconds: float, junk_rate: int | None, seed: int) -> dict:
    h1, h2, h3 = net.host("h1"), net.host("h2"), net.host("h3")
    gateway = net.peer_of(h1.interfaces[0]).mac
    delivered0, cpu0 = _rx_packets(h2), _cpu_s(switch_pid)
    junk = None
    if junk_rate is not None:
        junk = h3.popen(str(sender), "eth0", "junk", str(junk_rate), str(seconds + 1.0),
                        str(seed), stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)  # the flood is on before the valid flow starts
    valid = json.loads(h1.cmd(str(sender), "eth0", "valid", str(valid_rate), str(seconds),
                              gateway, h1.ip_address, h2.ip_address,
                              timeout=seconds + 30).stdout)
    result = {"valid_rate": valid_rate, "seconds": seconds, "valid_sent": valid["sent"]}
    if junk is not None:
        out, _ = junk.communicate(timeout=seconds + 30)
        junk_out = json.loads(out)
        result.update(junk_sent=junk_out["sent"], junk_refused=junk_out["refused"],
                      junk_vlan_short=junk_out["vlan_short"],
                      junk_pps=junk_out["sent"] / junk_out["seconds"],
                      junk_sender_cpu=junk_out["cpu_s"] / junk_out["seconds"])
    counters = _settled_counters(control)
    result.update(delivered=_rx_packets(h2) - delivered0,
                  switch_cpu_s=_cpu_s(switch_pid) - cpu0, counters=counters)
    result["delivery_ratio"] = result["delivered"] / max(1, valid["sent"])
    return result


def run_flood(folder: Path, valid_rate: int = 2000, seconds: float = 2.0,
              junk_rate: int = 20000, seed: int = 1) -> dict:
    """Both phases on one switch process; the switch's final counters (``stats``)."""
    from switch_process_helpers import basic_forward_runtime, stop_process

    from netweft.emulation.process.switch_process import start_switch_process
    from netweft.p4.programs import program

    sender = build_sender(folder)
    net = Network()
    s1 = net.add_switch("s1")
    h1, h2 = net.add_host("h1", "10.0.31.1/24"), net.add_host("h2", "10.0.31.2/24")
    h3 = net.add_host("h3", "10.0.31.3/24")
    net.add_link(h1, s1)
    net.add_link(h2, s1)
    net.add_link(h3, s1, mtu=9000)
    stats, control = folder / "stats.json", folder / "s1.sock"
    with net:
        sw = start_switch_process(s1, program("basic_forward"),
                                  basic_forward_runtime(net, folder / "rt.json"), stats_out=stats,
                                  log=folder / "s1.stderr", control=control)
        try:
            alone = _phase(net, sender, sw.pid, control, valid_rate, seconds, None, seed)
            flooded = _phase(net, sender, sw.pid, control, valid_rate, seconds, junk_rate, seed)
        finally:
            stop_process(sw)
    return {"alone": alone, "flooded": flooded, "stats": json.loads(stats.read_text())}


def _summary(result: dict) -> str:
    lines = []
    for name in ("alone", "flooded"):
        r = result[name]
        c = r["counters"]
        junk = (f", junk {r['junk_sent']} sent ({r['junk_pps']:.0f}/s, "
                f"{r['junk_refused']} refused by the kernel, sender CPU "
                f"{r['junk_sender_cpu']:.0%})" if "junk_sent" in r else "")
        lines.append(f"{name:>8}: valid {r['valid_sent']} sent at {r['valid_rate']}/s, "
                     f"{r['delivered']} delivered ({r['delivery_ratio']:.4f}){junk}; "
                     f"switch CPU {r['switch_cpu_s'] / r['seconds']:.0%} of a core; "
                     f"cumulative rx_port3 {c.get('rx_port3', 0)}, socket drops port3 "
                     f"{c.get('kernel_drops_port3', 0)}, parser errors "
                     f"{c.get('drop_parser_error', 0)}, program drops {c.get('drop_program', 0)}")
    return "\n".join(lines)


def main() -> int:
    import tempfile

    parser = argparse.ArgumentParser(description="measure a switch process under a junk flood")
    parser.add_argument("--valid-rate", type=int, default=5000)
    parser.add_argument("--junk-rate", type=int, default=0, help="0: as fast as possible")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run_flood(Path(tmp), args.valid_rate, args.seconds, args.junk_rate)
    print(_summary(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
