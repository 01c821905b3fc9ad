"""p4/aggregation.p4 on the embedded switch: sums of K int32 lanes over 4 and 8
workers, the worker bitmap against duplicates, loss and retransmission across
the two shadow pools, two jobs at once, malformed packets, int32 wraparound,
and plain forwarding beside it (docs/aggregation.md)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.transport.collectives.aggregation import layer as agg

from .harness import BOTH_BACKENDS, REPO_P4_DIR, switch_factory
from .packets import SWITCH_MAC, assert_outputs

make_switch = switch_factory(REPO_P4_DIR / "aggregation.p4", BOTH_BACKENDS)

K = agg.AGG_LANES
SERVICE = "10.0.0.254"
EVENTS = "MyIngress.aggregation.events"
EV_CONTRIBUTION, EV_RESULT, EV_RESENT, EV_DUPLICATE, EV_MALFORMED, EV_BAD_SLOT, \
    EV_BAD_WORKER, EV_STALE = range(8)
SLOTS = 1024  # AGG_SLOTS, cells per pool


@dataclass(frozen=True)
class Worker:
    wid: int
    port: int
    mac: str
    ip: str
    udp_port: int


def workers_of(job: int, n: int) -> list[Worker]:
    """n workers of a job, on ports 1.. (job 2's from port 17)."""
    first = 1 + 16 * (job - 1)
    return [Worker(w, first + w, f"02:00:00:00:{job:02x}:{w:02x}", f"10.{job}.0.{w + 1}",
                   40000 + w) for w in range(n)]


def configure(sw, job: int, workers: list[Worker], base: int, size: int,
              group: int | None = None) -> None:
    group = job if group is None else group
    sw.table_add("MyIngress.aggregation.agg_jobs",
                 {"ipv4.dstAddr": SERVICE, "agg.job_id": job}, "MyIngress.aggregation.set_job",
                 {"base": base, "size": size, "workers": len(workers), "mcast_grp": group})
    sw.mc_group_set(group, [(w.port, w.wid) for w in workers])
    for w in workers:
        sw.table_add("MyEgress.aggregation.agg_workers",
                     {"agg.job_id": job, "standard_metadata.egress_rid": w.wid},
                     "MyEgress.aggregation.to_worker",
                     {"mac": w.mac, "addr": w.ip, "udp_port": w.udp_port})


def contribution(w: Worker, job: int, slot: int, pool: int, lanes: list[int], block: int = 0,
                 exponent: int = 0, flags: int = 0, trailer: bytes = b"", **fields) -> bytes:
    return bytes(Ether(dst=SWITCH_MAC, src=w.mac)
                 / IP(src=w.ip, dst=SERVICE, id=7, ttl=64)
                 / UDP(sport=w.udp_port, dport=agg.AGG_UDP_PORT)
                 / agg.Aggregation(flags=flags, job_id=job, slot=slot, pool=pool,
                                   worker_id=w.wid, block=block, exponent=exponent,
                                   lanes=lanes, **fields)
                 / trailer)


def wrap32(value: int) -> int:
    """value as a two's-complement int32 (what P4's bit<32> addition leaves)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def expected_result(w: Worker, job: int, slot: int, pool: int, sums: list[int], block: int,
                    exponent: int, flags: int = agg.FLAG_RESULT, ip_id: int = 7) -> bytes:
    """The result as docs/aggregation.md describes it, built with scapy (checksums included)."""
    pkt = (Ether(dst=w.mac, src=SWITCH_MAC)
           / IP(src=SERVICE, dst=w.ip, id=ip_id, ttl=64)
           / UDP(sport=agg.AGG_UDP_PORT, dport=w.udp_port, chksum=0)
           / agg.Aggregation(flags=flags, job_id=job, slot=slot, pool=pool, worker_id=w.wid,
                             block=block, exponent=exponent, lanes=sums))
    return bytes(pkt)


def random_lanes(rng: random.Random, n: int, bits: int = 27) -> list[list[int]]:
    return [[rng.randint(-(1 << bits), 1 << bits) for _ in range(K)] for _ in range(n)]


def run_slot(sw, workers: list[Worker], job: int, slot: int, pool: int, block: int,
             lanes: list[list[int]], exponents: list[int]) -> list[tuple[int, bytes]]:
    """Every worker contributes once; returns the outputs of the last contribution."""
    for w in workers[:-1]:
        assert sw.process(w.port, contribution(w, job, slot, pool, lanes[w.wid], block,
                                               exponents[w.wid])) == []
    last = workers[-1]
    return sw.process(last.port, contribution(last, job, slot, pool, lanes[last.wid], block,
                                              exponents[last.wid]))


def sums_of(lanes: list[list[int]]) -> list[int]:
    return [wrap32(sum(column)) for column in zip(*lanes, strict=True)]


def events(sw) -> list[int]:
    return [sw.counter_read(EVENTS, i)[0] for i in range(8)]


def test_four_workers_sum_and_result_multicast(make_switch):
    sw = make_switch()
    workers = workers_of(1, 4)
    configure(sw, 1, workers, base=0, size=8)
    lanes = random_lanes(random.Random(4), 4)
    exponents = [-3, 5, -120, 4]
    out = run_slot(sw, workers, 1, slot=3, pool=0, block=11, lanes=lanes, exponents=exponents)
    expected = [(w.port, expected_result(w, 1, 3, 0, sums_of(lanes), 11, 5)) for w in workers]
    assert_outputs(out, expected)
    assert events(sw) == [4, 1, 0, 0, 0, 0, 0, 0]
    assert sw.counter_read("MyEgress.aggregation.copies", 0)[0] == 4
    assert sw.register_read("MyIngress.aggregation.count", 3) == 4
    assert sw.register_read("MyIngress.aggregation.bitmap", 3) == 0b1111


def test_eight_workers_over_several_slots_and_both_pools(make_switch):
    sw = make_switch()
    workers = workers_of(1, 8)
    configure(sw, 1, workers, base=100, size=2)
    rng = random.Random(8)
    for block in range(6):  # slot = block mod 2, pool = (block div 2) mod 2
        slot, pool = block % 2, (block // 2) % 2
        lanes = random_lanes(rng, 8)
        exponents = [rng.randint(-126, 128) for _ in workers]
        out = run_slot(sw, workers, 1, slot, pool, block, lanes, exponents)
        assert_outputs(out, [(w.port, expected_result(w, 1, slot, pool, sums_of(lanes), block,
                                                      max(exponents))) for w in workers])
    assert events(sw)[:2] == [48, 6]
    # the job's range starts at cell 100; pool 1 lives AGG_SLOTS cells further
    assert sw.register_read("MyIngress.aggregation.count", 100) == 8
    assert sw.register_read("MyIngress.aggregation.count", 100 + SLOTS + 1) == 8


def test_duplicate_before_completion_is_dropped_and_not_counted_twice(make_switch):
    sw = make_switch()
    workers = workers_of(1, 4)
    configure(sw, 1, workers, base=0, size=4)
    lanes = random_lanes(random.Random(1), 4)
    w0 = workers[0]
    assert sw.process(w0.port, contribution(w0, 1, 0, 0, lanes[0])) == []
    for _ in range(3):  # duplicates, one flagged as a retransmission
        assert sw.process(w0.port, contribution(w0, 1, 0, 0, lanes[0])) == []
    assert sw.process(w0.port, contribution(w0, 1, 0, 0, lanes[0],
                                            flags=agg.FLAG_RETRANSMIT)) == []
    assert events(sw)[EV_DUPLICATE] == 4
    out = []
    for w in workers[1:]:
        out = sw.process(w.port, contribution(w, 1, 0, 0, lanes[w.wid]))
    assert_outputs(out, [(w.port, expected_result(w, 1, 0, 0, sums_of(lanes), 0, 0))
                         for w in workers])


def test_lost_result_is_resent_by_unicast_without_double_counting(make_switch):
    sw = make_switch()
    workers = workers_of(1, 4)
    configure(sw, 1, workers, base=0, size=1)
    rng = random.Random(2)
    lanes0 = random_lanes(rng, 4)
    run_slot(sw, workers, 1, 0, 0, block=0, lanes=lanes0, exponents=[1, 2, 3, 4])
    # worker 2 lost its copy of block 0's result; the others move on to block 1 (pool 1),
    # which clears their bits in pool 0 -- the stored result must survive that
    lanes1 = random_lanes(rng, 4)
    for w in (workers[0], workers[1], workers[3]):
        assert sw.process(w.port, contribution(w, 1, 0, 1, lanes1[w.wid], block=1)) == []
    w2 = workers[2]
    for _ in range(2):  # two retransmissions: two identical answers, nothing added
        out = sw.process(w2.port, contribution(w2, 1, 0, 0, lanes0[2], block=0,
                                               exponent=3, flags=agg.FLAG_RETRANSMIT))
        resent = bytes(Ether(dst=w2.mac, src=SWITCH_MAC)
                       / IP(src=SERVICE, dst=w2.ip, id=7, ttl=64)
                       / UDP(sport=agg.AGG_UDP_PORT, dport=w2.udp_port, chksum=0)
                       / agg.Aggregation(flags=agg.FLAG_RESULT | agg.FLAG_RESENT, job_id=1,
                                         slot=0, pool=0, worker_id=2, block=0, exponent=4,
                                         lanes=sums_of(lanes0)))
        assert_outputs(out, [(w2.port, resent)])
    assert events(sw)[EV_RESENT] == 2
    # worker 2 now sends block 1 and completes pool 1
    out = sw.process(w2.port, contribution(w2, 1, 0, 1, lanes1[2], block=1))
    assert_outputs(out, [(w.port, expected_result(w, 1, 0, 1, sums_of(lanes1), 1, 0))
                         for w in workers])
    # pool 0 is free again: block 2 starts from zero, not from block 0's sums
    lanes2 = random_lanes(rng, 4)
    out = run_slot(sw, workers, 1, 0, 0, block=2, lanes=lanes2, exponents=[-9] * 4)
    assert_outputs(out, [(w.port, expected_result(w, 1, 0, 0, sums_of(lanes2), 2, -9))
                         for w in workers])
    assert events(sw)[:4] == [12, 3, 2, 0]


def test_delayed_copies_of_an_older_use_of_a_pool_are_stale(make_switch):
    sw = make_switch()
    workers = workers_of(1, 2)
    configure(sw, 1, workers, base=0, size=1)
    w0, w1 = workers
    old = contribution(w0, 1, 0, 0, [5] * K, block=0)  # block 0: slot 0, pool 0
    sw.process(w0.port, old)
    assert len(sw.process(w1.port, contribution(w1, 1, 0, 0, [6] * K, block=0))) == 2
    # worker 0 moves on to block 1 (pool 1); a delayed copy of its block 0 must not be
    # added again to the complete pool 0, whose sums worker 1 may still ask for
    assert sw.process(w0.port, contribution(w0, 1, 0, 1, [1] * K, block=1)) == []
    assert sw.process(w0.port, old) == []
    out = sw.process(w1.port, contribution(w1, 1, 0, 0, [6] * K, block=0,
                                           flags=agg.FLAG_RETRANSMIT))
    assert agg.Aggregation(bytes(Ether(out[0][1])[UDP].payload)).lanes == [11] * K
    # both finish block 1 and start block 2 in pool 0; block 0's copy is older: stale
    assert len(sw.process(w1.port, contribution(w1, 1, 0, 1, [1] * K, block=1))) == 2
    assert sw.process(w1.port, contribution(w1, 1, 0, 0, [3] * K, block=2)) == []
    assert sw.process(w0.port, old) == []
    out = sw.process(w0.port, contribution(w0, 1, 0, 0, [4] * K, block=2))
    assert_outputs(out, [(w.port, expected_result(w, 1, 0, 0, [7] * K, 2, 0)) for w in workers])
    assert events(sw)[EV_STALE] == 2
    assert events(sw)[EV_CONTRIBUTION] == 6


def test_lost_contribution_is_counted_when_retransmitted(make_switch):
    sw = make_switch()
    workers = workers_of(1, 4)
    configure(sw, 1, workers, base=0, size=4)
    lanes = random_lanes(random.Random(3), 4)
    for w in workers[:3]:
        assert sw.process(w.port, contribution(w, 1, 2, 1, lanes[w.wid], block=6)) == []
    # worker 3's first copy never reached the switch; its retransmission completes the slot
    w3 = workers[3]
    out = sw.process(w3.port, contribution(w3, 1, 2, 1, lanes[3], block=6,
                                           flags=agg.FLAG_RETRANSMIT))
    assert_outputs(out, [(w.port, expected_result(w, 1, 2, 1, sums_of(lanes), 6, 0))
                         for w in workers])
    # a duplicate of an early contribution after completion gets the result by unicast
    out = sw.process(workers[0].port, contribution(workers[0], 1, 2, 1, lanes[0], block=6))
    assert [port for port, _ in out] == [workers[0].port]
    assert agg.Aggregation(bytes(Ether(out[0][1])[UDP].payload)).lanes == sums_of(lanes)


def test_two_jobs_at_once_are_isolated(make_switch):
    sw = make_switch()
    job1, job2 = workers_of(1, 4), workers_of(2, 3)
    configure(sw, 1, job1, base=0, size=4)
    configure(sw, 2, job2, base=4, size=4)
    rng = random.Random(5)
    lanes1, lanes2 = random_lanes(rng, 4), random_lanes(rng, 3)
    # interleaved, same slot and pool numbers; job 2 completes first
    outputs = []
    for step in range(4):
        if step < 3:
            w = job2[step]
            outputs.append(sw.process(w.port, contribution(w, 2, 1, 0, lanes2[step], block=5)))
        w = job1[step]
        outputs.append(sw.process(w.port, contribution(w, 1, 1, 0, lanes1[step], block=9)))
    done = [out for out in outputs if out]
    assert len(done) == 2
    assert_outputs(done[0], [(w.port, expected_result(w, 2, 1, 0, sums_of(lanes2), 5, 0))
                             for w in job2])
    assert_outputs(done[1], [(w.port, expected_result(w, 1, 1, 0, sums_of(lanes1), 9, 0))
                             for w in job1])
    assert sw.register_read("MyIngress.aggregation.bitmap", 1) == 0b1111
    assert sw.register_read("MyIngress.aggregation.bitmap", 5) == 0b111
    # outside its range, or a worker it does not have: rejected, nothing stored
    assert sw.process(job2[0].port, contribution(job2[0], 2, 4, 0, lanes2[0])) == []
    w3 = Worker(3, 20, "02:00:00:00:02:03", "10.2.0.4", 40003)
    assert sw.process(w3.port, contribution(w3, 2, 0, 0, lanes2[0])) == []
    assert events(sw)[EV_BAD_SLOT] == 1 and events(sw)[EV_BAD_WORKER] == 1
    assert sw.register_read("MyIngress.aggregation.bitmap", 4) == 0
    assert sw.register_read("MyIngress.aggregation.bitmap", 8) == 0


def test_malformed_aggregation_packets_are_dropped_and_counted(make_switch):
    sw = make_switch()
    workers = workers_of(1, 2)
    configure(sw, 1, workers, base=0, size=4)
    w = workers[0]
    good = contribution(w, 1, 0, 0, [1] * K)
    bad = [
        good[:-1],  # one byte short of the last lane
        good[:42 + 10],  # header cut in the middle
        contribution(w, 1, 0, 0, [1] * K, version=2),
        contribution(w, 1, 0, 0, [1] * K, flags=agg.FLAG_RESULT),
        bytes(Ether(dst=SWITCH_MAC, src=w.mac) / IP(src=w.ip, dst=SERVICE)
              / UDP(sport=w.udp_port, dport=agg.AGG_UDP_PORT)
              / agg.Aggregation(job_id=1, worker_id=0, lane_count=K - 1, lanes=[1] * (K - 1))),
        contribution(w, 1, 0, 0, [1] * K, trailer=b"trailing"),  # the UDP datagram is longer than header + K lanes
    ]
    for packet in bad:
        assert sw.process(w.port, packet) == []
    assert events(sw)[EV_MALFORMED] == len(bad)
    # bytes after the IP datagram (an Ethernet trailer) are not the datagram's: accepted
    assert sw.process(w.port, good + b"\0" * 6) == []
    assert events(sw)[EV_CONTRIBUTION] == 1
    sw.register_write("MyIngress.aggregation.bitmap", 0, 0)
    # the slot is untouched: two good contributions still give the plain sum
    assert sw.process(w.port, good) == []
    out = sw.process(workers[1].port, contribution(workers[1], 1, 0, 0, [2] * K))
    assert_outputs(out, [(x.port, expected_result(x, 1, 0, 0, [3] * K, 0, 0)) for x in workers])


def test_int32_lanes_wrap_around(make_switch):
    sw = make_switch()
    workers = workers_of(1, 2)
    configure(sw, 1, workers, base=0, size=1)
    a = [2**31 - 1, -2**31, -1, 2**30] + [0] * (K - 4)
    b = [1, -1, -2**31, 2**30] + [0] * (K - 4)
    out = run_slot(sw, workers, 1, 0, 0, 0, [a, b], [0, 0])
    sums = agg.Aggregation(bytes(Ether(out[0][1])[UDP].payload)).lanes
    assert sums[:4] == [-2**31, 2**31 - 1, 2**31 - 1, -2**31]  # modulo 2**32, no saturation


def test_other_traffic_and_unknown_jobs_are_forwarded(make_switch):
    sw = make_switch()
    workers = workers_of(1, 2)
    configure(sw, 1, workers, base=0, size=1)
    sw.table_add("MyIngress.ipv4_routes", {"hdr.base.ipv4.dstAddr": ("10.0.0.0", 24)},
                 "MyIngress.forward", {"dmac": "02:00:00:00:99:01", "port": 9})
    w = workers[0]
    # a job this switch does not aggregate (job 5) is routed towards the service address
    for packet in (contribution(w, 5, 0, 0, [7] * K),
                   bytes(Ether(dst=SWITCH_MAC, src=w.mac) / IP(src=w.ip, dst="10.0.0.8", id=1)
                         / UDP(sport=1, dport=4793) / b"uet")):
        out = sw.process(w.port, packet)
        forwarded = Ether(packet)
        forwarded.dst, forwarded.src = "02:00:00:00:99:01", SWITCH_MAC
        forwarded[IP].ttl -= 1
        del forwarded[IP].chksum
        assert_outputs(out, [(9, bytes(forwarded))])
    assert sw.process(w.port, contribution(w, 5, 0, 0, [7] * K)[:60]) == []  # short: malformed
    assert events(sw)[EV_MALFORMED] == 1
    assert events(sw)[EV_CONTRIBUTION] == 0


def test_result_copy_for_an_unknown_worker_is_dropped(make_switch):
    sw = make_switch()
    workers = workers_of(1, 2)
    configure(sw, 1, workers, base=0, size=1)
    sw.mc_group_set(1, [(w.port, w.wid) for w in workers] + [(12, 7)])  # rid 7: no worker
    out = run_slot(sw, workers, 1, 0, 0, 0, [[1] * K, [2] * K], [0, 0])
    assert sorted(port for port, _ in out) == [1, 2]
    assert sw.counter_read("MyEgress.aggregation.copies", 1)[0] == 1


PARENT_MAC = "02:00:00:00:99:01"
PARENT_PORT = 9
EV_PARTIAL, EV_FROM_PARENT = 8, 9


def partial_up(job: int, slot: int, pool: int, sums: list[int], block: int, exponent: int,
               child_id: int, flags: int = 0, ip_id: int = 7) -> bytes:
    """A level's partial sum as it leaves for the parent (docs/collectives.md)."""
    return bytes(Ether(dst=PARENT_MAC, src=SWITCH_MAC)
                 / IP(src=SERVICE, dst=SERVICE, id=ip_id, ttl=64)
                 / UDP(sport=agg.AGG_UDP_PORT, dport=agg.AGG_UDP_PORT, chksum=0)
                 / agg.Aggregation(flags=flags, job_id=job, slot=slot, pool=pool,
                                   worker_id=child_id, block=block, exponent=exponent,
                                   lanes=sums))


def from_parent(job: int, slot: int, pool: int, sums: list[int], block: int, exponent: int,
                flags: int = agg.FLAG_RESULT) -> bytes:
    return bytes(Ether(dst=SWITCH_MAC, src=PARENT_MAC)
                 / IP(src=SERVICE, dst=SERVICE, id=7, ttl=64)
                 / UDP(sport=agg.AGG_UDP_PORT, dport=agg.AGG_UDP_PORT, chksum=0)
                 / agg.Aggregation(flags=flags, job_id=job, slot=slot, pool=pool, worker_id=3,
                                   block=block, exponent=exponent, lanes=sums))


def test_a_level_below_the_root_sends_its_partial_sum_up_and_the_result_down(make_switch):
    sw = make_switch()
    workers = workers_of(1, 2)
    configure(sw, 1, workers, base=0, size=8)
    sw.table_add("MyIngress.aggregation.agg_parents",
                 {"ipv4.dstAddr": SERVICE, "agg.job_id": 1},
                 "MyIngress.aggregation.set_parent",
                 {"port": PARENT_PORT, "mac": PARENT_MAC, "child_id": 3})
    lanes = random_lanes(random.Random(8), 2)
    partial = sums_of(lanes)
    out = run_slot(sw, workers, 1, slot=2, pool=0, block=10, lanes=lanes, exponents=[4, -2])
    assert_outputs(out, [(PARENT_PORT, partial_up(1, 2, 0, partial, 10, 4, child_id=3))])
    # a child's retransmission before the parent answered: the partial sum goes up again
    out = sw.process(1, contribution(workers[0], 1, 2, 0, lanes[0], 10, 4,
                                     flags=agg.FLAG_RETRANSMIT))
    assert_outputs(out, [(PARENT_PORT, partial_up(1, 2, 0, partial, 10, 4, child_id=3,
                                                  flags=agg.FLAG_RETRANSMIT))])
    # the parent's result: kept in the pool and multicast to the children
    total = [wrap32(v + 1000) for v in partial]
    out = sw.process(PARENT_PORT, from_parent(1, 2, 0, total, 10, 6))
    assert_outputs(out, [(w.port, expected_result(w, 1, 2, 0, total, 10, 6)) for w in workers])
    assert sw.register_read("MyIngress.aggregation.count", 2) == 3  # workers + 1: has it
    # a second copy of it (the multicast, then an answer to the retransmission): dropped
    assert sw.process(PARENT_PORT, from_parent(1, 2, 0, total, 10, 6,
                                               agg.FLAG_RESULT | agg.FLAG_RESENT)) == []
    # a child that lost the result gets the parent's result back, not the partial sum
    w = workers[1]
    out = sw.process(w.port, contribution(w, 1, 2, 0, lanes[1], 10, -2,
                                          flags=agg.FLAG_RETRANSMIT))
    assert_outputs(out, [(w.port, expected_result(
        w, 1, 2, 0, total, 10, 6, flags=agg.FLAG_RESULT | agg.FLAG_RESENT))])
    # a result coming in on a child's port is not the parent's: malformed
    assert sw.process(1, from_parent(1, 2, 0, total, 10, 6)) == []
    counts = [sw.counter_read(EVENTS, i)[0] for i in range(10)]
    assert counts[EV_CONTRIBUTION] == 2 and counts[EV_PARTIAL] == 2
    assert counts[EV_FROM_PARENT] == 1 and counts[EV_RESULT] == 1
    assert counts[EV_DUPLICATE] == 1 and counts[EV_RESENT] == 1
    assert counts[EV_MALFORMED] == 1


def test_a_stale_result_from_the_parent_is_dropped(make_switch):
    sw = make_switch()
    workers = workers_of(1, 2)
    configure(sw, 1, workers, base=0, size=8)
    sw.table_add("MyIngress.aggregation.agg_parents",
                 {"ipv4.dstAddr": SERVICE, "agg.job_id": 1},
                 "MyIngress.aggregation.set_parent",
                 {"port": PARENT_PORT, "mac": PARENT_MAC, "child_id": 0})
    lanes = random_lanes(random.Random(9), 2)
    run_slot(sw, workers, 1, slot=1, pool=1, block=25, lanes=lanes, exponents=[0, 0])
    # a delayed result of the pool's previous use (block 9) must not reach the children
    assert sw.process(PARENT_PORT, from_parent(1, 1, 1, sums_of(lanes), 9, 0)) == []
    assert sw.counter_read(EVENTS, EV_STALE)[0] == 1
    assert sw.register_read("MyIngress.aggregation.count", SLOTS + 1) == 2
