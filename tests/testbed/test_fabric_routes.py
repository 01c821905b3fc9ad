"""Route, ECMP group and multicast tree computation on several topologies (sans-IO)."""

from __future__ import annotations

import ipaddress
import json
from collections import Counter, deque
from pathlib import Path

import pytest

from netweft.emulation.network import Network
from netweft.testbed.control.fabric.compute import compute_fabric
from netweft.testbed.control.fabric.graph import (
    FabricGraphError,
    graph_from_network,
    graph_from_topology,
)
from netweft.testbed.control.fabric.multicast import MulticastError, MulticastGroupSpec
from netweft.testbed.control.fabric.plan import NextHop
from netweft.testbed.topology import load_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "testbed" / "topologies"


def _group(gid: int, *members: str) -> MulticastGroupSpec:
    return MulticastGroupSpec(gid, ipaddress.IPv4Address(f"239.1.1.{gid}"), tuple(members))


def _route(plan, host):
    return next(r for r in plan.routes if r.host == host)


def _deliver(graph, plans, gid: int, sender: str) -> Counter:
    """Follow a packet of group ``gid`` from ``sender`` through every switch's tree;
    the hosts it reaches, with how often. A switch seen twice is a loop."""
    ports_to_host = {(h.switch, h.port): h.host for h in graph.hosts.values()}
    links = {(lk.switch, lk.port): (lk.peer, lk.peer_port)
             for s in graph.switches for lk in graph.neighbours(s)}
    start = graph.hosts[sender]
    todo = deque([(start.switch, start.port)])
    visited: Counter = Counter()
    got: Counter = Counter()
    while todo:
        switch, in_port = todo.popleft()
        visited[switch] += 1
        assert visited[switch] == 1, f"group {gid} from {sender} loops through {switch}"
        tree = next(t for t in plans[switch].multicast if t.group_id == gid)
        for port in tree.ports:
            if port == in_port:
                continue
            if (switch, port) in ports_to_host:
                got[ports_to_host[(switch, port)]] += 1
            else:
                todo.append(links[(switch, port)])
    return got


def test_leaf_spine_yaml_routes_and_groups():
    topo = load_topology(TOPOLOGIES / "leaf-spine.yaml")
    graph = graph_from_topology(topo)
    plans = compute_fabric(graph)
    assert sorted(plans) == ["leaf1", "leaf2", "spine1", "spine2"]
    leaf1 = plans["leaf1"]
    h1 = _route(leaf1, "h1")
    assert h1.prefix == ipaddress.IPv4Network("10.0.1.1/32")
    assert h1.next_hop == NextHop(1, "08:00:00:00:01:11") and h1.group is None
    h3 = _route(leaf1, "h3")
    assert h3.group is not None
    assert [m.port for m in h3.group.members] == [3, 4]
    # the same two uplinks serve h3 and h4: one group
    assert _route(leaf1, "h4").group == h3.group and len(leaf1.groups) == 1
    spine = plans["spine1"]
    assert _route(spine, "h3").next_hop.port == 2 and _route(spine, "h1").next_hop.port == 1
    assert not spine.groups
    assert all(not p.unreachable for p in plans.values())


def test_graph_agrees_with_the_network_netweft_up_builds(tmp_path):
    topo = load_topology(TOPOLOGIES / "demo-fabric.yaml")
    built = graph_from_network(topo.build(tmp_path))
    assert graph_from_topology(topo) == built
    # next hops name the next switch's port MAC, as the runtime files of the demo do
    runtime = json.loads((TOPOLOGIES / "demo_fabric" / "spine1-runtime.json").read_text())
    macs = {e["action_params"]["dstAddr"] for e in runtime["table_entries"]
            if "dstAddr" in e["action_params"]}
    plans = compute_fabric(built)
    ours = {hop.mac for r in plans["spine1"].routes for hop in r.next_hops}
    assert macs <= ours


def test_tutorials_pod_topology_json(tmp_path):
    pod = tmp_path / "pod"
    pod.mkdir()
    (pod / "topology.json").write_text(json.dumps({
        "hosts": {f"h{i}": {"ip": f"10.0.{i}.{i}/24", "mac": f"08:00:00:00:0{i}:{i}{i}",
                            "commands": []} for i in range(1, 5)},
        "switches": {f"s{i}": {"program": "basic_forward"} for i in range(1, 5)},
        "links": [["h1", "s1-p1"], ["h2", "s1-p2"], ["s1-p3", "s3-p1"], ["s1-p4", "s4-p2"],
                  ["h3", "s2-p1"], ["h4", "s2-p2"], ["s2-p3", "s4-p1"], ["s2-p4", "s3-p2"]]}))
    graph = graph_from_topology(load_topology(pod / "topology.json"))
    plans = compute_fabric(graph, [_group(1, "h1", "h2", "h3", "h4")])
    to_h3 = _route(plans["s1"], "h3")
    assert sorted(m.port for m in to_h3.group.members) == [3, 4]
    assert _route(plans["s3"], "h3").next_hop.port == 2
    assert _route(plans["s4"], "h3").next_hop.port == 1
    for sender in ("h1", "h3"):
        got = _deliver(graph, plans, 1, sender)
        assert got == Counter({h: 1 for h in ("h1", "h2", "h3", "h4") if h != sender})


def _fat_tree(k: int = 4) -> Network:
    """A k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores."""
    net = Network("nwtest")
    half = k // 2
    hosts, edges, aggs = [], [], []
    for pod in range(k):
        for e in range(half):
            for h in range(half):
                hosts.append(net.add_host(f"h{pod}{e}{h}", f"10.{pod}.{e}.{h + 2}/8"))
    cores = [net.add_switch(f"c{i}") for i in range(half * half)]
    for pod in range(k):
        aggs.append([net.add_switch(f"a{pod}{i}") for i in range(half)])
        edges.append([net.add_switch(f"e{pod}{i}") for i in range(half)])
    for pod in range(k):
        for e in range(half):
            for h in range(half):
                net.add_link(net.host(f"h{pod}{e}{h}"), edges[pod][e])
            for a in range(half):
                net.add_link(edges[pod][e], aggs[pod][a])
        for a in range(half):
            for c in range(half):
                net.add_link(aggs[pod][a], cores[a * half + c])
    return net


def test_fat_tree_ecmp_fans_out_at_every_tier():
    graph = graph_from_network(_fat_tree(4))
    plans = compute_fabric(graph, [_group(7, "h000", "h101", "h211", "h310", "h001")])
    far = "h310"  # pod 3
    assert len(_route(plans["e00"], far).group.members) == 2   # up to both aggregations
    assert len(_route(plans["a00"], far).group.members) == 2   # up to both of its cores
    assert _route(plans["c0"], far).group is None               # one way down
    assert len(_route(plans["e00"], "h010").group.members) == 2  # same pod, other edge
    assert _route(plans["e00"], "h001").next_hop.port == 2      # same edge switch
    for sender in ("h000", "h211", "h310"):
        got = _deliver(graph, plans, 7, sender)
        assert got == Counter({h: 1 for h in ("h000", "h101", "h211", "h310", "h001")
                               if h != sender})
    on_tree = [s for s, p in plans.items() if p.multicast]
    assert "e20" not in on_tree  # no member below it: not on the tree


def test_ring_multicast_is_loop_free_and_ecmp_splits_at_the_far_side():
    net = Network("nwtest")
    switches = [net.add_switch(f"s{i}") for i in range(4)]
    for i in range(4):
        net.add_link(net.add_host(f"h{i}", f"10.0.0.{i + 1}/24"), switches[i])
    for i in range(4):
        net.add_link(switches[i], switches[(i + 1) % 4])
    graph = graph_from_network(net)
    plans = compute_fabric(graph, [_group(1, "h0", "h1", "h2", "h3")])
    assert len(_route(plans["s0"], "h2").group.members) == 2   # both ways round
    assert _route(plans["s0"], "h1").group is None
    for sender in ("h0", "h1", "h2", "h3"):
        assert sum(_deliver(graph, plans, 1, sender).values()) == 3


def test_unreachable_hosts_and_bad_input_are_named():
    net = Network("nwtest")
    s1, s2 = net.add_switch("s1"), net.add_switch("s2")
    net.add_link(net.add_host("h1", "10.0.0.1/24"), s1)
    net.add_link(net.add_host("h2", "10.0.0.2/24"), s2)
    graph = graph_from_network(net)
    plans = compute_fabric(graph)
    assert plans["s1"].unreachable == ["h2"] and plans["s2"].unreachable == ["h1"]
    with pytest.raises(MulticastError, match="no switch joins"):
        compute_fabric(graph, [_group(1, "h1", "h2")])
    with pytest.raises(MulticastError, match="no host named h9"):
        compute_fabric(graph, [_group(1, "h1", "h9")])
    dup = Network("nwtest")
    s = dup.add_switch("s1")
    dup.add_link(dup.add_host("h1", "10.0.0.1/24"), s)
    dup.add_link(dup.add_host("h2", "10.0.0.1/24"), s)
    with pytest.raises(FabricGraphError, match="h1 and h2 share the address 10.0.0.1"):
        graph_from_network(dup)
