"""The programs ``netweft demo`` runs on its emulated hosts, one role per invocation.

``python -m netweft.testbed.experiments.demo_hosts ROLE ARGS``:

- ``echo PORT``: a UDP echo service; prints ``ready``.
- ``ping DST PORT COUNT SIZE``: sends COUNT datagrams of random content, waits for
  each echo, prints a JSON list of ``{seq, rtt_s, intact}``.
- ``rma-target IP LENGTH MTU``: registers LENGTH bytes with a netweft endpoint, prints
  ``PORT RKEY LENGTH``, waits for a line on stdin, prints the SHA-256 of the region.
- ``rma-writer IP TARGET_IP PORT RKEY LENGTH MTU``: RMA-writes LENGTH random bytes
  into the target through netweft's transport, prints JSON with the elapsed time,
  goodput and the SHA-256 of what it wrote.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import time


def echo(port: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", int(port)))
    print("ready", flush=True)
    while True:
        data, peer = sock.recvfrom(65535)
        sock.sendto(data, peer)


def ping(dst: str, port: str, count: str, size: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(1.0)
    records = []
    for seq in range(int(count)):
        payload = seq.to_bytes(4, "big") + os.urandom(max(int(size), 4) - 4)
        start = time.perf_counter()
        sock.sendto(payload, (dst, int(port)))
        rtt, intact = None, False
        try:
            while True:
                data, _ = sock.recvfrom(65535)
                if data[:4] == payload[:4]:
                    rtt, intact = time.perf_counter() - start, data == payload
                    break
        except TimeoutError:
            pass
        records.append({"seq": seq, "rtt_s": rtt, "intact": intact})
    print(json.dumps(records))


def rma_target(ip: str, length: str, mtu: str) -> None:
    import numpy as np

    from netweft.transport import udp_endpoint

    with udp_endpoint((ip, 4793), mtu=int(mtu)) as ep:
        buf = np.zeros(int(length), dtype=np.uint8)
        region = ep.register(buf)
        print(ep.address[1], region.rkey, region.length, flush=True)
        sys.stdin.readline()
        print(hashlib.sha256(buf.tobytes()).hexdigest(), flush=True)


def rma_writer(ip: str, target_ip: str, port: str, rkey: str, length: str, mtu: str) -> None:
    import numpy as np

    from netweft.transport import RemoteKey, udp_endpoint

    data = np.random.default_rng().integers(0, 256, int(length), dtype=np.uint8)
    with udp_endpoint((ip, 4793), mtu=int(mtu)) as ep:  # acks come to 4793
        src = ep.register(data)
        peer = ep.connect((target_ip, int(port)))
        start = time.perf_counter()
        ep.cq.wait_for(peer.write(src, RemoteKey(int(rkey), int(length))), timeout=120).check()
        elapsed = time.perf_counter() - start
    print(json.dumps({"bytes": int(length), "seconds": elapsed,
                      "goodput_mbit_s": int(length) * 8 / elapsed / 1e6,
                      "sha256": hashlib.sha256(data.tobytes()).hexdigest()}))


ROLES = {"echo": echo, "ping": ping, "rma-target": rma_target, "rma-writer": rma_writer}

if __name__ == "__main__":
    ROLES[sys.argv[1]](*sys.argv[2:])
