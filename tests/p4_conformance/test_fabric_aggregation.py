"""p4/fabric_aggregation.p4: one switch forwards as fabric.p4 (routes, neighbours,
multicast pruning) and aggregates as aggregation.p4, without one getting in the
other's way."""

from __future__ import annotations

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.transport.collectives.aggregation import layer as agg

from .harness import REPO_P4_DIR, switch_factory
from .packets import assert_outputs

make_switch = switch_factory(REPO_P4_DIR / "fabric_aggregation.p4")

K = agg.AGG_LANES
SERVICE = "10.0.0.254"
SWITCH_MAC = "02:00:00:00:ff:00"
FWD, QUEUES = "FabricIngress.forwarding.", "FabricEgress.queues."
AGG_IN, AGG_OUT = "FabricIngress.aggregation.", "FabricEgress.aggregation."
WORKERS = [(w, w + 1, f"02:00:00:00:01:{w + 1:02x}", f"10.1.0.{w + 1}") for w in range(4)]


def port_mac(port: int) -> str:
    return f"02:00:00:00:ff:{port:02x}"


def configured(make_switch):
    """Fabric: a /32 route and a neighbour per worker port, a route to 10.9/16 on port 9;
    aggregation: job 1 with the four workers on ports 1..4."""
    sw = make_switch()
    for w, port, mac, ip in WORKERS:
        sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": (ip, 32)}, FWD + "route_to_port",
                     {"port": port})
        sw.table_add(QUEUES + "neighbors", {"standard_metadata.egress_port": port},
                     QUEUES + "set_neighbor", {"dmac": mac, "smac": port_mac(port)})
        sw.table_add(AGG_OUT + "agg_workers",
                     {"agg.job_id": 1, "standard_metadata.egress_rid": w},
                     AGG_OUT + "to_worker", {"mac": mac, "addr": ip, "udp_port": 40000})
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": ("10.9.0.0", 16)}, FWD + "route_to_port",
                 {"port": 9})
    sw.table_add(QUEUES + "neighbors", {"standard_metadata.egress_port": 9},
                 QUEUES + "set_neighbor", {"dmac": "02:00:00:00:01:09", "smac": port_mac(9)})
    sw.table_add(AGG_IN + "agg_jobs", {"ipv4.dstAddr": SERVICE, "agg.job_id": 1},
                 AGG_IN + "set_job", {"base": 0, "size": 4, "workers": 4, "mcast_grp": 0x8001})
    sw.mc_group_set(0x8001, [(port, w) for w, port, _, _ in WORKERS])
    return sw


def contribution(w: int, job: int = 1, value: int = 1, dst: str = SERVICE) -> bytes:
    _, port, mac, ip = WORKERS[w]
    return bytes(Ether(dst=port_mac(port), src=mac) / IP(src=ip, dst=dst, id=3)
                 / UDP(sport=40000, dport=agg.AGG_UDP_PORT)
                 / agg.Aggregation(job_id=job, slot=2, worker_id=w, block=2,
                                   lanes=[value] * K))


def test_aggregates_and_every_worker_gets_a_copy(make_switch):
    sw = configured(make_switch)
    for w in range(3):
        assert sw.process(WORKERS[w][1], contribution(w, value=w + 1)) == []
    out = sw.process(WORKERS[3][1], contribution(3, value=4))
    expected = []
    for w, port, mac, ip in WORKERS:
        expected.append((port, bytes(
            Ether(dst=mac, src=port_mac(4)) / IP(src=SERVICE, dst=ip, id=3, ttl=64)
            / UDP(sport=agg.AGG_UDP_PORT, dport=40000, chksum=0)
            / agg.Aggregation(flags=agg.FLAG_RESULT, job_id=1, slot=2, worker_id=w, block=2,
                              lanes=[10] * K))))
    # the completing worker's copy leaves by the port it came in on: not pruned
    assert_outputs(out, expected)
    assert sw.counter_read(QUEUES + "mcast_pruned", 4)[0] == 0


def test_resent_result_crosses_the_fabric_egress(make_switch):
    sw = configured(make_switch)
    for w in range(4):
        sw.process(WORKERS[w][1], contribution(w, value=5))
    out = sw.process(WORKERS[1][1], contribution(1, value=5))
    assert [port for port, _ in out] == [2]
    pkt = Ether(out[0][1])
    # the fabric's neighbour table gave the port's MACs; the lanes are the stored sums
    assert (pkt.dst, pkt.src) == (WORKERS[1][2], port_mac(2))
    assert pkt[agg.Aggregation].flags == agg.FLAG_RESULT | agg.FLAG_RESENT
    assert pkt[agg.Aggregation].lanes == [20] * K
    assert sw.counter_read(QUEUES + "tx_port", 2)[0] == 1


def test_other_traffic_and_other_jobs_are_routed_by_the_fabric(make_switch):
    sw = configured(make_switch)
    uet = bytes(Ether(dst=port_mac(1), src=WORKERS[0][2]) / IP(src="10.1.0.1", dst="10.9.0.5")
                / UDP(sport=50000, dport=4793) / (b"\x10\x00" + bytes(100)))
    out = sw.process(1, uet)
    assert [port for port, _ in out] == [9]
    assert Ether(out[0][1])[IP].ttl == 63
    # job 2 is aggregated elsewhere (behind port 9): its contribution is routed there
    out = sw.process(1, contribution(0, job=2, dst="10.9.0.254"))
    assert [port for port, _ in out] == [9]
    assert Ether(out[0][1])[agg.Aggregation].lanes == [1] * K
    assert sw.counter_read(AGG_IN + "events", 0)[0] == 0
    # a short aggregation datagram: the aggregation counts it, the fabric never sees it
    assert sw.process(1, contribution(0)[:70]) == []
    assert sw.counter_read(AGG_IN + "events", 4)[0] == 1
    assert sw.counter_read("FabricIngress.drops", 1)[0] == 0
