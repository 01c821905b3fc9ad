"""``bench switch --veth`` and BMv2: when it joins the switches under test, how it is
started, how a start that fails is reported, and its column in the summary.
No BMv2 needed: the tools' presence is stubbed and no switch is run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from netweft.testbed.bench.bmv2_switch import BMV2_NAME, Bmv2Launch, bmv2_switches
from netweft.testbed.bench.switch_veth import (
    BenchLinks,
    BenchResult,
    Point,
    SwitchUnderTest,
    running,
    summary,
)

LINKS = BenchLinks("gen", "p1", "p2", "sink")


def on_path(*present: str):
    return lambda tool: f"/opt/bmv2/bin/{tool}" if tool in present else None


def test_bmv2_joins_when_both_tools_are_on_path():
    found, skipped = bmv2_switches(on_path("p4c-bm2-ss", "simple_switch_grpc"))
    assert [s.name for s in found] == [BMV2_NAME] and skipped is None
    assert found[0].ready is not None


@pytest.mark.parametrize("present, named", [
    (("simple_switch_grpc",), "p4c-bm2-ss not on PATH"),
    (("p4c-bm2-ss",), "simple_switch_grpc not on PATH"),
    ((), "p4c-bm2-ss, simple_switch_grpc not on PATH"),
])
def test_bmv2_is_skipped_naming_the_missing_tools(present, named):
    found, skipped = bmv2_switches(on_path(*present))
    assert found == []
    assert skipped == f"{BMV2_NAME}: skipped ({named})"


def test_simple_switch_grpc_gets_the_bench_ports_and_ports_of_its_own(tmp_path):
    launch = Bmv2Launch(Path("/p4/basic_forward.p4"))
    argv = launch.argv(LINKS, tmp_path)
    assert argv[0] == "simple_switch_grpc"
    pairs = list(zip(argv, argv[1:], strict=False))
    assert ("-i", "1@p1") in pairs and ("-i", "2@p2") in pairs
    assert ("--thrift-port", str(launch.thrift_port)) in pairs
    assert ("--notifications-addr", f"ipc://{tmp_path}/bmv2-notifications.ipc") in pairs
    assert argv[-2:] == ["--grpc-server-addr", f"127.0.0.1:{launch.grpc_port}"]
    assert launch.grpc_port != launch.thrift_port and "--no-p4" in argv


def test_a_switch_whose_ready_hook_fails_is_stopped_and_reported():
    started = []

    def ready(proc, tmp, timeout):
        started.append(proc)
        raise RuntimeError("p4c-bm2-ss refused basic_forward.p4: boom")

    sleeper = SwitchUnderTest("sleeper", lambda _l, _t: [
        sys.executable, "-c", "import time; time.sleep(60)"], ready=ready)
    with pytest.raises(RuntimeError, match="sleeper did not start: p4c-bm2-ss refused"):
        with running(sleeper, LINKS):
            pytest.fail("the switch was reported ready")
    assert started[0].poll() is not None


def test_a_missing_switch_command_is_reported_as_not_started():
    absent = SwitchUnderTest("absent", lambda _l, _t: ["/nonexistent/simple_switch_grpc"])
    with pytest.raises(RuntimeError, match="absent did not start"):
        with running(absent, LINKS):
            pass


def _point(switch: str, delivered: float, cpu: float) -> Point:
    return Point(switch, 64, None, 1000, delivered, 900, delivered, 0.0, 10.0, 20.0, cpu)


def test_the_summary_gives_ratios_to_bmv2_when_it_ran():
    names = ("fwd", "native", BMV2_NAME, "Python sw")
    switches = [SwitchUnderTest(name, lambda *_: []) for name in names]
    result = BenchResult([_point("fwd", 200e3, 0.25), _point("native", 150e3, 0.3),
                          _point(BMV2_NAME, 10e3, 0.5), _point("Python sw", 5e3, 0.5)])
    lines = summary(result, switches, [64])
    # delivered: native 150k = 15x BMv2's 10k; per CPU-s fwd 800k, native 500k, BMv2 20k
    assert "30.0x Python   15.0x BMv2" in lines[1]
    assert "per CPU-s    500k   62.5% of forwarder   50.0x Python   25.0x BMv2" in lines[1]
    assert "  1.0x BMv2" in lines[2]
    no_bmv2 = summary(BenchResult([_point("fwd", 200e3, 0.4)]), switches[:1], [64])
    assert "BMv2" not in no_bmv2[0]


def test_runtime_files_become_p4runtime_writes():
    from netweft.testbed.bench.bmv2_switch import runtime_writes
    from netweft.testbed.bench.switch_veth import NEXT_HOP_MAC, basic_forward_runtime
    from netweft.testbed.control.entries import Lpm, MulticastWrite, TableWrite

    [route] = runtime_writes(basic_forward_runtime())
    assert route == TableWrite("MyIngress.ipv4_lpm", (("hdr.ipv4.dstAddr", Lpm("10.0.0.0", 8)),),
                               "MyIngress.ipv4_forward", (("dstAddr", NEXT_HOP_MAC), ("port", 2)))
    job, group = runtime_writes({
        "table_entries": [{"table": "agg_jobs", "match": {"addr": "10.0.9.1", "job": [1]},
                           "action_name": "set_job", "action_params": {"size": 4}}],
        "multicast_group_entries": [{"multicast_group_id": 1, "replicas": [
            {"egress_port": 2, "instance": 0}, {"egress_port": 3, "instance": 1}]}]})
    assert job.match == (("addr", "10.0.9.1"), ("job", 1)) and job.params == (("size", 4),)
    assert group == MulticastWrite(1, ((2, 0), (3, 1)))
    with pytest.raises(ValueError, match="default actions"):
        runtime_writes({"table_entries": [{"table": "t", "default_action": True,
                                           "action_name": "drop"}]})


def test_veth_programs_put_bmv2_beside_them_with_the_same_entries():
    from netweft.testbed.bench.bmv2_switch import bmv2_program_switch, runtime_writes
    from netweft.testbed.bench.switch_veth import aggregation_bench

    bench = aggregation_bench()
    switch = bmv2_program_switch(bench)
    assert switch.name == "BMv2 simple_switch_grpc, aggregation.p4"
    launch = switch.ready.__self__
    assert launch.program.name == "aggregation.p4"
    assert launch.writes == runtime_writes(bench.runtime)
    assert any(type(w).__name__ == "MulticastWrite" for w in launch.writes)
