"""The plan as entries of ``p4/fabric.p4`` (docs/fabric.md is the reference).

Per switch: a route per host (``route_to_port`` or ``route_to_group`` with the
prefix's spray mode), an ``ecmp_groups`` row per group, a ``neighbors`` row per
linked port (the neighbour's MAC and the port's own), ECN and trim thresholds
per port, and per multicast group on the tree: a ``route_to_multicast`` route
for its address, a replication group of its tree ports, ``mcast_host_copies``
rows that turn the copies to member hosts into unicast, and with a sender an
``ack_groups`` row where that switch aggregates ACKs. Names are suffixes, so a
program that composes the fabric controls under its own control names (the
aggregation program) is configured the same way.
"""

from __future__ import annotations

from netweft.testbed.control.entries import BindingError, Lpm, MulticastWrite, TableWrite, Write
from netweft.testbed.control.fabric.plan import SwitchPlan
from netweft.testbed.control.fabric.settings import SPRAY_MODES, FabricSettings

MAX_MEMBERS = 8
ACK_GROUPS = 64   # ack_groups' registers have 64 rows

ROUTES = "forwarding.ipv4_routes"
GROUPS = "forwarding.ecmp_groups"
NEIGHBORS = "queues.neighbors"
ECN = "queues.ecn_config"
HOST_COPIES = "queues.mcast_host_copies"
TRIM = "trim.trim_config"
ACKS = "acks.ack_groups"


class FabricBinding:
    name = "fabric"
    tables = (ROUTES, GROUPS, NEIGHBORS, ECN, HOST_COPIES, TRIM, ACKS)

    @staticmethod
    def recognises(has_table) -> bool:
        return has_table(GROUPS) and has_table(NEIGHBORS)

    def writes(self, plan: SwitchPlan, settings: FabricSettings, has_table) -> list[Write]:
        out: list[Write] = []
        for route in plan.routes:
            key = (("ipv4.dstAddr", Lpm(str(route.prefix.network_address),
                                        route.prefix.prefixlen)),)
            if route.group is None:
                out.append(TableWrite(ROUTES, key, "forwarding.route_to_port",
                                      (("port", route.next_hop.port),)))
            else:
                mode = SPRAY_MODES.index(settings.spray_mode(route.prefix))
                out.append(TableWrite(ROUTES, key, "forwarding.route_to_group",
                                      (("group_id", route.group.group_id), ("mode", mode))))
        for group in plan.groups:
            if len(group.members) > MAX_MEMBERS:
                raise BindingError(f"ECMP group {group.group_id} has {len(group.members)} "
                                   f"next hops; fabric.p4's groups hold {MAX_MEMBERS}")
            ports = [hop.port for hop in group.members]
            ports += [0] * (MAX_MEMBERS - len(ports))
            out.append(TableWrite(GROUPS, (("fm.group_id", group.group_id),),
                                  "forwarding.set_members",
                                  (("size", len(group.members)),
                                   *((f"port{i}", p) for i, p in enumerate(ports)))))
        for port in plan.ports:
            out.append(TableWrite(NEIGHBORS, (("standard_metadata.egress_port", port.port),),
                                  "queues.set_neighbor",
                                  (("dmac", port.peer_mac), ("smac", port.mac))))
            ecn = settings.threshold(settings.ecn, plan.switch, port.port)
            if ecn is not None:
                out.append(TableWrite(ECN, (("standard_metadata.egress_port", port.port),),
                                      "queues.set_ecn_threshold", (("threshold", ecn),)))
            trim = settings.threshold(settings.trim, plan.switch, port.port)
            if trim is not None:
                if not has_table(TRIM):
                    raise BindingError("the program has no trim_config: it does not trim")
                out.append(TableWrite(TRIM, (("standard_metadata.egress_spec", port.port),),
                                      "trim.set_trim",
                                      (("threshold", trim), ("priority", settings.trim_priority),
                                       ("dscp", settings.trim_dscp))))
        for tree in plan.multicast:
            out.append(TableWrite(ROUTES, (("ipv4.dstAddr", Lpm(str(tree.address), 32)),),
                                  "forwarding.route_to_multicast",
                                  (("mcast_grp", tree.group_id),)))
            out.append(MulticastWrite(tree.group_id,
                                      tuple((port, tree.group_id) for port in tree.ports)))
            for port, address in tree.host_addresses:
                out.append(TableWrite(HOST_COPIES,
                                      (("standard_metadata.egress_rid", tree.group_id),
                                       ("standard_metadata.egress_port", port)),
                                      "queues.deliver_to_host", (("dst", str(address)),)))
            if tree.ack_expected is not None:
                if not has_table(ACKS):
                    raise BindingError("the program has no ack_groups: it does not aggregate "
                                       "ACKs")
                if tree.group_id >= ACK_GROUPS:
                    raise BindingError(f"multicast group {tree.group_id}: ACKs are aggregated "
                                       f"for groups 0..{ACK_GROUPS - 1} only")
                out.append(TableWrite(ACKS, (("mcast.group", tree.group_id),),
                                      "acks.aggregate_acks",
                                      (("expected", tree.ack_expected),)))
        return out
