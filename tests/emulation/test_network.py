"""The network builder: namespaces, veth links, addressing and cleanup."""

import subprocess
import sys
import uuid

import pytest
from pyroute2 import netns

from netweft.emulation.network import Network, NetworkError, leftover_namespaces

pytestmark = pytest.mark.netns

_ECHO = ("import socket,sys\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
         "s.bind(('0.0.0.0',9000));s.settimeout(5)\nprint('ready',flush=True)\n"
         "d,a=s.recvfrom(65535);s.sendto(d[::-1],a)\n")
_ASK = ("import socket,sys\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.settimeout(5)\n"
        "s.sendto(sys.argv[2].encode(),(sys.argv[1],9000));print(s.recvfrom(65535)[0].decode())\n")


def _ours(net):
    return [n for n in netns.listnetns() if n.startswith(net.prefix + "-")]


def test_two_hosts_exchange_udp_over_a_veth_link_and_cleanup():
    net = Network()
    h1, h2 = net.add_host("h1", "10.0.7.1/24"), net.add_host("h2", "10.0.7.2/24")
    net.add_link(h1, h2, mtu=9000)
    with net:
        assert sorted(_ours(net)) == sorted([h1.netns, h2.netns])
        assert "mtu 9000" in h1.cmd("ip", "link", "show", "eth0").stdout
        server = h2.popen(sys.executable, "-c", _ECHO, stdout=subprocess.PIPE, text=True)
        assert server.stdout.readline().strip() == "ready"
        out = h1.cmd(sys.executable, "-c", _ASK, "10.0.7.2", "netweft").stdout.strip()
        assert out == "tfewten"
    assert _ours(net) == []


def test_switch_ports_are_numbered_and_named():
    net = Network()
    h1, h2 = net.add_host("h1", "10.0.8.1/24"), net.add_host("h2", "10.0.8.2/24")
    s1 = net.add_switch("s1")
    net.add_link(h1, s1)
    net.add_link(h2, s1, port_b=5)
    assert s1.port_map() == {1: "s1-eth1", 5: "s1-eth5"}
    with net:
        links = s1.cmd("ip", "-o", "link", "show").stdout
        assert "s1-eth1" in links and "s1-eth5" in links
        assert "02:00:00:01:00:01" in h1.cmd("ip", "link", "show", "eth0").stdout
        neigh = h1.cmd("ip", "neigh", "show").stdout
        assert "10.0.8.2" in neigh and h2.mac in neigh
    assert _ours(net) == []


def test_failed_start_leaves_nothing_behind():
    net = Network()
    h1, h2 = net.add_host("h1", "10.0.9.1/24"), net.add_host("h2", "10.0.9.2/24")
    net.add_link(h1, h2, mtu=10**6)  # the kernel refuses this MTU half-way through start
    with pytest.raises(NetworkError, match="cleaned up"):
        net.start()
    assert _ours(net) == []
    assert not [line for line in subprocess.run(["ip", "-o", "link"], capture_output=True,
                                                text=True).stdout.splitlines()
                if net.prefix in line]


def test_processes_are_stopped_with_the_network():
    net = Network()
    h1 = net.add_host("h1", "10.0.10.1/24")
    h2 = net.add_host("h2", "10.0.10.2/24")
    net.add_link(h1, h2)
    with net:
        proc = h1.popen("sleep", "600")
    assert proc.poll() is not None


def test_declaration_errors_are_clear():
    net = Network()
    h1 = net.add_host("h1")
    with pytest.raises(NetworkError, match="exists already"):
        net.add_host("h1")
    with pytest.raises(NetworkError, match="two different nodes"):
        net.add_link(h1, h1)
    with pytest.raises(NetworkError, match="at most 8"):
        net.add_host("a-very-long-name")


def test_leftovers_are_cleaned_but_live_networks_are_not():
    # Looks like netweft's, and no live process owns it; random, so that runs of this
    # test by several users at once do not remove each other's.
    name = f"nw{uuid.uuid4().hex[:5]}-h9"
    netns.create(name)
    live = Network()
    live.add_host("h1")
    try:
        with live:
            assert name in leftover_namespaces()
            assert live.nodes["h1"].netns not in leftover_namespaces()
            assert live.nodes["h1"].netns in leftover_namespaces(include_live=True)
            out = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", "clean"],
                                 capture_output=True, text=True, check=True).stdout
            assert f"removed namespace {name}" in out
            assert name not in netns.listnetns()
            assert live.nodes["h1"].netns in netns.listnetns()
    finally:
        if name in netns.listnetns():
            netns.remove(name)


def test_clean_removes_a_veth_pair_left_in_the_root_namespace():
    # A run killed between creating a link and moving its ends into namespaces leaves
    # the pair in the root namespace under its network's prefix; no owner runs here.
    from pyroute2 import IPRoute

    from netweft.testbed.commands.clean import clean

    prefix = f"nwcln{uuid.uuid4().hex[:5]}"
    a, b = f"{prefix}l1a", f"{prefix}l1b"
    with IPRoute() as ipr:
        ipr.link("add", ifname=a, kind="veth", peer={"ifname": b})
    try:
        said = []
        assert clean(prefixes=("nwcln",), log=said.append) >= 1
        assert f"removed veth pair {a} from the root namespace" in said
        with IPRoute() as ipr:
            assert not ipr.link_lookup(ifname=a) and not ipr.link_lookup(ifname=b)
    finally:
        with IPRoute() as ipr:
            for index in ipr.link_lookup(ifname=a):
                ipr.link("del", index=index)
