"""The fabric controller against in-process P4Runtime servers (one per switch of a
leaf-spine): install, forward frames across it, re-install idempotently, bad requests."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.programs import program as shipped_program
from netweft.testbed.fabric.controller import configure_fabric
from netweft.testbed.fabric.graph import graph_from_topology
from netweft.testbed.fabric.installer import InstallError
from netweft.testbed.fabric.p4runtime_session import SessionError, SwitchSession
from netweft.testbed.fabric.settings import FabricSettings, PortThreshold
from netweft.testbed.topology import load_topology

TOPOLOGY = Path(__file__).resolve().parents[2] / "testbed" / "topologies" / "leaf-spine.yaml"


def _no_loader(data: bytes):
    raise ValueError("test devices load their program directly")


@pytest.fixture(scope="module")
def spray_program():
    return compile_p4(str(shipped_program("ecmp_spray")))


@pytest.fixture
def fabric(spray_program):
    """The leaf-spine's wiring and one served ecmp_spray device per switch."""
    graph = graph_from_topology(load_topology(TOPOLOGY))
    p4info = build_p4info(spray_program)
    devices, servers = {}, []
    try:
        for name in graph.switches:
            device = Device(_no_loader, device_id=0)
            device.install(p4info, b"", switch=SoftSwitch(spray_program))
            servers.append(P4RuntimeServer(device, "127.0.0.1:0").start())
            devices[name] = (device, servers[-1].target)
        yield graph, devices
    finally:
        for server in servers:
            server.stop(0)


def _walk(graph, devices, src: str, dst: str, sport: int) -> list[str]:
    """Send a UDP frame from host ``src`` to ``dst`` through the in-process switches;
    the switches it crossed and the host it reached."""
    links = {(lk.switch, lk.port): (lk.peer, lk.peer_port)
             for s in graph.switches for lk in graph.neighbours(s)}
    hosts = {(h.switch, h.port): h.host for h in graph.hosts.values()}
    a, b = graph.hosts[src], graph.hosts[dst]
    frame = bytes(Ether(src=a.mac, dst=b.mac) / IP(src=str(a.ip), dst=str(b.ip), ttl=64)
                  / UDP(sport=sport, dport=4793) / (b"x" * 32))
    where, path = (a.switch, a.port), []
    while where not in hosts or not path:
        switch, port = where
        path.append(switch)
        outputs = devices[switch][0].process(port, frame)
        assert len(outputs) == 1, f"{switch} sent {len(outputs)} frames"
        out_port, frame = outputs[0]
        where = (switch, out_port)
        if where in hosts:
            break
        where = links[where]
    assert Ether(frame)[Ether].dst == b.mac
    return path + [hosts[where]]


def test_configures_a_leaf_spine_and_frames_cross_it(fabric):
    graph, devices = fabric
    addresses = {name: target for name, (_, target) in devices.items()}
    reports = configure_fabric(graph, addresses, FabricSettings(ecn=[PortThreshold(20)]))
    assert {r.program for r in reports} == {"ecmp_spray"}
    assert all(r.inserted > 0 and r.deleted == 0 for r in reports)
    spines = set()
    for sport in range(49152, 49152 + 16):
        path = _walk(graph, devices, "h1", "h3", sport)
        assert path[0] == "leaf1" and path[2] == "leaf2" and path[3] == "h3"
        spines.add(path[1])
    assert spines == {"spine1", "spine2"}    # flow hashing uses both uplinks
    assert _walk(graph, devices, "h4", "h2", 1000)[-1] == "h2"
    assert _walk(graph, devices, "h1", "h2", 1000) == ["leaf1", "h2"]

    again = configure_fabric(graph, addresses, FabricSettings(ecn=[PortThreshold(20)]))
    assert all(r.inserted == r.modified == r.deleted == 0 and r.unchanged > 0 for r in again)
    changed = configure_fabric(graph, addresses, FabricSettings(default_spray="round_robin"))
    leaf1 = next(r for r in changed if r.switch == "leaf1")
    assert leaf1.modified == 2 and leaf1.deleted == 4   # two group routes; no ECN rows
    spines = [_walk(graph, devices, "h1", "h3", 7)[1] for _ in range(4)]
    assert spines in (["spine1", "spine2"] * 2, ["spine2", "spine1"] * 2)


def test_bad_requests_name_the_switch_and_the_entry(fabric):
    graph, devices = fabric
    addresses = {name: target for name, (_, target) in devices.items()}
    with pytest.raises(InstallError, match=r"leaf1 \(127\.0\.0\.1:\d+\): ecmp_spray.p4 sprays "
                       r"by flow_hash or round_robin only, not adaptive"):
        configure_fabric(graph, addresses, FabricSettings(default_spray="adaptive"))
    with pytest.raises(InstallError, match="no P4Runtime address for switch.*spine2"):
        configure_fabric(graph, {k: v for k, v in addresses.items() if k != "spine2"})
    with pytest.raises(InstallError, match="port 9 of leaf1"):
        configure_fabric(graph, addresses, FabricSettings(ecn=[PortThreshold(5, "leaf1", 9)]))
    with SwitchSession("leaf1", addresses["leaf1"], election_id=10):
        with pytest.raises(SessionError, match=r"leaf1 .*another controller.*primary \(election "
                           r"id 10\); use a higher election id"):
            configure_fabric(graph, addresses, election_id=5, timeout=5)
    with pytest.raises(SessionError, match=r"nowhere \(unix:/nonexistent/sw.grpc\): UNAVAILABLE.*is the switch running"):
        SwitchSession("nowhere", "unix:/nonexistent/sw.grpc", timeout=1)
    # an entry the switch refuses is named in the error
    from netweft.testbed.fabric.ecmp_spray_binding import EcmpSprayBinding
    from netweft.testbed.fabric.entity_encoder import EntityEncoder
    from netweft.testbed.fabric.entries import TableWrite
    from netweft.testbed.fabric.installer import InstallReport, plan_updates
    with SwitchSession("spine1", addresses["spine1"], election_id=20) as session:
        encoder = EntityEncoder(session.p4info())
        bad = TableWrite("group_members", (("meta.group_id", 1), ("meta.member", 0)),
                         "set_next_hop", (("dmac", "02:00:00:00:00:01"), ("port", 3)))
        updates = plan_updates(session, encoder, EcmpSprayBinding(), [bad, bad],
                               InstallReport("spine1", "ecmp_spray"))
        errors = session.write([u for u, _ in updates])
        assert [e.code for e in errors] == ["ALREADY_EXISTS"] and errors[0].index == 1
