"""Helper run inside a namespace by test_udp_driver: one side of a veth exchange.

``target IP``: register a buffer, print "port rkey length", wait for a line on
stdin, print the SHA-256 of the buffer. ``initiator IP TARGET_IP PORT RKEY
LENGTH``: RMA-write random bytes into the target, read them back, compare,
print their SHA-256. Endpoint options (``tx``, ``io``, ``loss``...) come as JSON
in the environment variable NETWEFT_PEER_OPTIONS.
"""

import hashlib
import json
import os
import sys

import numpy as np

from netweft.transport import RemoteKey, udp_endpoint

LENGTH = (4 << 20) + 5
OPTIONS = json.loads(os.environ.get("NETWEFT_PEER_OPTIONS", "{}"))


def _report_stats(ep) -> None:
    """With NETWEFT_PEER_STATS set, the endpoint's counters as one JSON line on stderr."""
    if os.environ.get("NETWEFT_PEER_STATS"):
        print(json.dumps(ep.stats()), file=sys.stderr, flush=True)


def target(ip: str) -> None:
    with udp_endpoint((ip, 0), mtu=8972, **OPTIONS) as ep:
        buf = np.zeros(LENGTH, dtype=np.uint8)
        mr = ep.register(buf)
        print(ep.address[1], mr.rkey, mr.length, flush=True)
        sys.stdin.readline()
        _report_stats(ep)
        print(hashlib.sha256(buf.tobytes()).hexdigest(), flush=True)


def initiator(ip: str, target_ip: str, port: str, rkey: str, length: str) -> None:
    with udp_endpoint((ip, 4793), mtu=8972, **OPTIONS) as ep:  # the target answers port 4793
        data = np.random.default_rng(7).integers(0, 256, int(length), dtype=np.uint8)
        src = ep.register(data)
        back = np.zeros_like(data)
        peer = ep.connect((target_ip, int(port)))
        remote = RemoteKey(int(rkey), int(length))
        ep.cq.wait_for(peer.write(src, remote), timeout=60).check()
        ep.cq.wait_for(peer.read(ep.register(back), remote), timeout=60).check()
        if not np.array_equal(back, data):
            sys.exit("read-back differs from what was written")
        _report_stats(ep)
        print(hashlib.sha256(data.tobytes()).hexdigest(), flush=True)


if __name__ == "__main__":
    {"target": target, "initiator": initiator}[sys.argv[1]](*sys.argv[2:])
