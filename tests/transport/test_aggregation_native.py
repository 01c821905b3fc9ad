"""The C aggregation worker (nic_offload/src/collectives/aggregation_worker.c) against the
Python one (worker.py, the reference): the same events give the same packets, byte for
byte, and the same results, in virtual time under loss, duplication, reordering and
corruption, against a switch that never answers (back-off, stall), and on hand-made
inputs (rounding ties, exponent errors, malformed payloads)."""

from __future__ import annotations

import numpy as np
import pytest

from netweft.transport.collectives.aggregation.codec import (
    FrameTemplate,
    decode_payload,
    encode_payload,
)
from netweft.transport.collectives.aggregation.layer import FLAG_RESULT, HEADER_LEN
from netweft.transport.collectives.aggregation.native_worker import (
    NativeAggregationWorker,
    native_available,
)
from netweft.transport.collectives.aggregation.sim import AggregationNetwork
from netweft.transport.collectives.aggregation.worker import AggregationJob, AggregationWorker
from netweft.transport.sim.wire import Impairments, Link

from .aggregation_model import ModelSwitch

pytestmark = pytest.mark.skipif(not native_available(), reason="C engine without the worker")
KINDS = {"python": AggregationWorker, "c": NativeAggregationWorker}


class Recorder:
    """A worker whose every returned packet is recorded with the event's time, so two
    runs can be compared packet by packet."""

    def __init__(self, worker, log: list) -> None:
        self._worker, self._log = worker, log

    def _record(self, event: str, now: int, packets: list) -> list:
        self._log.extend((event, now, encode_payload(p)) for p in packets)
        self._log.append((event, now, self._worker.next_deadline()))
        return packets

    def start(self, now: int) -> list:
        return self._record("start", now, self._worker.start(now))

    def on_packet(self, packet, now: int) -> list:
        return self._record("packet", now, self._worker.on_packet(packet, now))

    def on_time(self, now: int) -> list:
        return self._record("time", now, self._worker.on_time(now))

    def __getattr__(self, name: str):
        return getattr(self._worker, name)


class SilentSwitch:
    """A switch that lost the job: it takes every frame and answers none."""

    def receive(self, port, data, now):
        return []

    def advance(self, now):
        return []

    def next_deadline(self):
        return None


def run(kind: str, n: int, length: int, impairments: Impairments | None, seed: int,
        window: int = 8, silent: bool = False, stall_ns: int = 0):
    net = AggregationNetwork(seed=seed)
    net.add_switch("s1", SilentSwitch() if silent else ModelSwitch({1: n}))
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(0, 1, length).astype(np.float32) * np.float32(10.0 ** (w - 1))
              for w in range(n)]
    logs: dict[str, list] = {}
    workers = {}
    for w in range(n):
        name = f"h{w + 1}"
        net.add_host(name, FrameTemplate(f"02:00:00:00:00:{w + 1:02x}", "02:00:00:00:00:fe",
                                         f"10.0.0.{w + 1}", "10.0.0.254"))
        net.link(name, 0, "s1", w + 1, Link(rate_bps=10e9, delay_ns=5_000), impairments)
        job = AggregationJob(1, w, n, 64, window, first_block=5,
                             timeout_ns=200_000, max_timeout_ns=3_200_000,
                             stall_timeout_ns=stall_ns)
        logs[name] = []
        workers[name] = Recorder(KINDS[kind](arrays[w], job), logs[name])
    times = net.run(workers, limit_ns=2_000_000_000)
    return workers, logs, times


@pytest.mark.parametrize("impairments", [
    None,
    Impairments(loss=0.05),
    Impairments(loss=0.03, duplicate=0.05, reorder=0.1, reorder_delay_ns=30_000, corrupt=0.02,
                jitter_ns=3_000),
], ids=["clean", "loss", "mix"])
def test_same_packets_and_results_in_virtual_time(impairments):
    runs = {kind: run(kind, 3, 2500, impairments, seed=7) for kind in KINDS}
    (py_workers, py_logs, py_times), (c_workers, c_logs, c_times) = runs["python"], runs["c"]
    assert py_times == c_times
    for name, py in py_workers.items():
        c = c_workers[name]
        assert c_logs[name] == py_logs[name]  # every packet and deadline, in order
        assert py.done and c.done
        assert np.array_equal(c.sums, py.sums) and np.array_equal(c.exponents, py.exponents)
        assert np.array_equal(c.result, py.result) and c.result.dtype == np.float32
        assert {k: c.stats[k] for k in py.stats} == py.stats
        assert c.rto_ns == py.rto_ns and c.end_block == py.end_block
    sent = sum(len([e for e in log if isinstance(e[2], bytes)]) for log in c_logs.values())
    assert sent >= 3 * (-(-2500 // 64) + 8)  # the packets compared include the whole job
    if impairments is not None:
        assert sum(w.stats["retransmits"] for w in c_workers.values()) > 0


def test_same_back_off_and_stall_against_a_silent_switch():
    runs = {kind: run(kind, 2, 700, None, seed=3, window=4, silent=True,
                      stall_ns=20_000_000) for kind in KINDS}
    for name, py in runs["python"][0].items():
        c = runs["c"][0][name]
        assert runs["c"][1][name] == runs["python"][1][name]
        assert py.stalled and c.stalled and not c.done and c.result is None
        assert c.stats["retransmits"] == py.stats["retransmits"] > 4
        assert c.next_deadline() is None
    assert runs["c"][2] == runs["python"][2]


def echo(payload: bytes, exponent: int | None = None) -> bytes:
    """What a switch with one worker sends back: the contribution as the result."""
    out = bytearray(payload)
    out[1] = FLAG_RESULT
    if exponent is not None:
        out[12:14] = exponent.to_bytes(2, "big", signed=True)
    return bytes(out)


def lockstep(array: np.ndarray, window: int = 2, lanes: int = 64):
    """One worker of a one-worker job, Python and C, each fed its own echoed packets;
    returns both (done) after checking every packet is the same."""
    job = AggregationJob(3, 0, 1, lanes, window, first_block=70_000, timeout_ns=1000)
    py, c = AggregationWorker(array, job), NativeAggregationWorker(array, job)
    pending = [(encode_payload(p), q) for p, q in zip(py.start(0), c.start(0), strict=True)]
    now = 0
    while pending:
        now += 10
        nxt = []
        for py_bytes, c_packet in pending:
            assert encode_payload(c_packet) == py_bytes
            reply = decode_payload(echo(py_bytes), lanes)[0]
            nxt += zip(py.on_packet(reply, now), c.on_packet(reply, now), strict=True)
        pending = [(encode_payload(p), q) for p, q in nxt]
    assert py.done and c.done
    return py, c


def test_rounding_ties_signs_and_extremes_quantize_as_numpy_does():
    # one worker: P = 30; 1.5 sets the first block's exponent to 1, so the step is 2**-29
    # and every other value of the block lies exactly halfway between two steps
    ties = np.concatenate([[1.5], (np.arange(-31, 32) + 0.5) * 2.0 ** -29])
    extremes = [0.0, -0.0, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 1.0, -1.0, 0.75]
    array = np.concatenate([ties, extremes * 6, np.linspace(-7, 7, 100)]).astype(np.float32)
    py, c = lockstep(array)
    assert np.array_equal(c.result, py.result) and np.array_equal(c.sums, py.sums)
    assert np.array_equal(c.exponents, py.exponents)


@pytest.mark.parametrize("lanes", [128, 1024])
def test_wide_packets(lanes):
    array = np.random.default_rng(lanes).normal(0, 3, 5 * lanes + 17).astype(np.float32)
    py, c = lockstep(array, window=3, lanes=lanes)
    assert np.array_equal(c.result, py.result)


def test_a_shared_exponent_below_the_data_raises_in_both():
    array = np.full(200, 5.0, np.float32)  # exponent 3
    job = AggregationJob(3, 0, 1, 64, 2)
    for worker in (AggregationWorker(array, job), NativeAggregationWorker(array, job)):
        first = encode_payload(worker.start(0)[0])
        with pytest.raises(ValueError, match="exponent is below"):
            worker.on_packet(decode_payload(echo(first, exponent=1))[0], 5)


def test_malformed_and_foreign_payloads_are_counted_and_dropped():
    array = np.ones(300, np.float32)
    job = AggregationJob(3, 0, 1, 64, 2)
    c = NativeAggregationWorker(array, job)
    good = echo(encode_payload(c.start(0)[0]))
    bad = [good[:-1], b"", good[:HEADER_LEN], bytes([2]) + good[1:],  # short, version
           good[:14] + (63).to_bytes(2, "big") + good[16:]]  # lane count
    for payload in bad:
        assert decode_payload(payload) is None  # the reference refuses them too
        assert c.on_payload(payload, 1) == 0
    foreign = [good[:2] + (4).to_bytes(2, "big") + good[4:],  # another job
               good[:8] + (99).to_bytes(4, "big") + good[12:],  # another block
               good[:6] + bytes([0x80]) + good[7:]]  # the other pool
    for payload in foreign:
        assert c.on_payload(payload, 1) == 0
    assert c.stats["malformed"] == len(bad) and c.stats["ignored"] == len(foreign)
    assert c.on_payload(good + b"trailing bytes are ignored", 2) == 1  # the next round
    assert c.stats["results"] == 1


def test_an_empty_array_is_done_at_start():
    job = AggregationJob(3, 0, 2, 64, 4)
    c = NativeAggregationWorker(np.zeros((0, 3), np.float32), job)
    assert c.start(0) == [] and c.done and c.result.shape == (0, 3)


def test_c_quantization_is_bit_for_bit_the_reference():
    """local exponents, quantization on shared exponents and dequantization against
    quantization.py on values of every magnitude (zeros, subnormals, float32's largest),
    and exponents outside the clamped range, as a broken switch might send."""
    from netweft.nic_offload import ffi, lib
    from netweft.transport.collectives.aggregation.quantization import BlockQuantizer

    rng = np.random.default_rng(9)
    lanes, workers = 64, 5
    q = BlockQuantizer(lanes, workers)
    scales = 2.0 ** rng.integers(-140, 120, 40)
    blocks = (rng.normal(0, 1, (40, lanes)) * scales[:, None]).astype(np.float32)
    blocks[0] = 0.0
    blocks[1, :3] = [1e-45, -3e-39, 3.4028235e38]
    blocks[2, ::2] = -0.0
    local = np.empty(40, np.int16)
    assert lib.nw_agg_local_exponents(ffi.from_buffer("float[]", blocks), 40, lanes,
                                      ffi.from_buffer("int16_t[]", local)) == 0
    assert np.array_equal(local, q.local_exponents(blocks))
    shared = np.minimum(local + rng.integers(0, 3, 40), 128).astype(np.int16)
    expected = q.quantize(blocks, shared)
    for c in range(40):
        out = ffi.new("uint8_t[]", 4 * lanes)
        assert lib.nw_agg_quantize_block(ffi.from_buffer("float[]", blocks[c]), lanes,
                                         int(shared[c]), q.bits, out) == 0
        assert np.array_equal(np.frombuffer(ffi.buffer(out), ">i4"), expected[c])
    below = int(local[5]) - 1  # the data does not fit: ValueError in the reference
    assert lib.nw_agg_quantize_block(ffi.from_buffer("float[]", blocks[5]), lanes, below,
                                     q.bits, ffi.new("uint8_t[]", 4 * lanes)) == lib.NW_ERANGE
    sums = rng.integers(-(2**31), 2**31, (40, lanes), dtype=np.int64).astype(np.int32)
    exps = rng.integers(-126, 129, 40).astype(np.int16)
    exps[:4] = [-32768, 32767, -1200, 1100]
    length = 40 * lanes - 17
    out = np.empty(length, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        reference = q.dequantize(sums, exps, length)
    lib.nw_agg_dequantize(ffi.from_buffer("int32_t[]", sums), ffi.from_buffer("int16_t[]", exps),
                          40, lanes, q.bits, length, ffi.from_buffer("float[]", out))
    assert np.array_equal(out, reference, equal_nan=True)
    for bad in (np.nan, np.inf, -np.inf):
        blocks[7, 3] = bad
        assert lib.nw_agg_local_exponents(ffi.from_buffer("float[]", blocks), 40, lanes,
                                          ffi.from_buffer("int16_t[]", local)) == lib.NW_ERANGE
    with pytest.raises(ValueError, match="NaN or infinite"):
        NativeAggregationWorker(blocks.reshape(-1), AggregationJob(1, 0, workers, lanes, 4))
