"""p4/fabric.p4's ECMP groups and its five spray modes, chosen per destination prefix:
flow hash (crc32 of the 5-tuple), entropy (UDP source port), random, round robin
and adaptive (the member whose port has the shortest queue estimate)."""

from __future__ import annotations

import ipaddress
import struct
import zlib
from collections import Counter

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from netweft.emulation.links.port_options import parse_link_options

from .fabric_switch import (
    FWD,
    GROUP,
    HOST_PORT,
    QUEUES,
    UPLINKS,
    add_group,
    fabric_switch,
    neighbour_mac,
    port_mac,
    route_group,
    route_port,
    run,
    uet_request,
)

FLOW_HASH, ENTROPY, RANDOM, ROUND_ROBIN, ADAPTIVE = range(5)


def group_switch(mode: int, ports: tuple[int, ...] = UPLINKS, **options):
    sw = fabric_switch(**options)
    add_group(sw, GROUP, ports)
    route_group(sw, "10.1.0.0", 16, GROUP, mode)
    route_group(sw, "fd00:1::", 32, GROUP, mode)
    return sw


def out_port(sw, frame: bytes) -> int:
    (port, _), = sw.process(HOST_PORT, frame)
    return port


def flow_key(src: str, dst: str, proto: int, sport: int, dport: int) -> bytes:
    return (ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
            + bytes([proto]) + struct.pack("!HH", sport, dport))


def test_flow_hash_is_crc32_of_the_five_tuple_and_keeps_a_flow_on_its_path():
    sw = group_switch(FLOW_HASH)
    seen = Counter()
    for sport in range(49152, 49152 + 64):
        port = UPLINKS[zlib.crc32(flow_key("10.0.0.5", "10.1.0.7", 17, sport, 4793)) % 4]
        frame = uet_request(sport=sport)
        expected = Ether(frame)
        expected.dst, expected.src = neighbour_mac(port), port_mac(port)
        expected[IP].ttl = 63
        del expected[IP].chksum
        assert sw.process(HOST_PORT, frame) == [(port, bytes(expected))]
        assert out_port(sw, frame) == port
        seen[port] += 1
    assert set(seen) == set(UPLINKS)


def test_flow_hash_over_ipv6():
    sw = group_switch(FLOW_HASH)
    for sport in (1000, 2000, 3000, 4000, 5000):
        frame = uet_request(sport=sport, src="fd00:9::5", dst="fd00:1::7")
        port = UPLINKS[zlib.crc32(flow_key("fd00:9::5", "fd00:1::7", 17, sport, 4793)) % 4]
        assert out_port(sw, frame) == port
        assert Ether(sw.process(HOST_PORT, frame)[0][1])[IPv6].hlim == 63


def test_entropy_mode_follows_the_udp_source_port_alone():
    sw = group_switch(ENTROPY)
    counts = Counter()
    for sport in range(49152, 49152 + 400):
        port = out_port(sw, uet_request(sport=sport))
        assert port == UPLINKS[sport % 4]
        counts[port] += 1
        # other addresses, same entropy: same path
        assert out_port(sw, uet_request(sport=sport, src="10.0.3.3", dst="10.1.9.9")) == port
    assert counts == Counter({p: 100 for p in UPLINKS})


def test_random_mode_sprays_one_flow_uniformly():
    sw = group_switch(RANDOM)
    counts = Counter(out_port(sw, uet_request(sport=50000)) for _ in range(4000))
    assert set(counts) == set(UPLINKS)
    # binomial(4000, 1/4): sd 27; 5 sd either side
    assert all(865 <= c <= 1135 for c in counts.values()), counts


def test_round_robin_visits_the_members_in_order_with_a_cursor_per_group():
    sw = group_switch(ROUND_ROBIN)
    add_group(sw, 8, (5, 6, 7))
    route_group(sw, "10.3.0.0", 16, 8, ROUND_ROBIN)
    seq, other = [], []
    for _ in range(9):
        seq.append(out_port(sw, uet_request(sport=50000)))
        other.append(out_port(sw, uet_request(sport=50000, dst="10.3.0.1")))
    assert seq == [1, 2, 3, 4, 1, 2, 3, 4, 1]
    assert other == [5, 6, 7] * 3
    assert sw.register_read("FabricIngress.forwarding.rr_cursor", GROUP) == 1


def test_the_mode_is_chosen_per_destination_prefix():
    sw = group_switch(ROUND_ROBIN)
    route_group(sw, "10.1.7.0", 24, GROUP, FLOW_HASH)      # a longer prefix, another mode
    sprayed = {out_port(sw, uet_request(sport=50000, dst="10.1.0.7")) for _ in range(8)}
    hashed = {out_port(sw, uet_request(sport=50000, dst="10.1.7.7")) for _ in range(8)}
    assert sprayed == set(UPLINKS) and len(hashed) == 1


def test_adaptive_mode_spreads_an_idle_group_uniformly():
    sw = group_switch(ADAPTIVE)
    counts = Counter(out_port(sw, uet_request(sport=50000)) for _ in range(2000))
    assert all(400 <= c <= 600 for c in counts.values()) and set(counts) == set(UPLINKS), counts


def _unequal_uplinks(mode: int):
    """Two uplinks, 10 and 40 Mbit/s, 16-packet queues."""
    sw = group_switch(mode, ports=(1, 2))
    for spec in ("1:rate=10mbit,queue=16", "2:rate=40mbit,queue=16"):
        port, opts = next(iter(parse_link_options([spec]).items()))
        sw.configure_port(port, opts)
    return sw


def _offer(sw, count: int = 300, gap_ns: int = 200_000):
    """``count`` 1000-byte frames of one flow, one every ``gap_ns`` (about 42 Mbit/s)."""
    sends = [(k * gap_ns, HOST_PORT, uet_request(sport=50000, payload=946)) for k in range(count)]
    out = run(sw, sends)
    return Counter(p for _, p, _ in out), sw.stats["drop_queue_full"]


def test_adaptive_mode_follows_the_queues_where_round_robin_overflows_the_slow_link():
    adaptive, adaptive_drops = _offer(_unequal_uplinks(ADAPTIVE))
    robin, robin_drops = _offer(_unequal_uplinks(ROUND_ROBIN))
    assert adaptive_drops == 0 and sum(adaptive.values()) == 300
    assert adaptive[2] > 3 * adaptive[1]            # the 40 Mbit/s link carries most
    assert robin_drops > 0                          # half the load on 10 Mbit/s does not fit
    assert robin[1] + robin_drops == robin[2] == 150


def test_adaptive_mode_avoids_a_port_loaded_by_other_traffic():
    sw = group_switch(ADAPTIVE, ports=(1, 2))
    for port in (1, 2):
        sw.configure_port(port, parse_link_options([f"{port}:rate=10mbit,queue=64"])[port])
    route_port(sw, "10.9.0.0", 16, 1)                 # a host route through uplink 1
    background = [(0, 3, uet_request(sport=40000 + k, dst="10.9.0.1")) for k in range(30)]
    sprayed = [(1000 + k, HOST_PORT, uet_request(sport=50000)) for k in range(20)]
    out = run(sw, background + sprayed)
    ports = Counter(p for _, p, f in out if Ether(f)[UDP].sport == 50000)
    assert ports == Counter({2: 20})
    assert sw.counter_read(QUEUES + "tx_port", 1)[0] == 30


def test_unknown_empty_and_oversized_groups_drop_and_count():
    sw = fabric_switch()
    route_group(sw, "10.1.0.0", 16, 3, FLOW_HASH)          # group 3 has no entry
    add_group(sw, 4, ())
    route_group(sw, "10.4.0.0", 16, 4, RANDOM)
    sw.table_add(FWD + "ecmp_groups", {"fm.group_id": 5}, FWD + "set_members",
                 {"size": 9, **{f"port{i}": 1 for i in range(8)}})
    route_group(sw, "10.5.0.0", 16, 5, ROUND_ROBIN)
    for dst in ("10.1.0.1", "10.4.0.1", "10.5.0.1"):
        assert sw.process(HOST_PORT, uet_request(dst=dst)) == []
    assert sw.counter_read("FabricIngress.drops", 5)[0] == 3


def test_a_route_to_a_port_and_the_default_drop():
    sw = fabric_switch()
    route_port(sw, "10.7.0.0", 16, 6)
    assert out_port(sw, uet_request(dst="10.7.1.1")) == 6
    assert sw.process(HOST_PORT, uet_request(dst="10.8.1.1")) == []
    assert sw.counter_read("FabricIngress.drops", 4)[0] == 1
    assert IP in Ether(sw.process(HOST_PORT, uet_request(dst="10.7.1.1"))[0][1])
