"""The aggregation controller against an in-process P4Runtime server running
aggregation.p4: two jobs configured over gRPC, aggregated frames, counters read
back, refused configurations, removal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.server import P4RuntimeServer
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.programs import program as shipped_program
from netweft.testbed.control.aggregation.controller import (
    FIRST_GROUP,
    AggregationConfigError,
    AggregationController,
    AggregationJob,
    InstalledJob,
    JobWorker,
)
from netweft.transport.collectives.aggregation import layer as agg

SERVICE = "10.0.0.254"
K = agg.AGG_LANES


def _no_loader(data: bytes):
    raise ValueError("test devices load their program directly")


@pytest.fixture(scope="module")
def aggregation_program():
    return compile_p4(str(shipped_program("aggregation")))


@pytest.fixture
def served(aggregation_program):
    """(device, gRPC target) of an aggregation.p4 switch served over P4Runtime."""
    device = Device(_no_loader, device_id=0)
    device.install(build_p4info(aggregation_program), b"",
                   switch=SoftSwitch(aggregation_program))
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    try:
        yield device, server.target
    finally:
        server.stop(0)


def job_of(job_id: int, n: int, base: int, size: int, first_port: int) -> AggregationJob:
    return AggregationJob(job_id, SERVICE, base, size, [
        JobWorker(w, first_port + w, f"02:00:00:00:{job_id:02x}:{w:02x}",
                  f"10.{job_id}.0.{w + 1}", 40000 + w) for w in range(n)])


def frame(job: AggregationJob, w: JobWorker, slot: int, value: int) -> bytes:
    return bytes(Ether(dst="02:00:00:00:00:fe", src=w.mac) / IP(src=w.address, dst=SERVICE)
                 / UDP(sport=w.udp_port, dport=agg.AGG_UDP_PORT)
                 / agg.Aggregation(job_id=job.job_id, slot=slot, worker_id=w.worker_id,
                                   lanes=[value] * K))


def test_two_jobs_configured_over_p4runtime_aggregate(served):
    device, target = served
    job1, job2 = job_of(1, 4, base=0, size=16, first_port=1), job_of(2, 8, 16, 32, 10)
    with AggregationController.connect("s1", target) as ctl:
        assert ctl.slots == 1024
        ctl.add_job(job1)
        ctl.add_job(job2)
        assert ctl.jobs() == [InstalledJob(1, SERVICE, 0, 16, 4, FIRST_GROUP + 1),
                              InstalledJob(2, SERVICE, 16, 32, 8, FIRST_GROUP + 2)]
        for job in (job1, job2):
            out = []
            for w in job.workers:
                out = device.process(w.port, frame(job, w, 3, w.worker_id + 1))
            n = len(job.workers)
            assert sorted(port for port, _ in out) == [w.port for w in job.workers]
            for port, data in out:
                pkt = Ether(data)
                w = next(w for w in job.workers if w.port == port)
                assert (pkt[IP].dst, pkt[UDP].dport, pkt[Ether].dst) == (w.address, w.udp_port,
                                                                         w.mac)
                assert pkt[agg.Aggregation].lanes == [n * (n + 1) // 2] * K
        events = ctl.events()
        assert events["contribution"] == 12 and events["result"] == 2
        assert events["malformed"] == 0


def test_add_job_clears_the_range_left_by_an_earlier_job(served):
    device, target = served
    old = job_of(1, 2, base=4, size=2, first_port=1)
    with AggregationController.connect("s1", target) as ctl:
        ctl.add_job(old)
        w0 = old.workers[0]
        device.process(w0.port, frame(old, w0, 1, 5))  # half a slot, then the job goes
        ctl.remove_job(old)
        assert ctl.jobs() == []
        new = job_of(3, 2, base=5, size=1, first_port=1)  # cell 5 was old's slot 1
        ctl.add_job(new)
        out = []
        for w in new.workers:
            out = device.process(w.port, frame(new, w, 0, 1))
        assert len(out) == 2
        assert Ether(out[0][1])[agg.Aggregation].lanes == [2] * K


def test_refused_configurations_name_the_cause(served):
    _, target = served
    with AggregationController.connect("s1", target) as ctl:
        ctl.add_job(job_of(1, 4, base=0, size=16, first_port=1))
        with pytest.raises(AggregationConfigError, match="overlap job 1's 0..15"):
            ctl.add_job(job_of(2, 2, base=8, size=16, first_port=10))
        with pytest.raises(AggregationConfigError, match="exists"):
            ctl.add_job(job_of(1, 2, base=100, size=1, first_port=10))
        with pytest.raises(AggregationConfigError, match="pool of 1024 slots"):
            ctl.add_job(job_of(2, 2, base=1000, size=100, first_port=10))
        with pytest.raises(AggregationConfigError, match="multicast group"):
            ctl.add_job(AggregationJob(5, SERVICE, 200, 1, job_of(5, 2, 0, 1, 1).workers,
                                       multicast_group=FIRST_GROUP + 1))
        with pytest.raises(AggregationConfigError, match="to_worker.*mac"):
            ctl.add_job(AggregationJob(6, SERVICE, 300, 1,
                                       [JobWorker(0, 1, "not a mac", "10.0.0.1", 1)]))
        assert [j.job_id for j in ctl.jobs()] == [1]


def test_jobs_that_no_switch_can_take_are_refused_before_sending():
    worker = JobWorker(0, 1, "02:00:00:00:00:01", "10.0.0.1", 40000)
    with pytest.raises(AggregationConfigError, match="1..32"):
        AggregationJob(1, SERVICE, 0, 1, [])
    with pytest.raises(AggregationConfigError, match="1..32"):
        AggregationJob(1, SERVICE, 0, 1, [JobWorker(i, 1, worker.mac, worker.address, 1)
                                          for i in range(33)])
    with pytest.raises(AggregationConfigError, match="0..1, each once"):
        AggregationJob(1, SERVICE, 0, 1, [worker, worker])
    with pytest.raises(AggregationConfigError, match="not an IPv4"):
        AggregationJob(1, "fd00::1", 0, 1, [worker])
    with pytest.raises(AggregationConfigError, match="size >= 1"):
        AggregationJob(1, SERVICE, 0, 0, [worker])


def test_a_refused_job_leaves_nothing_behind(served):
    _, target = served
    job2 = job_of(2, 2, base=8, size=4, first_port=5)
    with AggregationController.connect("s1", target) as ctl:
        ctl.add_job(job_of(1, 2, base=0, size=4, first_port=1))
        # worker 1's agg_workers row of job 2 is already there: the switch refuses it
        row = ctl.encoder.entity(job2.writes()[2])
        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=row)
        assert ctl.session.write([update]) == []
        with pytest.raises(AggregationConfigError,
                           match=r"refused job 2: table agg_workers .*ALREADY_EXISTS"):
            ctl.add_job(job2)
        assert [j.job_id for j in ctl.jobs()] == [1]
        # what went in before the refusal went out again; the row held before stays
        group = ctl.encoder.entity(job2.writes()[0])
        assert ctl.session.read(group) == []
        assert ctl.session.read(ctl.encoder.entity(job2.writes()[1])) == []
        assert len(ctl.session.read(row)) == 1


def test_fabric_and_aggregation_controllers_share_a_switch():
    """fabric_aggregation.p4 on a leaf-spine: the fabric controller routes, the
    aggregation controller adds a job on leaf1, and re-running the fabric controller
    leaves the job's multicast group (0x8000 and up are the aggregation's) in place."""
    from netweft.testbed.control.fabric.controller import configure_fabric
    from netweft.testbed.control.fabric.graph import graph_from_topology
    from netweft.testbed.topology import load_topology

    topology = Path(__file__).resolve().parents[2] / "testbed" / "topologies" / "leaf-spine.yaml"
    graph = graph_from_topology(load_topology(topology))
    program = compile_p4(str(shipped_program("fabric_aggregation")))
    p4info = build_p4info(program)
    devices, servers = {}, []
    try:
        for name in graph.switches:
            device = Device(_no_loader, device_id=0)
            device.install(p4info, b"", switch=SoftSwitch(program))
            servers.append(P4RuntimeServer(device, "127.0.0.1:0").start())
            devices[name] = (device, servers[-1].target)
        addresses = {name: target for name, (_, target) in devices.items()}
        configure_fabric(graph, addresses)
        on_leaf1 = graph.hosts_on("leaf1")
        job = AggregationJob(1, SERVICE, 0, 4, [
            JobWorker(w, h.port, h.mac, str(h.ip), 40000) for w, h in enumerate(on_leaf1)])
        leaf1 = devices["leaf1"][0]
        with AggregationController.connect("leaf1", addresses["leaf1"], role="aggregation") as ctl:
            ctl.add_job(job)
            configure_fabric(graph, addresses)  # again, after the job
            assert [j.job_id for j in ctl.jobs()] == [1]
            out = []
            for w in job.workers:
                out = leaf1.process(w.port, frame(job, w, 0, 3))
            assert sorted(port for port, _ in out) == sorted(w.port for w in job.workers)
            assert ctl.events()["result"] == 1
    finally:
        for server in servers:
            server.stop(0)


def test_the_fabric_refuses_multicast_groups_in_the_aggregation_range():
    from netweft.testbed.control.fabric.graph import graph_from_topology
    from netweft.testbed.control.fabric.multicast import (
        MulticastError,
        MulticastGroupSpec,
        compute_tree,
    )
    from netweft.testbed.topology import load_topology

    topology = Path(__file__).resolve().parents[2] / "testbed" / "topologies" / "leaf-spine.yaml"
    graph = graph_from_topology(load_topology(topology))
    hosts = sorted(graph.hosts)[:2]
    assert compute_tree(graph, MulticastGroupSpec(0x7FFF, "239.1.1.1", tuple(hosts), None))
    with pytest.raises(MulticastError, match="1..32767"):
        compute_tree(graph, MulticastGroupSpec(FIRST_GROUP, "239.1.1.1", tuple(hosts), None))


def test_remove_by_id_reads_the_job_back(served):
    device, target = served
    keep, drop = job_of(1, 2, 0, 4, 1), job_of(2, 3, 4, 4, 5)
    with AggregationController.connect("s1", target) as ctl:
        ctl.add_job(keep)
        ctl.add_job(drop)
        removed = ctl.remove(2, SERVICE)
        assert (removed.job_id, removed.workers) == (2, 3)
        assert [j.job_id for j in ctl.jobs()] == [1]
        assert ctl.session.read(ctl.encoder.entity(drop.writes()[1])) == []
        assert ctl.session.read(ctl.encoder.entity(drop.writes()[0])) == []
        assert len(ctl.session.read(ctl.encoder.entity(keep.writes()[1]))) == 1
        with pytest.raises(AggregationConfigError, match="no job 2 at 10.0.0.254"):
            ctl.remove(2, SERVICE)
        out = []
        for w in keep.workers:  # job 1 still aggregates
            out = device.process(w.port, frame(keep, w, 0, 1))
        assert len(out) == 2


def test_jobs_are_admitted_side_by_side_until_the_slots_run_out(served):
    from netweft.testbed.control.aggregation.admission import AdmissionRefused

    device, target = served
    with AggregationController.connect("s1", target) as ctl:
        workers = job_of(1, 2, 0, 1, 1).workers
        first = ctl.admit(1, SERVICE, workers, 600)
        second = ctl.admit(2, SERVICE, workers, 400)
        assert (first.base, second.base) == (0, 600)
        with pytest.raises(AdmissionRefused, match="no 100 free consecutive slots: "
                                                   "1000 of 1024 in use"):
            ctl.admit(3, SERVICE, workers, 100)
        assert [j.job_id for j in ctl.jobs()] == [1, 2]  # the refusal wrote nothing
        ctl.remove(1, SERVICE)  # torn down: its range goes back to the pool
        third = ctl.admit(3, SERVICE, workers, 100)
        assert third.base == 0
        out = []
        for w in third.workers:
            out = device.process(w.port, frame(third, w, 5, 2))
        assert len(out) == 2


def test_a_level_of_a_hierarchical_job_over_p4runtime(served):
    from netweft.testbed.control.aggregation.job import JobParent

    device, target = served
    level = AggregationJob(7, SERVICE, 0, 4, job_of(7, 2, 0, 4, 1).workers,
                           parent=JobParent(9, "02:00:00:00:09:09", 1))
    with AggregationController.connect("s1", target) as ctl:
        ctl.add_job(level)
        out = []
        for w in level.workers:
            out = device.process(w.port, frame(level, w, 2, 3))
        # the partial sum goes up to the parent as one contribution of child 1
        assert [port for port, _ in out] == [9]
        up = Ether(out[0][1])
        assert up.dst == "02:00:00:00:09:09" and up[IP].dst == SERVICE
        assert up[agg.Aggregation].worker_id == 1 and up[agg.Aggregation].flags == 0
        assert up[agg.Aggregation].lanes == [6] * K
        assert ctl.events()["partial"] == 1
        ctl.remove(7, SERVICE)
        assert ctl.jobs() == []
        assert ctl.session.read(ctl.encoder.entity(level.writes()[-2])) == []  # agg_parents


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", "aggregation", *argv],
                          capture_output=True, text=True, timeout=120)


def test_command_line_adds_shows_and_removes_a_job(served):
    device, target = served
    topology = Path(__file__).resolve().parents[2] / "testbed" / "topologies" / "leaf-spine.yaml"
    where = ["--switch", "leaf1", "--topology", str(topology), "--address", target]
    add = _cli("add", *where, "--job", "3", "--service", SERVICE, "--slots", "8:4",
               "--workers", "h1,h2", "--udp-port", "41000")
    assert add.returncode == 0, add.stderr
    assert "job 3 at 10.0.0.254: slots 8..11, multicast group 32771" in add.stdout
    assert "worker 1: h2 10.0.1.2:41000 via port 2 (08:00:00:00:01:22)" in add.stdout
    job = AggregationJob(3, SERVICE, 8, 4, [
        JobWorker(0, 1, "08:00:00:00:01:11", "10.0.1.1", 41000),
        JobWorker(1, 2, "08:00:00:00:01:22", "10.0.1.2", 41000)])
    out = []
    for w in job.workers:
        out = device.process(w.port, frame(job, w, 1, 2))
    assert sorted((port, Ether(data)[UDP].dport) for port, data in out) == \
        [(1, 41000), (2, 41000)]
    show = _cli("show", *where)
    assert show.returncode == 0, show.stderr
    assert "job 3 at 10.0.0.254: slots 8..11, 2 workers, multicast group 32771" in show.stdout
    assert "contribution 2, result 1" in show.stdout
    again = _cli("add", *where, "--job", "4", "--service", SERVICE, "--slots", "10:4",
                 "--workers", "h1,h2")
    assert again.returncode == 1 and "overlap" in again.stderr
    assert "Traceback" not in again.stderr and len(again.stderr.strip().splitlines()) == 1
    removed = _cli("remove", *where, "--job", "3", "--service", SERVICE)
    assert removed.returncode == 0, removed.stderr
    assert "0 job(s)" in _cli("show", *where).stdout


def test_command_line_refuses_bad_options_at_parse_time():
    bad = _cli("add", "--switch", "s1", "--job", "1", "--service", "10.0.0.1",
               "--slots", "4", "--workers", "h1")
    assert bad.returncode == 2 and "BASE:SIZE" in bad.stderr
    unreachable = _cli("show", "--switch", "s1", "--address", "unix:/nonexistent/agg.grpc")
    assert unreachable.returncode == 1 and "Traceback" not in unreachable.stderr
