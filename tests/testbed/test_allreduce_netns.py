"""In-network all-reduce on the emulated testbed: three hosts in namespaces, each running
the host library's SwitchGroup over the kernel's UDP, and a netweft switch process running
p4/aggregation.p4 configured over P4Runtime, its links dropping packets (the switch's
traffic manager: this kernel has no netem)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from netweft.emulation.links.link_params import LinkParams
from netweft.emulation.network import Network
from netweft.p4.programs import program

SERVICE, SERVICE_MAC, UDP_PORT, WINDOW, N = "10.0.1.254", "02:00:00:00:00:fe", 45000, 16, 3

WORKER = """
import json, sys
import numpy as np
from netweft.transport import SwitchGroup, allreduce
w, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with SwitchGroup("{service}", 1, w, n, bind=(sys.argv[4], {port}), window={window},
                 timeout=0.05) as group:
    results = []
    for call in range(2):  # two all-reduces on one group
        array = np.random.default_rng(100 * call + w).normal(0, 1, 5000).astype(np.float32)
        results.append(allreduce(array, group, timeout=120))
    np.save(out, np.stack(results))
    print(json.dumps(group.stats), flush=True)
"""


@pytest.mark.netns
@pytest.mark.slow
def test_three_hosts_sum_through_the_switch_process_with_loss(tmp_path):
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
        net.add_link(h, s1, params=LinkParams(loss=0.02))
    try:
        net.start()
        for h in hosts:  # the service address is the switch's, not a host's: no ARP for it
            h.cmd("ip", "neigh", "replace", SERVICE, "lladdr", SERVICE_MAC, "dev", "eth0",
                  "nud", "permanent")
        job = AggregationJob(job_id=1, service_address=SERVICE, base=0, size=WINDOW,
                             workers=[JobWorker(w, port=w + 1, mac=h.mac, address=h.ip_address,
                                                udp_port=UDP_PORT)
                                      for w, h in enumerate(hosts)])
        with AggregationController.connect("s1", grpc) as ctl:
            ctl.add_job(job)
            script = WORKER.format(service=SERVICE, port=UDP_PORT, window=WINDOW)
            procs = [h.popen(sys.executable, "-c", script, str(w), str(N),
                             str(tmp_path / f"r{w}.npy"), h.ip_address,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for w, h in enumerate(hosts)]
            stats = []
            for proc in procs:
                out, err = proc.communicate(timeout=300)
                assert proc.returncode == 0, err
                stats.append(json.loads(out.strip().splitlines()[-1]))
            events = ctl.events()
        results = [np.load(tmp_path / f"r{w}.npy") for w in range(N)]
        for call in range(2):
            arrays = [np.random.default_rng(100 * call + w).normal(0, 1, 5000).astype(np.float32)
                      for w in range(N)]
            exact = np.sum([a.astype(np.float64) for a in arrays], axis=0)
            # values below 8 in magnitude: e <= 3, P = 28 for 3 workers; the stated bound
            bound = N * 2.0 ** (3 - 28 - 1) * (1 + 2**-24) + 2**-24 * np.abs(exact)
            for r in results:
                assert np.all(np.abs(r[call].astype(np.float64) - exact) <= bound)
            assert all(np.array_equal(results[0][call], r[call]) for r in results)
        assert sum(s["retransmits"] for s in stats) > 0  # loss was repaired
        assert events["result"] > 0 and events["resent"] + events["duplicate"] > 0
    finally:
        net.stop()


@pytest.mark.netns
@pytest.mark.slow
def test_emulated_comparison_in_network_and_ring(tmp_path):
    from netweft.testbed.experiments.allreduce_testbed import (
        format_emulated,
        run_emulated_allreduce,
    )

    (row,) = run_emulated_allreduce(3, [32 * 1024], out_dir=tmp_path)
    assert row["in-network"]["agree"] and row["ring"]["agree"]
    for method in ("in-network", "ring"):  # CPU seconds read from the processes
        assert row[method]["worker_cpu_seconds"] > 0 and row[method]["switch_cpu_seconds"] >= 0
    # every host link carried at least the buffer once each way, in-network (plus headers)
    assert row["in-network"]["tx_bytes"] >= 32 * 1024 and row["in-network"]["rx_bytes"] >= 32 * 1024
    # the ring moves 2 (n - 1) / n of the buffer per host link
    assert row["ring"]["tx_bytes"] >= 4 / 3 * 32 * 1024
    assert row["switch_events"]["result"] >= 32 * 1024 // 4 // 64
    assert "ring/in-net" in format_emulated([row], 3)


@pytest.mark.netns
@pytest.mark.slow
def test_emulated_comparison_with_wide_packets_on_gigabit_links(tmp_path):
    """--testbed's settings reach the switch and the workers: a 128-lane program (the
    wrapper source), a 16-slot window, links at 1000 Mbit/s; the host links carry the
    wide frames' bytes."""
    from netweft.testbed.bench.allreduce import frame_bytes, in_network_frames
    from netweft.testbed.experiments.allreduce_testbed import run_emulated_allreduce

    size = 64 * 1024
    (row,) = run_emulated_allreduce(3, [size], out_dir=tmp_path, rate_mbit=1000, lanes=128,
                                    window=16)
    assert row["in-network"]["agree"] and row["ring"]["agree"]
    assert row["in-network"]["tx_bytes"] >= in_network_frames(size, 16, 128) * frame_bytes(128)
    # one result per block of 128 values and per exponent round, for this size and the
    # 4 KiB warm-up: the switch ran the 128-lane program the workers used
    assert row["switch_events"]["result"] == (in_network_frames(size, 16, 128)
                                              + in_network_frames(4096, 16, 128))
