"""NetweftSwitch in Mininet's own API and through ``mn --custom``: traffic crosses netweft's
switch."""

import json
import random
import subprocess
import sys
from pathlib import Path

import mininet.net as mininet_net
import pytest
from scapy.all import ICMP, IP, rdpcap

from netweft.emulation.network import mininet as netweft_mininet
from netweft.emulation.network.mininet import NetweftSwitch

pytestmark = [pytest.mark.netns, pytest.mark.host_tools("mnexec", "ethtool")]


def _runtime(path: Path) -> Path:
    """basic_forward.p4: 10.0.0.N/32 out of port N, to Mininet's --mac address of hN."""
    path.write_text(json.dumps({"table_entries": [
        {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [f"10.0.0.{n}", 32]},
         "action_name": "MyIngress.ipv4_forward",
         "action_params": {"dstAddr": f"00:00:00:00:00:0{n}", "port": n}} for n in (1, 2)]}))
    return path


def _root_links(name: str) -> list[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if f"{name}-eth" in line]


def _names() -> tuple[str, str, str]:
    """A switch and two hosts named for this run: Mininet makes their interfaces in the
    root namespace, where other runs of this suite on the machine make theirs."""
    tag = random.randint(1000, 99999)
    return f"s{tag}", f"h{tag}a", f"h{tag}b"


def test_mininet_script_with_netweft_switch_passes_traffic(tmp_path):
    name, first, second = _names()
    net = mininet_net.Mininet(controller=None, autoStaticArp=True, autoSetMacs=True)
    switch = None
    try:
        h1 = net.addHost(first, ip="10.0.0.1/24")
        h2 = net.addHost(second, ip="10.0.0.2/24")
        switch = net.addSwitch(name, cls=NetweftSwitch, runtime=_runtime(tmp_path / "rt.json"),
                               pcap_dir=tmp_path / "pcaps", log_file=tmp_path / "switch.log")
        net.addLink(h1, switch, delay="10ms")  # TCLink's keyword, applied by the switch
        net.addLink(h2, switch)
        net.start()
        out = h1.cmd("ping -c 2 -i 0.2 10.0.0.2")
        assert "2 received" in out, out + (tmp_path / "switch.log").read_text()
        rtts = [float(t.split("=")[1]) for t in out.split() if t.startswith("time=")]
        assert min(rtts) >= 20.0  # 10 ms each way at the switch's end of h1's link
        assert switch.port_settings()[1].to_option(1) == ["1:delay=10ms"]
        process = switch.process
    finally:
        net.stop()
    assert process.poll() is not None and _root_links(name) == []
    to_h2 = [p for p in rdpcap(str(tmp_path / "pcaps" / f"{name}-eth2_out.pcap"))
             if ICMP in p and p[ICMP].type == 8]
    assert len(to_h2) == 2 and {(p[IP].ttl, p.dst) for p in to_h2} == {(63, "00:00:00:00:00:02")}


def test_mn_custom_uses_netweft_switch(tmp_path):
    runtime = _runtime(tmp_path / "rt.json")
    name, first, second = _names()
    topo = tmp_path / "pair_topo.py"  # mn's minimal topology, with this run's names
    topo.write_text(
        "from mininet.topo import Topo\n"
        "class Pair(Topo):\n"
        "    def build(self):\n"
        f"        s = self.addSwitch({name!r})\n"
        f"        self.addLink(self.addHost({first!r}), s)\n"
        f"        self.addLink(self.addHost({second!r}), s)\n"
        "topos = {'pair': Pair}\n")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "mn"), "--custom",
         f"{netweft_mininet.__file__},{topo}", "--topo", "pair",
         "--switch", f"netweft,runtime={runtime},log_file={tmp_path / 'switch.log'}",
         "--controller", "none", "--mac", "--arp", "--test", "pingall"],
        capture_output=True, text=True, timeout=300)
    assert "Results: 0% dropped (2/2 received)" in done.stdout + done.stderr, (
        done.stdout + done.stderr)
    assert _root_links(name) == []
