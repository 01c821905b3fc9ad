"""The switch process's port driver: frames in on AF_PACKET ports, frames out, counters."""

import json
import subprocess
import sys
import textwrap

import pytest

from netweft.emulation.network import Network

pytestmark = pytest.mark.netns

# A stand-in for SoftSwitch: a wire between ports 1 and 2 that raises on frames whose
# payload says "boom", to show that one bad frame never stops the switch.
_WIRE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from netweft.emulation.switch_process import serve
    class Wire:
        def process(self, port, data):
            if b"boom" in data:
                raise ValueError("bad frame")
            return [(3 - port, data)]
    serve(Wire(), {1: "s1-eth1", 2: "s1-eth2"}, stats_out=Path(sys.argv[1]))
""")

_ASK = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
    s.sendto(b"boom", (sys.argv[1], 9000))
    for n in range(5):
        s.sendto(b"ping %d" % n, (sys.argv[1], 9000))
        print(s.recvfrom(100)[0].decode())
""")

_ECHO = ("import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
         "s.bind(('0.0.0.0',9000));print('ready',flush=True)\n"
         "while True:\n d,a=s.recvfrom(100);s.sendto(d.upper(),a)\n")


def test_frames_cross_the_switch_process_and_bad_ones_are_counted(tmp_path):
    net = Network()
    s1 = net.add_switch("s1")
    h1, h2 = net.add_host("h1", "10.0.11.1/24"), net.add_host("h2", "10.0.11.2/24")
    net.add_link(h1, s1)
    net.add_link(h2, s1)
    stats = tmp_path / "stats.json"
    with net:
        sw = s1.popen(sys.executable, "-c", _WIRE, str(stats), stdout=subprocess.PIPE,
                      text=True)
        assert sw.stdout.readline().strip() == "ready"
        echo = h2.popen(sys.executable, "-c", _ECHO, stdout=subprocess.PIPE, text=True)
        assert echo.stdout.readline().strip() == "ready"
        out = h1.cmd(sys.executable, "-c", _ASK, "10.0.11.2").stdout.split("\n")
        assert out[:5] == [f"PING {n}" for n in range(5)]
        sw.terminate()
        sw.wait(timeout=10)
    counters = json.loads(stats.read_text())
    assert counters["switch_errors"] == 1
    assert counters["tx_port2"] >= 5 and counters["tx_port1"] >= 5


@pytest.mark.netns
def test_a_switch_process_that_fails_to_start_says_why(tmp_path):
    """Without ``log=``, the child's error output still reaches the exception."""
    from netweft.emulation.switch_process import start_switch_process

    bad = tmp_path / "bad.p4"
    bad.write_text("control c() { apply { x = ; } }\n")
    net = Network()
    s1 = net.add_switch("s1")
    net.add_link(net.add_host("h1", "10.0.9.1/24"), s1)
    with net, pytest.raises(RuntimeError) as err:
        start_switch_process(s1, bad)
    assert "exited with status 2" in str(err.value)
    assert f"{bad}:1:" in str(err.value)
