"""In-process packets/s of the switch, the Python and the native back end side by side.

    python -m tests.native.measure_pps [--packets N]

Rows: ``SoftSwitch.process`` per packet on each back end (the native one pays
two cffi calls and the Python driver per packet), then the native back end's C
batch entry point (``nw_process_batch``: N frames in one call, the frames
restored between rounds with one copy).  basic_forward.p4 (one route),
ecmp_spray.p4 (flow hash and spray) and fabric.p4 (flow hash over a 4-way
group), 106-byte UDP frames to 64 destinations.  Packets per second of this
process's CPU time (what one core does, also on a shared machine).  Prints
figures; nothing asserts them.
"""

from __future__ import annotations

import argparse
import time

from netweft.emulation.switch import SoftSwitch
from netweft.testbed.bench.switch import setup_ecmp_spray, udp_frame

from .programs import _fabric, program


def _basic(sw: SoftSwitch) -> str:
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)},
                 "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 2})
    return "IPv4 LPM, 1 route"


def _fabric_hash(sw: SoftSwitch) -> str:
    _fabric(sw)
    return "4-way ECMP, crc32 flow hash"


ROWS = [("basic_forward", _basic), ("ecmp_spray", lambda sw: setup_ecmp_spray(sw, 0)),
        ("ecmp_spray", lambda sw: setup_ecmp_spray(sw, 1)), ("fabric", _fabric_hash)]


def per_packet(sw: SoftSwitch, frames: list[bytes], count: int) -> tuple[float, int]:
    process, n, sent = sw.process, len(frames), 0
    t = time.process_time()
    for i in range(count):
        sent += len(process(1, frames[i % n]))
    return count / (time.process_time() - t), sent


def batched(sw: SoftSwitch, frames: list[bytes], count: int, batch: int = 256
            ) -> tuple[float, int]:
    """``nw_process_batch`` over ``batch`` frames per call; frames restored per call."""
    drv = sw.driver
    ffi, lib = drv.ffi, drv.lib
    stride = max(len(f) for f in frames) + drv.headroom
    template = ffi.new("uint8_t[]", stride * batch)
    work = ffi.new("uint8_t[]", stride * batch)
    states = ffi.new("uint8_t[]", drv.state_size * batch)
    pkts_t = ffi.new("nw_pkt_t[]", batch)
    pkts = ffi.new("nw_pkt_t[]", batch)
    rcs = ffi.new("int32_t[]", batch)
    for i in range(batch):
        f = frames[i % len(frames)]
        ffi.memmove(template + i * stride, f, len(f))
        p = pkts_t[i]
        p.data, p.len, p.cap = work + i * stride, len(f), stride
        p.ingress_port, p.state = 1, states + i * drv.state_size
    size_pkts = ffi.sizeof("nw_pkt_t") * batch
    rounds = max(1, count // batch)
    sent = 0
    t = time.process_time()
    for r in range(rounds):
        ffi.memmove(work, template, stride * batch)
        ffi.memmove(pkts, pkts_t, size_pkts)
        lib.nw_process_batch(drv.pipeline, pkts, rcs, batch, r * batch * 1000, 1000)
    elapsed = time.process_time() - t
    for i in range(batch):   # the last round's outcome
        sent += int(rcs[i] == 0 and not pkts[i].flags & 1)
    return rounds * batch / elapsed, sent * rounds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=50000)
    args = ap.parse_args(argv)
    frames = [udp_frame(f"10.{1 + i % 3}.{i % 4}.{1 + i % 200}") for i in range(64)]
    print(f"{'program':<46} {'python':>10} {'c':>10} {'c batch':>12} {'c/py':>6} "
          f"{'batch/py':>9} {'sent':>5}")
    for name, setup in ROWS:
        figures = {}
        label = ""
        for backend in ("python", "c"):
            sw = SoftSwitch(program(name), backend=backend)
            label = setup(sw)
            count = args.packets if backend == "c" else max(args.packets // 5, 2000)
            per_packet(sw, frames, min(count, 2000))
            figures[backend], _ = per_packet(sw, frames, count)
            if backend == "c":
                batched(sw, frames, 4096)
                figures["batch"], sent = batched(sw, frames, args.packets * 10)
                figures["sent"] = sent / (max(1, args.packets * 10 // 256) * 256)
        py, c, b = figures["python"], figures["c"], figures["batch"]
        print(f"{name + '.p4 (' + label + ')':<46} {py:>10,.0f} {c:>10,.0f} {b:>12,.0f} "
              f"{c / py:>5.1f}x {b / py:>8.0f}x {figures['sent']:>5.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
