"""The README's main job: the fabric experiment through the embedded P4 switch."""

import json
import subprocess
from pathlib import Path

import pytest
from pyroute2 import netns
from scapy.all import IP, UDP, rdpcap

import netweft.transport
from netweft.testbed.experiments.demo import ECHO_PORT, format_results, run_demo


@pytest.mark.netns
@pytest.mark.host_tools("tshark", "tcpdump")
def test_demo_forwards_through_the_p4_pipeline_and_cleans_up(tmp_path):
    results = run_demo(tmp_path, count=5, size=300, rma_bytes=1 << 20, log=lambda _msg: None)
    prefix = results["namespaces"].rstrip("*")
    assert not [name for name in netns.listnetns() if name.startswith(prefix)]
    for flow in ("h1->h2", "h3->h2"):
        assert results["flows"][flow]["sent"] == 5
        assert results["flows"][flow]["intact"] == 5
    # Both directions of every echo crossed the fabric: 10 requests out of leaf2's port
    # to h2 (up through spine1), 5 replies each out of leaf1's ports to h1 and h3 (back
    # through spine2).
    sw = results["switches"]
    assert sw["leaf2"]["tx_port1"] >= 10 and sw["spine1"]["tx_port2"] >= 10
    assert sw["leaf1"]["tx_port1"] >= 5 and sw["leaf1"]["tx_port2"] >= 5
    assert sw["spine2"]["tx_port1"] >= 10
    assert json.loads((tmp_path / "results.json").read_text()) == results
    # h2 hashed its registered memory after the RMA write; h1 hashed what it wrote.
    assert results["rma_write"]["bytes"] == 1 << 20 and results["rma_write"]["intact"]
    assert sw["leaf2"]["tx_port1"] >= 10 + (1 << 20) // 8972
    # The queue towards h2 was sampled through leaf2's control channel, within its limit.
    queue = results["queue"]
    assert (queue["switch"], queue["port"], queue["depth_limit"]) == ("leaf2", 1, 256)
    assert queue["samples"] and all(0 <= d <= 256 for _, d in queue["samples"])
    assert queue["max"] == max(d for _, d in queue["samples"])
    assert (tmp_path / "queue_occupancy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The capture of leaf2's port to h2 shows the P4 programs' work: TTL decremented
    # by three switches from 64, the destination MAC rewritten to h2's.
    to_h2 = [p for p in rdpcap(str(tmp_path / "leaf2-eth1.pcap"))
             if UDP in p and p[UDP].dport == ECHO_PORT]
    assert len(to_h2) >= 10
    assert {p[IP].ttl for p in to_h2} == {61}
    assert {p.dst for p in to_h2} == {"08:00:00:00:02:22"}  # h2's, in demo-fabric.yaml
    # ... and the source MAC is leaf2's port the datagrams came in on (spine1 addressed
    # them to it), as the p4lang tutorials' hosts send to their gateway.
    assert {p.src for p in to_h2} == {results["switch_macs"]["leaf2"]["3"]}
    assert "h1->h2" in format_results(results)
    assert (tmp_path / "rtt_cdf.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Wireshark decodes the echo as RFC 862 Echo (on 7007 it showed AFS "RX ABORT").
    protocols = subprocess.run(
        ["tshark", "-r", str(tmp_path / "leaf2-eth1.pcap"), "-Y", f"udp.port == {ECHO_PORT}",
         "-T", "fields", "-e", "frame.protocols"],
        capture_output=True, text=True, check=True).stdout.split()
    assert len(protocols) >= 10 and set(protocols) == {"eth:ethertype:ip:udp:echo"}
    # The RMA write's packets decode with netweft's Lua dissector, none malformed.
    lua = Path(netweft.transport.__file__).parent / "wire" / "wireshark" / "netweft_uet.lua"
    fields = subprocess.run(
        ["tshark", "-X", f"lua_script:{lua}", "-r", str(tmp_path / "leaf2-eth1.pcap"),
         "-Y", "nwuet", "-T", "fields", "-e", "nwuet.error"],
        capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(fields) >= (1 << 20) // 8972 and not any(fields)
