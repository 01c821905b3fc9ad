"""p4/fabric.p4's multicast: copies to a replication group but never back out of the
ingress port, copies to hosts turned into unicast, and reliable-multicast ACKs
aggregated per (group, sequence) until every expected receiver has acknowledged."""

from __future__ import annotations

import struct

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from .fabric_switch import (
    ACKS,
    FWD,
    HOST_MAC,
    QUEUES,
    SWITCH_MAC,
    fabric_switch,
    neighbour_mac,
    route_port,
)

MCAST_PORT = 4795
DATA, ACK = 1, 2
AGGREGATED = 0x01
GROUP = 5
MEMBERS = (1, 2, 3, 9)


def mcast_switch():
    sw = fabric_switch()
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": ("239.1.1.0", 24)},
                 FWD + "route_to_multicast", {"mcast_grp": GROUP})
    sw.mc_group_set(GROUP, [(port, GROUP) for port in MEMBERS])
    route_port(sw, "10.0.0.0", 24, 9)            # the sender, 10.0.0.5, behind port 9
    return sw


def mcast_frame(kind: int, seq: int, receivers: int = 0, src: str = "10.0.0.5",
                dst: str = "239.1.1.1", group: int = GROUP, extra: bytes = b"") -> bytes:
    header = struct.pack("!BBHII", kind, 0, group, seq, receivers)
    return bytes(Ether(dst=SWITCH_MAC, src=HOST_MAC) / IP(src=src, dst=dst, id=3)
                 / UDP(sport=7000, dport=MCAST_PORT) / (header + extra))


def ack(seq: int, receiver: int, group: int = GROUP) -> bytes:
    return mcast_frame(ACK, seq, 1 << receiver, src=f"10.1.0.{receiver + 1}", dst="10.0.0.5",
                       group=group)


def mcast_fields(frame: bytes) -> tuple[int, int, int, int, int]:
    return struct.unpack("!BBHII", bytes(Ether(frame)[UDP].payload)[:12])


def test_copies_go_to_every_member_port_but_the_ingress_port():
    sw = mcast_switch()
    data = mcast_frame(DATA, 1, extra=b"payload" * 20)
    for ingress in MEMBERS:
        out = sw.process(ingress, data)
        assert sorted(p for p, _ in out) == sorted(p for p in MEMBERS if p != ingress)
        for port, frame in out:
            assert Ether(frame).dst == neighbour_mac(port)
            assert bytes(Ether(frame)[UDP]) == bytes(Ether(data)[UDP])   # DATA is not changed
        assert sw.counter_read(QUEUES + "mcast_pruned", ingress)[0] == 1


def test_copies_to_hosts_become_unicast():
    sw = mcast_switch()
    sw.table_add(QUEUES + "mcast_host_copies",
                 {"standard_metadata.egress_rid": GROUP, "standard_metadata.egress_port": 2},
                 QUEUES + "deliver_to_host", {"dst": "10.1.0.2"})
    out = dict(sw.process(9, mcast_frame(DATA, 1, extra=b"x" * 40)))
    assert Ether(out[2])[IP].dst == "10.1.0.2" and Ether(out[2])[UDP].chksum == 0
    assert Ether(out[1])[IP].dst == "239.1.1.1"
    rebuilt = Ether(out[2])
    del rebuilt[IP].chksum
    assert Ether(bytes(rebuilt))[IP].chksum == Ether(out[2])[IP].chksum


def aggregating_switch(expected: int = 0b111):
    sw = mcast_switch()
    sw.table_add(ACKS + "ack_groups", {"mcast.group": GROUP}, ACKS + "aggregate_acks",
                 {"expected": expected})
    return sw


def test_one_ack_reaches_the_sender_once_all_receivers_acknowledged():
    sw = aggregating_switch()
    assert sw.process(1, ack(10, 0)) == []
    assert sw.process(2, ack(10, 1)) == []
    out = sw.process(3, ack(10, 2))
    assert [p for p, _ in out] == [9]
    kind, flags, group, seq, receivers = mcast_fields(out[0][1])
    assert (kind, flags, group, seq, receivers) == (ACK, AGGREGATED, GROUP, 10, 0b111)
    rebuilt = Ether(out[0][1])
    del rebuilt[UDP].chksum
    assert Ether(bytes(rebuilt))[UDP].chksum == Ether(out[0][1])[UDP].chksum
    assert sw.counter_read(ACKS + "acks_absorbed", GROUP)[0] == 2
    assert sw.counter_read(ACKS + "acks_forwarded", GROUP)[0] == 1


def test_sequences_aggregate_independently_and_duplicates_do_not_complete():
    sw = aggregating_switch()
    forwarded = []
    for seq, receiver in [(1, 0), (2, 2), (1, 0), (2, 0), (1, 1), (2, 1), (1, 2)]:
        forwarded += [mcast_fields(f)[3] for _, f in sw.process(1, ack(seq, receiver))]
    assert forwarded == [2, 1]           # seq 2 completed first; the duplicate did not count


def test_after_completion_a_repeated_ack_goes_on_again():
    sw = aggregating_switch(0b11)
    sw.process(1, ack(4, 0))
    assert len(sw.process(2, ack(4, 1))) == 1
    assert len(sw.process(2, ack(4, 1))) == 1         # the sender resent: it hears again


def test_a_newer_sequence_takes_over_the_slot_and_an_older_one_is_stale():
    sw = aggregating_switch(0b11)
    sw.process(1, ack(5, 0))                      # slot 5: seq 5, receiver 0
    assert sw.process(1, ack(5 + 256, 1)) == []   # seq 261 restarts slot 5 (receiver 0 gone)
    assert sw.process(2, ack(5, 1)) == []         # seq 5 is older than the slot's: stale
    assert sw.counter_read(ACKS + "acks_stale", GROUP)[0] == 1
    assert len(sw.process(1, ack(5 + 256, 0))) == 1


def test_sequences_across_the_wrap_aggregate_on_fresh_and_used_slots():
    # A transfer may start anywhere in the 32-bit space (the transport's first_seq):
    # a slot never used holds 0, which must not make 2**32 - 2 look older than it.
    sw = aggregating_switch(0b11)
    done = []
    for seq in (2**32 - 2, 2**32 - 1, 0, 1):
        sw.process(1, ack(seq, 0))
        done += [mcast_fields(f)[3] for _, f in sw.process(2, ack(seq, 1))]
    assert done == [2**32 - 2, 2**32 - 1, 0, 1]
    assert sw.counter_read(ACKS + "acks_stale", GROUP)[0] == 0
    assert sw.process(1, ack(2**32 - 2 - 256, 0)) == []  # older than slot 254's sequence
    assert sw.counter_read(ACKS + "acks_stale", GROUP)[0] == 1


def test_acks_of_groups_without_aggregation_pass():
    sw = aggregating_switch()
    out = sw.process(1, ack(1, 0, group=6))
    assert [p for p, _ in out] == [9]
    assert mcast_fields(out[0][1]) == (ACK, 0, 6, 1, 1)


def test_malformed_multicast_headers_are_dropped_and_counted():
    sw = aggregating_switch()
    bad_kind = mcast_frame(3, 1, src="10.1.0.1", dst="10.0.0.5")
    long_ack = mcast_frame(ACK, 1, 1, src="10.1.0.1", dst="10.0.0.5", extra=b"junk")
    short = bytes(Ether(dst=SWITCH_MAC) / IP(src="10.1.0.1", dst="10.0.0.5")
                  / UDP(sport=7000, dport=MCAST_PORT) / b"\x02\x00\x00\x05")
    for frame in (bad_kind, long_ack):
        assert sw.process(1, frame) == []
    assert sw.counter_read("FabricIngress.drops", 6)[0] == 2
    assert sw.process(1, short) == []
    assert sw.counter_read("FabricIngress.drops", 1)[0] == 1
