"""``netweft up``/``exec``/``down``: testbeds from topology files, traffic, captures, cleanup.

Every test checks that its namespaces, veths and processes are gone afterwards,
also when the testbed fails to start or is killed.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from pyroute2 import netns
from scapy.all import ICMP, IP, rdpcap

from netweft.p4.programs import program
from netweft.testbed import up_registry
from netweft.testbed.commands.clean import clean
from netweft.testbed.commands.up import start_testbed, stop_testbed
from netweft.testbed.commands.up_prompt import TestbedPrompt
from netweft.testbed.topology import load_topology

pytestmark = pytest.mark.netns

SHIPPED = Path(__file__).resolve().parents[2] / "testbed" / "topologies"
NETWEFT = [sys.executable, "-m", "netweft.testbed.command_line"]


def _leftovers(prefix: str, run_dir: Path) -> list[str]:
    """Namespaces, veths (root namespace) and processes a testbed could leave behind."""
    found = [f"netns {n}" for n in netns.listnetns() if n.startswith(prefix + "-")]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    found += [f"veth {line.split(':')[1].strip()}" for line in links.splitlines()
              if prefix in line]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(run_dir) in cmdline and int(pid) != os.getpid():
            found.append(f"process {pid}: {cmdline[:120]}")
    return found


def _unique(stem: str) -> str:
    return f"{stem}-{uuid.uuid4().hex[:8]}"


def _prefix(stderr: str) -> str:
    m = re.search(r"namespaces (nw[0-9a-f]{5})-\*", stderr)
    assert m, stderr
    return m.group(1)


@pytest.fixture
def pair_topology(tmp_path):
    """h1, h2 on one switch running basic_forward.p4, as netweft YAML."""
    runtime = {"table_entries": [
        {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [f"10.0.3.{n}", 32]},
         "action_name": "MyIngress.ipv4_forward",
         "action_params": {"dstAddr": f"08:00:00:00:03:0{n}", "port": n}} for n in (1, 2)]}
    (tmp_path / "s1-runtime.json").write_text(json.dumps(runtime))
    topo = tmp_path / "pair.yaml"
    # a name of its own: other runs of this suite on the machine start testbeds too
    topo.write_text(f"name: {_unique('pair')}\nhosts:\n"
                    "  h1: {ip: 10.0.3.1/24, mac: '08:00:00:00:03:01'}\n"
                    "  h2: {ip: 10.0.3.2/24, mac: '08:00:00:00:03:02'}\n"
                    "switches:\n  s1: {program: basic_forward, runtime: s1-runtime.json}\n"
                    "links: [[h1, s1-p1], [h2, s1-p2]]\n")
    return topo


@pytest.mark.slow
def test_leaf_spine_from_yaml_passes_traffic_and_captures(tmp_path):
    run_dir = tmp_path / "run"
    script = tmp_path / "script.txt"
    script.write_text("# a comment\npingall\ncapture leaf1-eth3\nh1 ping -c 3 -i 0.2 h3\n"
                      "capture stop leaf1-eth3\nlinks\niperf h2 h4 1\n")
    name = _unique("leaf-spine")
    done = subprocess.run([*NETWEFT, "up", str(SHIPPED / "leaf-spine.yaml"), "--run",
                           str(script), "--out", str(run_dir), "--name", name],
                          capture_output=True, text=True, timeout=600)
    prefix = _prefix(done.stderr)
    assert _leftovers(prefix, run_dir) == []
    assert done.returncode == 0, done.stdout + done.stderr
    assert "*** Results: 0% dropped (12/12 received)" in done.stdout
    assert "3 packets transmitted, 3 received" in done.stdout
    assert re.search(r"\*\*\* Results: \['[0-9.]+ Mbits/sec'", done.stdout)
    # leaf1's uplink to spine1 saw h1's echo requests after leaf1's TTL decrement
    packets = rdpcap(str(run_dir / "captures" / "leaf1-eth3.pcap"))
    requests = [p for p in packets if ICMP in p and p[ICMP].type == 8
                and p[IP].src == "10.0.1.1" and p[IP].dst == "10.0.2.3"]
    assert len(requests) == 3 and {p[IP].ttl for p in requests} == {63}
    # the switches' own pcaps (BMv2's <iface>_in/_out.pcap) agree: h1's requests left
    # leaf1 towards spine1 and reached h3 with two more hops taken off the TTL
    sent = [p for p in rdpcap(str(run_dir / "pcaps" / "leaf1-eth3_out.pcap"))
            if ICMP in p and p[ICMP].type == 8 and p[IP].dst == "10.0.2.3"]
    delivered = [p for p in rdpcap(str(run_dir / "pcaps" / "leaf2-eth1_out.pcap"))
                 if ICMP in p and p[ICMP].type == 8 and p[IP].src == "10.0.1.1"]
    assert len(sent) >= 3 and len(delivered) >= 3 and {p[IP].ttl for p in delivered} == {61}
    assert not up_registry.REGISTRY_DIR.joinpath(f"{name}.json").exists()


def test_tutorials_topology_json_with_host_commands(tmp_path):
    """The tutorials' layout: exercise folder with basic.p4, pod/topology.json, a runtime file
    for s1 and a simple_switch_CLI command list for s2."""
    shutil.copy(program("basic_forward"), tmp_path / "basic.p4")
    shutil.copytree(program("basic_forward").parent / "include", tmp_path / "include")
    pod = tmp_path / "pod"
    pod.mkdir()
    hosts = {"h1": ("10.0.1.1", "08:00:00:00:01:11", 1), "h2": ("10.0.2.2", "08:00:00:00:02:22", 2)}
    for sw, (local, remote) in {"s1": ("h1", "h2"), "s2": ("h2", "h1")}.items():
        entries = [{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [hosts[local][0], 32]},
                    "action_name": "MyIngress.ipv4_forward",
                    "action_params": {"dstAddr": hosts[local][1], "port": 1}},
                   {"table": "MyIngress.ipv4_lpm",
                    "match": {"hdr.ipv4.dstAddr": [hosts[remote][0].rsplit(".", 1)[0] + ".0", 24]},
                    "action_name": "MyIngress.ipv4_forward",
                    "action_params": {"dstAddr": "08:00:00:00:09:00", "port": 2}}]
        (pod / f"{sw}-runtime.json").write_text(json.dumps(
            {"target": "bmv2", "bmv2_json": "build/basic.json", "table_entries": entries}))
    topology = {"hosts": {h: {"ip": f"{ip}/24", "mac": mac, "commands": [
        f"route add default gw {ip.rsplit('.', 1)[0]}.{n}0 dev eth0",
        f"arp -i eth0 -s {ip.rsplit('.', 1)[0]}.{n}0 08:00:00:00:0{n}:00"]}
        for h, (ip, mac, n) in hosts.items()},
        "switches": {"s1": {"runtime_json": "pod/s1-runtime.json"},
                     "s2": {"runtime_json": "pod/s2-runtime.json"}},
        "links": [["h1", "s1-p1"], ["h2", "s2-p1"], ["s1-p2", "s2-p2"]]}
    # s2 is programmed the other way the tutorials allow: a simple_switch_CLI command list
    (pod / "s2-commands.txt").write_text(
        "table_set_default MyIngress.ipv4_lpm MyIngress.drop\n"
        "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.2/32 => "
        "08:00:00:00:02:22 1\n"
        "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.1.0/24 => "
        "08:00:00:00:09:00 2\n")
    topology["switches"]["s2"] = {"cli_input": "pod/s2-commands.txt",
                                  "program": "build/basic.json"}
    (pod / "topology.json").write_text(json.dumps(topology))
    run_dir = tmp_path / "run"
    name = _unique("tutorials")
    net = start_testbed(load_topology(pod / "topology.json"), run_dir, name,
                        log=lambda _m: None)
    try:
        assert "default via 10.0.1.10" in net.host("h1").cmd("ip", "route").stdout
        out = tmp_path / "prompt.txt"
        with out.open("w") as stream:
            prompt = TestbedPrompt(net, run_dir, out=stream)
            script = tmp_path / "script.txt"
            script.write_text("capture s2-eth1\nh1 ping -c 2 -i 0.2 h2\ncapture stop s2-eth1\n")
            failed = prompt.run_script(script)
            prompt.close()
        assert failed == 0, out.read_text()
        assert "2 received" in out.read_text()
        to_h2 = [p for p in rdpcap(str(run_dir / "captures" / "s2-eth1.pcap"))
                 if ICMP in p and p[ICMP].type == 8]
        # two switches decremented the TTL; s2 wrote h2's MAC
        assert len(to_h2) == 2 and {(p[IP].ttl, p.dst) for p in to_h2} == {
            (62, "08:00:00:00:02:22")}
        # s1's pcap of what h1 sent it (BMv2 naming: <iface>_in.pcap)
        from_h1 = [p for p in rdpcap(str(run_dir / "pcaps" / "s1-eth1_in.pcap"))
                   if ICMP in p and p[ICMP].type == 8]
        assert len(from_h1) == 2 and {p[IP].ttl for p in from_h1} == {64}
        record = up_registry.find(name)
        assert record.addresses() == {"h1": "10.0.1.1", "h2": "10.0.2.2"}
    finally:
        stop_testbed(net, name)
    assert _leftovers(net.prefix, run_dir) == []


def test_failed_start_reports_one_line_and_leaves_nothing(pair_topology, tmp_path):
    (tmp_path / "s1-runtime.json").write_text(json.dumps({"table_entries": [
        {"table": "MyIngress.no_such_table", "match": {}, "action_name": "NoAction"}]}))
    run_dir = tmp_path / "run"
    done = subprocess.run([*NETWEFT, "up", str(pair_topology), "--out", str(run_dir)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert "netweft up: error: switch s1:" in done.stderr and "no_such_table" in done.stderr
    assert "Traceback" not in done.stderr
    assert _leftovers(_prefix(done.stderr), run_dir) == []


def test_a_bad_command_list_names_its_line_and_leaves_nothing(pair_topology, tmp_path):
    (tmp_path / "s1-commands.txt").write_text(
        "# programs s1 after its runtime file\n"
        "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.3.9/32 => 1\n")
    pair_topology.write_text(pair_topology.read_text().replace(
        "runtime: s1-runtime.json}", "runtime: s1-runtime.json, cli: s1-commands.txt}"))
    run_dir = tmp_path / "run"
    done = subprocess.run([*NETWEFT, "up", str(pair_topology), "--out", str(run_dir),
                           "--no-pcap"], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and "s1-commands.txt:2:" in done.stderr, done.stderr
    assert _leftovers(_prefix(done.stderr), run_dir) == []


def test_a_failing_script_line_still_cleans_up(pair_topology, tmp_path):
    script = tmp_path / "script.txt"
    script.write_text("h1 ping -c 1 -W 1 10.0.3.99\nh1 false\nnosuchverb\nh1 ping -c 1 h2\n"
                      "h2 ip -o addr show eth0 | grep -c 10.0.3.2\n")
    run_dir = tmp_path / "run"
    done = subprocess.run([*NETWEFT, "up", str(pair_topology), "--run", str(script),
                           "--out", str(run_dir), "--no-pcap"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1  # three lines failed, the last one passed
    assert done.stdout.count("*** ") == 3 and "1 received" in done.stdout
    assert done.stdout.rstrip().endswith("\n1")  # a shell pipe inside the node
    assert _leftovers(_prefix(done.stderr), run_dir) == []


def test_link_delay_and_loss_are_applied_by_the_switch(pair_topology, tmp_path):
    """h2's link: 15 ms each way at the switch's end, so every RTT is at least 30 ms."""
    text = pair_topology.read_text().replace(
        "[h2, s1-p2]", "{ends: [h2, s1-p2], delay: 15ms, loss: 0%, queue: 16}")
    pair_topology.write_text(text)
    script = tmp_path / "script.txt"
    script.write_text("links\nh1 ping -c 3 -i 0.2 h2\n")
    run_dir = tmp_path / "run"
    done = subprocess.run([*NETWEFT, "up", str(pair_topology), "--run", str(script),
                           "--out", str(run_dir), "--no-pcap"],
                          capture_output=True, text=True, timeout=300)
    assert _leftovers(_prefix(done.stderr), run_dir) == []
    assert done.returncode == 0, done.stdout + done.stderr
    assert "delay 15ms, queue 16 packets" in done.stdout
    rtts = [float(x) for x in re.findall(r"time=([0-9.]+) ms", done.stdout)]
    assert len(rtts) == 3 and min(rtts) >= 30.0


@pytest.mark.slow
def test_detach_exec_down_and_clean_after_a_crash(pair_topology, tmp_path):
    run_dir = tmp_path / "run"
    up = [*NETWEFT, "up", str(pair_topology), "--detach", "--out", str(run_dir), "--no-pcap"]
    name = load_topology(pair_topology).name
    record = None
    try:
        done = subprocess.run(up, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        record = up_registry.find(name)
        ping = subprocess.run([*NETWEFT, "exec", "--testbed", name, "h1", "--", "ping", "-c1",
                               "h2"],
                              capture_output=True, text=True, timeout=60)
        assert ping.returncode == 0 and "1 received" in ping.stdout
        missing = subprocess.run([*NETWEFT, "exec", "--testbed", name, "h9", "--", "true"],
                                 capture_output=True,
                                 text=True, timeout=60)
        assert missing.returncode == 1 and "no node 'h9'" in missing.stderr
        down = subprocess.run([*NETWEFT, "down", "--testbed", name], capture_output=True,
                              text=True, timeout=60)
        assert down.returncode == 0, down.stderr
        assert _leftovers(record.prefix, run_dir) == []
        # a crash: the testbed's process dies without cleaning up; netweft clean does it
        assert subprocess.run(up, capture_output=True, text=True, timeout=300).returncode == 0
        record = up_registry.find(name)
        os.kill(record.pid, signal.SIGKILL)
        while record.alive:
            time.sleep(0.05)
        assert [n for n in netns.listnetns() if n.startswith(record.prefix + "-")]
        # netweft clean's own function, limited to this testbed's prefix so that it leaves
        # alone what other runs on this machine are doing
        said = []
        assert clean(prefixes=(record.prefix,), log=said.append) >= 4
        assert f"removed the record of testbed {name} (pid {record.pid})" in said
        assert _leftovers(record.prefix, run_dir) == []
        assert all(r.name != name for r in up_registry.records())
    finally:  # even if the test failed before it saw the record
        record = record or next((r for r in up_registry.records() if r.name == name), None)
        if record is not None and record.alive:
            os.kill(record.pid, signal.SIGTERM)
            time.sleep(2)
        if record is not None:
            for node in record.nodes.values():
                if node["netns"] in netns.listnetns():
                    subprocess.run(["ip", "netns", "del", node["netns"]], check=False)
            up_registry.remove(name)


def test_clean_removes_control_sockets_of_dead_networks(tmp_path):
    prefix = f"nw{uuid.uuid4().hex[:5]}"  # no owner file: its network is gone
    stale = Path(f"/tmp/netweft-{prefix}-leaf1.sock")
    stale.touch()
    try:
        said = []
        assert clean(prefixes=(prefix,), log=said.append) == 1
        assert said == [f"removed control socket {stale}"] and not stale.exists()
    finally:
        stale.unlink(missing_ok=True)
