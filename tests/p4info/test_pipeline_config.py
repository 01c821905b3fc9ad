"""netweft-p4c's two outputs drive a P4Runtime server as p4c's drive BMv2: p4runtime-
shell sends the P4Info and the device config file in SetForwardingPipelineConfig,
the server loads the program with load_device_config, and entries named after the
P4Info reach the switch."""

import pytest

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.p4.compiler.device_config import load_device_config
from netweft.p4.programs import program
from netweft.testbed.commands.compile import p4c_main


@pytest.fixture
def compiled(tmp_path):
    p4info, config = tmp_path / "basic.p4info.txtpb", tmp_path / "basic.json"
    assert p4c_main(["--p4v", "16", "--p4runtime-files", str(p4info), "-o", str(config),
                     str(program("basic_forward"))]) == 0
    return p4info, config


@pytest.fixture
def device():
    dev = Device(load_device_config, device_id=1)
    server = P4RuntimeServer(dev, "127.0.0.1:0").start()
    try:
        yield dev, server.target
    finally:
        server.stop(0)


@pytest.mark.slow
def test_shell_installs_the_compiled_pipeline_and_an_entry(compiled, device):
    from p4runtime_sh import shell as sh
    dev, target = device
    p4info, config = compiled
    sh.setup(device_id=1, grpc_addr=target, election_id=(0, 1), verbose=False,
             config=sh.FwdPipeConfig(str(p4info), str(config)))
    try:
        te = sh.TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.ipv4_forward")
        te.match["hdr.ipv4.dstAddr"] = "10.0.1.0/24"
        te.action["dstAddr"] = "00:00:00:00:01:01"
        te.action["port"] = "1"
        te.insert()
        read = list(sh.TableEntry("MyIngress.ipv4_lpm").read())
        assert len(read) == 1
    finally:
        sh.teardown()
    assert len(dev.switch.table_entries("MyIngress.ipv4_lpm")) == 1
