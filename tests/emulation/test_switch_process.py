"""The switch process's port driver: frames in on AF_PACKET ports, frames out, counters."""

import json
import subprocess
import sys
import textwrap

import pytest
from switch_process_helpers import basic_forward_runtime, stop_process

from netweft.emulation.network import Network

pytestmark = pytest.mark.netns

# A stand-in for SoftSwitch: a wire between ports 1 and 2 that raises on frames whose
# payload says "boom", to show that one bad frame never stops the switch.
_WIRE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from netweft.emulation.process.switch_process import serve
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
    from netweft.emulation.process.switch_process import start_switch_process

    bad = tmp_path / "bad.p4"
    bad.write_text("control c() { apply { x = ; } }\n")
    net = Network()
    s1 = net.add_switch("s1")
    net.add_link(net.add_host("h1", "10.0.9.1/24"), s1)
    with net, pytest.raises(RuntimeError) as err:
        start_switch_process(s1, bad)
    assert "exited with status 2" in str(err.value)
    assert f"{bad}:1:" in str(err.value)


# ---------------------------------------------------------------- the real switch process

_UDP_SEND = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
    for n in range(int(sys.argv[2])):
        s.sendto(b"probe %d" % n, (sys.argv[1], 9000))
        print(s.recvfrom(100)[0].decode(), flush=True)
""")




def test_switch_process_writes_pcaps_trace_and_applies_link_and_queue_settings(tmp_path):
    from scapy.layers.inet import IP, UDP
    from scapy.utils import rdpcap

    from netweft.emulation.process.control import send_command
    from netweft.emulation.process.switch_process import start_switch_process
    from netweft.p4.programs import program

    net = Network()
    s1 = net.add_switch("s1")
    h1, h2 = net.add_host("h1", "10.0.12.1/24"), net.add_host("h2", "10.0.12.2/24")
    net.add_link(h1, s1)
    net.add_link(h2, s1)
    pcaps, trace, control = tmp_path / "pcaps", tmp_path / "s1.trace", tmp_path / "s1.sock"
    stats = tmp_path / "stats.json"
    with net:
        sw = start_switch_process(s1, program("basic_forward"),
                                  basic_forward_runtime(net, tmp_path / "rt.json"), stats_out=stats,
                                  log=tmp_path / "s1.stderr", links=["2:delay=20ms,queue=16"],
                                  pcap_dir=pcaps, trace_file=trace, control=control)
        try:
            echo = h2.popen(sys.executable, "-c", _ECHO, stdout=subprocess.PIPE, text=True)
            assert echo.stdout.readline().strip() == "ready"
            ping = h1.cmd("ping", "-c", "3", "-i", "0.2", "10.0.12.2").stdout
            rtts = [float(part.split("=")[1]) for part in ping.split()
                    if part.startswith("time=")]
            assert len(rtts) == 3
            # the link to h2 delays each direction by 20 ms: no echo comes back sooner
            assert min(rtts) >= 40.0
            out = h1.cmd(sys.executable, "-c", _UDP_SEND, "10.0.12.2", "4").stdout
            assert out.split("\n")[:4] == [f"PROBE {n}" for n in range(4)]
            assert send_command(control, "set_queue_depth 4 2") == "ok"
            counters = json.loads(send_command(control, "counters"))
            assert counters["rx_port1"] >= 7 and counters["drop_queue_full"] == 0
            # a link changed while the switch runs: everything towards h2 is now lost
            assert send_command(control, "set_link 2/out:loss=1") == "ok"
            lost = h1.cmd("ping", "-c", "2", "-i", "0.2", "-W", "1", "10.0.12.2", check=False)
            assert " 0 received" in lost.stdout
            assert json.loads(send_command(control, "counters"))["drop_link_loss"] >= 2
        finally:
            stop_process(sw)
    assert not control.exists()
    assert sorted(p.name for p in pcaps.iterdir()) == [
        "s1-eth1_in.pcap", "s1-eth1_out.pcap", "s1-eth2_in.pcap", "s1-eth2_out.pcap"]
    into_switch = [p for p in rdpcap(str(pcaps / "s1-eth1_in.pcap")) if UDP in p]
    out_to_h2 = [p for p in rdpcap(str(pcaps / "s1-eth2_out.pcap")) if UDP in p]
    sent = [bytes(p[UDP].payload) for p in into_switch]
    assert sent[:4] == [b"probe %d" % n for n in range(4)]
    assert [bytes(p[UDP].payload) for p in out_to_h2][:4] == sent[:4]
    assert out_to_h2[0][IP].ttl == into_switch[0][IP].ttl - 1
    assert out_to_h2[0].time >= into_switch[0].time          # pcap stamps are real times
    log = trace.read_text()
    assert "Processing packet received on port 1" in log
    assert "Parser 'BasicParser' entering state 'parse_ipv4'" in log
    assert "Table 'MyIngress.ipv4_lpm': hit entry" in log
    assert "Port 2 is idle: straight to egress" in log     # no rate: nothing waits
    assert "Transmitting packet of size" in log and "out of port 2" in log
    counters = json.loads(stats.read_text())
    assert counters["tx_port2"] >= 7
    # what basic_forward.p4 drops (IPv6 neighbour discovery) is the program's doing; the
    # rest were lost on the link once it was set to lose everything
    assert counters["dropped"] == (counters["drop_program"] + counters["drop_parser_error"]
                                   + counters["drop_link_loss"])
    assert counters["drop_queue_full"] == 0
