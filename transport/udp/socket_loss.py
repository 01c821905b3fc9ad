"""Random loss injected at a UDP socket by a classic-BPF socket filter.

This kernel has no ``netem`` and no tc classifiers, so ``netweft perf`` and the
UDP driver inject loss where netweft owns the path: a socket filter on the
engine's receive socket that drops each arriving datagram with probability
``p``. It runs in the kernel (no Python, no extra copy), so the I/O thread sees
exactly the datagrams a lossy link would deliver. The randomness is the
kernel's ``prandom`` (classic BPF's ``rand`` load), so runs are not
reproducible packet by packet; the deterministic simulation is the place for
seeded loss.
"""

from __future__ import annotations

import ctypes
import socket
import struct

from netweft.transport.errors import InvalidArgumentError

SO_ATTACH_FILTER = 26
SO_DETACH_FILTER = 27
_SKF_AD_RANDOM = 0xFFFFF000 + 56  # SKF_AD_OFF + SKF_AD_RANDOM
_LD_W_ABS, _JGE_K, _RET_K = 0x20, 0x35, 0x06


def loss_filter_program(p: float) -> bytes:
    """The four cBPF instructions: load a random u32, accept if >= p * 2**32, else drop."""
    if not 0.0 <= p < 1.0:
        raise InvalidArgumentError(f"loss probability must be in [0, 1), got {p!r}")
    threshold = min(int(p * 2**32), 2**32 - 1)
    insns = [
        (_LD_W_ABS, 0, 0, _SKF_AD_RANDOM),
        (_JGE_K, 0, 1, threshold),     # A >= threshold: next (accept); else skip to drop
        (_RET_K, 0, 0, 0xFFFFFFFF),   # accept the whole datagram
        (_RET_K, 0, 0, 0),            # drop
    ]
    return b"".join(struct.pack("=HBBI", *insn) for insn in insns)


def attach_loss(sock: socket.socket, p: float) -> None:
    """Make ``sock`` drop each arriving datagram with probability ``p`` (0 detaches)."""
    if p == 0:
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_DETACH_FILTER, 0)
        except OSError:
            pass  # no filter attached
        return
    program = loss_filter_program(p)
    insns = ctypes.create_string_buffer(program, len(program))

    class _SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _SockFprog(len(program) // 8, ctypes.addressof(insns))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, bytes(fprog))
