"""Reliable multicast, sans-IO: one sender, several receivers, a lossy network in
virtual time, with and without switch-style ACK aggregation."""

from __future__ import annotations

import heapq
import random

import pytest

from netweft.transport.collectives.multicast.header import (
    ACK,
    F_AGGREGATED,
    HEADER,
    MalformedMulticast,
    decode,
    encode_ack,
)
from netweft.transport.collectives.multicast.reliable import MulticastReceiver, MulticastSender

DELAY_NS = 1_000_000


def _run(data: bytes, receivers: int, *, loss: float, aggregate: bool, seed: int,
         duplicate: float = 0.0) -> tuple[MulticastSender, list[MulticastReceiver], int]:
    """Deliver in virtual time; each DATA copy and each ACK is lost with ``loss``,
    duplicated with ``duplicate`` and delayed by a random extra (reordering). With
    ``aggregate`` an ACK aggregator (fabric.p4's rule: OR per sequence number, forward
    when all receivers are in) sits in front of the sender."""
    rng = random.Random(seed)
    first = 2**32 - 40   # the sequence numbers wrap during the transfer
    sender = MulticastSender(data, 7, receivers, chunk=100, window=16, first_seq=first)
    rx = [MulticastReceiver(7, i, len(data), chunk=100, first_seq=first)
          for i in range(receivers)]
    events: list[tuple[int, int, str, int, bytes]] = []
    order = 0
    slots: dict[int, int] = {}
    acks_at_sender = 0

    def post(at: int, where: str, who: int, datagram: bytes) -> None:
        nonlocal order
        for _ in range(2 if rng.random() < duplicate else 1):
            if rng.random() >= loss:
                order += 1
                heapq.heappush(events, (at + DELAY_NS + rng.randrange(DELAY_NS), order,
                                        where, who, datagram))

    now = 0
    for _ in range(200_000):
        for datagram in sender.poll(now):
            for i in range(receivers):
                post(now, "rx", i, datagram)
        if sender.done:
            break
        deadline = sender.next_deadline()
        if not events:
            now = deadline
            continue
        if deadline is not None and deadline < events[0][0]:
            now = deadline
            continue
        now, _, where, who, datagram = heapq.heappop(events)
        if where == "rx":
            for ack in rx[who].receive(datagram, now):
                post(now, "agg" if aggregate else "tx", 0, ack)
        elif where == "agg":
            header, _ = decode(datagram)
            slots[header.seq] = slots.get(header.seq, 0) | header.receivers
            if slots[header.seq] == (1 << receivers) - 1:
                out = bytearray(datagram)
                HEADER.pack_into(out, 0, ACK, F_AGGREGATED, header.group, header.seq,
                                 slots[header.seq])
                post(now, "tx", 0, bytes(out))
        else:
            acks_at_sender += 1
            sender.receive(datagram, now)
    return sender, rx, acks_at_sender


@pytest.mark.parametrize("aggregate", [False, True])
@pytest.mark.parametrize("loss", [0.0, 0.1])
def test_every_receiver_gets_the_buffer(aggregate, loss):
    data = random.Random(1).randbytes(10_050)      # 101 chunks, the last one short
    sender, receivers, acks = _run(data, 4, loss=loss, aggregate=aggregate, seed=3,
                                   duplicate=0.05)
    assert sender.done and all(r.done and bytes(r.data) == data for r in receivers)
    chunks = sender.count
    if loss == 0:
        assert sender.stats.retransmissions == 0 and sender.stats.datagrams == chunks
    else:
        assert sender.stats.retransmissions > 0
    if aggregate:   # about one ACK per chunk instead of one per receiver and chunk
        assert sender.stats.aggregated_acks == acks and acks < 2 * chunks
    else:
        assert sender.stats.aggregated_acks == 0 and acks >= 4 * chunks


def test_malformed_and_foreign_datagrams_are_counted_and_dropped():
    sender = MulticastSender(b"x" * 300, 1, 2, chunk=100)
    sent = sender.poll(0)
    receiver = MulticastReceiver(1, 0, 300, chunk=100)
    for bad in (b"", b"\x01" * 5, encode_ack(1, 0, 1), encode_ack(2, 0, 1),
                sent[0][:-1], b"\x09" + sent[0][1:]):
        assert receiver.receive(bad, 0) == []
    assert receiver.stats.malformed == 6 and not receiver.done
    for bad in (sent[0], encode_ack(1, 0, 0b100), encode_ack(9, 0, 1), b"\x02" * 13):
        sender.receive(bad, 0)
    assert sender.stats.malformed == 4 and sender.base == 0
    sender.receive(encode_ack(1, 0, 0b01), 10)
    sender.receive(encode_ack(1, 0, 0b10), 20)
    assert sender.base == 1
    with pytest.raises(MalformedMulticast, match="exactly 12 bytes"):
        decode(encode_ack(1, 0, 1) + b"\0")
    with pytest.raises(ValueError, match="window: 1..256"):
        MulticastSender(b"", 1, 1, window=300)
    with pytest.raises(ValueError, match="receivers: 1..32"):
        MulticastSender(b"", 1, 33)


def test_udp_driver_over_loopback():
    """send_unicast and receive_multicast over real sockets (127.0.0.1 to 127.0.0.2, one
    free port for both, as on a fabric both ends use 4795)."""
    import socket
    import threading

    from netweft.transport.collectives.multicast.udp import receive_multicast, send_unicast

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.2", 0))
    port = probe.getsockname()[1]
    probe.close()
    data = random.Random(5).randbytes(300_000)
    ready, got = threading.Event(), {}

    def receive() -> None:
        got["rx"] = receive_multicast(len(data), 9, 0, "127.0.0.1", bind="127.0.0.2",
                                      port=port, timeout=60, ready=ready.set)

    thread = threading.Thread(target=receive)
    thread.start()
    assert ready.wait(30)
    result = send_unicast(data, ["127.0.0.2"], [9], bind="127.0.0.1", port=port, timeout=60)
    thread.join(30)
    assert bytes(got["rx"].data) == data and got["rx"].stats.malformed == 0
    chunks = -(-len(data) // 1200)
    assert result.stats.datagrams >= chunks and result.stats.acks >= chunks
