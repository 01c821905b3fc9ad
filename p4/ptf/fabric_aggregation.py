"""PTF suite of p4/fabric_aggregation.p4: fabric.py's tests (the program keeps
fabric.p4's names) and aggregation.py's (under FabricIngress/FabricEgress), plus
what the combination adds: result copies bypass the fabric's egress, and
contributions for jobs this switch does not aggregate follow the fabric's routes."""

from __future__ import annotations

import aggregation as aggregation_suite
import fabric as fabric_suite
from ptf.testutils import verify_packet, verify_packets
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether


class FabricNames:
    """aggregation.py's tests on this program: its names, and the fabric's routes
    (route_to_port: TTL - 1, MACs as they came) for traffic the aggregation leaves."""

    INGRESS = "FabricIngress."
    EGRESS = "FabricEgress."

    def add_route(self, prefix: str, port: int) -> None:
        self.table_add(fabric_suite.ROUTES4, {"ipv4.dstAddr": prefix},
                       fabric_suite.ACTION + "route_to_port", {"port": port})

    def forwarded(self, packet):
        out = packet.copy()
        out[IP].ttl -= 1
        del out[IP].chksum
        return Ether(bytes(out))


class RouteToPortTest(fabric_suite.RouteToPortTest):
    pass


class NeighborMacsTest(fabric_suite.NeighborMacsTest):
    pass


class EntropySprayTest(fabric_suite.EntropySprayTest):
    pass


class FlowHashTest(fabric_suite.FlowHashTest):
    pass


class RoundRobinTest(fabric_suite.RoundRobinTest):
    pass


class RandomAndAdaptiveTest(fabric_suite.RandomAndAdaptiveTest):
    pass


class BadGroupDropsTest(fabric_suite.BadGroupDropsTest):
    pass


class MulticastTest(fabric_suite.MulticastTest):
    pass


class EcnMarkingTest(fabric_suite.EcnMarkingTest):
    pass


class TrimTest(fabric_suite.TrimTest):
    pass


class AckAggregationTest(fabric_suite.AckAggregationTest):
    pass


class DropReasonsTest(fabric_suite.DropReasonsTest):
    pass


class AggregationRoundTest(FabricNames, aggregation_suite.AggregationRoundTest):
    pass


class DuplicateContributionTest(FabricNames, aggregation_suite.DuplicateContributionTest):
    pass


class LostResultTest(FabricNames, aggregation_suite.LostResultTest):
    pass


class PoolsTest(FabricNames, aggregation_suite.PoolsTest):
    pass


class MalformedTest(FabricNames, aggregation_suite.MalformedTest):
    pass


class OtherTrafficTest(FabricNames, aggregation_suite.OtherTrafficTest):
    pass


class ResultCopiesSkipFabricEgressTest(FabricNames, aggregation_suite.AggregationTest):
    """A result copy leaves with the worker's MACs even where the fabric's neighbors
    table would rewrite them, and the completing worker's copy goes out of the port
    the contribution came in on (the fabric would prune it); a unicast answer goes
    through the fabric's egress (its neighbor MACs)."""

    def runTest(self):
        for port in self.worker_ports:
            self.table_add(fabric_suite.QUEUES + "neighbors",
                           {"standard_metadata.egress_port": port},
                           fabric_suite.QUEUES + "set_neighbor",
                           {"dmac": "08:00:00:00:0e:0e", "smac": "00:00:00:00:0f:0e"})
        for w in range(aggregation_suite.WORKERS):
            self.contribute(w)
        sums = aggregation_suite.summed(range(aggregation_suite.WORKERS))
        self.verify_results(sums, 0)
        self.contribute(2, flags=aggregation_suite.FLAG_RETRANSMIT)
        resent = aggregation_suite.result_copy(2, sums, 0)
        resent[Ether].dst, resent[Ether].src = "08:00:00:00:0e:0e", "00:00:00:00:0f:0e"
        resent["Raw"].load = (resent["Raw"].load[:1] +
                              bytes([aggregation_suite.FLAG_RESULT | aggregation_suite.FLAG_RESENT])
                              + resent["Raw"].load[2:])
        verify_packets(self, resent, [self.worker_ports[2]])


class ForeignJobFollowsFabricTest(FabricNames, aggregation_suite.AggregationTest):
    """A contribution for a job without an agg_jobs entry is spread by the fabric's
    ECMP group like any datagram (round robin here)."""

    def runTest(self):
        members = self.ports[1:3]
        self.table_add(fabric_suite.ROUTES4, {"ipv4.dstAddr": "10.0.0.0/24"},
                       fabric_suite.ACTION + "route_to_group", {"group_id": 1, "mode": 3})
        self.table_add("FabricIngress.forwarding.ecmp_groups", {"fm.group_id": 1},
                       fabric_suite.ACTION + "set_members",
                       {"size": 2, "port0": members[0], "port1": members[1],
                        **{f"port{i}": 0 for i in range(2, 8)}})
        packet = aggregation_suite.contribution(0, job=aggregation_suite.JOB + 1)
        for i in range(4):
            self.contribute(0, job=aggregation_suite.JOB + 1)
            verify_packet(self, self.forwarded(packet), members[i % 2])
