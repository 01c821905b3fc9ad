"""The plan as entries of ``p4/ecmp_spray.p4`` (flow-hash ECMP, round-robin spray, ECN).

Routes go to ``MyIngress.ipv4_routes`` (``forward`` or ``set_group``), group
members to ``MyIngress.group_members``, ECN thresholds to ``MyEgress.ecn_config``.
The program has two of the five spray modes and no trimming or multicast: asking
for the others is refused with the fix (run ``fabric.p4``).
"""

from __future__ import annotations

from netweft.testbed.control.entries import BindingError, Lpm, TableWrite, Write
from netweft.testbed.control.fabric.plan import SwitchPlan
from netweft.testbed.control.fabric.settings import FabricSettings

MODES = {"flow_hash": 0, "round_robin": 1}


class EcmpSprayBinding:
    name = "ecmp_spray"
    tables = ("MyIngress.ipv4_routes", "MyIngress.group_members", "MyEgress.ecn_config")

    @staticmethod
    def recognises(has_table) -> bool:
        return has_table("MyIngress.group_members") and has_table("MyEgress.ecn_config")

    def writes(self, plan: SwitchPlan, settings: FabricSettings, has_table) -> list[Write]:
        if settings.trim:
            raise BindingError("ecmp_spray.p4 does not trim; run fabric.p4 for trimming")
        if plan.multicast:
            raise BindingError("ecmp_spray.p4 has no multicast; run fabric.p4 for multicast")
        out: list[Write] = []
        for route in plan.routes:
            key = (("hdr.ipv4.dstAddr", Lpm(str(route.prefix.network_address),
                                            route.prefix.prefixlen)),)
            if route.group is None:
                out.append(TableWrite("MyIngress.ipv4_routes", key, "MyIngress.forward",
                                      (("dmac", route.next_hop.mac),
                                       ("port", route.next_hop.port))))
                continue
            mode = settings.spray_mode(route.prefix)
            if mode not in MODES:
                raise BindingError(f"ecmp_spray.p4 sprays by {' or '.join(MODES)} only, not "
                                   f"{mode}; run fabric.p4 for the five modes")
            out.append(TableWrite("MyIngress.ipv4_routes", key, "MyIngress.set_group",
                                  (("group_id", route.group.group_id),
                                   ("group_size", len(route.group.members)),
                                   ("mode", MODES[mode]))))
        for group in plan.groups:
            for index, hop in enumerate(group.members):
                out.append(TableWrite("MyIngress.group_members",
                                      (("meta.group_id", group.group_id),
                                       ("meta.member", index)),
                                      "MyIngress.set_next_hop",
                                      (("dmac", hop.mac), ("port", hop.port))))
        for port in (p.port for p in plan.ports):
            threshold = settings.threshold(settings.ecn, plan.switch, port)
            if threshold is not None:
                out.append(TableWrite("MyEgress.ecn_config",
                                      (("standard_metadata.egress_port", port),),
                                      "MyEgress.set_ecn_threshold",
                                      (("threshold", threshold),)))
        return out
