"""The whole computation: every switch's routes, ECMP groups and multicast trees."""

from __future__ import annotations

from collections.abc import Iterable

from netweft.testbed.control.fabric.graph import FabricGraph
from netweft.testbed.control.fabric.multicast import MulticastGroupSpec, compute_tree
from netweft.testbed.control.fabric.plan import SwitchPlan
from netweft.testbed.control.fabric.routes import compute_routes


def compute_fabric(graph: FabricGraph,
                   groups: Iterable[MulticastGroupSpec] = ()) -> dict[str, SwitchPlan]:
    """One plan per switch: host routes and ECMP groups, and each group's tree."""
    plans = compute_routes(graph)
    for group in sorted(groups, key=lambda g: g.group_id):
        for switch, tree in compute_tree(graph, group).items():
            plans[switch].multicast.append(tree)
    return plans
