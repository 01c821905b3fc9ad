"""The ``p4/`` programs configured as their tests configure them, and a seeded
generator of frames for each: valid packets of the program's protocols, then
truncated, bit-flipped and junk variants (for the differential tests)."""

from __future__ import annotations

import random
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether

from netweft.emulation.switch import SoftSwitch
from netweft.transport.collectives.aggregation import layer as agg

P4_DIR = Path(__file__).resolve().parents[2] / "p4"
SWITCH_MAC = "02:00:00:00:ff:00"
HOST_MAC = "02:00:00:00:00:09"
SERVICE = "10.0.0.254"


@cache
def program(name: str):
    from netweft.p4.compiler import compile_p4

    return compile_p4(str(P4_DIR / f"{name}.p4"), include_dirs=(str(P4_DIR),))


# ---------------------------------------------------------------- configurations


def _basic_forward(sw: SoftSwitch) -> None:
    t, a = "MyIngress.ipv4_lpm", "MyIngress.ipv4_forward"
    sw.table_add(t, {"hdr.ipv4.dstAddr": ("10.0.1.0", 24)}, a,
                 {"dstAddr": "08:00:00:00:01:11", "port": 2})
    sw.table_add(t, {"hdr.ipv4.dstAddr": ("10.0.0.0", 16)}, a,
                 {"dstAddr": "08:00:00:00:02:22", "port": 3})
    sw.table_add(t, {"hdr.ipv4.dstAddr": ("10.2.0.0", 16)}, "MyIngress.drop", {})
    sw.table_add(t, {"hdr.ipv4.dstAddr": ("10.1.0.0", 16)}, a,
                 {"dstAddr": "08:00:00:00:03:33", "port": 511})


def _ecmp_spray(sw: SoftSwitch) -> None:
    for family, prefix, group, mode in (("ipv4", ("10.1.0.0", 16), 7, 0),
                                        ("ipv6", ("fd00:1::", 32), 8, 1),
                                        ("ipv4", ("10.3.0.0", 16), 8, 1)):
        sw.table_add(f"MyIngress.{family}_routes", {f"hdr.{family}.dstAddr": prefix},
                     "MyIngress.set_group", {"group_id": group, "group_size": 4, "mode": mode})
    sw.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("10.2.0.0", 16)},
                 "MyIngress.forward", {"dmac": "08:00:00:00:05:55", "port": 5})
    sw.table_add("MyIngress.ipv6_routes", {"hdr.ipv6.dstAddr": ("fd00:2::", 32)},
                 "MyIngress.forward", {"dmac": "08:00:00:00:06:66", "port": 6})
    for group in (7, 8):
        for member in range(3):      # member 3 missing: the default drop
            sw.table_add("MyIngress.group_members", {"meta.group_id": group,
                                                     "meta.member": member},
                         "MyIngress.set_next_hop",
                         {"dmac": f"08:00:00:00:0{member + 1}:{group:02x}",
                          "port": member + 1})
    sw.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": 1},
                 "MyEgress.set_ecn_threshold", {"threshold": 0})
    sw.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": 2},
                 "MyEgress.set_ecn_threshold", {"threshold": 2})


FWD, TRIM, ACKS, QUEUES = ("FabricIngress.forwarding.", "FabricIngress.trim.",
                           "FabricIngress.acks.", "FabricEgress.queues.")


def _fabric(sw: SoftSwitch) -> None:
    for port in (*range(1, 9), 9):
        sw.table_add(QUEUES + "neighbors", {"standard_metadata.egress_port": port},
                     QUEUES + "set_neighbor", {"dmac": f"02:00:00:00:01:{port:02x}",
                                               "smac": f"02:00:00:00:ff:{port:02x}"})
    params = {f"port{i}": (i + 1 if i < 4 else 0) for i in range(8)}
    sw.table_add(FWD + "ecmp_groups", {"fm.group_id": 7}, FWD + "set_members",
                 {"size": 4, **params})
    sw.table_add(FWD + "ecmp_groups", {"fm.group_id": 9}, FWD + "set_members",
                 {"size": 0, **params})
    for n, mode in enumerate((0, 1, 2, 3, 4)):
        sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": (f"10.{n + 1}.0.0", 16)},
                     FWD + "route_to_group", {"group_id": 7, "mode": mode})
        sw.table_add(FWD + "ipv6_routes", {"ipv6.dstAddr": (f"fd00:{n + 1}::", 32)},
                     FWD + "route_to_group", {"group_id": 7, "mode": mode})
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": ("10.9.0.0", 16)},
                 FWD + "route_to_group", {"group_id": 9, "mode": 0})
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": ("10.0.0.0", 24)},
                 FWD + "route_to_port", {"port": 9})
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": ("10.6.0.0", 16)}, FWD + "drop", {})
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": ("239.1.1.0", 24)},
                 FWD + "route_to_multicast", {"mcast_grp": 5})
    sw.mc_group_set(5, [(port, 5) for port in (1, 2, 3, 9)])
    sw.table_add(QUEUES + "mcast_host_copies",
                 {"standard_metadata.egress_rid": 5, "standard_metadata.egress_port": 2},
                 QUEUES + "deliver_to_host", {"dst": "10.1.0.2"})
    sw.table_add(ACKS + "ack_groups", {"mcast.group": 5}, ACKS + "aggregate_acks",
                 {"expected": 0b111})
    sw.table_add(TRIM + "trim_config", {"standard_metadata.egress_spec": 1},
                 TRIM + "set_trim", {"threshold": 0, "priority": 1, "dscp": 10})
    sw.table_add(QUEUES + "ecn_config", {"standard_metadata.egress_port": 2},
                 QUEUES + "set_ecn_threshold", {"threshold": 0})


WORKERS = [(w, w + 1, f"02:00:00:00:01:{w + 1:02x}", f"10.1.0.{w + 1}") for w in range(4)]


def _aggregation(sw: SoftSwitch) -> None:
    a_in, a_out = "MyIngress.aggregation.", "MyEgress.aggregation."
    sw.table_add(a_in + "agg_jobs", {"ipv4.dstAddr": SERVICE, "agg.job_id": 1},
                 a_in + "set_job", {"base": 0, "size": 8, "workers": 4, "mcast_grp": 1})
    sw.mc_group_set(1, [(port, w) for w, port, _, _ in WORKERS] + [(7, 9)])
    for w, _port, mac, ip in WORKERS:
        sw.table_add(a_out + "agg_workers", {"agg.job_id": 1,
                                             "standard_metadata.egress_rid": w},
                     a_out + "to_worker", {"mac": mac, "addr": ip, "udp_port": 40000 + w})
    sw.table_add("MyIngress.ipv4_routes", {"hdr.base.ipv4.dstAddr": ("10.1.0.0", 16)},
                 "MyIngress.forward", {"dmac": "02:00:00:00:02:01", "port": 5})


def _fabric_aggregation(sw: SoftSwitch) -> None:
    a_in, a_out = "FabricIngress.aggregation.", "FabricEgress.aggregation."
    for w, port, mac, ip in WORKERS:
        sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": (ip, 32)}, FWD + "route_to_port",
                     {"port": port})
        sw.table_add(QUEUES + "neighbors", {"standard_metadata.egress_port": port},
                     QUEUES + "set_neighbor", {"dmac": mac, "smac": f"02:00:00:00:ff:{port:02x}"})
        sw.table_add(a_out + "agg_workers", {"agg.job_id": 1, "standard_metadata.egress_rid": w},
                     a_out + "to_worker", {"mac": mac, "addr": ip, "udp_port": 40000})
    sw.table_add(FWD + "ipv4_routes", {"ipv4.dstAddr": ("10.9.0.0", 16)}, FWD + "route_to_port",
                 {"port": 9})
    sw.table_add(a_in + "agg_jobs", {"ipv4.dstAddr": SERVICE, "agg.job_id": 1},
                 a_in + "set_job", {"base": 0, "size": 4, "workers": 4, "mcast_grp": 0x8001})
    sw.mc_group_set(0x8001, [(port, w) for w, port, _, _ in WORKERS])


# ---------------------------------------------------------------- frames


def _ip(rng: random.Random, dst: str, options: bool = True) -> IP:
    ip = IP(src=f"10.0.0.{rng.randrange(1, 250)}", dst=dst,
            ttl=rng.choice((0, 1, 2, 64, 64, 64, 64, 64, 255)),
            tos=rng.randrange(256), id=rng.randrange(65536))
    if options and rng.random() < 0.1:
        ip.options = [b"\x01" * 4 * rng.randrange(1, 4)]
    return ip


def _ipv4_dst(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return f"10.{rng.choice((0, 1, 9))}.0.{rng.randrange(1, 6)}"
    return f"{rng.choice((10, 10, 10, 11, 239))}.{rng.choice((0, 0, 1, 1, 2, 3, 4, 5, 6, 9))}." \
           f"{rng.randrange(0, 3)}.{rng.randrange(256)}"


def _ipv6_dst(rng: random.Random) -> str:
    return f"fd00:{rng.randrange(0, 8):x}::{rng.randrange(1, 65536):x}"


def _l4(rng: random.Random, dport: int | None = None) -> object:
    sport, dport = rng.randrange(65536), dport if dport is not None else rng.choice(
        (4793, 4795, agg.AGG_UDP_PORT, 80, rng.randrange(65536)))
    if rng.random() < 0.2:
        return TCP(sport=sport, dport=dport)
    return UDP(sport=sport, dport=dport)


def _generic(rng: random.Random) -> bytes:
    eth = Ether(dst=SWITCH_MAC, src=HOST_MAC)
    kind = rng.random()
    payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 80)))
    if kind < 0.55:
        pkt = eth / _ip(rng, _ipv4_dst(rng)) / _l4(rng) / payload
    elif kind < 0.8:
        pkt = eth / IPv6(src="fd00:9::1", dst=_ipv6_dst(rng), hlim=rng.choice((0, 1, 64, 64)),
                         tc=rng.randrange(256)) / _l4(rng) / payload
    elif kind < 0.9:
        pkt = eth / Dot1Q(vlan=rng.randrange(4096)) / _ip(rng, _ipv4_dst(rng)) / _l4(rng) \
            / payload
    else:
        pkt = eth / ARP(pdst="10.0.0.1")
    return bytes(pkt)


def _uet(rng: random.Random) -> bytes:
    pds_type = rng.randrange(32)
    prologue = (pds_type << 11 | rng.randrange(128)).to_bytes(2, "big")
    body = prologue + bytes(rng.randrange(256) for _ in range(rng.choice((10, 70, 200))))
    dst = _ipv4_dst(rng) if rng.random() < 0.7 else _ipv6_dst(rng)
    ip = IPv6(src="fd00:9::1", dst=dst, hlim=64, tc=rng.randrange(256)) if ":" in dst \
        else _ip(rng, dst, options=False)
    return bytes(Ether(dst=SWITCH_MAC, src=HOST_MAC) / ip
                 / UDP(sport=rng.randrange(49152, 65536), dport=4793) / body)


def _mcast(rng: random.Random) -> bytes:
    kind = rng.choice((1, 2, 3))
    seq = rng.randrange(0, 40)
    header = struct.pack("!BBHII", kind, 0, rng.choice((5, 5, 6)), seq, 1 << rng.randrange(3))
    dst = "239.1.1.1" if kind == 1 else "10.0.0.5"
    return bytes(Ether(dst=SWITCH_MAC, src=HOST_MAC)
                 / IP(src=f"10.1.0.{rng.randrange(1, 4)}", dst=dst, id=3)
                 / UDP(sport=7000, dport=4795) / (header + b"x" * rng.randrange(0, 30)))


def _contribution(rng: random.Random) -> bytes:
    w, _port, mac, ip = rng.choice(WORKERS)
    lanes = [rng.randrange(-(1 << 31), 1 << 31) for _ in range(agg.AGG_LANES)]
    fields = {}
    if rng.random() < 0.1:
        fields["version"] = rng.randrange(4)
    return bytes(Ether(dst=SWITCH_MAC, src=mac)
                 / IP(src=ip, dst=rng.choice((SERVICE, SERVICE, "10.1.0.9")), id=7, ttl=64)
                 / UDP(sport=40000 + w, dport=agg.AGG_UDP_PORT)
                 / agg.Aggregation(flags=rng.choice((0, 0, 0, 1)), job_id=rng.choice((1, 1, 2)),
                                   slot=rng.randrange(10), pool=rng.randrange(2),
                                   worker_id=rng.choice((w, w, w, 7)), block=rng.randrange(3),
                                   exponent=rng.randrange(-32768, 32768), lanes=lanes, **fields))


def mutate(rng: random.Random, frame: bytes) -> bytes:
    """A truncation, a few flipped bytes, or junk."""
    r = rng.random()
    if r < 0.4:
        return frame[:rng.randrange(0, len(frame) + 1)]
    if r < 0.8:
        data = bytearray(frame)
        for _ in range(rng.randrange(1, 4)):
            if data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return bytes(data)
    return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120)))


@dataclass(frozen=True)
class Spec:
    name: str
    configure: Callable[[SoftSwitch], None]
    makers: tuple[Callable[[random.Random], bytes], ...]
    ports: tuple[int, ...] = (1, 2, 3, 9)


SPECS = {
    "basic_forward": Spec("basic_forward", _basic_forward, (_generic,)),
    "ecmp_spray": Spec("ecmp_spray", _ecmp_spray, (_generic, _uet)),
    "fabric": Spec("fabric", _fabric, (_generic, _uet, _mcast)),
    "aggregation": Spec("aggregation", _aggregation, (_generic, _contribution)),
    "fabric_aggregation": Spec("fabric_aggregation", _fabric_aggregation,
                               (_generic, _uet, _contribution, _mcast)),
}


def switch(name: str, backend: str, **options) -> SoftSwitch:
    sw = SoftSwitch(program(name), backend=backend, **options)
    SPECS[name].configure(sw)
    return sw


def frames(name: str, count: int, seed: int) -> list[tuple[int, bytes]]:
    """``count`` (ingress port, frame) pairs for program ``name``, a third mutated."""
    rng = random.Random(seed)
    spec = SPECS[name]
    out = []
    for _ in range(count):
        frame = rng.choice(spec.makers)(rng)
        if rng.random() < 0.35:
            frame = mutate(rng, frame)
        out.append((rng.choice(spec.ports), frame))
    return out
