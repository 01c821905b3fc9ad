"""The p4lang tutorials' workflow end to end with netweft's BMv2-compatible commands:
netweft-p4c writes P4Info and device config, netweft-switch starts on veth ports in
a namespace, a plain grpc + p4runtime controller installs a runtime JSON, hosts ping."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from netweft.emulation.network import Network
from netweft.p4.programs import program
from tests.p4runtime.switch_runner import running_switch

pytestmark = [pytest.mark.netns, pytest.mark.slow]
BIN = Path(sys.executable).parent
CONTROLLER = Path(__file__).parent / "tutorial_controller.py"


def _compile(build: Path) -> tuple[Path, Path]:
    import subprocess
    p4info, config = build / "basic.p4.p4info.txtpb", build / "basic.json"
    done = subprocess.run([str(BIN / "netweft-p4c"), "--p4v", "16", "--p4runtime-files",
                           str(p4info), "-o", str(config), str(program("basic_forward"))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return p4info, config


def test_tutorials_workflow(tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    p4info, config = _compile(build)
    net = Network()
    s1 = net.add_switch("s1")
    h1, h2 = net.add_host("h1", "10.0.1.1/24"), net.add_host("h2", "10.0.1.2/24")
    net.add_link(h1, s1, port_b=1)
    net.add_link(h2, s1, port_b=2)
    runtime = tmp_path / "s1-runtime.json"
    runtime.write_text(json.dumps({
        "target": "bmv2", "p4info": str(p4info), "bmv2_json": str(config),
        "table_entries": [
            {"table": "MyIngress.ipv4_lpm", "default_action": True,
             "action_name": "MyIngress.drop", "action_params": {}},
            *({"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [h.ip_address, 32]},
               "action_name": "MyIngress.ipv4_forward",
               "action_params": {"dstAddr": h.mac, "port": port}}
              for h, port in ((h1, 1), (h2, 2)))]}))
    pcaps = tmp_path / "pcaps"
    with net:
        ports = s1.port_map()
        args = ["-i", f"1@{ports[1]}", "-i", f"2@{ports[2]}", "--pcap", str(pcaps),
                "--device-id", "0", str(config), "--log-file", str(tmp_path / "s1.log"),
                "--thrift-port", "9090", "--", "--grpc-server-addr", "127.0.0.1:0",
                "--cpu-port", "255"]
        with running_switch(args, popen=s1.popen,
                            command=[str(BIN / "netweft-switch")]) as (_proc, target):
            assert h1.cmd("ping", "-c", "1", "-W", "1", h2.ip_address,
                          check=False).returncode != 0      # the default action drops
            done = s1.cmd(sys.executable, str(CONTROLLER), target, "0", str(p4info),
                          str(config), str(runtime), check=False, timeout=120)
            assert done.returncode == 0, done.stderr
            assert "MyIngress.ipv4_lpm: 2 entries" in done.stdout
            ping = h1.cmd("ping", "-c", "3", "-i", "0.2", "-W", "2", h2.ip_address, check=False)
            assert ping.returncode == 0, ping.stdout + ping.stderr
            assert " 0% packet loss" in ping.stdout
    assert (pcaps / f"{ports[1]}_in.pcap").stat().st_size > 24    # more than the header
