"""The C aggregation worker through the real switch: two hosts in namespaces and a switch
process running p4/aggregation.p4; each host all-reduces the same array with the C worker
and then with the Python one (the reference) on one SwitchGroup, and both give the same
bits on both hosts."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from netweft.emulation.network import Network
from netweft.p4.programs import program

SERVICE, SERVICE_MAC, UDP_PORT, WINDOW, N, ELEMENTS = ("10.0.1.254", "02:00:00:00:00:fe", 45000,
                                                       8, 2, 3000)
WORKER = f"""
import json, sys
import numpy as np
from netweft.transport import SwitchGroup
w, out, ip = int(sys.argv[1]), sys.argv[2], sys.argv[3]
array = np.random.default_rng(w).normal(0, 1, {ELEMENTS}).astype(np.float32)
with SwitchGroup("{SERVICE}", 1, w, {N}, bind=(ip, {UDP_PORT}), window={WINDOW},
                 timeout=0.05) as group:
    report = {{"worker": group.worker}}
    native = group.allreduce(array, deadline=60)
    report["io"] = group.io_stats
    group.worker = "python"
    reference = group.allreduce(array, deadline=60)
    np.save(out, np.stack([native, reference]))
    print(json.dumps(report), flush=True)
"""


@pytest.mark.netns
def test_c_and_python_workers_sum_the_same_bits_through_the_switch_process(tmp_path):
    from netweft.testbed.control.aggregation.controller import (
        AggregationController,
        AggregationJob,
        JobWorker,
    )

    net = Network()
    hosts = [net.add_host(f"h{w + 1}", f"10.0.1.{w + 1}/24", f"02:00:00:00:01:{w + 1:02x}")
             for w in range(N)]
    grpc = f"unix:{tmp_path}/s1.grpc"
    s1 = net.add_switch("s1", program("aggregation"), grpc_address=grpc,
                        log_file=tmp_path / "s1.log")
    for h in hosts:
        net.add_link(h, s1)
    procs: list[subprocess.Popen] = []
    try:
        net.start()
        for h in hosts:  # the service address is the switch's: no ARP for it
            h.cmd("ip", "neigh", "replace", SERVICE, "lladdr", SERVICE_MAC, "dev", "eth0",
                  "nud", "permanent")
        job = AggregationJob(job_id=1, service_address=SERVICE, base=0, size=WINDOW,
                             workers=[JobWorker(w, port=w + 1, mac=h.mac, address=h.ip_address,
                                                udp_port=UDP_PORT)
                                      for w, h in enumerate(hosts)])
        with AggregationController.connect("s1", grpc) as ctl:
            ctl.add_job(job)
            procs = [h.popen(sys.executable, "-c", WORKER, str(w), str(tmp_path / f"r{w}.npy"),
                             h.ip_address, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
                     for w, h in enumerate(hosts)]
            reports = []
            for proc in procs:
                out, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, err
                reports.append(json.loads(out.strip().splitlines()[-1]))
            events = ctl.events()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        net.stop()
    results = [np.load(tmp_path / f"r{w}.npy") for w in range(N)]
    exact = sum(np.random.default_rng(w).normal(0, 1, ELEMENTS).astype(np.float32)
                .astype(np.float64) for w in range(N))
    for r in results:
        assert np.array_equal(r[0], r[1])  # the C worker's sum is the reference's, bit for bit
        assert np.array_equal(r[0], results[0][0])
        assert np.allclose(r[0], exact, rtol=1e-6, atol=1e-6)
    for report in reports:
        assert report["worker"] == "c"
        # one sendmmsg carried the first round of every slot: fewer calls than datagrams
        assert report["io"]["send_calls"] < report["io"]["sent"]
        assert report["io"]["received"] >= -(-ELEMENTS // 64) + WINDOW
    blocks = -(-ELEMENTS // 64)
    assert events["result"] == 2 * (blocks + WINDOW)  # both calls, each block summed once
    assert events["contribution"] == N * events["result"]
