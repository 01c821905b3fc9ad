"""The long-lived host programs of the soak (:mod:`netweft.testbed.experiments.soak`).

``python -m netweft.testbed.experiments.soak_hosts ROLE ARGS``, each running until killed and
printing one JSON line per round, so that the soak can count progress:

- ``ping-loop DST PORT SIZE INTERVAL``: a datagram of SIZE random bytes to the
  echo service every INTERVAL seconds; per 100 datagrams, how many came back intact.
- ``rma-writer-loop IP TARGET_IP PORT RKEY LENGTH MTU PAUSE``: one endpoint that
  RMA-writes LENGTH random bytes into the target again and again, PAUSE seconds apart.

The echo service and the RMA target are the demo's (:mod:`netweft.testbed.demo_hosts`).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

ROUND = 100


def ping_loop(dst: str, port: str, size: str, interval: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(1.0)
    sent = intact = 0
    while True:
        payload = sent.to_bytes(4, "big") + os.urandom(max(int(size), 4) - 4)
        sock.sendto(payload, (dst, int(port)))
        sent += 1
        try:
            while True:
                data, _ = sock.recvfrom(65535)
                if data[:4] == payload[:4]:
                    intact += data == payload
                    break
        except TimeoutError:
            pass
        if sent % ROUND == 0:
            print(json.dumps({"sent": sent, "intact": intact}), flush=True)
        time.sleep(float(interval))


def rma_writer_loop(ip: str, target_ip: str, port: str, rkey: str, length: str, mtu: str,
                    pause: str) -> None:
    import numpy as np

    from netweft.transport import RemoteKey, TransportError, udp_endpoint

    rng = np.random.default_rng()
    data = np.zeros(int(length), dtype=np.uint8)
    with udp_endpoint((ip, 4793), mtu=int(mtu)) as ep:
        src = ep.register(data)
        peer = ep.connect((target_ip, int(port)))
        writes = failed = 0
        while True:
            data[:] = rng.integers(0, 256, int(length), dtype=np.uint8)
            start = time.perf_counter()
            try:
                ep.cq.wait_for(peer.write(src, RemoteKey(int(rkey), int(length))),
                               timeout=120).check()
                writes += 1
            except (TransportError, TimeoutError) as exc:
                failed += 1
                print(json.dumps({"error": repr(exc)}), flush=True)
            print(json.dumps({"writes": writes, "failed": failed,
                              "seconds": time.perf_counter() - start}), flush=True)
            time.sleep(float(pause))


ROLES = {"ping-loop": ping_loop, "rma-writer-loop": rma_writer_loop}

if __name__ == "__main__":
    ROLES[sys.argv[1]](*sys.argv[2:])
