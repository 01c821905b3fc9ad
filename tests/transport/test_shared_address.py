"""Two endpoints on one address, as ``netweft perf server`` and ``perf client
127.0.0.1`` on one machine: with per-packet entropy ports (the default) both engines
send from the same source-port range, so they share those send-only sockets instead
of failing to start; and engine errors are said in words."""

from __future__ import annotations

import errno
import os
import random
import socket

import numpy as np
import pytest

from netweft.nic_offload import lib
from netweft.transport import udp_endpoint
from netweft.transport.engine_handle import strerror


def _ip() -> str:
    r = random.Random(os.getpid() ^ 0x5eed)
    return f"127.{r.randrange(1, 250)}.{r.randrange(1, 250)}.{r.randrange(1, 250)}"


def test_two_endpoints_on_one_address_both_start_and_talk():
    ip = _ip()
    with udp_endpoint((ip, 0)) as a, udp_endpoint((ip, 0)) as b:
        data = np.random.default_rng(1).integers(0, 256, 1 << 20, dtype=np.uint8)
        src, dst_buf = a.register(data), np.zeros(1 << 20, dtype=np.uint8)
        dst = b.register(dst_buf)
        b.connect(a.address)  # replies go to a's (ephemeral) port
        a.connect(b.address).write(src, dst.remote())
        a.cq.wait(timeout=30).check()
        assert np.array_equal(dst_buf, data)


def test_entropy_port_held_by_another_program_is_sent_from_the_listen_port():
    ip = _ip()
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # no SO_REUSEPORT: not shared
    try:
        other.bind((ip, 49152))
    except OSError:
        other.close()
        pytest.skip(f"{ip}:49152 is taken")  # only when another test holds the same address
    try:
        with udp_endpoint((ip, 0), entropy_count=4) as a, udp_endpoint((_ip(), 0)) as b:
            src = a.register(np.ones(64 << 10, dtype=np.uint8))
            dst = b.register(np.zeros(64 << 10, dtype=np.uint8))
            b.connect(a.address)
            a.connect(b.address).write(src, dst.remote())
            a.cq.wait(timeout=30).check()
    finally:
        other.close()


def test_failed_system_calls_are_said_in_words():
    text = strerror(lib.NW_ESYS, errno.EADDRINUSE)
    assert text == f"a system call failed: {os.strerror(errno.EADDRINUSE)}"
    assert "CAP_NET_RAW" in strerror(lib.NW_EPERM)
    # every engine code has its own words, none falls through to "unknown error"
    codes = [getattr(lib, n) for n in dir(lib) if n.startswith("NW_E") and n[4:].isupper()
             and isinstance(getattr(lib, n), int) and getattr(lib, n) < 0
             and getattr(lib, n) > -100]
    assert len(codes) >= 18
    for code in codes:
        assert strerror(code) != "unknown error", code
