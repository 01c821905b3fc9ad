"""``netweft bench aggregation``: how fast the embedded switch aggregates.

Runs :meth:`SoftSwitch.process` on one core, side by side in one run: the basic
IPv4 forwarder (``p4/basic_forward.p4``, a 314-byte frame, the size of an
aggregation packet) as the reference, then ``p4/aggregation.p4`` and
``p4/fabric_aggregation.p4`` summing blocks of K = 64 lanes from 2, 4 and 8
workers (each block: one contribution per worker, the last one multicast to all
workers). Prints contributions/s, lanes/s, completed blocks/s and the ratio of
contributions/s to the forwarder's packets/s, and writes the raw numbers as
JSON. Absolute figures depend on the machine and its load; tests never assert
them.
"""

from __future__ import annotations

import argparse
import json
import time
from functools import cache
from pathlib import Path

from netweft.testbed.arg_types import int_in

SERVICE = "10.0.0.254"
SLOTS = 64  # the job's slot range in the bench


@cache
def _compiled(program_name: str):
    from netweft.p4.compiler import compile_p4
    from netweft.p4.programs import program

    return compile_p4(str(program(program_name)))


def _configured(program_name: str, workers: int):
    """A switch running ``program_name`` with job 1: ``workers`` workers on ports 1..n."""
    from netweft.emulation.switch import SoftSwitch
    from netweft.testbed.control.aggregation.job import AggregationJob, JobWorker
    from netweft.testbed.control.in_process_installer import install_in_process

    sw = SoftSwitch(_compiled(program_name))
    job = AggregationJob(1, SERVICE, 0, SLOTS, [
        JobWorker(w, w + 1, f"02:00:00:00:00:{w + 1:02x}", f"10.0.1.{w + 1}", 40000)
        for w in range(workers)])
    install_in_process(sw, job.writes(), program_name)
    return sw


def _contributions(workers: int, blocks: int) -> list[tuple[int, bytes]]:
    """(port, frame) of every worker's contribution to ``blocks`` blocks, block by block."""
    import numpy as np

    from netweft.transport.collectives.aggregation import layer as agg

    lanes = np.arange(agg.AGG_LANES, dtype=agg.LANES_DTYPE).tobytes()
    out = []
    for block in range(blocks):
        slot, pool = block % SLOTS, (block // SLOTS) % 2
        for w in range(workers):
            head = (bytes.fromhex("02000000fe00" f"020000000{w + 1:03x}") + b"\x08\x00")
            ip = _ipv4(f"10.0.1.{w + 1}", SERVICE, 8 + agg.PACKET_LEN)
            udp = (40000).to_bytes(2, "big") + agg.AGG_UDP_PORT.to_bytes(2, "big") \
                + (8 + agg.PACKET_LEN).to_bytes(2, "big") + b"\0\0"
            payload = agg.HEADER_STRUCT.pack(agg.AGG_VERSION, 0, 1, slot, pool << 7, w, block,
                                             0, agg.AGG_LANES) + lanes
            out.append((w + 1, head + ip + udp + payload))
    return out


def _ipv4(src: str, dst: str, payload: int) -> bytes:
    import struct

    header = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + payload, 0, 0, 64, 17, 0,
                                   bytes(map(int, src.split("."))),
                                   bytes(map(int, dst.split(".")))))
    total = sum(struct.unpack("!10H", bytes(header)))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    header[10:12] = struct.pack("!H", ~total & 0xFFFF)
    return bytes(header)


def _rate(sw, frames: list[tuple[int, bytes]]) -> tuple[float, int]:
    """(frames/s of CPU time, frames the switch sent) over ``frames``."""
    process, sent = sw.process, 0
    start = time.process_time()
    for port, data in frames:
        sent += len(process(port, data))
    elapsed = time.process_time() - start
    return (len(frames) / elapsed if elapsed > 0 else float("inf")), sent


def forwarding_rate(packets: int) -> float:
    """basic_forward.p4's packets/s (CPU) for 314-byte frames, as the reference."""
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4
    from netweft.p4.programs import program
    from netweft.testbed.bench.switch import udp_frame
    from netweft.transport.collectives.aggregation.layer import PACKET_LEN

    sw = SoftSwitch(compile_p4(str(program("basic_forward"))))
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                 "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 2})
    frames = [(1, udp_frame(f"10.0.{i % 4}.{1 + i % 200}", PACKET_LEN)) for i in range(64)]
    _rate(sw, frames * 4)  # warm up
    return _rate(sw, (frames * (packets // len(frames) + 1))[:packets])[0]


def run_bench(blocks: int, workers: tuple[int, ...] = (2, 4, 8),
              programs: tuple[str, ...] = ("aggregation", "fabric_aggregation")) -> dict:
    """The raw numbers: the forwarder's packets/s and one row per (program, workers)."""
    from netweft.transport.collectives.aggregation.layer import AGG_LANES

    reference = forwarding_rate(blocks * max(workers))
    rows = []
    for name in programs:
        for n in workers:
            sw = _configured(name, n)
            frames = _contributions(n, blocks)
            _rate(_configured(name, n), frames[: n * min(blocks, 8)])  # warm up
            rate, sent = _rate(sw, frames)
            if sent != blocks * n:
                raise RuntimeError(f"{name}, {n} workers: {sent} result copies for {blocks} "
                                   f"blocks, expected {blocks * n}")
            rows.append({"program": name, "workers": n, "blocks": blocks,
                         "contributions_per_s": rate, "lanes_per_s": rate * AGG_LANES,
                         "blocks_per_s": rate / n, "vs_forwarding": rate / reference})
    return {"forwarding_pps": reference, "lanes": AGG_LANES, "rows": rows}


def format_table(results: dict) -> str:
    lines = [f"reference: basic_forward.p4, 314-byte frames: "
             f"{results['forwarding_pps']:,.0f} packets/s (CPU)",
             f"{'program':<20} {'workers':>7} {'contrib/s':>10} {'M lanes/s':>9} "
             f"{'blocks/s':>9} {'vs fwd':>7}"]
    for r in results["rows"]:
        lines.append(f"{r['program']:<20} {r['workers']:>7} {r['contributions_per_s']:>10,.0f} "
                     f"{r['lanes_per_s'] / 1e6:>9.2f} {r['blocks_per_s']:>9,.0f} "
                     f"{r['vs_forwarding']:>7.2f}")
    return "\n".join(lines)


def _main(args: argparse.Namespace) -> int:
    results = run_bench(args.blocks)
    print(format_table(results))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "bench-aggregation.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"raw numbers: {path}")
    return 0


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench aggregation`` (under the ``netweft.benches`` entry points)."""
    p = benches.add_parser("aggregation", help="contributions/s of the aggregation programs "
                                               "on the embedded switch vs forwarding")
    p.add_argument("--blocks", type=int_in(1, 1_000_000), default=256,
                   help="blocks summed per row, 1 to 1000000 (default 256)")
    p.add_argument("--out", type=Path, default=Path("results") / "bench-aggregation",
                   help="folder for bench-aggregation.json (default results/bench-aggregation)")
    p.set_defaults(func=_main)
