"""Helpers for the traffic manager's virtual-time tests: the probe program and a clock loop."""

from __future__ import annotations

import shutil
import struct
import tempfile
from functools import cache
from pathlib import Path

from netweft.emulation.links.port_options import parse_link_options
from netweft.emulation.switch import SoftSwitch

PROGRAMS = Path(__file__).resolve().parent / "programs"
_PROBE = struct.Struct(">HBBIIII6sH")      # tests/emulation/programs/queue_probe.p4
HEADER = 14 + _PROBE.size
MS = 1_000_000


@cache
def probe_program():
    """queue_probe.p4 with a v1model.p4 whose standard_metadata has ``qid``.

    p4c's v1model.p4 (and netweft's copy) has no ``qid``; BMv2 users with priority
    queues add ``@alias("queueing_metadata.qid") bit<5> qid;`` to a copy of it on
    their include path, and so does this test.
    """
    from netweft.p4.compiler import compile_p4
    from netweft.p4.compiler.preprocessor import ARCH_DIR

    arch = (ARCH_DIR / "v1model.p4").read_text()
    anchor = "bit<3> priority;\n"
    assert anchor in arch
    with_qid = arch.replace(anchor, anchor + '    @alias("queueing_metadata.qid") bit<5> qid;\n')
    folder = Path(tempfile.mkdtemp(prefix="netweft-qid-"))
    try:
        (folder / "v1model.p4").write_text(with_qid)
        return compile_p4(str(PROGRAMS / "queue_probe.p4"), include_dirs=(str(folder),))
    finally:
        shutil.rmtree(folder)


def probe_switch(*links: str, **kwargs) -> SoftSwitch:
    """A switch running queue_probe.p4 with ``--link`` settings applied."""
    sw = SoftSwitch(probe_program(), **kwargs)
    for port, opts in parse_link_options(links).items():
        sw.configure_port(port, opts)
    return sw


def probe_frame(port: int, priority: int = 0, size: int = 1000, clone: int = 0,
                tag: int = 0) -> bytes:
    """A ``size``-byte frame the probe program sends to ``port`` at ``priority``."""
    eth = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x88\xb5"
    probe = _PROBE.pack(port, priority, 0, 0, 0, 0, 0, b"\x00" * 6, clone)
    body = tag.to_bytes(4, "big")
    return (eth + probe + body).ljust(size, b"\x00")


def probe_fields(frame: bytes) -> dict[str, int]:
    """The queueing metadata egress wrote into a probe frame (and the frame's tag)."""
    port, prio, qid, enq_ts, enq_depth, delta, deq_depth, egress_ts, _ = _PROBE.unpack_from(
        frame, 14)
    return {"port": port, "priority": prio, "qid": qid, "enq_timestamp": enq_ts,
            "enq_qdepth": enq_depth, "deq_timedelta": delta, "deq_qdepth": deq_depth,
            "egress_timestamp": int.from_bytes(egress_ts, "big"),
            "tag": int.from_bytes(frame[HEADER:HEADER + 4], "big")}


def run(sw: SoftSwitch, sends: list[tuple[int, int, bytes]]) -> list[tuple[int, int, bytes]]:
    """Feed ``(time_ns, port, frame)`` in time order; every ``(time, port, frame)`` out.

    Time jumps from deadline to deadline, as the switch process's timer would.
    """
    out: list[tuple[int, int, bytes]] = []
    for t, port, frame in sorted(sends, key=lambda s: s[0]):
        _drain(sw, t, out)
        out += [(t, p, f) for p, f in sw.receive(port, frame, t)]
    _drain(sw, None, out)
    return out


def _drain(sw: SoftSwitch, until: int | None, out: list[tuple[int, int, bytes]]) -> None:
    while (deadline := sw.next_deadline()) is not None and (until is None or deadline < until):
        out += [(deadline, p, f) for p, f in sw.advance(deadline)]
