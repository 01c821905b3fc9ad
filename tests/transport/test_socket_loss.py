"""Injected loss on a real UDP socket (a cBPF filter with the kernel's random source)."""

import socket
import struct

import pytest

from netweft.transport.errors import InvalidArgumentError
from netweft.transport.udp.socket_loss import attach_loss, loss_filter_program


def _deliver(p: float, count: int = 2000) -> int:
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(0.05)
    attach_loss(rx, p)
    got = 0
    try:
        for _ in range(count // 100):  # in batches, so the receive buffer never overflows
            for _ in range(100):
                tx.sendto(b"x", rx.getsockname())
            try:
                while True:
                    rx.recv(16)
                    got += 1
            except TimeoutError:
                pass
    finally:
        rx.close()
        tx.close()
    return got


def test_filter_program_threshold():
    prog = loss_filter_program(0.25)
    assert len(prog) == 32
    assert struct.unpack_from("=HBBI", prog, 8)[3] == 2**30
    with pytest.raises(InvalidArgumentError):
        loss_filter_program(1.0)


def test_socket_drops_about_the_requested_share():
    got = _deliver(0.3)
    assert 0.2 < 1 - got / 2000 < 0.4


def test_zero_loss_delivers_everything():
    assert _deliver(0.0, 500) == 500
