"""The fabric controller configures a running leaf-spine testbed over P4Runtime (the
switch processes' Unix-socket servers) and hosts ping across it; cleanup in finally."""

from __future__ import annotations

import pytest
from pyroute2 import netns

from netweft.testbed.fabric.controller import configure_fabric
from netweft.testbed.fabric.graph import graph_from_network
from netweft.testbed.fabric.settings import FabricSettings, PortThreshold
from netweft.testbed.topology import load_topology

pytestmark = [pytest.mark.netns, pytest.mark.slow]

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
    finally:
        net.stop()
    assert not [n for n in netns.listnetns() if n.startswith(net.prefix + "-")]
