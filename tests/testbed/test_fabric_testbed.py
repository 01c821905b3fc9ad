"""The fabric controller configures a running leaf-spine testbed over P4Runtime (the
switch processes' Unix-socket servers) and hosts ping across it; cleanup in finally."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from pyroute2 import netns

from netweft.testbed.commands.up_prompt import TestbedPrompt
from netweft.testbed.control.fabric.controller import configure_fabric
from netweft.testbed.control.fabric.graph import graph_from_network
from netweft.testbed.control.fabric.settings import FabricSettings, PortThreshold
from netweft.testbed.topology import load_topology

pytestmark = [pytest.mark.netns, pytest.mark.slow]
NETWEFT = [sys.executable, "-m", "netweft.testbed.command_line"]

LEAF_SPINE = """
name: fabric-test
defaults: {program: %s}
hosts:
  h1: {ip: 10.0.1.1/16}
  h2: {ip: 10.0.1.2/16}
  h3: {ip: 10.0.2.3/16}
switches: {leaf1: {}, leaf2: {}, spine1: {}, spine2: {}}
links:
  - [h1, leaf1-p1]
  - [h2, leaf1-p2]
  - [h3, leaf2-p1]
  - [leaf1-p3, spine1-p1]
  - [leaf1-p4, spine2-p1]
  - [leaf2-p3, spine1-p2]
  - [leaf2-p4, spine2-p2]
"""


def _ping(host, address: str) -> bool:
    return host.cmd("ping", "-c", "2", "-W", "2", "-i", "0.3", address,
                    check=False).returncode == 0


def test_controller_configures_a_running_leaf_spine_and_hosts_ping(tmp_path):
    topo_file = tmp_path / "fabric.yaml"
    topo_file.write_text(LEAF_SPINE % "fabric")
    net = load_topology(topo_file).build(tmp_path / "run", pcaps=False)
    try:
        net.start()
        h1, h3 = net.host("h1"), net.host("h3")
        assert not _ping(h1, h3.ip_address)   # no routes before the controller runs
        addresses = {s.name: s.grpc_address for s in net.switches}
        assert all(a.startswith("unix:") for a in addresses.values())
        reports = configure_fabric(graph_from_network(net), addresses,
                                   FabricSettings(default_spray="round_robin",
                                                  ecn=[PortThreshold(10)]))
        assert {r.switch for r in reports} == {"leaf1", "leaf2", "spine1", "spine2"}
        assert _ping(h1, h3.ip_address) and _ping(h3, net.host("h2").ip_address)
        again = configure_fabric(graph_from_network(net), addresses,
                                 FabricSettings(default_spray="round_robin",
                                                ecn=[PortThreshold(10)]))
        assert sum(r.inserted + r.modified + r.deleted for r in again) == 0
        # the prompt's verb: the same controller, settings as netweft up's options
        out = io.StringIO()
        prompt = TestbedPrompt(net, tmp_path / "run", out=out)
        prompt.onecmd("fabric --spray-default adaptive --multicast 239.1.1.1=h1,h2,h3")
        assert prompt.failures == [] and "leaf1: fabric: " in out.getvalue()
        prompt.onecmd("fabric --spray 10.0.0.0/8=sideways")
        assert "spray mode 'sideways'" in prompt.failures[-1]
        prompt.onecmd("fabric --multicast 239.1.1.2=h1,h9")
        assert "no host named h9" in prompt.failures[-1]
        assert _ping(h1, h3.ip_address)
    finally:
        net.stop()
    assert not [n for n in netns.listnetns() if n.startswith(net.prefix + "-")]


def test_netweft_up_runs_fabric_p4_by_default_and_netweft_fabric_reconfigures_it(tmp_path):
    """A topology that names no program: netweft up runs fabric.p4 on every switch and
    configures it; netweft fabric install changes the spray mode of the running testbed."""
    name = f"fabric-{uuid.uuid4().hex[:8]}"
    topo_file = tmp_path / "fabric.yaml"
    topo_file.write_text((LEAF_SPINE % "fabric").replace("name: fabric-test", f"name: {name}")
                         .replace("defaults: {program: fabric}\n", ""))
    run_dir = tmp_path / "run"
    up = subprocess.run([*NETWEFT, "up", str(topo_file), "--detach", "--out", str(run_dir),
                         "--no-pcap", "--spray-default", "round_robin"],
                        capture_output=True, text=True, timeout=300)
    try:
        log = (run_dir / "up.log").read_text()
        assert up.returncode == 0, up.stderr
        assert "fabric controller: 4 fabric.p4 switches configured" in log
        ping = subprocess.run([*NETWEFT, "exec", "--testbed", name, "h1", "--", "ping", "-c",
                               "2", "-W", "2", "h3"], capture_output=True, text=True,
                              timeout=60)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        install = subprocess.run([*NETWEFT, "fabric", "install", "--testbed", name,
                                  "--spray", "10.0.2.0/24=adaptive", "--ecn-threshold", "10"],
                                 capture_output=True, text=True, timeout=120)
        assert install.returncode == 0, install.stderr
        # leaf1 and spine1/2: only what changed (h3's route on leaf1, the ECN rows)
        assert "leaf1: fabric: 4 inserted, 1 modified, 0 deleted" in install.stdout
        bad = subprocess.run([*NETWEFT, "fabric", "install", "--testbed", name,
                              "--ecn-threshold", "spine9=5"],
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and "Traceback" not in bad.stderr
        assert "names switch 'spine9', which the fabric does not have" in bad.stderr
    finally:
        subprocess.run([*NETWEFT, "down", "--testbed", name], capture_output=True, timeout=120)
    prefix = re.search(r"namespaces (nw[0-9a-f]{5})-\*", log).group(1)
    assert not [n for n in netns.listnetns() if n.startswith(prefix + "-")]
    assert not Path(f"/run/netweft/testbeds/{name}.json").exists()
