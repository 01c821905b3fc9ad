"""BMv2's packet flow in the C packet loop of a switch process, against the Python back end.

A program that clones (I2E and E2E, to ports and multicast groups, with truncation),
resubmits and recirculates (with field lists) runs in the C loop over six veth pairs
in the root namespace (removed on exit, also when a test fails); every frame out of
the loop must be one ``SoftSwitch(backend="python").process`` gives for the same
inputs, and the digests and log_msg messages the loop's passes leave in the
pipeline's rings must reach the control loop's drain.
"""

from __future__ import annotations

import select
import socket
import time
from collections import Counter
from pathlib import Path

import pytest

from netweft.emulation.native.build import compiler
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.testbed.bench.switch_veth import root_veth_pairs

pytestmark = [pytest.mark.netns,
              pytest.mark.skipif(compiler() is None, reason="no C compiler")]

PROGRAM = (Path(__file__).resolve().parents[1] / "native" / "programs_flow"
           / "flow_externs.p4")
ETHER_TYPE = 0x88F0
PORTS = range(1, 7)
ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33   # Linux: SO_RCVBUF beyond rmem_max (we are root)


@pytest.fixture
def veths():
    """Six veth pairs: port N's loop side ``...lNa``, its far side ``...lNb``."""
    with root_veth_pairs(PORTS) as pairs:
        yield pairs


def configure(sw: SoftSwitch) -> None:
    sw.mc_group_set(1, [(1, 21), (3, 23)])
    sw.mc_group_set(2, [(2, 7), (2, 8), (6, 9)])
    sw.clone_session_set(5, 4, truncate=20)
    sw.clone_session_set(6, 5, truncate=16)
    sw.clone_session_set(7, None, mc_group=2)
    sw.clone_session_set(1, 3)


def ctl_frame(op: int, arg: int, src: int) -> bytes:
    """Ethernet + the program's control header (op, arg, the rest zero) + a payload."""
    eth = bytes([0x0A, 0, 0, 0, 0, 1, 0x0A, 0, 0, 0, 0, src]) + ETHER_TYPE.to_bytes(2, "big")
    ctl = bytes([op, arg]) + bytes(10)
    return eth + ctl + bytes(range(40))


# (ingress port, op, arg): ingress op in the low nibble, egress op in the high one
CASES = [
    (1, 0x01, 5),    # I2E clone (field list 1) to session 5: port 4, truncated to 20
    (2, 0x01, 7),    # I2E clone to session 7: multicast group 2 (rids seen in egress)
    (1, 0x02, 0),    # clone3 I2E, original dropped
    (3, 0x03, 3),    # resubmit three times (field list 2), out on port 1
    (1, 0x04, 0),    # resubmit and I2E clone in one pass
    (1, 0x05, 1),    # multicast group 1
    (2, 0x10, 0),    # E2E clone (field list 1) to session 5
    (1, 0x20, 0),    # E2E clone to session 6 (truncated to 16), original dropped
    (4, 0x30, 2),    # recirculate twice (field list 2), out on port 1
    (1, 0x40, 0),    # recirculate with truncate(20): the truncation does not apply
    (2, 0x50, 0),    # E2E clone to a session's multicast group
    (5, 0x60, 30),   # egress truncate to 30 bytes
    (1, 0x06, 0),    # two digests: the last one of the pass is sent
    (2, 0x07, 20),   # a digest and an ingress truncate (a frame of >= 14 bytes: veth sends it)
    (3, 0x07, 10),   # ... cut below the Ethernet header: counted and dropped (as BMv2)
    (1, 0x11, 255),  # E2E clones of clones until the 64-pass limit
]


def _socket(ifname: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 1 << 23)  # a clone chain's burst
    sock.bind((ifname, 0))
    return sock


def _collect(socks: dict[int, socket.socket], want: int, timeout: float = 10.0
             ) -> list[tuple[int, bytes]]:
    """Frames of the program (its EtherType) arriving on the far sides, until ``want``
    came or nothing arrived for ``timeout`` seconds."""
    by_fd = {s.fileno(): (port, s) for port, s in socks.items()}
    got: list[tuple[int, bytes]] = []
    while len(got) < want:
        ready = select.select(list(by_fd), [], [], timeout)[0]
        if not ready:
            break
        for fd in ready:
            port, sock = by_fd[fd]
            frame, addr = sock.recvfrom(65536)
            if addr[2] != socket.PACKET_OUTGOING and frame[12:14] == ETHER_TYPE.to_bytes(2, "big"):
                got.append((port, frame))
    return got


def test_the_c_loop_runs_bmv2s_packet_flow_as_the_python_back_end(veths, caplog):
    from netweft.emulation.process.native_loop import NativeSwitchLoop

    program = compile_p4(str(PROGRAM))
    python = SoftSwitch(program, backend="python")
    configure(python)
    inputs = [(port, ctl_frame(op, arg, i)) for i, (port, op, arg) in enumerate(CASES)]
    expected: list[tuple[int, bytes]] = []
    for port, frame in inputs:
        expected.extend(python.process(port, frame))
    assert {port for port, _ in expected} >= {1, 2, 3, 4, 5, 6}    # every path produced
    assert python.stats["pass_limit"] > 0
    runts = [f for _, f in expected if len(f) < 14]   # in process the switch returns them;
    expected = [(p, f) for p, f in expected if len(f) >= 14]   # no port can send them
    assert len(runts) == 1

    native = SoftSwitch(compile_p4(str(PROGRAM)), backend="c")
    configure(native)
    loop = NativeSwitchLoop(native, {n: a for n, (a, _b) in veths.items()})
    socks = {n: _socket(b) for n, (_a, b) in veths.items()}
    loop.start()
    try:
        for port, frame in inputs:
            socks[port].send(frame)
        got = _collect(socks, len(expected))
        time.sleep(0.2)
        got += _collect(socks, 1, timeout=0.3)    # nothing beyond what Python sent
        digests = loop.drain_flow()
    finally:
        final = loop.stop()
        for s in socks.values():
            s.close()
    assert Counter(got) == Counter(expected)
    assert final["drop_pass_limit"] > 0
    warned = [r.getMessage() for r in caplog.records if "packet(s) exceeded" in r.getMessage()]
    assert warned == [f"{final['drop_pass_limit']} packet(s) exceeded 64 pipeline passes; "
                      "dropped"]                  # one line for them all, as they were drained
    assert final["drop_tx_runt"] == len(runts) and final["tx_errors"] == 0
    assert final["resubmitted"] == 3 + 1 and final["recirculated"] == 2 + 1
    assert len(python.digests) == 3 and digests == python.digests   # one per ingress pass
    assert loop.flow_counts["log_msgs"] == len(python.logs)
