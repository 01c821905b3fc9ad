"""Differential tests of the packet-flow externs: clone (I2E, E2E, sessions to a port,
with truncation, to a multicast group), clone3, resubmit and recirculate with field
lists, the pass limit, digests and log_msg, on the Python and the native back end.

For each program, about a thousand seeded frames (valid control headers with random
operations, a third truncated, bit-flipped or junk), each run to completion and again
through the traffic manager: every output (port and bytes, which carry the instance
types the programs write into them), the switch's counters, every counter and
register cell, the digests and the log_msg texts must be identical.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest

from netweft.emulation.native.build import compiler
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4

from .programs import mutate
from .test_differential import state_of

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

FRAMES = 1000
HERE = Path(__file__).resolve().parent
CONFORMANCE = HERE.parent / "p4_conformance" / "programs"

# program -> (path, its control header's EtherType, control header bytes)
PROGRAMS = {
    "clone_recirculate": (CONFORMANCE / "clone_recirculate.p4", 0x88B6, 14),
    "deprecated_externs": (CONFORMANCE / "deprecated_externs.p4", 0x88C1, 5),
    "interactions": (CONFORMANCE / "interactions.p4", 0x88BD, 8),
    "port_parser": (CONFORMANCE / "port_parser.p4", 0x0800, 0),
    "flow_externs": (HERE / "programs_flow" / "flow_externs.p4", 0x88F0, 12),
}


def configure(sw: SoftSwitch, variant: int) -> None:
    """Clone sessions and multicast groups; ``variant`` changes session 5's shape."""
    sw.mc_group_set(1, [(1, 21), (3, 23)])
    sw.mc_group_set(2, [(2, 7), (2, 8), (6, 9)])
    sw.mc_group_set(3, [(4, 1)])
    if variant == 0:
        sw.clone_session_set(5, 4)
    elif variant == 1:
        sw.clone_session_set(5, 4, truncate=20)
    else:
        sw.clone_session_set(5, 6, mc_group=1)
    sw.clone_session_set(6, 5, truncate=16)
    sw.clone_session_set(7, None, mc_group=2)
    sw.clone_session_set(1, 3)


def make_switch(name: str, backend: str, variant: int, **options) -> SoftSwitch:
    sw = SoftSwitch(compile_p4(str(PROGRAMS[name][0])), backend=backend, **options)
    configure(sw, variant)
    return sw


def frames(name: str, count: int, seed: int) -> list[tuple[int, bytes]]:
    """``count`` (ingress port, frame) pairs: control headers with random operations."""
    rng = random.Random(seed)
    _path, ether_type, ctl_bytes = PROGRAMS[name]
    out = []
    for _ in range(count):
        dst = bytes([0x0A, 0, 0, 0, 0, rng.randrange(4)])
        src = bytes([0x0A, 0, 0, 0, 0, rng.randrange(256)])
        if name == "port_parser":
            cpu = bytes([(rng.randrange(8) << 1) | rng.randrange(2)])
            frame = dst + src + ether_type.to_bytes(2, "big") + b"data"
            port = rng.choice((2, 7, 7))
            frame = (cpu + frame) if port == 7 else frame
        else:
            ctl = bytearray(rng.randbytes(ctl_bytes))
            ctl[0] = rng.randrange(1, 9) | (rng.randrange(8) << 4 if name == "flow_externs"
                                            else 0)
            if name == "flow_externs":
                ctl[1] = rng.choice((0, 1, 2, 3, 5, 17, 40, 70, 255) if rng.random() < 0.2
                                    else (0, 1, 2, 3, 5, 6))
            frame = dst + src + ether_type.to_bytes(2, "big") + bytes(ctl) + b"payload!"
            port = rng.randrange(4)
        if rng.random() < 0.33:
            frame = mutate(rng, frame)
        out.append((port, frame))
    return out


def observed(sw: SoftSwitch) -> dict:
    out = state_of(sw)
    out["digests"] = list(sw.digests)
    out["logs"] = list(sw.logs)
    return out


# flow_externs under variant 2 (session 5 to a group and a port) makes chains of
# clones too many for the frame budget; the queue test runs it under variant 2
CASES = [(name, variant) for name in sorted(PROGRAMS) for variant in (0, 1, 2)
         if (name, variant) != ("flow_externs", 2)]


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_both_back_ends_agree_frame_by_frame(name: str, variant: int) -> None:
    py, c = make_switch(name, "python", variant), make_switch(name, "c", variant)
    assert (py.backend, c.backend) == ("python", "c")
    for i, (port, frame) in enumerate(frames(name, FRAMES, zlib.crc32(name.encode()) + variant)):
        expected = py.process(port, frame)
        assert c.process(port, frame) == expected, f"frame {i}: {frame.hex()}"
    assert py.stats["sent"] > FRAMES // 4          # the frames exercise forwarding
    assert observed(c) == observed(py)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_back_ends_agree_through_queues(name: str) -> None:
    """Ingress and egress apart, clones and recirculations through the queues."""
    py, c = (make_switch(name, backend, 2, priority_queues=2) for backend in ("python", "c"))
    for sw in (py, c):
        sw.set_queue_rate(20000.0)
        sw.set_queue_depth(16)
    now = 0
    for port, frame in frames(name, 600, seed=11):
        now += 20_000
        assert c.receive(port, frame, now) == py.receive(port, frame, now)
    assert c.advance(now + 10**9) == py.advance(now + 10**9)
    assert observed(c) == observed(py)


def test_the_flow_program_reaches_every_path() -> None:
    """The frames of the differential test do exercise what they are meant to."""
    sw = make_switch("flow_externs", "python", 0)
    for port, frame in frames("flow_externs", FRAMES, zlib.crc32(b"flow_externs")):
        sw.process(port, frame)
    assert sw.stats["pass_limit"] > 0
    # op 6 digests to receiver 1 then 2 in one pass: only the last is sent (simple_switch)
    assert {r for r, _v in sw.digests} == {2, 3}
    ingress_instances = {i for i in range(8) if sw.counter_read("FIngress.by_instance", i)[0]}
    assert ingress_instances == {0, 4, 6}
    assert any(text.startswith("egress 2 ") for text in sw.logs)   # an E2E clone's egress
    assert any(text.startswith("egress 1 ") for text in sw.logs)   # an I2E clone's egress
