"""PTF suite of p4/aggregation.p4: SwitchML-style aggregation rounds (contributions
absorbed, the completing one multicast as the result, one copy per worker),
duplicates, lost results answered by unicast, the two pools and stale copies,
malformed packets, and plain forwarding for everything else.

fabric_aggregation.py runs these tests on p4/fabric_aggregation.p4 with its names."""

from __future__ import annotations

import struct

from p4runtime_base import P4RuntimeTest
from ptf.testutils import send_packet, verify_no_other_packets, verify_packet, verify_packets
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

SWITCH_MAC = "00:00:00:00:0f:01"
SERVICE = "10.0.0.254"
AGG_PORT = 61440
JOB = 7
WORKERS = 3
LANES = 64
FLAG_RESULT, FLAG_RETRANSMIT, FLAG_RESENT = 0x01, 0x02, 0x04
EV_CONTRIBUTION, EV_RESULT, EV_RESENT, EV_DUPLICATE, EV_MALFORMED, EV_BAD_SLOT, \
    EV_BAD_WORKER, EV_STALE = range(8)
COPY_SENT = 0


def worker_mac(w: int) -> str:
    return f"00:00:00:00:0a:{w + 1:02x}"


def worker_ip(w: int) -> str:
    return f"10.0.1.{w + 1}"


def agg_header(slot: int, pool: int, worker: int, block: int, exponent: int,
               lanes: list[int], flags: int = 0, job: int = JOB, version: int = 1,
               lane_count: int = LANES) -> bytes:
    """agg_t (docs/aggregation.md): lanes are 32-bit two's complement, the exponent int16."""
    return (struct.pack("!BBHHBBIhH", version, flags, job, slot, pool << 7, worker, block,
                        exponent, lane_count) +
            b"".join(struct.pack("!I", lane & 0xFFFFFFFF) for lane in lanes))


def lanes_of(worker: int, round_: int = 0) -> list[int]:
    values = [(worker + 1) * 1000 + 10 * round_ + lane for lane in range(LANES)]
    values[0] = -5 * (worker + 1)          # negative lanes wrap modulo 2^32
    return values


def contribution(worker: int, slot: int = 0, pool: int = 0, block: int = 0,
                 exponent: int = 0, lanes: list[int] | None = None, flags: int = 0,
                 **header):
    return (Ether(dst=SWITCH_MAC, src=worker_mac(worker)) /
            IP(src=worker_ip(worker), dst=SERVICE, ttl=64, id=1) /
            UDP(sport=7000 + worker, dport=AGG_PORT) /
            Raw(agg_header(slot, pool, worker, block, exponent,
                           lanes_of(worker) if lanes is None else lanes, flags, **header)))


def result_copy(worker: int, sums: list[int], exponent: int, slot: int = 0, pool: int = 0,
                block: int = 0):
    """The copy of a result egress rewrites for ``worker``."""
    packet = (Ether(dst=worker_mac(worker), src=SWITCH_MAC) /
              IP(src=SERVICE, dst=worker_ip(worker), ttl=64, id=1) /
              UDP(sport=AGG_PORT, dport=7000 + worker, chksum=0) /
              Raw(agg_header(slot, pool, worker, block, exponent, sums, FLAG_RESULT)))
    return Ether(bytes(packet))


def summed(workers: range, round_: int = 0) -> list[int]:
    return [sum(lanes_of(w, round_)[lane] for w in workers) for lane in range(LANES)]


class AggregationTest(P4RuntimeTest):
    """One job of 3 workers (worker w on port w + 1), 4 slots, multicast group 1."""

    INGRESS = "MyIngress."
    EGRESS = "MyEgress."

    def setUp(self):
        super().setUp()
        self.worker_ports = self.ports[1:1 + WORKERS]
        self.table_add(self.INGRESS + "aggregation.agg_jobs",
                       {"ipv4.dstAddr": SERVICE, "agg.job_id": JOB},
                       self.INGRESS + "aggregation.set_job",
                       {"base": 0, "size": 4, "workers": WORKERS, "mcast_grp": 1})
        self.multicast_group(1, [(port, w) for w, port in enumerate(self.worker_ports)])
        for w in range(WORKERS):
            self.table_add(self.EGRESS + "aggregation.agg_workers",
                           {"agg.job_id": JOB, "standard_metadata.egress_rid": w},
                           self.EGRESS + "aggregation.to_worker",
                           {"mac": worker_mac(w), "addr": worker_ip(w), "udp_port": 7000 + w})

    def events(self, event: int) -> int:
        return self.counter_packets(self.INGRESS + "aggregation.events", event)

    def contribute(self, worker: int, **fields) -> None:
        send_packet(self, self.worker_ports[worker], contribution(worker, **fields))

    def verify_results(self, sums: list[int], exponent: int, **fields) -> None:
        for w, port in enumerate(self.worker_ports):
            verify_packet(self, result_copy(w, sums, exponent, **fields), port)
        verify_no_other_packets(self)

    # forwarding of everything the aggregation leaves alone (the program's own)
    def add_route(self, prefix: str, port: int) -> None:
        self.table_add(self.INGRESS + "ipv4_routes", {"hdr.base.ipv4.dstAddr": prefix},
                       self.INGRESS + "forward", {"dmac": "08:00:00:00:00:99", "port": port})

    def forwarded(self, packet):
        out = packet.copy()
        out[Ether].src, out[Ether].dst = out[Ether].dst, "08:00:00:00:00:99"
        out[IP].ttl -= 1
        del out[IP].chksum
        return Ether(bytes(out))


class AggregationRoundTest(AggregationTest):
    """Two contributions are absorbed; the third completes the slot: every worker gets
    the lane sums and the largest exponent."""

    def runTest(self):
        self.contribute(0, exponent=-3)
        self.contribute(1, exponent=2)
        verify_no_other_packets(self)
        self.contribute(2, exponent=-1)
        self.verify_results(summed(range(3)), 2)
        self.assertEqual(self.events(EV_CONTRIBUTION), 3)
        self.assertEqual(self.events(EV_RESULT), 1)
        self.assertEqual(self.counter_packets(self.EGRESS + "aggregation.copies", COPY_SENT), 3)


class DuplicateContributionTest(AggregationTest):
    """A worker's retransmission before the slot completes is dropped, and counted once."""

    def runTest(self):
        self.contribute(0)
        self.contribute(0, flags=FLAG_RETRANSMIT)
        verify_no_other_packets(self)
        self.assertEqual(self.events(EV_DUPLICATE), 1)
        self.contribute(1)
        self.contribute(2)
        self.verify_results(summed(range(3)), 0)


class LostResultTest(AggregationTest):
    """A retransmission into a complete slot (its result was lost) gets the stored
    result back by unicast, on its own port, flagged RESENT."""

    def runTest(self):
        for w in range(WORKERS):
            self.contribute(w, exponent=w)
        self.verify_results(summed(range(3)), 2)
        self.contribute(1, exponent=1, flags=FLAG_RETRANSMIT)
        resent = (Ether(dst=worker_mac(1), src=SWITCH_MAC) /
                  IP(src=SERVICE, dst=worker_ip(1), ttl=64, id=1) /
                  UDP(sport=AGG_PORT, dport=7001, chksum=0) /
                  Raw(agg_header(0, 0, 1, 0, 2, summed(range(3)), FLAG_RESULT | FLAG_RESENT)))
        verify_packets(self, Ether(bytes(resent)), [self.worker_ports[1]])
        self.assertEqual(self.events(EV_RESENT), 1)


class PoolsTest(AggregationTest):
    """The slot's second pool takes the next block; a delayed copy of a contribution
    to the first pool, from a worker that has moved on, is stale and dropped."""

    def runTest(self):
        for w in range(WORKERS):
            self.contribute(w, slot=2, pool=0, block=40)
        self.verify_results(summed(range(3)), 0, slot=2, pool=0, block=40)
        for w in range(WORKERS):
            self.contribute(w, slot=2, pool=1, block=41, lanes=lanes_of(w, 1))
        self.verify_results(summed(range(3), 1), 0, slot=2, pool=1, block=41)
        self.contribute(0, slot=2, pool=0, block=40)
        verify_no_other_packets(self)
        self.assertEqual(self.events(EV_STALE), 1)


class MalformedTest(AggregationTest):
    """Wrong version, wrong lane count, a RESULT flag from a worker, a slot outside the
    job, a worker outside the job, and a short datagram are dropped and counted."""

    def runTest(self):
        self.contribute(0, version=2)
        self.contribute(0, lane_count=32)
        self.contribute(0, flags=FLAG_RESULT)
        self.contribute(0, slot=4)
        send_packet(self, self.worker_ports[0], self.bad_worker())
        short = contribution(0)
        short[Raw].load = short[Raw].load[:40]
        send_packet(self, self.worker_ports[0], Ether(bytes(short)))
        verify_no_other_packets(self)
        self.assertEqual(self.events(EV_MALFORMED), 4)
        self.assertEqual(self.events(EV_BAD_SLOT), 1)
        self.assertEqual(self.events(EV_BAD_WORKER), 1)
        self.assertEqual(self.events(EV_CONTRIBUTION), 0)

    def bad_worker(self):
        packet = contribution(0)
        load = bytearray(packet[Raw].load)
        load[7] = WORKERS            # worker_id = 3 of a 3-worker job
        packet[Raw].load = bytes(load)
        return Ether(bytes(packet))


class OtherTrafficTest(AggregationTest):
    """Traffic the aggregation does not own (other destinations, other jobs) is
    forwarded by the program's routes."""

    def runTest(self):
        self.add_route("10.0.0.0/24", self.ports[0])
        other_job = contribution(0, job=JOB + 1)
        send_packet(self, self.worker_ports[0], other_job)
        verify_packets(self, self.forwarded(other_job), [self.ports[0]])
        plain = (Ether(dst=SWITCH_MAC, src=worker_mac(0)) /
                 IP(src=worker_ip(0), dst="10.0.0.9", ttl=9, id=1) / UDP(sport=1, dport=2))
        send_packet(self, self.worker_ports[0], plain)
        verify_packets(self, self.forwarded(plain), [self.ports[0]])
        self.assertEqual(self.events(EV_CONTRIBUTION), 0)
