"""In-process cost of aggregation.p4's contributions on the native back end.

    python -m tests.native.measure_aggregation [--lanes K] [--rounds N]

aggregation.p4 compiled with ``-D AGG_LANES=K`` (the first run at 1024 lanes
compiles for about 40 s, cached afterwards), one job of 4 workers over 64 slots;
every round is a new block for each slot (the pools alternating, as the workers
send them), each worker's contribution one frame, all 256 frames of a round in
one ``nw_process_batch`` call. Prints nanoseconds of this process's CPU time per
contribution and per lane (only the C calls are timed) and checks the last
round's sums against numpy's. Prints figures; nothing asserts them.
"""

from __future__ import annotations

import argparse
import struct
import time

import numpy as np

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.testbed.bench.switch import udp_frame

WORKERS, WINDOW, SERVICE, AGG_OFFSET, AGG_PORT = 4, 64, "10.0.9.1", 42, 61440
AGG_SLOTS = 1024   # the program's slots per pool: pool 1 of slot s is cell s + AGG_SLOTS


def contribution(lanes: int, worker: int, slot: int, pool: int, block: int,
                 values: np.ndarray) -> bytes:
    payload = struct.pack(">BBHHBBIhH", 1, 0, 1, slot, pool << 7, worker, block, 0,
                          lanes) + values.astype(">u4").tobytes()
    frame = bytearray(udp_frame(SERVICE, len(payload)))
    frame[36:38] = struct.pack(">H", AGG_PORT)
    frame[AGG_OFFSET:] = payload
    return bytes(frame)


def measure(lanes: int, rounds: int) -> tuple[float, bool]:
    """(ns of CPU per contribution, whether the last round's sums are right)."""
    sw = SoftSwitch(compile_p4("p4/aggregation.p4", defines={"AGG_LANES": str(lanes)}),
                    backend="c")
    sw.table_add("MyIngress.aggregation.agg_jobs", {"ipv4.dstAddr": SERVICE, "agg.job_id": 1},
                 "MyIngress.aggregation.set_job",
                 {"base": 0, "size": WINDOW, "workers": WORKERS, "mcast_grp": 1})
    values = np.random.default_rng(1).integers(0, 1 << 20, size=(rounds, WINDOW, WORKERS, lanes),
                                               dtype=np.uint32)
    drv = sw.driver
    ffi, lib = drv.ffi, drv.lib
    n = WINDOW * WORKERS
    frames = [[contribution(lanes, w, s, r % 2, r * WINDOW + s, values[r, s, w])
               for s in range(WINDOW) for w in range(WORKERS)] for r in range(rounds)]
    stride = len(frames[0][0]) + drv.headroom
    work = ffi.new("uint8_t[]", stride * n)
    states = ffi.new("uint8_t[]", drv.state_size * n)
    pkts = ffi.new("nw_pkt_t[]", n)
    rcs = ffi.new("int32_t[]", n)
    spent = 0.0
    for r in range(rounds):
        for i, f in enumerate(frames[r]):
            ffi.memmove(work + i * stride, f, len(f))
            p = pkts[i]
            p.data, p.len, p.cap, p.ingress_port = work + i * stride, len(f), stride, 1
            p.state = states + i * drv.state_size
            p.egress_spec = p.egress_port = p.mcast_grp = p.egress_rid = 0
            p.flags = 0
        t = time.process_time()
        lib.nw_process_batch(drv.pipeline, pkts, rcs, n, r * n * 1000, 1000)
        spent += time.process_time() - t
    last, pool = rounds - 1, (rounds - 1) % 2
    right = all(sw.register_read(f"MyIngress.aggregation.lane{k}", s + pool * AGG_SLOTS)
                == int(values[last, s, :, k].sum(dtype=np.uint64) & 0xFFFFFFFF)
                for s in range(WINDOW) for k in (0, lanes // 2, lanes - 1))
    return 1e9 * spent / (rounds * n), right


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, action="append",
                        help="lanes per packet (repeatable; default 256 and 1024)")
    parser.add_argument("--rounds", type=int, default=40, help="rounds of the window")
    args = parser.parse_args()
    for lanes in args.lanes or (256, 1024):
        ns, right = measure(lanes, args.rounds)
        print(f"K={lanes:5d}: {ns:7.0f} ns per contribution, {ns / lanes:5.2f} ns per lane "
              f"(CPU time, {args.rounds} rounds of {WINDOW} slots x {WORKERS} workers); "
              f"sums {'right' if right else 'WRONG'}")


if __name__ == "__main__":
    main()
