"""The veth bench's other programs: what it offers fabric.p4 and aggregation.p4 is
forwarded (and aggregated) by the switch with the bench's runtime file, in process."""

from __future__ import annotations

import struct

from netweft.emulation.p4runtime.runtime_file import apply_runtime_file
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.programs import source_dir
from netweft.testbed.bench.switch_veth import (
    AGG_SLOTS_USED,
    Offer,
    ProgramBench,
    aggregation_bench,
    fabric_bench,
)


def _switch(bench: ProgramBench) -> SoftSwitch:
    switch = SoftSwitch(compile_p4(source_dir() / bench.program), backend="python")
    apply_runtime_file(switch, bench.runtime)
    return switch


def _generated(offer: Offer, seq: int) -> bytes:
    """Frame ``seq`` as the C generator writes it: the template in turn, the sequence
    number at seq32_offset, a stamp (magic, run, sequence, time) at stamp_offset."""
    frame = bytearray(offer.templates[seq % len(offer.templates)])
    if offer.seq32_offset:
        frame[offer.seq32_offset:offer.seq32_offset + 4] = struct.pack(">I", seq & 0xFFFFFFFF)
    frame[offer.stamp_offset:offer.stamp_offset + 20] = struct.pack(">HHQQ", 0x4E57, 7, seq,
                                                                    10**18 + seq)
    return bytes(frame)


def test_every_aggregation_packet_completes_its_slot_and_comes_out_with_its_stamp():
    bench = aggregation_bench()
    switch = _switch(bench)
    (offer,) = bench.offers.values()
    frames = len(offer.templates) + 3              # past the wrap: blocks go on rising
    for seq in range(frames):
        sent = _generated(offer, seq)
        out = switch.process(1, sent)
        assert [port for port, _ in out] == [2], seq
        result = out[0][1]
        assert result[offer.stamp_offset:offer.stamp_offset + 20] == \
            sent[offer.stamp_offset:offer.stamp_offset + 20]      # the sum of one
        assert result[42 + 1] & 0x01                               # RESULT
        slot, pool = struct.unpack(">HB", result[46:49])
        assert (slot, pool >> 7) == (seq % AGG_SLOTS_USED, (seq // AGG_SLOTS_USED) % 2)


def test_fabric_routes_the_bench_frames_to_port_2():
    bench = fabric_bench()
    switch = _switch(bench)
    for size, offer in bench.offers.items():
        out = switch.process(1, _generated(offer, 5))
        assert [(port, len(frame)) for port, frame in out] == [(2, size)]
