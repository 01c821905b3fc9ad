"""A switch process whose packets the native C loop moves (emulation/process/native_loop.py).

Real namespaces and veths: basic_forward.p4 with a runtime file, links and queues
from ``--link``, pcaps, the control channel and counters; netweft-switch with a
table installed over P4Runtime and the CPU port's PacketIn/PacketOut.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from switch_process_helpers import basic_forward_runtime, stop_process

from netweft.emulation.network import Network

pytestmark = pytest.mark.netns

PROGRAMS = Path(__file__).parent / "programs"

_UDP_SEND = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
    for n in range(int(sys.argv[2])):
        s.sendto(b"probe %d" % n, (sys.argv[1], 9000))
        print(s.recvfrom(100)[0].decode(), flush=True)
""")

_ECHO = ("import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
         "s.bind(('0.0.0.0',9000));print('ready',flush=True)\n"
         "while True:\n d,a=s.recvfrom(100);s.sendto(d.upper(),a)\n")

# every counter of the loop that ends a frame's way through the switch
_ENDS = ("tx", "drop_malformed", "drop_program", "drop_rx_truncated", "drop_no_port",
         "drop_no_buffer", "drop_queue_full", "drop_priority", "drop_tx_ring_full",
         "drop_tx_too_long", "drop_wire_lost", "drop_pass_limit", "drop_wire_in",
         "drop_tx_runt")




def test_the_c_loop_forwards_with_links_queues_pcaps_and_counters(tmp_path):
    from scapy.layers.inet import IP, UDP
    from scapy.utils import rdpcap

    from netweft.emulation.process.control import send_command
    from netweft.emulation.process.switch_process import start_switch_process
    from netweft.p4.programs import program

    net = Network()
    s1 = net.add_switch("s1")
    h1, h2 = net.add_host("h1", "10.0.13.1/24"), net.add_host("h2", "10.0.13.2/24")
    net.add_link(h1, s1)
    net.add_link(h2, s1)
    pcaps, control = tmp_path / "pcaps", tmp_path / "s1.sock"
    stats, log = tmp_path / "stats.json", tmp_path / "s1.stderr"
    with net:
        sw = start_switch_process(s1, program("basic_forward"),
                                  basic_forward_runtime(net, tmp_path / "rt.json"), stats_out=stats,
                                  log=log, links=["2:delay=20ms,queue=16,rate=1gbit"],
                                  pcap_dir=pcaps, control=control, backend="c")
        try:
            echo = h2.popen(sys.executable, "-c", _ECHO, stdout=subprocess.PIPE, text=True)
            assert echo.stdout.readline().strip() == "ready"
            ping = h1.cmd("ping", "-c", "3", "-i", "0.2", "10.0.13.2").stdout
            rtts = [float(part.split("=")[1]) for part in ping.split()
                    if part.startswith("time=")]
            assert len(rtts) == 3
            # the link to h2 delays each direction by 20 ms (in the C loop): no echo sooner
            assert min(rtts) >= 40.0
            out = h1.cmd(sys.executable, "-c", _UDP_SEND, "10.0.13.2", "4").stdout
            assert out.split("\n")[:4] == [f"PROBE {n}" for n in range(4)]
            assert send_command(control, "set_queue_depth 4 2") == "ok"
            assert json.loads(send_command(control, "queue_depth 2")) == 0
            counters = json.loads(send_command(control, "counters"))
            assert counters["rx_port1"] >= 7 and counters["drop_queue_full"] == 0
            assert counters["tx_port2"] >= 7
            # a link changed while the switch runs: everything towards h2 is now lost
            assert send_command(control, "set_link 2/out:loss=1") == "ok"
            lost = h1.cmd("ping", "-c", "2", "-i", "0.2", "-W", "1", "10.0.13.2", check=False)
            assert " 0 received" in lost.stdout
            assert json.loads(send_command(control, "counters"))["drop_link_loss"] >= 2
        finally:
            stop_process(sw)
    assert sw.returncode == 0        # SIGTERM stopped the loop and closed everything
    assert "using the Python back end" not in log.read_text()
    assert not control.exists()
    assert sorted(p.name for p in pcaps.iterdir()) == [
        "s1-eth1_in.pcap", "s1-eth1_out.pcap", "s1-eth2_in.pcap", "s1-eth2_out.pcap"]
    into_switch = [p for p in rdpcap(str(pcaps / "s1-eth1_in.pcap")) if UDP in p]
    out_to_h2 = [p for p in rdpcap(str(pcaps / "s1-eth2_out.pcap")) if UDP in p]
    sent = [bytes(p[UDP].payload) for p in into_switch]
    assert sent[:4] == [b"probe %d" % n for n in range(4)]
    assert [bytes(p[UDP].payload) for p in out_to_h2][:4] == sent[:4]
    assert out_to_h2[0][IP].ttl == into_switch[0][IP].ttl - 1
    # the pcap stamps are real times: the frame left 20 ms (the link) after it came in
    assert float(out_to_h2[0].time - into_switch[0].time) >= 0.019
    counters = json.loads(stats.read_text())
    # every frame the loop took in ended somewhere, and is counted there
    assert counters["dataplane_rx"] == sum(counters[f"dataplane_{k}"] for k in _ENDS)
    assert counters["dataplane_drop_wire_lost"] == counters["drop_link_loss"] >= 2
    assert counters["dropped"] == (counters["drop_program"] + counters["drop_parser_error"]
                                   + counters["drop_link_loss"])


_CONTROLLER = textwrap.dedent("""
    import sys
    from p4runtime_sh import shell as sh
    sh.setup(device_id=0, grpc_addr=sys.argv[1], election_id=(0, 1), verbose=False)
    for ingress, egress in ((1, 2), (2, 1)):
        te = sh.TableEntry("CpuIngress.forward")(action="CpuIngress.set_port")
        te.match["standard_metadata.ingress_port"] = str(ingress)
        te.action["port"] = str(egress)
        te.insert()
    print("configured", flush=True)
    packet = sh.client.get_stream_packet("packet", timeout=30)
    print(packet.packet.payload.hex() if packet else "none", flush=True)
    print(packet.packet.metadata[0].value.hex() if packet else "none", flush=True)
    sh.PacketOut(bytes.fromhex(sys.argv[2]), egress_port="2").send()
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
    want = set(sys.argv[1:])
    while want:
        frame = s.recv(2048)
        kind = frame[12:14].hex()
        if kind in want:
            print(kind, frame.hex(), flush=True)
            want.discard(kind)
""")


def test_netweft_switch_on_the_c_loop_takes_p4runtime_tables_and_the_cpu_port(tmp_path):
    from tests.p4runtime.switch_runner import running_switch

    net = Network()
    s1 = net.add_switch("s1")
    h1, h2 = net.add_host("h1", "10.0.14.1/24"), net.add_host("h2", "10.0.14.2/24")
    net.add_link(h1, s1, port_b=1)
    net.add_link(h2, s1, port_b=2)
    src = "0200000000aa"
    to_cpu = "ffffffffffff" + src + "88b5" + "68656c6c6f" + "00" * 41
    plain = "ffffffffffff" + src + "4321" + "00" * 46
    out = "ffffffffffff" + "020000000ccc" + "1234" + "6f7574" + "00" * 43
    with net:
        ports = s1.port_map()
        args = ["-i", f"1@{ports[1]}", "-i", f"2@{ports[2]}", str(PROGRAMS / "cpu_port.p4"),
                "--backend", "c", "--pcap", str(tmp_path), "--",
                "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255"]
        with running_switch(args, popen=s1.popen) as (proc, target):
            sniff = h2.popen(sys.executable, "-c", _SNIFF, "4321", "1234",
                             stdout=subprocess.PIPE, text=True)
            assert sniff.stdout.readline().strip() == "listening"
            ctl = s1.popen(sys.executable, "-c", _CONTROLLER, target, out,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert ctl.stdout.readline().strip() == "configured"
            h1.cmd(sys.executable, "-c", _SEND, plain, to_cpu)
            packet_in, ingress_port = ctl.stdout.readline().strip(), ctl.stdout.readline().strip()
            received = dict(sniff.stdout.readline().split() for _ in range(2))
            ctl.stdin.write("done\n")
            ctl.stdin.flush()
            ctl.wait(timeout=60)
            stderr = proc.stderr
    assert packet_in == to_cpu and ingress_port == "01"   # P4Runtime canonical bytes
    assert received == {"4321": plain, "1234": out}    # the table's, then the PacketOut
    assert "using the Python back end" not in stderr.read()
    assert (tmp_path / f"{ports[2]}_out.pcap").stat().st_size > 24 + 2 * 16


def test_a_c_loop_that_cannot_open_a_port_says_why_and_leaves_nothing(tmp_path):
    from netweft.p4.programs import program

    pcaps, control, stats = tmp_path / "pcaps", tmp_path / "s1.sock", tmp_path / "stats.json"
    net = Network()
    s1 = net.add_switch("s1")
    net.add_link(net.add_host("h1", "10.0.15.1/24"), s1)
    with net:
        done = s1.cmd(sys.executable, "-m", "netweft.emulation.process.switch_process",
                      "--program", str(program("basic_forward")), "--backend", "c",
                      "--port", "1=s1-eth1", "--port", "2=no-such-if", "--pcap", str(pcaps),
                      "--control", str(control), "--stats-out", str(stats), check=False)
    assert done.returncode == 2
    assert "cannot open port 2 on no-such-if: No such device" in done.stderr
    assert not control.exists() and list(pcaps.iterdir()) == []


def test_backend_c_without_a_compiler_refuses_and_auto_says_why(tmp_path):
    from netweft.p4.programs import program

    env = {"CC": "/nonexistent/cc", "NETWEFT_NATIVE_CACHE": str(tmp_path / "cache"),
           "NETWEFT_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "netweft.emulation.process.switch_process",
            "--program", str(program("basic_forward")), "--stop-after", "0.5"]
    import os

    refused = subprocess.run([*argv, "--backend", "c"], env={**os.environ, **env},
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2
    assert "error: switch back end:" in refused.stderr and "compiler" in refused.stderr
    fallback = subprocess.run([*argv, "--backend", "auto"], env={**os.environ, **env},
                              capture_output=True, text=True, timeout=120)
    assert fallback.returncode == 0, fallback.stderr
    lines = [line for line in fallback.stderr.splitlines() if "using the Python back end" in line]
    assert len(lines) == 1 and "compiler" in lines[0]
