"""p4/fabric.p4 trims UET data packets headed for a queue at or above the port's trim
threshold (traffic manager in virtual time): headers kept, mark and DSCP set,
lengths and checksums fixed, sent at high priority ahead of the queued packets."""

from __future__ import annotations

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from netweft.emulation.links.port_options import parse_link_options

from .fabric_switch import HOST_PORT, QUEUES, TRIM, fabric_switch, route_port, run, uet_request

THRESHOLD = 4
TRIM_DSCP = 10
T_FLAG = 0x40
KEEP = 64


def trimming_switch(threshold: int = THRESHOLD, priority: int = 1):
    sw = fabric_switch(priority_queues=2)
    route_port(sw, "10.1.0.0", 16, 1)
    route_port(sw, "fd00:1::", 32, 1)
    route_port(sw, "10.2.0.0", 16, 2)
    sw.table_add(TRIM + "trim_config", {"standard_metadata.egress_spec": 1},
                 TRIM + "set_trim", {"threshold": threshold, "priority": priority,
                                     "dscp": TRIM_DSCP})
    sw.configure_port(1, parse_link_options(["1:rate=10mbit,queue=64"])[1])
    return sw


def burst(frames: list[bytes]) -> list[tuple[int, int, bytes]]:
    return [(0, HOST_PORT, f) for f in frames]


def tagged(k: int, **kw) -> bytes:
    """A RUD request whose entropy (UDP source port) numbers it."""
    return uet_request(sport=50000 + k, **kw)


def udp_checksum_ok(frame: bytes) -> bool:
    pkt = Ether(frame)
    sent = pkt[UDP].chksum
    del pkt[UDP].chksum
    return Ether(bytes(pkt))[UDP].chksum == sent


def test_a_burst_is_trimmed_from_the_threshold_on():
    sw = trimming_switch()
    sent = [tagged(k) for k in range(20)]
    out = run(sw, burst(sent))
    assert len(out) == 20
    by_tag = {Ether(f)[UDP].sport - 50000: f for _, _, f in out}
    # packet k finds k - 1 queued (packet 0 leaves at once): trimmed from depth THRESHOLD on
    trimmed = sorted(k for k, f in by_tag.items() if len(f) < len(sent[k]))
    assert trimmed == list(range(THRESHOLD + 1, 20))
    assert sw.counter_read(TRIM + "trimmed", 1)[0] == len(trimmed)


def test_a_trimmed_packet_keeps_its_headers_and_carries_the_mark():
    sw = trimming_switch()
    sent = [tagged(k) for k in range(8)]
    out = {Ether(f)[UDP].sport - 50000: f for _, _, f in run(sw, burst(sent))}
    original, cut = Ether(sent[7]), Ether(out[7])
    assert len(out[7]) == 14 + 20 + 8 + KEEP
    assert cut[IP].len == 20 + 8 + KEEP and cut[UDP].len == 8 + KEEP
    assert cut[IP].tos >> 2 == TRIM_DSCP and cut[IP].ttl == 63
    kept, whole = bytes(cut[UDP].payload), bytes(original[UDP].payload)
    assert kept[0] == whole[0] and kept[1] == whole[1] | T_FLAG
    assert kept[2:] == whole[2:KEEP]
    assert udp_checksum_ok(out[7])
    rebuilt = Ether(out[7])
    del rebuilt[IP].chksum
    assert Ether(bytes(rebuilt))[IP].chksum == cut[IP].chksum
    # the packets before the threshold leave whole, their UDP datagram untouched
    assert bytes(Ether(out[0])[UDP]) == bytes(Ether(sent[0])[UDP])


def test_trimmed_packets_overtake_the_queue_at_high_priority():
    sw = trimming_switch()
    out = run(sw, burst([tagged(k) for k in range(12)]))
    order = [Ether(f)[UDP].sport - 50000 for _, _, f in out]
    # 0 leaves at once; the trimmed 5..11 (priority 1) before the full 1..4 still queued
    assert order[0] == 0
    assert order[1:8] == list(range(5, 12))
    assert order[8:] == [1, 2, 3, 4]


def test_priority_zero_keeps_trimmed_packets_in_line():
    sw = trimming_switch(priority=0)
    out = run(sw, burst([tagged(k) for k in range(12)]))
    assert [Ether(f)[UDP].sport - 50000 for _, _, f in out] == list(range(12))


def test_ipv6_trimming_fixes_payload_length_and_checksum():
    sw = trimming_switch()
    sent = [tagged(k, dst="fd00:1::7", src="fd00:9::5") for k in range(8)]
    out = {Ether(f)[UDP].sport - 50000: f for _, _, f in run(sw, burst(sent))}
    cut = Ether(out[7])
    assert len(out[7]) == 14 + 40 + 8 + KEEP
    assert cut[IPv6].plen == 8 + KEEP and cut[IPv6].tc >> 2 == TRIM_DSCP
    assert bytes(cut[UDP].payload)[1] & T_FLAG
    assert udp_checksum_ok(out[7])


def test_only_uet_data_packets_longer_than_the_kept_bytes_are_trimmed():
    sw = trimming_switch()
    ack = uet_request(pds_type=7, sport=40000)                     # an ACK: never trimmed
    short = uet_request(payload=KEEP - 12, sport=40001)            # 64 bytes of UDP payload
    other = bytes(Ether(dst="02:00:00:00:ff:00") / IP(src="10.0.0.5", dst="10.1.0.7")
                  / UDP(sport=40002, dport=9000) / (b"z" * 1000))  # not UET
    already = uet_request(flags=T_FLAG, payload=KEEP - 12, sport=40003)
    frames = [tagged(k) for k in range(10)] + [ack, short, other, already]
    out = run(sw, burst(frames))
    lengths = {Ether(f)[UDP].sport: len(f) for _, _, f in out}
    for frame in (ack, short, other, already):
        assert lengths[Ether(frame)[UDP].sport] == len(frame)
    assert sum(len(f) < 200 for _, _, f in out) == 10 - (THRESHOLD + 1) + 2


def test_ports_without_a_trim_setting_never_trim():
    sw = trimming_switch()
    sw.configure_port(2, parse_link_options(["2:rate=10mbit,queue=64"])[2])
    out = run(sw, burst([tagged(k, dst="10.2.0.9") for k in range(30)]))
    assert len(out) == 30 and all(len(f) > 1000 for _, _, f in out)
    assert sw.counter_read(TRIM + "trimmed", 2)[0] == 0
    assert sw.counter_read(QUEUES + "tx_port", 2)[0] == 30


def test_the_queue_estimate_agrees_with_enq_qdepth_under_random_arrivals():
    """Trim and ECN thresholds equal, trimmed packets in the same queue (priority 0):
    ingress's estimate trims exactly the packets whose enq_qdepth egress marks."""
    import random

    for seed, threshold in ((1, 3), (2, 6), (3, 10)):
        rng = random.Random(seed)
        sw = trimming_switch(threshold=threshold, priority=0)
        sw.table_add(QUEUES + "ecn_config", {"standard_metadata.egress_port": 1},
                     QUEUES + "set_ecn_threshold", {"threshold": threshold})
        t, sends = 0, []
        for k in range(300):
            t += rng.choice((0, 0, 50_000, 300_000, 900_000, 3_000_000))   # bursts and gaps
            sends.append((t, HOST_PORT, tagged(k, tos=2, payload=rng.randint(100, 1400))))
        out = run(sw, sends)
        assert len(out) == 300 and sw.stats["dropped"] == 0
        trimmed = {Ether(f)[UDP].sport for _, _, f in out
                   if bytes(Ether(f)[UDP].payload)[1] & T_FLAG}
        marked = {Ether(f)[UDP].sport for _, _, f in out if Ether(f)[IP].tos & 3 == 3}
        assert trimmed == marked and 0 < len(trimmed) < 300
