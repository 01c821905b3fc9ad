"""Aggregation on an emulated testbed: a switch process runs aggregation.p4, the
aggregation controller configures a job over the process's P4Runtime socket, and
four hosts all-reduce float32 arrays through it over the kernel's UDP (the host
library's SwitchGroup); the sums match numpy's within the quantization bound.
Namespaces and processes are removed in finally."""

from __future__ import annotations

import subprocess
import sys
import uuid

import numpy as np
import pytest
from p4.v1 import p4runtime_pb2
from pyroute2 import netns

from netweft.testbed.control.aggregation.controller import (
    AggregationController,
    AggregationJob,
    JobWorker,
)
from netweft.testbed.topology import load_topology

pytestmark = [pytest.mark.netns, pytest.mark.slow]

SERVICE, SERVICE_MAC = "10.0.0.254", "02:00:00:00:00:fe"
NEIGH = f"ip neigh add {SERVICE} lladdr {SERVICE_MAC} dev eth0 nud permanent"
WORKERS = 4
ELEMENTS = 5000
TOPOLOGY = """
name: agg-testbed
defaults: {program: aggregation}
hosts:
%s
switches: {s1: {}}
links:
%s
"""
WORKER_SCRIPT = f"""
import sys
import numpy as np
from netweft.transport import SwitchGroup
w, n, out, ip = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
x = np.random.default_rng(w).standard_normal({ELEMENTS}).astype(np.float32)
with SwitchGroup("{SERVICE}", 1, w, n, bind=(ip, 40000), window=16) as group:
    np.save(out, group.allreduce(x, deadline=90))
"""


def _topology() -> str:
    hosts = "\n".join(f"  h{w + 1}: {{ip: 10.0.1.{w + 1}/16, commands: [\"{NEIGH}\"]}}"
                      for w in range(WORKERS))
    links = "\n".join(f"  - [h{w + 1}, s1-p{w + 1}]" for w in range(WORKERS))
    return TOPOLOGY % (hosts, links)


def test_hosts_allreduce_through_a_switch_process_configured_over_p4runtime(tmp_path):
    topo = tmp_path / "agg.yaml"
    topo.write_text(_topology())
    net = load_topology(topo).build(tmp_path / "run", pcaps=False)
    procs: list[subprocess.Popen] = []
    try:
        net.start()
        switch = net.switches[0]
        hosts = [net.host(f"h{w + 1}") for w in range(WORKERS)]
        job = AggregationJob(1, SERVICE, base=0, size=16, workers=[
            JobWorker(w, port=w + 1, mac=h.mac, address=h.ip_address, udp_port=40000)
            for w, h in enumerate(hosts)])
        with AggregationController.connect("s1", switch.grpc_address) as ctl:
            ctl.add_job(job)
            script = tmp_path / "worker.py"
            script.write_text(WORKER_SCRIPT)
            for w, host in enumerate(hosts):
                procs.append(host.popen(sys.executable, str(script), str(w), str(WORKERS),
                                        str(tmp_path / f"r{w}.npy"), host.ip_address,
                                        stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True))
            for w, proc in enumerate(procs):
                _, err = proc.communicate(timeout=240)
                assert proc.returncode == 0, f"worker {w}: {err}"
            events = ctl.events()
        exact = sum(np.random.default_rng(w).standard_normal(ELEMENTS).astype(np.float32)
                    .astype(np.float64) for w in range(WORKERS))
        blocks = -(-ELEMENTS // 64)
        for w in range(WORKERS):
            result = np.load(tmp_path / f"r{w}.npy")
            # 4 workers: 28 value bits per element, error far below 1e-6 of the block's peak
            assert np.allclose(result, exact, rtol=1e-5, atol=1e-5)
        # every block summed once (the host library may add rounds of its own, e.g. to
        # agree on exponents), each from all four workers
        assert events["result"] >= blocks
        assert events["contribution"] == WORKERS * events["result"]
        assert events["malformed"] == 0 and events["bad_worker"] == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        net.stop()
    assert not [n for n in netns.listnetns() if n.startswith(net.prefix + "-")]


LEAF_SPINE = f"""
name: NAME
defaults: {{program: fabric_aggregation}}
hosts:
  h1: {{ip: 10.0.1.1/16, commands: ["{NEIGH}"]}}
  h2: {{ip: 10.0.1.2/16, commands: ["{NEIGH}"]}}
  h3: {{ip: 10.0.2.3/16, commands: ["{NEIGH}"]}}
switches: {{leaf1: {{}}, leaf2: {{}}, spine1: {{}}, spine2: {{}}}}
links:
  - [h1, leaf1-p1]
  - [h2, leaf1-p2]
  - [h3, leaf2-p1]
  - [leaf1-p3, spine1-p1]
  - [leaf1-p4, spine2-p1]
  - [leaf2-p3, spine1-p2]
  - [leaf2-p4, spine2-p2]
"""


def test_netweft_up_and_the_aggregation_command_on_a_leaf_spine(tmp_path):
    """netweft up runs fabric_aggregation.p4 on a leaf-spine, netweft fabric install
    routes it; netweft aggregation add makes leaf1 aggregate for h1, h2 (on leaf1) and h3
    (behind the spines); the hosts all-reduce through it."""
    from netweft.testbed import up_registry
    from netweft.testbed.control.entity_encoder import EntityEncoder
    from netweft.testbed.control.entries import Lpm, TableWrite
    from netweft.testbed.control.p4runtime_session import SwitchSession

    name = f"agg-{uuid.uuid4().hex[:8]}"
    topo = tmp_path / "leaf-spine.yaml"
    topo.write_text(LEAF_SPINE.replace("NAME", name))
    script = tmp_path / "worker.py"
    script.write_text(WORKER_SCRIPT)
    netweft = [sys.executable, "-m", "netweft.testbed.command_line"]
    run_dir, procs, prefix = tmp_path / "run", [], None
    up = subprocess.run([*netweft, "up", str(topo), "--detach", "--out", str(run_dir),
                         "--no-pcap"], capture_output=True, text=True, timeout=300)
    try:
        assert up.returncode == 0, up.stderr
        record = up_registry.find(name)
        prefix = record.prefix
        # netweft up configures fabric.p4 switches only; netweft fabric install routes these
        install = subprocess.run([*netweft, "fabric", "install", "--testbed", name],
                                 capture_output=True, text=True, timeout=120)
        assert install.returncode == 0, install.stderr
        # h3's contributions reach leaf2, which routes the service address to spine1, and
        # spine1 to leaf1 (the fabric controller routes hosts only)
        for switch, port in (("leaf2", 3), ("spine1", 1)):
            with SwitchSession(switch, record.grpc_addresses()[switch], role="test") as s:
                write = TableWrite("ipv4_routes", (("ipv4.dstAddr", Lpm(SERVICE, 32)),),
                                   "route_to_port", (("port", port),))
                update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT,
                                              entity=EntityEncoder(s.p4info()).entity(write))
                assert s.write([update]) == []
        add = subprocess.run([*netweft, "aggregation", "add", "--testbed", name, "--switch",
                              "leaf1", "--job", "1", "--service", SERVICE, "--slots", "0:16",
                              "--workers", "h1,h2,h3"], capture_output=True, text=True,
                             timeout=120)
        assert add.returncode == 0, add.stderr
        assert "worker 2: h3 10.0.2.3:40000 via port 3" in add.stdout
        for w, host in enumerate(("h1", "h2", "h3")):
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", record.netns(host), sys.executable, str(script),
                 str(w), "3", str(tmp_path / f"r{w}.npy"), record.addresses()[host]],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for w, proc in enumerate(procs):
            _, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, f"worker {w}: {err}"
        exact = sum(np.random.default_rng(w).standard_normal(ELEMENTS).astype(np.float32)
                    .astype(np.float64) for w in range(3))
        for w in range(3):
            assert np.allclose(np.load(tmp_path / f"r{w}.npy"), exact, rtol=1e-5, atol=1e-5)
        show = subprocess.run([*netweft, "aggregation", "show", "--testbed", name, "--switch",
                               "leaf1"], capture_output=True, text=True, timeout=120)
        assert "job 1 at 10.0.0.254: slots 0..15, 3 workers" in show.stdout, show.stderr
        assert "malformed 0" in show.stdout
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        subprocess.run([*netweft, "down", "--testbed", name], capture_output=True, timeout=120)
    if prefix is not None:
        assert not [n for n in netns.listnetns() if n.startswith(prefix + "-")]
