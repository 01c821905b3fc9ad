"""Reliable multicast of one buffer, sans-IO: a sender and its receivers (Gleam-like).

The sender cuts the buffer into chunks, sends chunk ``seq`` as DATA ``seq`` to
the group (one datagram, which the switches copy to every receiver), keeps at
most ``window`` sequence numbers unacknowledged (at most 256: fabric.p4's ACK
slots are ``seq mod 256``), and retransmits a sequence number to the group when
its retransmission timer (RFC 6298's estimator, Karn's rule, backoff) fires
before every receiver acknowledged it. Receiver ``i`` acknowledges every DATA it
gets (duplicates too) with an ACK whose bitmap is ``1 << i``; the sender ORs the
bitmaps it receives, so it works alike whether each receiver's ACK arrives
(no aggregation) or the switches aggregate them into one ACK per sequence
number (``flags`` AGGREGATED). Sequence numbers start at ``first_seq``, which the
sender and its receivers agree on: a switch's ACK slot remembers the last
sequence number it aggregated, so a group's next transfer must not reuse the
numbers of the previous one (start it where that one ended). Neither side touches a socket or a clock: the
driver (:mod:`netweft.transport.collectives.multicast.udp`) passes datagrams and the time
in nanoseconds, and sends what they return.
"""

from __future__ import annotations

from dataclasses import dataclass

from netweft.transport.collectives.multicast.header import (
    ACK,
    DATA,
    F_AGGREGATED,
    MAX_SEQ,
    MalformedMulticast,
    decode,
    encode_ack,
    encode_data,
)

MAX_WINDOW = 256
MAX_RECEIVERS = 32
INITIAL_RTO_NS = 200_000_000
MIN_RTO_NS = 200_000_000  # Linux TCP's floor: above the queueing a window builds on a slow link
MAX_RTO_NS = 2_000_000_000


@dataclass
class SenderStats:
    datagrams: int = 0          # DATA sent, retransmissions included
    bytes: int = 0              # UDP payload bytes sent
    retransmissions: int = 0
    acks: int = 0               # ACKs received
    aggregated_acks: int = 0    # ... of which a switch aggregated
    malformed: int = 0          # datagrams dropped as not nw_mcast_t ACKs of this group


@dataclass
class _InFlight:
    sent_ns: int
    deadline_ns: int
    acked: int = 0
    retransmitted: bool = False


class MulticastSender:
    """Sends ``data`` to ``receivers`` receivers of multicast group ``group``."""

    def __init__(self, data: bytes | memoryview, group: int, receivers: int,
                 chunk: int = 1200, window: int = 64, first_seq: int = 0) -> None:
        if not 0 < receivers <= MAX_RECEIVERS:
            raise ValueError(f"receivers: 1..{MAX_RECEIVERS} (a 32-bit ACK bitmap), "
                             f"got {receivers}")
        if not 0 < window <= MAX_WINDOW:
            raise ValueError(f"window: 1..{MAX_WINDOW} (the switches' ACK slots), got {window}")
        if chunk <= 0:
            raise ValueError(f"chunk: a positive number of bytes, got {chunk}")
        self.data = memoryview(data)
        self.group, self.chunk, self.window = group, chunk, window
        self.first_seq = first_seq & MAX_SEQ
        self.all = (1 << receivers) - 1
        self.count = max(1, -(-len(self.data) // chunk))
        self.next_seq = 0            # next sequence number never sent
        self.base = 0                # lowest sequence number not yet acknowledged by all
        self.in_flight: dict[int, _InFlight] = {}
        self.done_seqs: set[int] = set()
        self.srtt_ns: float | None = None
        self.rttvar_ns = 0.0
        self.rto_ns = INITIAL_RTO_NS
        self.stats = SenderStats()

    @property
    def done(self) -> bool:
        return self.base >= self.count

    def _wire(self, index: int) -> int:
        return (self.first_seq + index) & MAX_SEQ

    def _payload(self, seq: int) -> memoryview:
        return self.data[seq * self.chunk:(seq + 1) * self.chunk]

    def poll(self, now_ns: int) -> list[bytes]:
        """DATA datagrams to send now: due retransmissions, then new ones the window allows."""
        out = []
        due = sorted(seq for seq, f in self.in_flight.items() if f.deadline_ns <= now_ns)
        if due:
            self.rto_ns = min(MAX_RTO_NS, self.rto_ns * 2)   # back off once per expiry
        for seq in due:
            flight = self.in_flight[seq]
            flight.retransmitted = True
            flight.sent_ns = now_ns
            flight.deadline_ns = now_ns + self.rto_ns
            out.append(encode_data(self.group, self._wire(seq), self._payload(seq)))
            self.stats.retransmissions += 1
        while self.next_seq < self.count and self.next_seq < self.base + self.window:
            seq = self.next_seq
            self.in_flight[seq] = _InFlight(now_ns, now_ns + self.rto_ns)
            out.append(encode_data(self.group, self._wire(seq), self._payload(seq)))
            self.next_seq += 1
        self.stats.datagrams += len(out)
        self.stats.bytes += sum(len(d) for d in out)
        return out

    def receive(self, datagram: bytes | memoryview, now_ns: int) -> None:
        """An ACK (or anything else arriving on the sender's port: counted, dropped)."""
        try:
            header, _ = decode(datagram)
        except MalformedMulticast:
            self.stats.malformed += 1
            return
        if header.kind != ACK or header.group != self.group or header.receivers & ~self.all:
            self.stats.malformed += 1
            return
        self.stats.acks += 1
        self.stats.aggregated_acks += bool(header.flags & F_AGGREGATED)
        index = (header.seq - self.first_seq) & MAX_SEQ
        flight = self.in_flight.get(index)
        if flight is None:
            return   # already complete, or never sent: a duplicate
        flight.acked |= header.receivers
        if flight.acked != self.all:
            return
        if not flight.retransmitted:
            self._sample_rtt(now_ns - flight.sent_ns)
        del self.in_flight[index]
        self.done_seqs.add(index)
        while self.base in self.done_seqs:
            self.done_seqs.discard(self.base)
            self.base += 1

    def _sample_rtt(self, rtt_ns: int) -> None:
        if self.srtt_ns is None:
            self.srtt_ns, self.rttvar_ns = float(rtt_ns), rtt_ns / 2
        else:
            self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * abs(self.srtt_ns - rtt_ns)
            self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * rtt_ns
        self.rto_ns = int(min(MAX_RTO_NS, max(MIN_RTO_NS, self.srtt_ns + 4 * self.rttvar_ns)))

    def next_deadline(self) -> int | None:
        """When :meth:`poll` has a retransmission to send (None: nothing in flight)."""
        return min((f.deadline_ns for f in self.in_flight.values()), default=None)


@dataclass
class ReceiverStats:
    datagrams: int = 0
    duplicates: int = 0
    acks: int = 0
    malformed: int = 0


class MulticastReceiver:
    """Receiver ``index`` of group ``group``: places chunks into a ``length``-byte buffer."""

    def __init__(self, group: int, index: int, length: int, chunk: int = 1200,
                 first_seq: int = 0) -> None:
        if not 0 <= index < MAX_RECEIVERS:
            raise ValueError(f"index: 0..{MAX_RECEIVERS - 1}, got {index}")
        self.group, self.bit, self.chunk = group, 1 << index, chunk
        self.first_seq = first_seq & MAX_SEQ
        self.data = bytearray(length)
        self.count = max(1, -(-length // chunk))
        self.have = bytearray(self.count)
        self.missing = self.count
        self.stats = ReceiverStats()

    @property
    def done(self) -> bool:
        return self.missing == 0

    def receive(self, datagram: bytes | memoryview, now_ns: int) -> list[bytes]:
        """A DATA datagram in; the ACKs to send back to the sender out."""
        try:
            header, payload = decode(datagram)
        except MalformedMulticast:
            self.stats.malformed += 1
            return []
        seq = (header.seq - self.first_seq) & MAX_SEQ
        expected = min(self.chunk, len(self.data) - seq * self.chunk) if seq < self.count else -1
        if header.kind != DATA or header.group != self.group or len(payload) != max(0, expected):
            self.stats.malformed += 1
            return []
        self.stats.datagrams += 1
        if self.have[seq]:
            self.stats.duplicates += 1
        else:
            self.data[seq * self.chunk:seq * self.chunk + len(payload)] = payload
            self.have[seq] = 1
            self.missing -= 1
        self.stats.acks += 1
        return [encode_ack(self.group, header.seq, self.bit)]
