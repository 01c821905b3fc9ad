"""Topology files: netweft's YAML and the tutorials' topology.json load into one model."""

import json
from pathlib import Path

import pytest

from netweft.emulation.links.link_params import LinkParams, LinkParamsError
from netweft.emulation.network import Network, NetworkError
from netweft.testbed.topology import TopologyError, load_topology

SHIPPED = Path(__file__).resolve().parents[2] / "testbed" / "topologies"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_link_params_read_the_units_people_write():
    p = LinkParams.parse(delay="5ms", jitter="500us", loss="1%", rate="100mbit",
                         queue={"packets": 64, "bytes": 96000})
    assert (p.delay_s, p.jitter_s, p.loss, p.rate_bps) == (0.005, 0.0005, 0.01, 100e6)
    assert (p.queue_packets, p.queue_bytes) == (64, 96000)
    assert LinkParams.parse(delay=2, rate=10).delay_s == 0.002  # numbers: ms and Mbit/s
    assert LinkParams.parse(rate="1gbit").rate_bps == 1e9
    assert not LinkParams.parse(delay="0ms").any()  # the tutorials' "no latency"
    for bad, match in (({"delay": "fast"}, "duration"), ({"loss": "120%"}, "fraction"),
                       ({"rate": "10 furlongs"}, "bits/s"), ({"queue": 0}, "positive"),
                       ({"jitter": "1ms"}, "jitter needs a delay"),
                       ({"delay": "1ms", "jitter": "2ms"}, "exceeds")):
        with pytest.raises(LinkParamsError, match=match):
            LinkParams.parse(**bad)


def test_host_to_host_links_take_only_a_rate():
    net = Network()
    h1, h2 = net.add_host("h1", "10.0.0.1/24"), net.add_host("h2", "10.0.0.2/24")
    with pytest.raises(NetworkError, match="delay, loss need a switch .* no netem"):
        net.add_link(h1, h2, params=LinkParams.parse(delay="1ms", loss="1%"))
    assert net.add_link(h1, h2, params=LinkParams.parse(rate="10mbit")).rate_mbit == 10


def test_switch_ends_carry_the_link_as_per_port_options():
    net = Network()
    h1, s1, s2 = net.add_host("h1"), net.add_switch("s1"), net.add_switch("s2")
    net.add_link(h1, s1, params=LinkParams.parse(delay="2ms", rate=50, queue=32))
    net.add_link(s1, s2, port_a=7, params=LinkParams.parse(loss="0.5%"))
    net.add_link(s1, s2)  # nothing to emulate: no settings
    ports = s1.port_settings()
    assert sorted(ports) == [1, 7]
    # port 1 faces a host: the switch emulates both directions of that link
    assert ports[1].to_option(1) == ["1:delay=2ms,rate=50mbit,queue=32"]
    # towards another switch, each switch takes the direction it sends
    assert ports[7].to_option(7) == ["7/out:loss=0.005"]
    assert s2.port_settings()[1].to_option(1) == ["1/out:loss=0.005"]


def test_shipped_leaf_spine_yaml_loads():
    topo = load_topology(SHIPPED / "leaf-spine.yaml")
    assert sorted(topo.hosts) == ["h1", "h2", "h3", "h4"]
    assert sorted(topo.switches) == ["leaf1", "leaf2", "spine1", "spine2"]
    assert all(s.program.name == "basic_forward.p4" for s in topo.switches.values())
    assert all(s.runtime.is_file() for s in topo.switches.values())
    assert len(topo.links) == 8 and topo.links[4].port_a == 3 and topo.links[4].port_b == 1


def test_yaml_errors_name_the_file_and_entry(tmp_path):
    cases = [
        ("hosts: {h1: {ip: 10.0.0.1/24, colour: red}}", "hosts.h1: unknown key"),
        ("hosts: {h1: {}}\nlinks: [[h1, s9]]", "links\\[0\\]: 's9' is neither"),
        ("hosts: {h1: {}}\nswitches: {s1: {}}\nlinks: [{ends: [h1, s1-x1]}]", "SWITCH-pN"),
        ("hosts: {h1: {}}\nswitches: {s1: {}}\nlinks: [{ends: [h1, s1], delay: soon}]",
         "links\\[0\\]: delay"),
        ("switches: {s1: {program: nosuch}}", "neither a file nor one of netweft's"),
        ("switches: {s1: {runtime: missing.json}}", "no file 'missing.json'"),
        ("hosts: [h1", ":1:"),
    ]
    for text, match in cases:
        with pytest.raises(TopologyError, match=match):
            load_topology(_write(tmp_path, "t.yaml", text))


def test_tutorials_topology_json_as_the_tutorials_write_it(tmp_path):
    (tmp_path / "basic.p4").write_text("// stands for the exercise's program\n")
    (tmp_path / "pod").mkdir()
    (tmp_path / "pod" / "s1-runtime.json").write_text(json.dumps(
        {"target": "bmv2", "p4info": "build/basic.p4.p4info.txtpb",
         "bmv2_json": "build/basic.json", "table_entries": []}))
    topo_file = _write(tmp_path / "pod", "topology.json", json.dumps({
        "hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11",
                         "commands": ["route add default gw 10.0.1.10 dev eth0"]},
                  "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:22"}},
        "switches": {"s1": {"runtime_json": "pod/s1-runtime.json"}, "s2": {}},
        "links": [["s1-p1", "h1"], ["h2", "s2-p1"], ["s1-p2", "s2-p2", 5, 10],
                  ["s1-p3", "s2-p3", "250us"]]}))
    topo = load_topology(topo_file)
    h1 = topo.hosts["h1"]
    assert (h1.ip, h1.mac, h1.auto_routes) == ("10.0.1.1/24", "08:00:00:00:01:11", False)
    assert h1.commands == ["route add default gw 10.0.1.10 dev eth0"]
    # the runtime file's bmv2_json (p4c's output) leads to the P4 source beside build/
    s1 = topo.switches["s1"]
    assert s1.program is None and s1.inferred_program == (tmp_path / "basic.p4").resolve()
    assert topo.switches["s2"].program is None  # --program supplies it
    first = topo.links[0]  # hosts first, as run_exercise.py orders the ends
    assert (first.a, first.b, first.port_b) == ("h1", "s1", 1)
    assert topo.links[2].params == LinkParams(delay_s=0.005, rate_bps=10e6)
    assert topo.links[3].params.delay_s == 0.00025
    # s2 names no program and has no entries: it runs fabric.p4, for the fabric controller
    assert topo.build(tmp_path / "run").switch("s2").program.name == "fabric.p4"
    topo.switches["s2"].cli_input = tmp_path / "basic.p4"  # entries, but for which program?
    with pytest.raises(TopologyError, match="s2 has entries for a program it does not name: "
                       ".* --program"):
        topo.build(tmp_path / "run")


def test_tutorials_errors(tmp_path):
    with pytest.raises(TopologyError, match="missing 'links'"):
        load_topology(_write(tmp_path, "topology.json", '{"hosts": {}, "switches": {}}'))
    with pytest.raises(TopologyError, match=":1:2: "):
        load_topology(_write(tmp_path, "topology.json", "{,}"))
    with pytest.raises(TopologyError, match="hosts should be connected to switches"):
        load_topology(_write(tmp_path, "topology.json", json.dumps(
            {"hosts": {"h1": {}, "h2": {}}, "switches": {}, "links": [["h1", "h2"]]})))


def test_the_switch_back_end_comes_from_the_switch_the_file_or_netweft_up(tmp_path):
    path = _write(tmp_path, "t.yaml", "backend: c\nhosts: {h1: {ip: 10.0.0.1/24}}\n"
                  "switches: {s1: {program: basic_forward, backend: python}, "
                  "s2: {program: basic_forward}}\nlinks: [[h1, s1], [s1, s2]]\n")
    topo = load_topology(path)
    assert topo.backend == "c" and topo.switches["s1"].backend == "python"
    net = topo.build(tmp_path / "run", p4runtime=False)
    assert net.node("s1").backend == "python" and net.node("s2").backend == "c"
    net = topo.build(tmp_path / "run", p4runtime=False, backend="auto")  # netweft up --backend
    assert net.node("s1").backend == net.node("s2").backend == "auto"
    with pytest.raises(TopologyError, match="switches.s1: backend: 'fast'; use auto, c or python"):
        load_topology(_write(tmp_path, "b.yaml", "switches: {s1: {backend: fast}}"))
