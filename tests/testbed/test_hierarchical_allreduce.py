"""Hierarchical in-network all-reduce on a leaf-spine in virtual time: every leaf runs
p4/aggregation.p4 as a level of the job (its hosts' sum goes up as one partial sum),
spine1 sums the leaves, the result comes back down level by level. Results stay within
the quantization bound under loss, duplicates and reordering on the host links, on the
leaf-spine links, or on both; the placement follows the wiring."""

from __future__ import annotations

import pytest

from netweft.testbed.control.aggregation.job import AggregationConfigError
from netweft.testbed.control.aggregation.placement import hierarchy_on_fabric
from netweft.testbed.experiments.allreduce_fabric import (
    SERVICE_IP,
    FabricSpec,
    fabric_graph,
    fabric_hierarchy,
    run_in_network,
)
from netweft.transport.collectives.aggregation.layer import AGG_UDP_PORT, PACKET_LEN
from netweft.transport.sim.wire import Impairments

FRAME = 14 + 20 + 8 + PACKET_LEN


def test_placement_builds_one_level_per_leaf_under_the_spine():
    spec = FabricSpec(workers=5, topology="leaf-spine", window=8)
    graph = fabric_graph(spec)
    tree = fabric_hierarchy(spec, graph)
    assert sorted(tree.levels) == ["leaf1", "leaf2", "spine1"]
    assert tree.worker_ids == {"h1": 0, "h2": 1, "h3": 2, "h4": 0, "h5": 1}
    root = tree.levels["spine1"]
    assert root.parent is None
    assert [(w.worker_id, w.address, w.udp_port) for w in root.workers] == [
        (0, SERVICE_IP, AGG_UDP_PORT), (1, SERVICE_IP, AGG_UDP_PORT)]
    for child_id, leaf in enumerate(("leaf1", "leaf2")):
        level = tree.levels[leaf]
        link = next(li for li in graph.neighbours(leaf) if li.peer == "spine1")
        assert level.parent is not None
        assert (level.parent.port, level.parent.mac, level.parent.child_id) == (
            link.port, link.peer_mac, child_id)
        assert root.workers[child_id].port == link.peer_port
    assert len(tree.levels["leaf1"].workers) == 3 and len(tree.levels["leaf2"].workers) == 2
    with pytest.raises(AggregationConfigError, match="no switch"):
        hierarchy_on_fabric(graph, "spine9", 1, SERVICE_IP, 0, 8, ["h1"], AGG_UDP_PORT)


@pytest.mark.parametrize("workers", [4, 5])
def test_clean_run_moves_one_array_per_host_link_and_one_per_uplink(workers):
    spec = FabricSpec(workers=workers, topology="leaf-spine", window=8, hierarchical=True)
    run = run_in_network(spec, 32 * 1024)
    assert run.correct and run.retransmits == 0
    frames = 32 * 1024 // 4 // 64 + 8
    assert run.tx_bytes_per_host == run.rx_bytes_per_host == frames * FRAME
    # each leaf sends one partial sum per block up, whatever its hosts
    assert run.max_switch_link_bytes == frames * FRAME
    assert run.switch_events["partial"] == 2 * frames
    assert run.switch_events["from_parent"] == 2 * frames


@pytest.mark.parametrize("where", ["hosts", "uplinks", "both"])
def test_loss_duplicates_and_reordering_at_each_level(where):
    spec = FabricSpec(workers=6, topology="leaf-spine", window=8, timeout_ns=150_000,
                      hierarchical=True)
    imp = Impairments(loss=0.04, duplicate=0.06, reorder=0.1, reorder_delay_ns=400_000)
    host_imp = imp if where in ("hosts", "both") else None
    up_imp = imp if where in ("uplinks", "both") else Impairments()
    run = run_in_network(spec, 20 * 1024, seed=11, impairments=host_imp,
                         uplink_impairments=up_imp)
    assert run.correct and run.retransmits > 0
    events = run.switch_events
    blocks = 20 * 1024 // 4 // 64 + 8
    if where != "hosts":
        # lost partial sums and lost results between the levels were repaired: the
        # leaves sent partial sums again, and the spine answered repeats or dropped them
        assert events["partial"] > 2 * blocks
        assert events["resent"] + events["duplicate"] > 0
    assert events["stale"] + events["duplicate"] > 0


def test_wide_packets_hierarchically_with_sixteen_workers():
    spec = FabricSpec(workers=16, topology="leaf-spine", window=4, lanes=256,
                      hierarchical=True, timeout_ns=200_000)
    imp = Impairments(loss=0.02, duplicate=0.03)
    run = run_in_network(spec, 16 * 1024, seed=2, impairments=imp)
    assert run.correct
