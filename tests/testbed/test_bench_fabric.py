"""The fabric experiments end to end on a namespace leaf-spine running fabric.p4, short.

Asserts what the switches decide (which spine carries a collided flow hash, marks
and trims counted alike in the capture, the switch's counters and the receiver,
every receiver's buffer intact, who aggregated ACKs), never a rate or a time.
"""

from __future__ import annotations

import pytest
from pyroute2 import netns

from netweft.testbed.bench.fabric import format_fabric, run_fabric_experiments

pytestmark = [pytest.mark.netns, pytest.mark.slow]


def test_spray_marks_and_multicast_experiments(tmp_path):
    results = run_fabric_experiments(tmp_path, seconds=1.0, length=200_000,
                                     log=lambda _msg: None)
    prefix = results["namespaces"].removesuffix("-*")
    assert not [n for n in netns.listnetns() if n.startswith(prefix + "-")]
    modes = {r["mode"]: r for r in results["spray"]["modes"]}
    # both flows' hashes collide: every packet crosses one spine
    assert modes["flow_hash"]["spine1_share"] in (0.0, 1.0)
    assert modes["flow_hash"]["reordered"] == 0
    for mode in ("entropy_hash", "random", "round_robin", "adaptive"):
        assert 0.0 < modes[mode]["spine1_share"] < 1.0, mode
    ecn_only, trimming = results["marks"]["runs"]
    for run in (ecn_only, trimming):
        assert run["capture"]["ce"] == run["counter_ecn_marked"] > 0
    assert ecn_only["counter_trimmed"] == ecn_only["capture"]["trimmed"] == 0
    # ingress counts a trim; the trimmed packet may still meet a full queue
    assert 0 < trimming["capture"]["trimmed"] <= trimming["counter_trimmed"]
    assert trimming["capture"]["trimmed_udp_len_72"] == trimming["capture"]["trimmed"]
    assert trimming["receiver_trimmed"] == trimming["capture"]["trimmed"]
    unicast, multicast, aggregated = results["multicast"]["runs"]
    assert all(r["intact"] for r in (unicast, multicast, aggregated))
    chunks = -(-200_000 // 1200)
    assert unicast["datagrams"] >= 3 * chunks and multicast["datagrams"] < 3 * chunks
    assert multicast["aggregated_acks"] == 0 and aggregated["aggregated_acks"] > 0
    assert sum(aggregated["switch_acks"].values()) > 0
    assert sum(multicast["switch_acks"].values()) == 0
    for name in ("fabric.json", "spray.png", "marks_queue.png", "multicast.png"):
        assert (tmp_path / name).is_file()
    assert "flow_hash" in format_fabric(results)
