"""build_switch: the one setup behind both switch commands (no sockets: the loop is not run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netweft.emulation.links.port_options import parse_link_option
from netweft.emulation.p4runtime.device import Device
from netweft.emulation.process.build import SwitchBuildError, SwitchSetup, build_switch
from netweft.emulation.switch import SoftSwitch
from netweft.p4.programs import program

RUNTIME = Path("docs/examples/s1-runtime.json")


def _runtime_entries(table: str) -> int:
    """Entries (default actions aside) the runtime file gives ``table``."""
    entries = json.loads(RUNTIME.read_text())["table_entries"]
    return sum(1 for e in entries if e["table"] == table and not e.get("default_action"))


def test_a_switch_from_a_source_with_its_runtime_file_and_link_settings(tmp_path):
    port, opts = parse_link_option("2:delay=5ms,queue=7")
    built = build_switch(SwitchSetup(program=program("basic_forward"), runtime=RUNTIME,
                                     port_options={port: opts}, priority_queues=2,
                                     log_file=tmp_path / "trace.log"))
    try:
        switch = built.target
        assert isinstance(switch, SoftSwitch) and built.device is None and built.server is None
        assert len(switch.table_entries("MyIngress.ipv4_lpm")) == _runtime_entries(
            "MyIngress.ipv4_lpm")
        assert switch.tm.queue_config(2, 1).depth_packets == 7
        assert switch.tm.link(2).config == opts.egress
        assert built.trace_out is not None and switch.trace is not None
    finally:
        built.close()
    assert built.trace_out is None


@pytest.mark.parametrize(("setup", "message"), [
    (SwitchSetup(program="p4/no_such_program.p4"), "no_such_program.p4"),
    (SwitchSetup(program="/nonexistent/prog.json"),
     "/nonexistent/prog.json: No such file or directory"),
    (SwitchSetup(log_file="/nonexistent/dir/trace.log"),
     "cannot write the log file /nonexistent/dir/trace.log: No such file or directory"),
    (SwitchSetup(program=program("basic_forward"), runtime="/nonexistent/rt.json"),
     "/nonexistent/rt.json"),
])
def test_what_cannot_be_built_is_one_message(setup, message):
    for name in ("program", "log_file"):
        if isinstance(getattr(setup, name), str):
            setattr(setup, name, Path(getattr(setup, name)))
    with pytest.raises(SwitchBuildError, match=message.replace(".", r"\.")):
        build_switch(setup)


def test_a_bad_program_names_its_line(tmp_path):
    bad = tmp_path / "bad.p4"
    bad.write_text("control C() { apply { x = 1; } }\n")
    with pytest.raises(SwitchBuildError, match=rf"{bad}:1:"):
        build_switch(SwitchSetup(program=bad))


def test_with_a_grpc_address_the_switch_sits_behind_a_p4runtime_device():
    built = build_switch(SwitchSetup(program=program("basic_forward"), runtime=RUNTIME,
                                     grpc_address="127.0.0.1:0", device_id=3, cpu_port=255))
    try:
        device = built.target
        assert isinstance(device, Device) and device is built.device
        assert device.device_id == 3 and device.cpu_port == 255
        assert len(device.switch.table_entries("MyIngress.ipv4_lpm")) == _runtime_entries(
            "MyIngress.ipv4_lpm")
        assert built.server is not None and not built.server.target.endswith(":0")
    finally:
        built.close()
    assert built.server is None


def test_without_a_program_the_device_waits_for_a_pipeline():
    built = build_switch(SwitchSetup(grpc_address="127.0.0.1:0"))
    try:
        assert isinstance(built.target, Device) and built.target.switch is None
    finally:
        built.close()
