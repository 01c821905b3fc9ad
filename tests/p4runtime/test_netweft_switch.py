"""netweft-switch: simple_switch_grpc's command line, and a switch process serving P4Runtime."""

from __future__ import annotations

import subprocess
import sys

import pytest

from netweft.emulation.process.netweft_switch import parse_args
from tests.p4runtime.conftest import PROGRAM
from tests.p4runtime.switch_runner import running_switch


def test_the_tutorials_command_line_parses():
    args = parse_args(["-i", "1@s1-eth1", "-i", "2@s1-eth2", "--pcap", "pcaps",
                       "--device-id", "0", "build/basic.json", "--log-console",
                       "--thrift-port", "9090", "--", "--grpc-server-addr", "0.0.0.0:50051",
                       "--cpu-port", "255"])
    assert args.interface == [(1, "s1-eth1"), (2, "s1-eth2")]
    assert str(args.config) == "build/basic.json" and str(args.pcap) == "pcaps"
    assert args.target.grpc_server_addr == "0.0.0.0:50051" and args.target.cpu_port == 255


def test_the_default_address_is_loopback():
    assert parse_args(["--no-p4"]).target.grpc_server_addr == "127.0.0.1:9559"


@pytest.mark.parametrize("argv, message", [
    (["-i", "eth0"], "PORT@IFACE"),
    (["-i", "1@a", "-i", "1@b", "--no-p4"], "two -i interfaces"),
    (["x.json", "--no-p4"], "not both"),
    (["--no-p4", "--", "--cpu-port", "600"], "0..511"),
    (["--no-p4", "-i", "255@a", "--", "--cpu-port", "255"], "also an -i"),
    (["--no-p4", "--", "--grpc-server-addr", "nowhere"], "HOST:PORT"),
    (["--no-p4", "--", "--bogus"], "unknown target option"),
])
def test_bad_command_lines_fail_at_parse_time(argv, message):
    proc = subprocess.run([sys.executable, "-m", "netweft.emulation.process.netweft_switch", *argv],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_a_missing_device_config_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "netweft.emulation.process.netweft_switch",
                           "/nonexistent/x.json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "netweft-switch: error: /nonexistent/x.json: No such file or directory"]


def test_a_missing_interface_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "netweft.emulation.process.netweft_switch",
                           "--no-p4", "-i", "1@nw-no-such-if"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "netweft-switch: error: -i 1@nw-no-such-if: no interface nw-no-such-if in this network "
        "namespace (ip link shows the names)"]


def test_p4runtime_shell_drives_a_switch_process():
    from p4runtime_sh import shell as sh
    args = [str(PROGRAM), "--thrift-port", "9090", "--", "--grpc-server-addr", "127.0.0.1:0",
            "--cpu-port", "255"]
    with running_switch(args) as (proc, target):
        sh.setup(device_id=0, grpc_addr=target, election_id=(0, 1), verbose=False)
        try:
            te = sh.TableEntry("I.route")(action="forward")
            te.match["hdr.ethernet.dst"] = "00:00:00:00:00:0b"
            te.action["port"] = "3"
            te.insert()
            sh.MulticastGroupEntry(3).add(1).add(2).insert()
            (back,) = sh.TableEntry("I.route").read()
            assert back.action["port"].value == b"\x03"
            assert [r.egress_port for r in next(sh.MulticastGroupEntry(3).read()).replicas] \
                == [1, 2]
        finally:
            sh.teardown()
    assert "no Thrift server" in proc.stderr.read()


def test_the_grpc_named_command_is_installed():
    """``netweft-switch-grpc`` (the tutorials' BMV2_SWITCH_EXE) is on PATH beside the
    interpreter and is netweft-switch: same parser, same one-line errors."""
    from pathlib import Path

    exe = Path(sys.executable).parent / "netweft-switch-grpc"
    assert exe.exists(), "pip install -e . installs the console script"
    proc = subprocess.run([str(exe), "/nonexistent/x.json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert "/nonexistent/x.json: No such file or directory" in proc.stderr
