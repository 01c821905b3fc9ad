"""A tutorials-shaped exercise run as the p4lang tutorials run theirs, on a kernel
without netem: netweft-p4c, Mininet (Debian's) with TCLink links, netweft-switch-grpc
chosen by its name, P4Runtime programming from sX-runtime.json, pingall; then the
flow cache: PacketIn/PacketOut through the CPU port and idle timeouts end to end."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.netns, pytest.mark.slow]
mininet = pytest.importorskip("mininet")    # a dependency of netweft: always there
BIN = Path(sys.executable).parent
EXERCISE = Path(__file__).parent / "exercise"
IDLE_TIMEOUT_NS = 2 * 10**9
H71, H72 = bytes([10, 0, 1, 1]), bytes([10, 0, 2, 2])


def _compile(build: Path) -> tuple[Path, Path]:
    p4info, config = build / "flowcache.p4.p4info.txtpb", build / "flowcache.json"
    done = subprocess.run([str(BIN / "netweft-p4c"), "--p4v", "16", "--p4runtime-files",
                           str(p4info), "-o", str(config), str(EXERCISE / "flowcache.p4")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return p4info, config


def test_the_switch_class_is_chosen_by_the_executables_name():
    from tests.tutorials.exercise_runner import P4RuntimeSwitch, ThriftSwitch, switch_class
    assert switch_class(str(BIN / "netweft-switch-grpc")) is P4RuntimeSwitch
    assert switch_class(str(BIN / "netweft-switch")) is ThriftSwitch


def test_exercise_runs_as_run_exercise_runs_it(tmp_path):
    from tests.tutorials.exercise_runner import Exercise
    from tests.tutorials.flow_cache_controller import FlowCacheController

    build = tmp_path / "build"
    build.mkdir()
    p4info, config = _compile(build)
    exercise = Exercise(EXERCISE, str(BIN / "netweft-switch-grpc"), config, p4info, tmp_path)
    controllers: list[FlowCacheController] = []
    try:
        net = exercise.build()
        exercise.start()
        # TCLink: without netem the delay is refused, the rate (htb) is set
        qdiscs = net.get("s71").cmd("tc qdisc show dev s71-eth1")
        assert "htb" in qdiscs, qdiscs
        # programmed from sX-runtime.json, but every flow is uncached: to the CPU
        # port, where no controller listens yet, so nothing gets through
        h71, h72 = net.get("h71"), net.get("h72")
        assert "100% packet loss" in h71.cmd("ping -c 1 -W 1 10.0.2.2")
        controllers = [FlowCacheController(exercise.address(s), exercise.device_ids[s],
                                           exercise.p4info, IDLE_TIMEOUT_NS)
                       for s in ("s71", "s72")]
        assert net.pingAll(timeout="2") == 0.0
        s71 = controllers[0]
        assert s71.packet_ins >= 1 and (H71, H72) in s71.cached and not s71.errors
        # hit every 0.2 s for three timeouts: never reported idle meanwhile
        started = time.monotonic()
        ping = h71.cmd("ping -c 30 -i 0.2 -W 2 10.0.2.2")
        stopped = time.monotonic()
        assert " 0% packet loss" in ping, ping
        assert not [flows for when, flows in s71.idle
                    if started + IDLE_TIMEOUT_NS / 1e9 < when < stopped and (H71, H72) in flows]
        # then idle: reported, and the controller deletes the entry
        deadline = time.monotonic() + 60
        while (H71, H72) not in s71.idle_flows() and time.monotonic() < deadline:
            time.sleep(0.1)
        reported = [when for when, flows in s71.idle if (H71, H72) in flows and when > stopped]
        assert reported, s71.idle
        assert reported[0] - stopped >= IDLE_TIMEOUT_NS / 1e9 * 0.9
        for _ in range(100):
            if not s71.controller.read_table("MyIngress.flow_cache"):
                break
            time.sleep(0.1)
        assert s71.controller.read_table("MyIngress.flow_cache") == []
        assert not s71.errors
        # and a new packet of the flow goes to the controller again
        before = s71.packet_ins
        assert " 0% packet loss" in h72.cmd("ping -c 1 -W 2 10.0.1.1")
        assert " 0% packet loss" in h71.cmd("ping -c 1 -W 2 10.0.2.2")
        assert s71.packet_ins > before
    finally:
        for c in controllers:
            c.close()
        exercise.stop()
        for left in Path("/sys/class/net").glob("s7[12]-eth*"):     # a half-built network
            subprocess.run(["ip", "link", "del", left.name], check=False)
    logs = (tmp_path / "logs" / "s71.log").read_text()
    assert "P4Runtime server listening" in logs
    assert any((tmp_path / "pcaps").glob("s71-eth1_in.pcap"))
