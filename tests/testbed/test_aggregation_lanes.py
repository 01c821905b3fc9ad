"""The lanes per packet are the program's compile-time AGG_LANES: the controller reads
them from the P4Info it is given, as a worker's job setup needs them."""

from __future__ import annotations

import pytest

from netweft.p4.compiler.p4info import build_p4info
from netweft.testbed.control.aggregation.job import AggregationConfigError, program_lanes
from netweft.testbed.experiments.allreduce_fabric import aggregation_program


@pytest.mark.parametrize("lanes", [64, 256])
def test_the_controller_reads_the_lanes_from_the_p4info(lanes):
    info = build_p4info(aggregation_program(lanes))
    assert program_lanes(r.preamble.name for r in info.registers) == lanes


def test_a_program_without_lanes_is_refused():
    with pytest.raises(AggregationConfigError, match="lane0"):
        program_lanes(["MyIngress.drops", "MyIngress.aggregation.bitmap"])
