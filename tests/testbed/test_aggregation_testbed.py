"""Aggregation on an emulated testbed: a switch process runs aggregation.p4, the
aggregation controller configures a job over the process's P4Runtime socket, and
four hosts all-reduce float32 arrays through it over the kernel's UDP (the host
library's SwitchGroup); the sums match numpy's within the quantization bound.
Namespaces and processes are removed in finally."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from pyroute2 import netns

from netweft.testbed.aggregation_controller import (
    AggregationController,
    AggregationJob,
    JobWorker,
)
from netweft.testbed.topology import load_topology

pytestmark = [pytest.mark.netns, pytest.mark.slow]

SERVICE, SERVICE_MAC = "10.0.0.254", "02:00:00:00:00:fe"
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
w, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
x = np.random.default_rng(w).standard_normal({ELEMENTS}).astype(np.float32)
with SwitchGroup("{SERVICE}", 1, w, n, bind=(f"10.0.1.{{w + 1}}", 40000), window=16) as group:
    np.save(out, group.allreduce(x, deadline=120))
"""


def _topology() -> str:
    neigh = f"ip neigh add {SERVICE} lladdr {SERVICE_MAC} dev eth0 nud permanent"
    hosts = "\n".join(f"  h{w + 1}: {{ip: 10.0.1.{w + 1}/16, commands: [\"{neigh}\"]}}"
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
                                        str(tmp_path / f"r{w}.npy"), stdout=subprocess.PIPE,
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
