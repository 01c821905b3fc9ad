"""MulticastGroup over real UDP sockets on loopback, with a relay standing in for the
fabric's multicast (copies to every member but the sender, ACKs passed to the root) and
dropping some datagrams."""

from __future__ import annotations

import select
import socket
import threading

import numpy as np

from netweft.transport import MulticastGroup, broadcast


def relay(sock: socket.socket, members: list[tuple[str, int]], root: tuple[str, int],
          stop: threading.Event) -> None:
    seen = 0
    while not stop.is_set():
        if not select.select([sock], [], [], 0.05)[0]:
            continue
        data, src = sock.recvfrom(65536)
        seen += 1
        if seen % 11 == 0:
            continue  # lost
        for m in members:
            if m != src:
                sock.sendto(data, m)


def test_broadcast_on_loopback_with_loss():
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    members = [s.getsockname() for s in socks]
    for s in socks:
        s.close()  # the groups bind these ports
    fabric = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    fabric.bind(("127.0.0.1", 0))
    groups = [MulticastGroup(3, "127.0.0.1", members, r, port=fabric.getsockname()[1],
                             chunk=500, window=8, linger=0.2)
              for r in range(4)]
    stop = threading.Event()
    t = threading.Thread(target=relay, args=(fabric, members, members[0], stop), daemon=True)
    t.start()
    try:
        for call, root in enumerate((0, 2, 0)):
            root_data = np.random.default_rng(call).normal(size=(40, 50)).astype(np.float32)
            arrays = [root_data.copy() if r == root else np.zeros((40, 50), np.float32)
                      for r in range(4)]
            errors: list = []

            def work(r: int, arrays=arrays, root=root, errors=errors) -> None:
                try:
                    broadcast(arrays[r], groups[r], root=root, timeout=60)
                except Exception as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)

            threads = [threading.Thread(target=work, args=(r,)) for r in range(4)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            assert not errors, errors
            for a in arrays:
                assert np.array_equal(a, root_data)
        assert groups[0].stats["retransmits"] > 0
    finally:
        for g in groups:
            g.close()
        stop.set()
        t.join()
        fabric.close()
