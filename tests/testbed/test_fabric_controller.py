"""The fabric controller against in-process P4Runtime servers (one per switch of a
leaf-spine running fabric.p4 or ecmp_spray.p4): install, forward frames across it,
re-install idempotently, multicast with ACK aggregation, bad requests."""

from __future__ import annotations

import struct
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
from netweft.testbed.control.entries import Lpm, TableWrite
from netweft.testbed.control.fabric.controller import configure_fabric
from netweft.testbed.control.fabric.graph import graph_from_topology
from netweft.testbed.control.fabric.installer import InstallError, bindings
from netweft.testbed.control.fabric.settings import FabricSettings, PortThreshold, parse_multicast
from netweft.testbed.control.p4runtime_session import SessionError, SwitchSession
from netweft.testbed.topology import load_topology

TOPOLOGY = Path(__file__).resolve().parents[2] / "testbed" / "topologies" / "leaf-spine.yaml"


def _no_loader(data: bytes):
    raise ValueError("test devices load their program directly")


_PROGRAMS: dict = {}


def _program(name: str):
    if name not in _PROGRAMS:
        _PROGRAMS[name] = compile_p4(str(shipped_program(name)))
    return _PROGRAMS[name]


@pytest.fixture(params=["fabric", "ecmp_spray"])
def fabric(request):
    """The leaf-spine's wiring and one served device per switch running the program."""
    graph = graph_from_topology(load_topology(TOPOLOGY))
    spray_program = _program(request.param)
    p4info = build_p4info(spray_program)
    devices, servers = {}, []
    try:
        for name in graph.switches:
            device = Device(_no_loader, device_id=0)
            device.install(p4info, b"", switch=SoftSwitch(spray_program))
            servers.append(P4RuntimeServer(device, "127.0.0.1:0").start())
            devices[name] = (device, servers[-1].target)
        yield graph, devices, request.param
    finally:
        for server in servers:
            server.stop(0)


def _flood(graph, devices, src: str, frame: bytes) -> list[tuple[str, bytes]]:
    """Every (host, frame) that ``frame`` sent by ``src`` reaches through the switches."""
    links = {(lk.switch, lk.port): (lk.peer, lk.peer_port)
             for s in graph.switches for lk in graph.neighbours(s)}
    hosts = {(h.switch, h.port): h.host for h in graph.hosts.values()}
    start = graph.hosts[src]
    todo, got = [(start.switch, start.port, frame)], []
    while todo:
        switch, port, data = todo.pop(0)
        for out_port, out in devices[switch][0].process(port, data):
            if (switch, out_port) in hosts:
                got.append((hosts[(switch, out_port)], out))
            else:
                todo.append((*links[(switch, out_port)], out))
    return got


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
    graph, devices, program = fabric
    addresses = {name: target for name, (_, target) in devices.items()}
    reports = configure_fabric(graph, addresses, FabricSettings(ecn=[PortThreshold(20)]))
    assert {r.program for r in reports} == {program}
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


@pytest.mark.parametrize("fabric", ["fabric"], indirect=True)
def test_multicast_reaches_every_member_once_and_acks_are_aggregated(fabric):
    graph, devices, program = fabric
    addresses = {name: target for name, (_, target) in devices.items()}
    group = parse_multicast("239.1.1.1=h1,h2,h3,h4/acks=h1", 1)
    configure_fabric(graph, addresses, FabricSettings(multicast=[group]))
    h1 = graph.hosts["h1"]
    data = bytes(Ether(src=h1.mac, dst="01:00:5e:01:01:01")
                 / IP(src=str(h1.ip), dst="239.1.1.1", ttl=64) / UDP(sport=5000, dport=4795)
                 / struct.pack("!BBHII", 1, 0, 1, 5, 0) / (b"d" * 100))
    got = _flood(graph, devices, "h1", data)
    assert sorted(host for host, _ in got) == ["h2", "h3", "h4"]
    for host, frame in got:   # each copy is unicast to its host
        assert Ether(frame)[IP].dst == str(graph.hosts[host].ip)
        assert Ether(frame)[Ether].dst == graph.hosts[host].mac
    acks = []
    for index, receiver in enumerate(group.receivers):
        r = graph.hosts[receiver]
        ack = bytes(Ether(src=r.mac, dst=h1.mac) / IP(src=str(r.ip), dst=str(h1.ip), ttl=64)
                    / UDP(sport=5001, dport=4795) / struct.pack("!BBHII", 2, 0, 1, 5, 1 << index))
        acks += _flood(graph, devices, receiver, ack)
    assert [host for host, _ in acks] == ["h1"]   # one ACK for three receivers
    kind, flags, gid, seq, receivers = struct.unpack(
        "!BBHII", bytes(Ether(acks[0][1])[UDP].payload)[:12])
    assert (kind, flags & 1, gid, seq, receivers) == (2, 1, 1, 5, 0b111)


def test_bad_requests_name_the_switch_and_the_entry(fabric, monkeypatch):
    graph, devices, program = fabric
    addresses = {name: target for name, (_, target) in devices.items()}
    if program == "ecmp_spray":
        with pytest.raises(InstallError, match=r"leaf1 \(127\.0\.0\.1:\d+\): ecmp_spray.p4 "
                           r"sprays by flow_hash or round_robin only, not adaptive"):
            configure_fabric(graph, addresses, FabricSettings(default_spray="adaptive"))
        with pytest.raises(InstallError, match="ecmp_spray.p4 has no multicast"):
            configure_fabric(graph, addresses, FabricSettings(
                multicast=[parse_multicast("239.1.1.1=h1,h2", 1)]))
    else:
        with pytest.raises(InstallError, match=r"leaf1 \(127.*ACKs are aggregated for groups "
                           r"0..63 only"):
            configure_fabric(graph, addresses, FabricSettings(
                multicast=[parse_multicast("70:239.1.1.1=h1,h2/acks=h1", 1)]))
    with pytest.raises(InstallError, match="no P4Runtime address for switch.*spine2"):
        configure_fabric(graph, {k: v for k, v in addresses.items() if k != "spine2"})
    with pytest.raises(InstallError, match="port 9 of leaf1"):
        configure_fabric(graph, addresses, FabricSettings(ecn=[PortThreshold(5, "leaf1", 9)]))
    with SwitchSession("leaf1", addresses["leaf1"], election_id=10):
        with pytest.raises(SessionError, match=r"leaf1 .*another controller.*primary \(election "
                           r"id 10\); use a higher election id"):
            configure_fabric(graph, addresses, election_id=5, timeout=5)
    with pytest.raises(SessionError, match=r"nowhere \(unix:/nonexistent/sw.grpc\): "
                       r"UNAVAILABLE.*is the switch running"):
        SwitchSession("nowhere", "unix:/nonexistent/sw.grpc", timeout=1)
    # an entry the switch refuses is named in the error, with the switch's reason
    duplicate = TableWrite("ipv4_routes", (("dstAddr", Lpm("10.9.9.9", 32)),), "drop")
    for binding in bindings():
        monkeypatch.setattr(type(binding), "writes", lambda *_: [duplicate, duplicate])
    with pytest.raises(InstallError, match=r"leaf1 \(127.*\) refused 1 update\(s\): table "
                       r"ipv4_routes \[dstAddr=10.9.9.9/32\] -> drop\(\): ALREADY_EXISTS"):
        configure_fabric(graph, addresses)


def test_cli_sets_the_pipeline_then_configures_switches_by_address(tmp_path, capsys):
    """netweft fabric install --topology --switch NAME=HOST:PORT --p4info --device-config:
    switches that start without a program (as simple_switch_grpc --no-p4) get fabric.p4
    from the controller, then their entries."""
    from netweft.p4.compiler.device_config import load_device_config
    from netweft.testbed.command_line import main

    config, info = tmp_path / "fabric.json", tmp_path / "fabric.p4info.txtpb"
    assert main(["compile", str(shipped_program("fabric")), "-o", str(config),
                 "--p4runtime-files", str(info)]) == 0
    graph = graph_from_topology(load_topology(TOPOLOGY))
    devices, servers = {}, []
    try:
        for name in graph.switches:
            devices[name] = Device(load_device_config, device_id=0)
            servers.append(P4RuntimeServer(devices[name], "127.0.0.1:0").start())
        switches = [f"--switch={name}={server.target}"
                    for name, server in zip(graph.switches, servers, strict=True)]
        argv = ["fabric", "install", "--topology", str(TOPOLOGY), "--spray-default", "random"]
        assert main(argv + switches[:-1]) == 1
        assert "no P4Runtime address for switch(es) spine2" in capsys.readouterr().err
        assert main(argv + switches + ["--p4info", str(info)]) == 1
        assert "give --p4info and --device-config together" in capsys.readouterr().err
        assert main(argv + switches + ["--p4info", str(info), "--device-config",
                                       str(config)]) == 0
        assert "leaf1: fabric: " in capsys.readouterr().out
        walked = {name: (device, None) for name, device in devices.items()}
        assert _walk(graph, walked, "h1", "h4", 1234)[-1] == "h4"
    finally:
        for server in servers:
            server.stop(0)


def test_entries_read_back_full_width_match_what_the_controller_sends():
    """BMv2's PI answers reads with full-width bytestrings; netweft's server and the
    controller use the shortest form: both name the same entry and action."""
    from p4.v1 import p4runtime_pb2

    from netweft.testbed.control.fabric.installer import _action, _key

    short, full = p4runtime_pb2.TableEntry(table_id=5), p4runtime_pb2.TableEntry(table_id=5)
    fm = short.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = b"\x0a\x00\x02\x03", 32
    short.match.add(field_id=2).exact.value = b"\x01"
    full.match.add(field_id=2).exact.value = b"\x00\x01"
    fm = full.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = b"\x0a\x00\x02\x03", 32
    short.action.action.action_id = full.action.action.action_id = 9
    short.action.action.params.add(param_id=1, value=b"\x03")
    full.action.action.params.add(param_id=1, value=b"\x00\x03")
    assert _key(short) == _key(full) and _action(short) == _action(full)
    full.action.action.params[0].value = b"\x00\x04"
    assert _action(short) != _action(full)
