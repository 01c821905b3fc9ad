"""Testbed points for ``netweft bench reliability --testbed``: two hosts and a switch.

h1 -- s1 -- h2 in network namespaces; s1 runs ``p4/basic_forward.p4`` in
netweft's switch process, whose traffic manager applies the link's one-way
delay and random loss on the s1--h2 link (this kernel has no netem). h2 runs a
netweft endpoint on UDP port 4793 with a registered buffer; h1 RMA-writes
messages one after another with each reliability and times every write with
the host's clock. Everything runs as real processes on real sockets, so the
times include the machine's load (unlike the simulator's).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from netweft.emulation.links.link_params import LinkParams
from netweft.emulation.network import Network
from netweft.p4.programs import program

H1, H2 = ("10.0.1.1", "08:00:00:00:01:11"), ("10.0.1.2", "08:00:00:00:01:22")
PORT = 4793

SERVER = """
import json, sys, time
import numpy as np
from netweft.transport import udp_endpoint
size = int(sys.argv[1])
ep = udp_endpoint(("{h2}", {port}), mtu=8972, window_pkts=4096)
buf = np.zeros(size, dtype=np.uint8)
mr = ep.register(buf)
ep.connect(("{h1}", {port}))
print(json.dumps({{"rkey": mr.rkey, "length": mr.length}}), flush=True)
sys.stdin.readline()
ep.close()
"""

CLIENT = """
import json, sys, time
import numpy as np
from netweft.transport import RemoteKey, udp_endpoint
size, messages, rkey, length = (int(x) for x in sys.argv[1:5])
ep = udp_endpoint(("{h1}", {port}), mtu=8972, window_pkts=4096)
src = ep.register(np.frombuffer(np.random.default_rng(1).bytes(size), np.uint8).copy())
peer = ep.connect(("{h2}", {port}))
out = {{}}
for rel in sys.argv[5:]:
    peer.set_reliability(rel)
    times = []
    for _ in range(messages):
        t0 = time.monotonic()
        ep.cq.wait_for(peer.write(src, RemoteKey(rkey, length)), timeout=60).check()
        times.append(time.monotonic() - t0)
    out[rel] = {{"times_s": times, "srtt_ns": peer.path()["srtt_ns"]}}
out["stats"] = {{k: v for k, v in ep.stats().items() if k.startswith("ec_") or k == "retransmits"}}
print(json.dumps(out), flush=True)
ep.close()
"""


def _runtime(path: Path) -> Path:
    entries = [{"table": "MyIngress.ipv4_lpm", "default_action": True,
                "action_name": "MyIngress.drop", "action_params": {}}]
    for port, (ip, mac) in ((1, H1), (2, H2)):
        entries.append({"table": "MyIngress.ipv4_lpm",
                        "match": {"hdr.ipv4.dstAddr": [ip, 32]},
                        "action_name": "MyIngress.ipv4_forward",
                        "action_params": {"dstAddr": mac, "port": port}})
    path.write_text(json.dumps({"target": "netweft-embedded", "table_entries": entries}))
    return path


def run_testbed_point(drop: float, rtt_us: float, size: int, messages: int,
                      reliabilities: list[str]) -> dict:
    """One (drop, RTT, size) point on the testbed: completion times per reliability."""
    with tempfile.TemporaryDirectory(prefix="nw-reltb-") as tmp:
        net = Network()
        h1 = net.add_host("h1", f"{H1[0]}/24", H1[1])
        h2 = net.add_host("h2", f"{H2[0]}/24", H2[1])
        s1 = net.add_switch("s1", program("basic_forward"),
                            runtime=_runtime(Path(tmp) / "s1-runtime.json"),
                            log_file=Path(tmp) / "s1.log")
        net.add_link(h1, s1, mtu=9000)
        net.add_link(h2, s1, mtu=9000,
                     params=LinkParams(delay_s=rtt_us * 1e-6 / 2, loss=drop or None))
        try:
            net.start()
            server = h2.popen(sys.executable, "-c", SERVER.format(h1=H1[0], h2=H2[0],
                                                                  port=PORT), str(size),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            hello = json.loads(server.stdout.readline())
            client = h1.cmd(sys.executable, "-c", CLIENT.format(h1=H1[0], h2=H2[0], port=PORT),
                            str(size), str(messages), str(hello["rkey"]),
                            str(hello["length"]), *reliabilities, timeout=600)
            server.stdin.write("done\n")
            server.stdin.flush()
            server.wait(timeout=30)
            return json.loads(client.stdout.strip().splitlines()[-1])
        finally:
            net.stop()
