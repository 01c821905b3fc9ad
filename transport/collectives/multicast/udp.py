"""The UDP driver of reliable multicast: sockets and a select loop around the sans-IO
:class:`~netweft.transport.collectives.multicast.reliable.MulticastSender` and
:class:`~netweft.transport.collectives.multicast.reliable.MulticastReceiver`.

Both ends use UDP port 4795 (fabric.p4 parses ``nw_mcast_t`` there, and an ACK's
destination port must be it for the switches to aggregate it). The sender sends
DATA to the group's address with a multicast TTL above the fabric's hop count; a
fabric.p4 switch turns each receiver's copy into unicast, so receivers need no
group membership. :func:`send_unicast` sends the same buffer to each receiver in
turn over its own group id instead, as the baseline a fabric without multicast
has.
"""

from __future__ import annotations

import selectors
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass

from netweft.transport.collectives.multicast.header import MULTICAST_PORT
from netweft.transport.collectives.multicast.reliable import (
    MulticastReceiver,
    MulticastSender,
    SenderStats,
)

MULTICAST_TTL = 16
LINGER_S = 1.0   # a done receiver keeps acknowledging retransmissions this long


class MulticastTimeout(TimeoutError):
    """The transfer did not complete in time; says how far it got."""


@dataclass
class SendResult:
    seconds: float
    stats: SenderStats


def _socket(address: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, MULTICAST_TTL)
    sock.bind((address, port))
    sock.setblocking(False)
    return sock


def _run_senders(sock: socket.socket, senders: dict[int, tuple[MulticastSender, str]],
                 port: int, timeout: float) -> int:
    """Drive senders (by group id, with their destination) until all are done; the
    number of datagrams that were for none of them (dropped)."""
    foreign = 0
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while not all(s.done for s, _ in senders.values()):
            now = time.monotonic_ns()
            if now / 1e9 > deadline:
                left = sum(s.count - s.base for s, _ in senders.values())
                raise MulticastTimeout(f"{left} chunk(s) not acknowledged by every receiver "
                                       f"after {timeout:g} s")
            for sender, destination in senders.values():
                for datagram in sender.poll(now):
                    try:
                        sock.sendto(datagram, (destination, port))
                    except BlockingIOError:
                        break   # the socket buffer is full: the timer resends it
            deadlines = [d for s, _ in senders.values() if (d := s.next_deadline()) is not None]
            wait = max(0.0, (min(deadlines) - time.monotonic_ns()) / 1e9) if deadlines else 0.1
            if sel.select(min(wait, 0.1)):
                while True:
                    try:
                        datagram = sock.recv(65535)
                    except BlockingIOError:
                        break
                    now = time.monotonic_ns()
                    group = int.from_bytes(datagram[2:4], "big") if len(datagram) >= 4 else -1
                    entry = senders.get(group)
                    if entry is not None:
                        entry[0].receive(datagram, now)
                    else:
                        foreign += 1
    finally:
        sel.close()
    return foreign


def send_multicast(data: bytes, group_address: str, group: int, receivers: int, *,
                   bind: str = "0.0.0.0", port: int = MULTICAST_PORT, chunk: int = 1200,
                   window: int = 64, timeout: float = 120.0, first_seq: int = 0
                   ) -> SendResult:
    """Send ``data`` once to the group; returns when every receiver has all of it."""
    sender = MulticastSender(data, group, receivers, chunk, window, first_seq)
    start = time.monotonic()
    with _socket(bind, port) as sock:
        sender.stats.malformed += _run_senders(sock, {group: (sender, group_address)}, port,
                                               timeout)
    return SendResult(time.monotonic() - start, sender.stats)


def send_unicast(data: bytes, addresses: Sequence[str], groups: Sequence[int], *,
                 bind: str = "0.0.0.0", port: int = MULTICAST_PORT, chunk: int = 1200,
                 window: int = 64, timeout: float = 120.0) -> SendResult:
    """Send ``data`` to each receiver (``addresses[i]``, one receiver of group
    ``groups[i]``) at once: unicast fan-out. ``window`` is shared, each receiver's
    stream keeping ``window // len(addresses)`` in flight, so that the fan-out puts
    as much in the network at once as one multicast sender does."""
    share = max(1, window // max(1, len(addresses)))
    senders = {g: (MulticastSender(data, g, 1, chunk, share), a)
               for a, g in zip(addresses, groups, strict=True)}
    start = time.monotonic()
    with _socket(bind, port) as sock:
        foreign = _run_senders(sock, senders, port, timeout)
    total = SenderStats(malformed=foreign)
    for s, _ in senders.values():
        for name in total.__dataclass_fields__:
            setattr(total, name, getattr(total, name) + getattr(s.stats, name))
    return SendResult(time.monotonic() - start, total)


def receive_multicast(length: int, group: int, index: int, sender: str, *,
                      bind: str = "0.0.0.0", port: int = MULTICAST_PORT, chunk: int = 1200,
                      timeout: float = 120.0, first_seq: int = 0,
                      ready=None) -> MulticastReceiver:
    """Receive a ``length``-byte buffer as receiver ``index`` of ``group``; ACKs go to
    ``sender``. Lingers :data:`LINGER_S` once complete, so that the sender hears the
    ACKs of its retransmissions. ``ready()`` is called once the socket is bound."""
    receiver = MulticastReceiver(group, index, length, chunk, first_seq)
    deadline = time.monotonic() + timeout
    with _socket(bind, port) as sock:
        if ready is not None:
            ready()
        sel = selectors.DefaultSelector()
        sel.register(sock, selectors.EVENT_READ)
        last = time.monotonic()
        try:
            while not (receiver.done and time.monotonic() - last > LINGER_S):
                if time.monotonic() > deadline:
                    raise MulticastTimeout(f"receiver {index} of group {group}: "
                                           f"{receiver.missing} of {receiver.count} chunk(s) "
                                           f"missing after {timeout:g} s")
                if not sel.select(0.1):
                    continue
                while True:
                    try:
                        datagram = sock.recv(65535)
                    except BlockingIOError:
                        break
                    last = time.monotonic()
                    for ack in receiver.receive(datagram, time.monotonic_ns()):
                        try:
                            sock.sendto(ack, (sender, port))
                        except BlockingIOError:
                            pass   # lost like any ACK: the sender's timer resends the DATA
        finally:
            sel.close()
    return receiver
