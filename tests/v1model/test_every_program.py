"""Every P4 program in the repository runs arbitrary packets without internal errors.

Programs come from ``p4/`` and the test-program folders; those the front end
rejects (error-case programs) are skipped.  Packets are random bytes and
well-formed Ethernet/IPv4/UDP/TCP frames; outputs are not checked, only that
the back end never fails inside (``stats["internal_error"] == 0``).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import P4Error, compile_p4

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = [ROOT / "p4", ROOT / "tests" / "p4_conformance" / "programs",
           ROOT / "tests" / "v1model" / "programs", ROOT / "tests" / "stf" / "programs"]
PROGRAMS = sorted(p for folder in FOLDERS if folder.is_dir() for p in folder.glob("*.p4"))
INCLUDES = tuple(str(f) for f in FOLDERS if f.is_dir())


def _packets(rng: random.Random) -> list[bytes]:
    out = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 80))) for _ in range(25)]
    for _ in range(25):
        l4 = UDP(sport=rng.randrange(65536), dport=rng.randrange(65536)) if rng.random() < 0.5 \
            else TCP(sport=rng.randrange(65536), dport=rng.randrange(65536))
        ip = IP(src=f"10.0.{rng.randrange(4)}.{rng.randrange(1, 255)}",
                dst=f"10.0.{rng.randrange(4)}.{rng.randrange(1, 255)}", ttl=rng.randrange(256))
        frame = bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02") / ip / l4
                      / bytes(rng.randrange(30)))
        cut = rng.randrange(len(frame) + 1) if rng.random() < 0.3 else len(frame)
        out.append(frame[:cut])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_random_packets_cause_no_internal_error(path):
    try:
        program = compile_p4(str(path), include_dirs=INCLUDES)
    except P4Error:
        pytest.skip("the front end rejects this program (an error-case program)")
    sw = SoftSwitch(program)
    rng = random.Random(path.name)
    for data in _packets(rng):
        sw.process(rng.randrange(8), data)
    assert sw.stats["internal_error"] == 0
