"""``netweft bench switch``: packets per second of the embedded P4 switch.

Measures :meth:`SoftSwitch.process` on one core for netweft's basic IPv4
LPM forwarder (``p4/basic_forward.p4``, with a route installed so that
packets are forwarded) and for the largest program in ``p4/``, with the
table entries that make it do its real work where they are known (for
``ecmp_spray.p4``: flow-hashed and sprayed rows side by side), else with no
entries; and the basic forwarder through the traffic manager (``receive`` on a
virtual clock with a queue, then also a link's rate and delay), so the cost of
queueing shows beside ``process``.  Prints absolute figures; tests never
assert them.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from netweft.emulation.links.port_options import parse_link_options
from netweft.p4.programs import source_dir
from netweft.testbed.arg_types import existing_dir, existing_file, int_in
from netweft.testbed.command_line import CommandError


def udp_frame(dst: str, payload: int = 64) -> bytes:
    """An Ethernet/IPv4/UDP frame to ``dst`` (UDP port 4793) with ``payload`` bytes of x."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    pkt = (Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02")
           / IP(src="10.0.0.1", dst=dst, ttl=64) / UDP(sport=1234, dport=4793)
           / (b"x" * payload))
    return bytes(pkt)


def measure(switch: object, frames: list[bytes], count: int) -> tuple[float, float, int]:
    """``(packets/s of wall time, packets/s of CPU time, packets sent)`` for ``count`` calls.

    CPU time is this process's, so the second figure is what one core does
    even when other work shares the machine.
    """
    process = switch.process  # type: ignore[attr-defined]
    n = len(frames)
    sent = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        sent += len(process(1, frames[i % n]))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return (count / wall if wall > 0 else float("inf"),
            count / cpu if cpu > 0 else float("inf"), sent)


class ThroughQueues:
    """``process`` through the traffic manager: ``receive`` on a virtual clock (1 us/frame)."""

    def __init__(self, switch: object) -> None:
        self._receive = switch.receive  # type: ignore[attr-defined]
        self._now = 0

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        self._now += 1000
        return self._receive(port, frame, self._now)


# Rows measuring the traffic manager and link model on basic_forward.p4 (port 2 out).
_QUEUE_ROWS = [("queue=64", "via queues (2:queue=64)"),
               ("queue=64,rate=10gbit,delay=10us", "via queues+link (10gbit, 10us)")]


def largest_program(folder: Path) -> Path | None:
    """The biggest ``.p4`` file directly in ``folder`` (by size)."""
    programs = sorted(folder.glob("*.p4"), key=lambda p: (p.stat().st_size, p.name))
    return programs[-1] if programs else None


def setup_ecmp_spray(switch: object, mode: int) -> str:
    """10.0.0.0/8 to a 4-member group; mode 0 hashes flows, mode 1 sprays round robin."""
    switch.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                     "MyIngress.set_group", {"group_id": 1, "group_size": 4, "mode": mode})
    for member in range(4):
        switch.table_add("MyIngress.group_members", {"meta.group_id": 1, "meta.member": member},
                         "MyIngress.set_next_hop",
                         {"dmac": f"08:00:00:00:02:{member:02x}", "port": member + 1})
        switch.table_add("MyEgress.ecn_config", {"standard_metadata.egress_port": member + 1},
                         "MyEgress.set_ecn_threshold", {"threshold": 20})
    return "4-way ECMP, flow hash" if mode == 0 else "4-way ECMP, per-packet spray"


# Table entries that make a program in p4/ do its real work; one row per configuration.
_CONFIGURATIONS = {
    "ecmp_spray.p4": [lambda sw: setup_ecmp_spray(sw, 0), lambda sw: setup_ecmp_spray(sw, 1)],
}


def run_switch_bench(args: argparse.Namespace) -> int:
    """Measure and print both programs; returns the exit code."""
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import P4Error, compile_p4

    folder = source_dir()
    includes = (str(folder),)
    frames = [udp_frame(f"10.0.{i % 4}.{1 + i % 200}") for i in range(64)]
    rows = []
    try:
        basic = compile_p4(str(folder / "basic_forward.p4"), include_dirs=includes)
    except P4Error as err:
        raise CommandError(f"cannot compile basic_forward.p4: {err}") from None
    sw = SoftSwitch(basic, backend=args.backend)
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                 "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 2})
    measure(sw, frames, min(args.packets, 500))  # warm up
    pps, cpu_pps, sent = measure(sw, frames, args.packets)
    rows.append(("basic_forward.p4 (IPv4 LPM, 1 route)", pps, cpu_pps, sent))
    for settings, label in _QUEUE_ROWS:
        queued = SoftSwitch(basic, backend=args.backend)
        queued.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                         "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 2})
        queued.configure_port(2, parse_link_options([f"2:{settings}"])[2])
        through = ThroughQueues(queued)
        measure(through, frames, min(args.packets, 500))
        rows.append((f"basic_forward.p4 {label}", *measure(through, frames, args.packets)))
    big = args.program or largest_program(folder)
    if big is not None:
        try:
            prog = compile_p4(str(big), include_dirs=(*includes, *args.include))
        except P4Error as err:
            raise CommandError(f"cannot compile {big.name}: {err}") from None
        for setup in _CONFIGURATIONS.get(big.name, [lambda _sw: "no entries"]):
            sw2 = SoftSwitch(prog, backend=args.backend)
            label = setup(sw2)
            measure(sw2, frames, min(args.packets, 500))
            pps2, cpu2, sent2 = measure(sw2, frames, args.packets)
            rows.append((f"{big.name} ({label})", pps2, cpu2, sent2))
    print(f"{'program':<52} {'packets/s':>10} {'per CPU s':>10} {'in':>7} {'out':>7}")
    for name, rate, cpu_rate, out in rows:
        print(f"{name:<52} {rate:>10,.0f} {cpu_rate:>10,.0f} {args.packets:>7} {out:>7}")
    return 0


def _run_switch_command(args: argparse.Namespace) -> int:
    """``bench switch``: in process, or over veth with ``--veth``."""
    if not args.veth:
        return run_switch_bench(args)
    from netweft.testbed.bench import switch_veth

    if args.veth_programs:
        switch_veth.run_programs(seconds=args.veth_seconds)
        return 0
    switch_veth.run(seconds=args.veth_seconds, json_out=args.veth_json)
    return 0


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench switch``."""
    sw = benches.add_parser("switch", help="packets/s of the embedded P4 switch")
    sw.add_argument("--packets", type=int_in(1, 100_000_000), default=20000,
                    help="packets per measured program (default 20000)")
    sw.add_argument("--program", type=existing_file,
                    help="a .p4 file to measure instead of the largest in p4/")
    sw.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                    type=existing_dir,
                    help="directory searched by #include for --program (repeatable)")
    sw.add_argument("--backend", choices=("auto", "c", "python"),
                    help="switch back end (default: $NETWEFT_SWITCH_BACKEND, else auto); "
                         "tests/native/measure_pps.py prints both side by side")
    sw.add_argument("--veth", action="store_true",
                    help="measure over veth instead: the minimal C forwarder, the native switch, "
                         "the Python switch process and, when p4c-bm2-ss and simple_switch_grpc "
                         "are on PATH, BMv2 side by side (root; "
                         "netweft.testbed.bench.switch_veth)")
    sw.add_argument("--veth-seconds", type=float, default=1.0, metavar="S",
                    help="with --veth: seconds per offered load (default 1)")
    sw.add_argument("--veth-json", type=Path, metavar="FILE",
                    help="with --veth: write every measured point as JSON")
    sw.add_argument("--veth-programs", action="store_true",
                    help="with --veth: fabric.p4 and aggregation.p4 on the switch process, "
                         "C loop beside Python (and BMv2, as for --veth), instead of basic_forward")
    sw.set_defaults(func=_run_switch_command)
