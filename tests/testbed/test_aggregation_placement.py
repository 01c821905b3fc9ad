"""A job's workers seen from the aggregating switch, from the leaf-spine's wiring."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.testbed.control.aggregation.controller import AggregationConfigError
from netweft.testbed.control.aggregation.placement import job_on_fabric
from netweft.testbed.control.fabric.graph import graph_from_topology
from netweft.testbed.topology import load_topology

TOPOLOGY = Path(__file__).resolve().parents[2] / "testbed" / "topologies" / "leaf-spine.yaml"


@pytest.fixture(scope="module")
def graph():
    return graph_from_topology(load_topology(TOPOLOGY))


def test_workers_on_the_aggregating_leaf_and_behind_the_spine(graph):
    job = job_on_fabric(graph, "leaf1", 1, "10.0.0.254", 0, 16, ["h1", "h3", "h2"], 40000)
    h1, h3, h2 = job.workers
    assert (h1.worker_id, h1.port, h1.mac, h1.address) == (0, 1, "08:00:00:00:01:11", "10.0.1.1")
    assert (h2.worker_id, h2.port, h2.mac) == (2, 2, "08:00:00:00:01:22")
    # h3 hangs off leaf2: its copies leave leaf1 by its lowest uplink, to spine1's MAC
    spine1 = next(lk for lk in graph.neighbours("leaf1") if lk.peer == "spine1")
    assert (h3.port, h3.mac, h3.address) == (spine1.port, spine1.peer_mac, "10.0.2.3")
    assert job.group == 0x8001 and all(w.udp_port == 40000 for w in job.workers)


def test_aggregating_on_a_spine(graph):
    job = job_on_fabric(graph, "spine2", 2, "10.0.0.253", 16, 16, ["h1", "h2", "h3", "h4"], 1)
    ports = {lk.peer: (lk.port, lk.peer_mac) for lk in graph.neighbours("spine2")}
    assert [(w.port, w.mac) for w in job.workers] == [ports["leaf1"]] * 2 + [ports["leaf2"]] * 2


def test_bad_names_are_refused(graph):
    with pytest.raises(AggregationConfigError, match="no switch named 's9'"):
        job_on_fabric(graph, "s9", 1, "10.0.0.254", 0, 1, ["h1"], 1)
    with pytest.raises(AggregationConfigError, match="no host named h7"):
        job_on_fabric(graph, "leaf1", 1, "10.0.0.254", 0, 1, ["h1", "h7"], 1)
    with pytest.raises(AggregationConfigError, match="named twice"):
        job_on_fabric(graph, "leaf1", 1, "10.0.0.254", 0, 1, ["h1", "h1"], 1)
