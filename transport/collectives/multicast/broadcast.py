"""``broadcast`` over the fabric's multicast: a group of members and an MPI-style call.

A :class:`MulticastGroup` is one member's view of a broadcast group on the
fabric program (``p4/fabric.p4``: a ``route_to_multicast`` route for the
group's address, a replication group, host copies delivered as unicast, and
optionally ACK aggregation; docs/fabric.md): the group id, the group's IPv4
address, every member's address in rank order and this member's rank. Every
member calls :meth:`MulticastGroup.broadcast` with an array of the same shape
and dtype; afterwards all hold the root's values (MPI_Bcast's contract).

The transfer is fabric-ctl's reliable multicast
(:mod:`netweft.transport.collectives.multicast.reliable`: ``nw_mcast_t`` DATA to the group,
per-chunk ACK bitmaps, retransmission): the root drives a ``MulticastSender``
for ``members - 1`` receivers, and the member of rank ``r`` is receiver
``r`` below the root's rank and ``r - 1`` above it, so a switch aggregates the
ACKs of every broadcast of the group with ``expected = 2**(members-1) - 1``
whoever the root is. This module adds what a sequence of collectives needs:
one socket per member for the group's lifetime, sequence numbers that go on
growing from one broadcast to the next (so a switch's ACK slots and the
receivers tell a late copy of an earlier broadcast from a new one), and
members that keep answering late copies of broadcasts they finished (whenever
they next use the group, and for ``linger`` seconds in :meth:`close`), so that
a root whose last ACK from someone was lost still completes.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Sequence

import numpy as np

from netweft.transport.collectives.multicast.header import DATA, HEADER, MULTICAST_PORT
from netweft.transport.collectives.multicast.reliable import (
    MAX_RECEIVERS,
    MulticastReceiver,
    MulticastSender,
)
from netweft.transport.errors import CompletionTimeout, InvalidArgumentError

DEFAULT_CHUNK = 1400 - HEADER.size  # DATA bytes per packet: fits a 1500-byte MTU
MULTICAST_TTL = 16


class MulticastGroup:
    """One member of a broadcast group on the fabric (real UDP sockets)."""

    def __init__(self, group_id: int, group_address: str,
                 members: Sequence[str | tuple[str, int]], rank: int, *,
                 port: int = MULTICAST_PORT, chunk: int = DEFAULT_CHUNK, window: int = 64,
                 linger: float = 0.5) -> None:
        if not 0 <= rank < len(members):
            raise InvalidArgumentError(f"rank must be in 0..{len(members) - 1}, got {rank}")
        if not 2 <= len(members) <= MAX_RECEIVERS + 1:
            raise InvalidArgumentError(f"a group has 2..{MAX_RECEIVERS + 1} members (one ACK "
                                       f"bit per receiver), got {len(members)}")
        self.group_id, self.group_address = group_id, group_address
        # (ip, port) per rank; a bare ip means port 4795, where the fabric delivers copies
        self.members = [m if isinstance(m, tuple) else (m, port) for m in members]
        self.rank, self.port = rank, port
        self.chunk, self.window, self.linger = chunk, window, linger
        self._next_seq = 0
        self._finished: list[tuple[MulticastReceiver, tuple[str, int]]] = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            self.sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, MULTICAST_TTL)
            self.sock.bind(self.members[rank])
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.stats = {"sent": 0, "retransmits": 0, "late_acks": 0}

    @property
    def size(self) -> int:
        """Number of members."""
        return len(self.members)

    def _recv(self) -> bytes | None:
        try:
            return self.sock.recv(65536)
        except BlockingIOError:
            return None

    def _late(self, datagram: bytes) -> bool:
        """ACK a late DATA copy of a broadcast this member finished; True if it was one."""
        if len(datagram) < HEADER.size or datagram[0] != DATA:
            return False
        seq = HEADER.unpack_from(datagram)[3]
        for old, root in self._finished:
            if 0 <= (seq - old.first_seq) & 0xFFFFFFFF < old.count:
                for ack in old.receive(datagram, time.monotonic_ns()):
                    self.sock.sendto(ack, root)
                    self.stats["late_acks"] += 1
                return True
        return False

    def broadcast(self, array: np.ndarray, root: int = 0, deadline: float | None = 60.0
                  ) -> np.ndarray:
        """The root's ``array`` on every member: receivers' arrays are overwritten (and
        returned); the root's is returned as it is."""
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise InvalidArgumentError("broadcast takes a C-contiguous numpy array")
        if not isinstance(root, int) or not 0 <= root < self.size:
            raise InvalidArgumentError(f"root must be a rank, 0..{self.size - 1}, got {root!r}")
        view = memoryview(array).cast("B")
        first = self._next_seq
        self._next_seq = (first + max(1, -(-len(view) // self.chunk))) & 0xFFFFFFFF
        end = None if deadline is None else time.monotonic() + deadline
        if self.rank == root:
            sender = MulticastSender(view, self.group_id, self.size - 1, self.chunk,
                                     self.window, first)
            self._drive_sender(sender, end)
            self.stats["sent"] += sender.stats.datagrams
            self.stats["retransmits"] += sender.stats.retransmissions
            return array
        if not array.flags.writeable:
            raise InvalidArgumentError("a receiver's array must be writable")
        index = self.rank if self.rank < root else self.rank - 1
        receiver = MulticastReceiver(self.group_id, index, len(view), self.chunk, first)
        root_address = self.members[root]
        while not receiver.done:
            self._check(end, f"{receiver.missing} of {receiver.count} chunk(s) missing")
            if not select.select([self.sock], [], [], 0.2)[0]:
                continue
            datagram = self._recv()  # one at a time: the next broadcast's DATA stays queued
            if datagram is None or self._late(datagram):
                continue
            for ack in receiver.receive(datagram, time.monotonic_ns()):
                self.sock.sendto(ack, root_address)
        view[:] = receiver.data
        self._finished = [*self._finished[-3:], (receiver, root_address)]
        return array

    def _drive_sender(self, sender: MulticastSender, end: float | None) -> None:
        dest = (self.group_address, self.port)
        while True:
            for datagram in sender.poll(time.monotonic_ns()):
                self.sock.sendto(datagram, dest)
            if sender.done:
                return
            self._check(end, f"{sender.count - sender.base} of {sender.count} chunk(s) "
                             "not acknowledged by every receiver")
            due = sender.next_deadline()
            wait = 0.2 if due is None else max(0.0, (due - time.monotonic_ns()) / 1e9)
            if select.select([self.sock], [], [], min(wait, 0.2))[0]:
                while (datagram := self._recv()) is not None:
                    if not self._late(datagram):
                        sender.receive(datagram, time.monotonic_ns())

    def _check(self, end: float | None, progress: str) -> None:
        if end is not None and time.monotonic() > end:
            raise CompletionTimeout(f"broadcast on group {self.group_id} (rank {self.rank}) "
                                    f"timed out: {progress}; is the group's multicast route "
                                    "and replication group configured on the switches?")

    def close(self) -> None:
        """Answer late copies of finished broadcasts for ``linger`` seconds, then close."""
        end = time.monotonic() + self.linger
        while self._finished and time.monotonic() < end:
            if select.select([self.sock], [], [], max(0.0, end - time.monotonic()))[0]:
                while (datagram := self._recv()) is not None:
                    self._late(datagram)
        self.sock.close()

    def __enter__(self) -> MulticastGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
