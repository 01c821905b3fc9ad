"""A netweft-switch process on veth ports: p4runtime-shell (in the switch's namespace)
receives PacketIn and digests for frames a host sends, and its PacketOut leaves on a
host's port."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from netweft.emulation.network import Network
from tests.p4runtime.conftest import PROGRAM
from tests.p4runtime.switch_runner import running_switch

pytestmark = [pytest.mark.netns, pytest.mark.slow]

_CONTROLLER = textwrap.dedent("""
    import json, sys
    from p4runtime_sh import shell as sh
    sh.setup(device_id=0, grpc_addr=sys.argv[1], election_id=(0, 1), verbose=False)
    d = sh.DigestEntry("learn_t")
    d.max_timeout_ns, d.max_list_size, d.ack_timeout_ns = 0, 1, 10**9
    d.insert()
    print("configured", flush=True)
    packet = sh.client.get_stream_packet("packet", timeout=30)
    digest = sh.client.get_stream_packet("digest", timeout=30)
    sh.PacketOut(bytes.fromhex(sys.argv[2]), egress_port="2").send()
    print(json.dumps({
        "packet_in": packet.packet.payload.hex() if packet else None,
        "ingress_port": packet.packet.metadata[0].value.hex() if packet else None,
        "digest": [m.bitstring.hex() for m in digest.digest.data[0].struct.members]
                  if digest else None}), flush=True)
    sys.stdin.readline()
    sh.teardown()
""")

_SEND = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind(("eth0", 0))
    for frame in sys.argv[1:]:
        s.send(bytes.fromhex(frame))
""")

_SNIFF = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x3))
    s.bind(("eth0", 0))
    s.settimeout(60)
    print("listening", flush=True)
    while True:
        frame = s.recv(2048)
        if frame[12:14] == bytes.fromhex(sys.argv[1]):
            print(frame.hex(), flush=True)
            break
""")


def test_packet_in_digest_and_packet_out_cross_real_ports():
    net = Network()
    s1 = net.add_switch("s1")
    h1, h2 = net.add_host("h1", "10.0.2.1/24"), net.add_host("h2", "10.0.2.2/24")
    net.add_link(h1, s1, port_b=1)
    net.add_link(h2, s1, port_b=2)
    src = "0200000000aa"
    to_cpu = "ffffffffffff" + src + "88b5" + "68656c6c6f" + "00" * 41
    learn = "020000000bbb" + src + "0800" + "00" * 46
    out = "ffffffffffff" + "020000000ccc" + "1234" + "6f7574" + "00" * 43
    with net:
        ports = s1.port_map()
        args = ["-i", f"1@{ports[1]}", "-i", f"2@{ports[2]}", str(PROGRAM), "--",
                "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255"]
        with running_switch(args, popen=s1.popen) as (_proc, target):
            sniff = h2.popen(sys.executable, "-c", _SNIFF, "1234", stdout=subprocess.PIPE,
                             text=True)
            assert sniff.stdout.readline().strip() == "listening"
            ctl = s1.popen(sys.executable, "-c", _CONTROLLER, target, out,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert ctl.stdout.readline().strip() == "configured"
            h1.cmd(sys.executable, "-c", _SEND, to_cpu, learn)
            result = json.loads(ctl.stdout.readline())
            ctl.stdin.write("done\n")
            ctl.stdin.flush()
            received = sniff.stdout.readline().strip()
            ctl.wait(timeout=60)
    assert result["packet_in"] == to_cpu and result["ingress_port"] == "01"
    assert result["digest"] == [src, "01"]
    assert received == out
