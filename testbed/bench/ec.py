"""``netweft bench ec``: Reed-Solomon encode and decode throughput, raw ISA-L and through the engine.

Raw: ISA-L's ``ec_encode_data`` called directly (through cffi) on k shards of
``--shard`` bytes with the Cauchy code the engine uses; decoding rebuilds m
lost data shards from k survivors (the worst case: every loss a data shard;
the inversion is done once, outside the timing). Through the engine: one
``--bytes`` RMA write between two C engines in one thread (src/ec/ec_bench.c),
timed inside the sender's ``nw_output`` (segmenting, headers, shard copies,
encoding) and the receiver's ``nw_input`` (parsing, shard copies, decoding m
lost data packets of every block, placement), per payload byte. The same run
measures the engine without coding, so the cost of coding shows side by side.
Engine figures are the best of ``--runs`` transfers (load only slows a run).
Figures are GB/s of data (10^9 payload bytes per second) on one core.
"""

from __future__ import annotations

import argparse
import json
import time

from netweft.testbed.arg_types import float_in, int_in

CODES = ((4, 2), (8, 2), (10, 4), (16, 4), (32, 8))
ISAL_PUBLISHED = "ISA-L's published RS(10,4) encode figure: about 6.7 GB/s per core with AVX2"


def _raw(k: int, m: int, shard: int, seconds: float) -> tuple[float, float]:
    """(encode, decode) GB/s of data bytes for ISA-L called directly."""
    import numpy as np

    from netweft.nic_offload import ffi, lib

    rng = np.random.default_rng(k * 100 + m)
    data = [ffi.new("unsigned char[]", rng.bytes(shard)) for _ in range(k)]
    coding = [ffi.new("unsigned char[]", shard) for _ in range(m)]
    matrix = ffi.new("unsigned char[]", (k + m) * k)
    lib.gf_gen_cauchy1_matrix(matrix, k + m, k)
    tables = ffi.new("unsigned char[]", 32 * k * m)
    lib.ec_init_tables(k, m, matrix + k * k, tables)
    dptr = ffi.new("unsigned char *[]", data)
    cptr = ffi.new("unsigned char *[]", coding)
    enc = _rate(lambda: lib.ec_encode_data(shard, k, m, tables, dptr, cptr), k * shard, seconds)
    # Lose data shards 0..m-1; decode from data m..k-1 and all m parity shards.
    survivors = list(range(m, k)) + list(range(k, k + m))
    sub = ffi.new("unsigned char[]", k * k)
    for row, idx in enumerate(survivors):
        ffi.memmove(sub + row * k, matrix + idx * k, k)
    inv = ffi.new("unsigned char[]", k * k)
    if lib.gf_invert_matrix(sub, inv, k) != 0:
        raise RuntimeError(f"singular decode matrix for ({k},{m})")
    dec_tables = ffi.new("unsigned char[]", 32 * k * m)
    lib.ec_init_tables(k, m, inv, dec_tables)  # rows 0..m-1 of the inverse: the lost shards
    srcs = ffi.new("unsigned char *[]", [data[i] for i in range(m, k)] + coding)
    keep = [ffi.new("unsigned char[]", shard) for _ in range(m)]  # owns the buffers
    outs = ffi.new("unsigned char *[]", keep)
    dec = _rate(lambda: lib.ec_encode_data(shard, k, m, dec_tables, srcs, outs), k * shard,
                seconds)
    for i in range(m):  # the decode really rebuilt the lost shards
        if bytes(ffi.buffer(keep[i], shard)) != bytes(ffi.buffer(data[i], shard)):
            raise RuntimeError(f"ISA-L decode of ({k},{m}) gave wrong bytes")
    return enc, dec


def _rate(call, nbytes: int, seconds: float) -> float:
    """GB/s of ``call`` processing ``nbytes`` each, run in batches for about ``seconds``."""
    batch, total, calls = 1, 0.0, 0
    while total < seconds:
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        total += time.perf_counter() - t0
        calls += batch
        batch = min(batch * 2, 4096)
    return nbytes * calls / total / 1e9


def _engine(k: int, m: int, drop: int, mtu: int, nbytes: int, runs: int) -> dict[str, float]:
    """The engine's sender and receiver GB/s, each the best of ``runs`` transfers (the
    host's other load only ever slows a run down)."""
    from netweft.nic_offload import ffi, lib

    best: dict[str, float] = {"tx_gbps": 0.0, "rx_gbps": 0.0}
    for _ in range(runs):
        out = ffi.new("nw_ec_bench_t *")
        rc = lib.nw_ec_bench_engine(k, m, drop, mtu, nbytes, out)
        if rc != 0:
            raise RuntimeError(f"engine bench ({k},{m}) failed: {rc}")
        best["tx_gbps"] = max(best["tx_gbps"], out.payload_bytes / out.tx_ns)
        best["rx_gbps"] = max(best["rx_gbps"], out.payload_bytes / out.rx_ns)
        best.update(recovered_pkts=int(out.recovered_pkts), retransmits=int(out.retransmits),
                    parity_overhead=out.parity_bytes / out.payload_bytes)
    return best


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return "+".join(f for f in ("avx2", "avx512f", "gfni") if f in flags) \
                        or "no AVX2"
    except OSError:
        pass
    return "unknown"


def run_ec_bench(args: argparse.Namespace) -> int:
    """Measure every code, print the table and the ratios, optionally write JSON."""
    rows = []
    base = _engine(0, 0, 0, args.mtu, args.bytes, args.runs)
    for k, m in CODES:
        enc, dec = _raw(k, m, args.shard, args.seconds)
        eng = _engine(k, m, m, args.mtu, args.bytes, args.runs)
        rows.append({"k": k, "m": m, "raw_encode_gbps": enc, "raw_decode_gbps": dec,
                     "engine_encode_gbps": eng["tx_gbps"], "engine_decode_gbps": eng["rx_gbps"],
                     "recovered_pkts": eng["recovered_pkts"],
                     "parity_overhead": eng["parity_overhead"]})
    print(f"netweft bench ec: ISA-L Reed-Solomon (Cauchy), one core ({_cpu_flags()}); raw: "
          f"{args.shard}-byte shards; engine: one {args.bytes}-byte write, MTU {args.mtu}, "
          "m data packets of every block lost and decoded")
    print(f"{'k,m':>6} {'raw enc':>8} {'engine enc':>10} {'raw/eng':>8} "
          f"{'raw dec':>8} {'engine dec':>10} {'raw/eng':>8} {'parity':>7}   (GB/s of data)")
    for r in rows:
        print(f"{r['k']:>3},{r['m']:<2} {r['raw_encode_gbps']:>8.2f} "
              f"{r['engine_encode_gbps']:>10.2f} "
              f"{r['raw_encode_gbps'] / r['engine_encode_gbps']:>7.1f}x "
              f"{r['raw_decode_gbps']:>8.2f} {r['engine_decode_gbps']:>10.2f} "
              f"{r['raw_decode_gbps'] / r['engine_decode_gbps']:>7.1f}x "
              f"{r['parity_overhead']:>6.0%}")
    print(f"engine without coding (same run): sender {base['tx_gbps']:.2f} GB/s, "
          f"receiver {base['rx_gbps']:.2f} GB/s of payload")
    print(f"{ISAL_PUBLISHED}; this machine: "
          f"{next(r['raw_encode_gbps'] for r in rows if (r['k'], r['m']) == (10, 4)):.2f} GB/s "
          "(a shared, loaded 2-core host: figures vary from run to run, ratios less)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"codes": rows, "engine_uncoded": base, "shard": args.shard,
                       "bytes": args.bytes, "mtu": args.mtu}, fh, indent=2)
    return 0


def register(benches: argparse._SubParsersAction) -> None:
    """Add ``netweft bench ec``."""
    p = benches.add_parser("ec", help="Reed-Solomon encode/decode GB/s: raw ISA-L and the engine")
    p.add_argument("--shard", type=int_in(64, 65536), default=8192,
                   help="bytes per shard for the raw figures (default 8192)")
    p.add_argument("--bytes", type=int_in(1 << 20, 1 << 30), default=32 << 20,
                   help="bytes of the write through the engine (default 33554432)")
    p.add_argument("--mtu", type=int_in(1024, 9000), default=8972,
                   help="engine MTU: UDP payload bytes per packet (default 8972)")
    p.add_argument("--seconds", type=float_in(0.01, 60), default=0.3,
                   help="time per raw measurement (default 0.3)")
    p.add_argument("--runs", type=int_in(1, 100), default=3,
                   help="engine transfers per code; the best counts (default 3)")
    p.add_argument("--json", metavar="FILE", help="also write the raw numbers to FILE")
    p.set_defaults(func=run_ec_bench)
