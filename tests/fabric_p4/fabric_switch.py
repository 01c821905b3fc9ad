"""p4/fabric.p4 on the embedded switch: the compiled program (once per run), a
switch with a small fabric's entries, and the packets the tests send."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from netweft.emulation.switch import SoftSwitch

P4_DIR = Path(__file__).resolve().parents[2] / "p4"
FWD = "FabricIngress.forwarding."
TRIM = "FabricIngress.trim."
ACKS = "FabricIngress.acks."
QUEUES = "FabricEgress.queues."

HOST_PORT = 9
HOST_MAC = "02:00:00:00:00:09"
SWITCH_MAC = "02:00:00:00:ff:00"
GROUP = 7
UPLINKS = (1, 2, 3, 4)


def neighbour_mac(port: int) -> str:
    return f"02:00:00:00:01:{port:02x}"


def port_mac(port: int) -> str:
    return f"02:00:00:00:ff:{port:02x}"


@cache
def fabric_program():
    from netweft.p4.compiler import compile_p4

    return compile_p4(str(P4_DIR / "fabric.p4"), include_dirs=(str(P4_DIR),))


def fabric_switch(**options) -> SoftSwitch:
    """A switch whose neighbours (ports 1..9) have MACs from ``neighbour_mac``."""
    sw = SoftSwitch(fabric_program(), **options)
    for port in (*range(1, 9), HOST_PORT):
        sw.table_add(QUEUES + "neighbors", {"standard_metadata.egress_port": port},
                     QUEUES + "set_neighbor", {"dmac": neighbour_mac(port), "smac": port_mac(port)})
    return sw


def add_group(sw: SoftSwitch, group: int, ports: tuple[int, ...]) -> None:
    params = {f"port{i}": (ports[i] if i < len(ports) else 0) for i in range(8)}
    sw.table_add(FWD + "ecmp_groups", {"fm.group_id": group}, FWD + "set_members",
                 {"size": len(ports), **params})


def route_group(sw: SoftSwitch, prefix: str, length: int, group: int, mode: int) -> None:
    family = "ipv6" if ":" in prefix else "ipv4"
    sw.table_add(f"{FWD}{family}_routes", {f"{family}.dstAddr": (prefix, length)},
                 FWD + "route_to_group", {"group_id": group, "mode": mode})


def route_port(sw: SoftSwitch, prefix: str, length: int, port: int) -> None:
    family = "ipv6" if ":" in prefix else "ipv4"
    sw.table_add(f"{FWD}{family}_routes", {f"{family}.dstAddr": (prefix, length)},
                 FWD + "route_to_port", {"port": port})


def uet_request(pds_type: int = 2, flags: int = 0, payload: int = 1000, sport: int = 49152,
                dst: str = "10.1.0.7", src: str = "10.0.0.5", tos: int = 0,
                ttl: int = 64) -> bytes:
    """A UET request over IPv4: a PDS header (prologue + 10 bytes), then payload bytes."""
    prologue = ((pds_type & 0x1F) << 11 | (flags & 0x7F)).to_bytes(2, "big")
    pds = prologue + bytes(range(1, 11))
    body = bytes((i * 7) & 0xFF for i in range(payload))
    ip = IPv6(src=src, dst=dst, tc=tos, hlim=ttl) if ":" in dst else \
        IP(src=src, dst=dst, tos=tos, ttl=ttl, id=1)
    return bytes(Ether(dst=SWITCH_MAC, src=HOST_MAC) / ip / UDP(sport=sport, dport=4793)
                 / (pds + body))


def run(sw: SoftSwitch, sends: list[tuple[int, int, bytes]]) -> list[tuple[int, int, bytes]]:
    """Feed ``(time_ns, port, frame)`` in time order and step the virtual clock from
    deadline to deadline; every ``(time, port, frame)`` that leaves, in order."""
    out: list[tuple[int, int, bytes]] = []
    for t, port, frame in sorted(sends, key=lambda s: s[0]):
        while (deadline := sw.next_deadline()) is not None and deadline < t:
            out += [(deadline, p, f) for p, f in sw.advance(deadline)]
        out += [(t, p, f) for p, f in sw.receive(port, frame, t)]
    while (deadline := sw.next_deadline()) is not None:
        out += [(deadline, p, f) for p, f in sw.advance(deadline)]
    return out
