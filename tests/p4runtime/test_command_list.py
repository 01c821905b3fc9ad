"""simple_switch_CLI command lists: in process, from a file and from the prompt of netweft cli."""

from __future__ import annotations

import subprocess
import sys

import pytest

from netweft.emulation.p4runtime.command_list import CommandError, CommandSession, DeviceTarget
from tests.p4runtime.conftest import PROGRAM
from tests.p4runtime.frames import frame
from tests.p4runtime.switch_runner import running_switch

A, B = "00:00:00:00:00:0a", "00:00:00:00:00:0b"


@pytest.fixture
def session(served, p4info):
    return CommandSession(p4info, DeviceTarget(served.device))


def _ports(outputs):
    return sorted(p for p, _ in outputs)


def test_table_commands(session, served):
    assert session.execute(f"table_add route forward {B} => 3") == \
        "Entry has been added with handle 0"
    assert _ports(served.device.process(1, frame(B, A))) == [3]
    session.execute("table_modify I.route forward 0 4")
    assert _ports(served.device.process(1, frame(B, A))) == [4]
    session.execute("table_add acl acl_forward 0x0800&&&0xff00 2 => 7 10")
    assert _ports(served.device.process(2, frame(A, B))) == [7]
    assert "priority 10" in session.execute("table_dump acl")
    session.execute("table_delete route 0")
    session.execute("table_set_default route forward 9")
    assert _ports(served.device.process(1, frame(B, A))) == [9]
    session.execute("table_clear acl")
    assert session.execute("table_dump acl") == "TABLE I.acl"


def test_multicast_and_mirroring_commands(session, served):
    lines = ["mc_mgrp_create 1", "mc_node_create 0 1 2", "mc_node_create 5 3",
             "mc_node_associate 1 0", "mc_node_associate 1 1",
             "table_add route flood ff:ff:ff:ff:ff:ff => 1",
             "mirroring_add 4 6", "table_add mirror_by_src mirror 00:00:00:00:00:0c => 4"]
    out = session.run_lines(lines)
    assert "node was created with handle 1" in out
    assert _ports(served.device.process(4, frame("ff:ff:ff:ff:ff:ff", A))) == [1, 2, 3]
    assert _ports(served.device.process(4, frame(B, "00:00:00:00:00:0c"))) == [0, 6]
    session.execute("mc_node_dissociate 1 0")
    assert _ports(served.device.process(4, frame("ff:ff:ff:ff:ff:ff", A))) == [3]


def test_register_and_counter_commands(session, served):
    session.execute("register_write last_length 3 77")
    assert session.execute("register_read last_length 3") == "I.last_length[3]= 77"
    served.device.process(2, frame(B, A))
    assert session.execute("counter_read port_packets 2") == \
        "I.port_packets[2]=  BmCounterValue(packets=1, bytes=60)"
    session.execute("counter_reset port_packets")
    assert "packets=0" in session.execute("counter_read port_packets 2")


@pytest.mark.parametrize("line, message", [
    ("table_add nosuch forward 1 => 2", "unknown table 'nosuch'"),
    ("table_add route forward 1 => 2 3", "takes 1 parameter"),
    ("table_add route forward 0x1000000000000 => 2", "does not fit in 48 bits"),
    ("table_add acl acl_none 0x0800&&&0xffff 1 =>", "give the priority"),
    ("table_delete route 7", "no entry with handle 7"),
    ("frobnicate", "unknown command"),
    ("mc_node_associate 9 0", "not created in this session"),
])
def test_bad_commands_say_why(session, line, message):
    with pytest.raises(CommandError, match=message):
        session.execute(line)


def test_duplicate_entry_is_the_switch_refusal(session):
    session.execute(f"table_add route forward {B} => 3")
    with pytest.raises(CommandError, match="ALREADY_EXISTS"):
        session.execute(f"table_add route forward {B} => 4")


def test_netweft_cli_runs_a_file_and_the_prompt(tmp_path):
    commands = tmp_path / "s1-commands.txt"
    commands.write_text(f"# routes\ntable_add route forward {B} => 3\n"
                        "register_write last_length 1 5\n")
    args = [str(PROGRAM), "--", "--grpc-server-addr", "127.0.0.1:0"]
    with running_switch(args) as (_proc, target):
        cli = [sys.executable, "-m", "netweft.testbed.command_line", "cli", "--grpc-addr", target]
        done = subprocess.run(cli + [str(commands)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Entry has been added with handle 0" in done.stdout
        prompt = subprocess.run(cli, input="register_read last_length 1\ntable_dump route\n"
                                "table_add route nosuch 1 => 1\n", capture_output=True,
                                text=True, timeout=120)
        assert "I.last_length[1]= 5" in prompt.stdout
        assert "hdr.ethernet.dst=0x0b => I.forward 0x03" in prompt.stdout
        assert "Error: unknown action" in prompt.stdout
        bad = tmp_path / "bad.txt"
        bad.write_text("table_add route forward 1 => 1\ntable_add route forward 1 => 1\n")
        failed = subprocess.run(cli + [str(bad)], capture_output=True, text=True, timeout=120)
        assert failed.returncode == 1
        assert f"{bad}:2: ALREADY_EXISTS" in failed.stderr and "Traceback" not in failed.stderr


def test_netweft_cli_over_a_switch_process_control_socket(tmp_path):
    sock = tmp_path / "s1.sock"
    proc = subprocess.Popen([sys.executable, "-m", "netweft.emulation.process.switch_process",
                             "--program", str(PROGRAM), "--control", str(sock)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        commands = tmp_path / "cmds.txt"
        commands.write_text(f"table_add route forward {B} => 3\nmc_mgrp_create 2\n"
                            "mc_node_create 1 4 5\nmc_node_associate 2 0\n")
        cli = [sys.executable, "-m", "netweft.testbed.command_line", "cli", "--control", str(sock)]
        done = subprocess.run(cli + [str(commands)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Entry has been added with handle 0" in done.stdout
        prompt = subprocess.run(cli, input="table_dump route\ntable_delete route 0\n"
                                "table_dump route\ntable_delete route 0\n",
                                capture_output=True, text=True, timeout=120)
        assert "hdr.ethernet.dst=0x0b => I.forward 0x03" in prompt.stdout   # handles persist
        assert prompt.stdout.count("TABLE I.route") == 2
        assert "Error: table I.route: no entry with handle 0" in prompt.stdout
    finally:
        proc.terminate()
        proc.wait(timeout=30)
