"""A real capture: C-built UET packets sent over a veth pair between two network
namespaces with kernel UDP sockets, captured with tcpdump, decoded with tshark's
Lua dissector and with scapy, and compared with what the C codec says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from scapy.layers.inet import UDP
from scapy.utils import rdpcap

from netweft.nic_offload import lib
from netweft.transport.wire import layers

from .cases import c_build, c_parse, nonzero, pkt_to_dict
from .scapy_view import scapy_fields
from .tshark import as_c_fields, decode_pcap, decode_pcap_segments, payload_of

pytestmark = [
    pytest.mark.netns,
    pytest.mark.tshark,
    pytest.mark.host_tools("tshark", "tcpdump"),
]

ENTROPY_BASE = 49152

SENDER = textwrap.dedent("""
    import socket, sys
    dst, base = sys.argv[1], int(sys.argv[2])
    for i, line in enumerate(sys.stdin):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", base + i))          # the UDP source port is the entropy value
        s.sendto(bytes.fromhex(line.strip()), (dst, 4793))
        s.close()
""")

RECEIVER = textwrap.dedent("""
    import socket, sys
    n = int(sys.argv[1])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("0.0.0.0", 4793))
    s.settimeout(10)
    print("ready", flush=True)
    for _ in range(n):
        data, (ip, port) = s.recvfrom(65535)
        print(port, data.hex(), flush=True)
""")


ENGINE_TRANSFER = textwrap.dedent("""
    import socket, sys
    import numpy as np
    from netweft.transport import udp_endpoint
    size, gso = int(sys.argv[1]), sys.argv[2] == "gso"
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    with udp_endpoint(("127.0.0.1", 4793), mtu=8972, gso=gso, gro=False) as alice, \\
            udp_endpoint(("127.0.0.2", 4793), mtu=8972, gso=gso, gro=False) as bob:
        src = alice.register(data)
        dst = bob.register(np.zeros(size, dtype=np.uint8))
        peer = alice.connect(bob.address)
        bob.connect(alice.address)
        alice.cq.wait_for(peer.write(src, dst.remote()), timeout=30).check()
        assert (dst.buffer == data).all()
    # a marker datagram: once tcpdump has written it, it has written everything before
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"netweft-end", ("127.0.0.3", 9))
    print(data.tobytes().hex(), flush=True)
""")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def veth_pair():
    """Two namespaces joined by a veth pair with MTU 9000; removed afterwards."""
    tag = f"{os.getpid() % 100000}"
    ns_a, ns_b = f"nwwireA{tag}", f"nwwireB{tag}"
    try:
        _ip("netns", "add", ns_a)
        _ip("netns", "add", ns_b)
        _ip("link", "add", f"wa{tag}", "type", "veth", "peer", "name", f"wb{tag}")
        _ip("link", "set", f"wa{tag}", "netns", ns_a)
        _ip("link", "set", f"wb{tag}", "netns", ns_b)
        for ns, dev, addr in ((ns_a, f"wa{tag}", "10.79.0.1/24"), (ns_b, f"wb{tag}", "10.79.0.2/24")):
            _ip("-n", ns, "addr", "add", addr, "dev", dev)
            _ip("-n", ns, "link", "set", dev, "mtu", "9000", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield ns_a, ns_b, f"wb{tag}"
    finally:
        for ns in (ns_a, ns_b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30, check=False)


def _packets() -> list[bytes]:
    """One packet of each kind a netweft flow carries, with an MTU-sized write."""
    big = bytes(range(256)) * 32  # 8192 bytes
    return [
        c_build({"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": lib.NW_NH_REQ_STD,
                 "pds.flags": lib.NW_PDS_F_SYN | lib.NW_PDS_F_AR, "pds.psn": 1000,
                 "pds.spdcid": 7, "ses.opcode": lib.NW_SES_OP_WRITE,
                 "ses.flags": lib.NW_SES_F_SOM, "ses.message_id": 1, "ses.mem_key": 0x2A,
                 "ses.buffer_offset": 4096, "ses.request_length": 2 * len(big)}, big),
        c_build({"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": lib.NW_NH_REQ_STD,
                 "pds.psn": 1001, "pds.spdcid": 7, "pds.dpdcid": 3, "pds.clear_psn_off": -1,
                 "ses.opcode": lib.NW_SES_OP_WRITE, "ses.flags": lib.NW_SES_F_EOM,
                 "ses.message_id": 1, "ses.mem_key": 0x2A, "ses.buffer_offset": 4096,
                 "ses.payload_length": len(big), "ses.message_offset": len(big),
                 "ses.request_length": 2 * len(big)}, big),
        c_build({"pds.type": lib.NW_PDS_ACK_CC, "pds.cack_psn": 1001, "pds.spdcid": 3,
                 "pds.dpdcid": 7, "pds.mpr": 128, "pds.sack_psn_off": 1,
                 "pds.sack_bitmap": 0b1011, "pds.rcvd_bytes": 2 * len(big)}),
        c_build({"pds.type": lib.NW_PDS_NACK, "pds.nack_code": lib.NW_NACK_TRIMMED,
                 "pds.nack_psn": 1002, "pds.spdcid": 3, "pds.dpdcid": 7,
                 "pds.nack_payload": 1003}),
        c_build({"pds.type": lib.NW_PDS_CTRL, "pds.ctl_type": lib.NW_CTRL_CREDIT,
                 "pds.psn": 1003, "pds.spdcid": 3, "pds.dpdcid": 7, "pds.ctrl_payload": 65536}),
        c_build({"pds.type": lib.NW_PDS_UUD, "pds.next_hdr": lib.NW_NH_REQ_STD,
                 "ses.opcode": lib.NW_SES_OP_SEND, "ses.flags": 3, "ses.request_length": 11},
                b"hello world"),
        c_build({"pds.type": lib.NW_PDS_ROD, "pds.next_hdr": lib.NW_NH_RSP_DATA,
                 "pds.psn": 55, "pds.spdcid": 3, "pds.dpdcid": 7, "rsp.opcode": 2,
                 "rsp.return_code": lib.NW_SES_RC_OK, "rsp.read_req_message_id": 9,
                 "rsp.payload_length": 5, "rsp.message_offset": 100}, b"reply"),
    ]


def _start_tcpdump(ns: str, dev: str, pcap: Path, *options: str) -> subprocess.Popen:
    """tcpdump writing every UDP packet on ``dev`` to ``pcap`` as it arrives."""
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, "tcpdump", "-Z", "root", "-i", dev, "--immediate-mode",
         "-B", "32768", "-U", "-n", "-s", "0", *options, "-w", str(pcap), "udp"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # tcpdump says "listening on" once it captures
        line = proc.stderr.readline()
        if "listening on" in line:
            return proc
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("tcpdump did not start")


def test_capture_on_veth_decodes_in_tshark_and_scapy(veth_pair, tmp_path):
    ns_a, ns_b, dev_b = veth_pair
    wires = _packets()
    pcap = tmp_path / "uet.pcap"
    # -c: tcpdump exits by itself after the last packet (no timing guesses)
    tcpdump = _start_tcpdump(ns_b, dev_b, pcap, "-c", str(len(wires)))
    receiver = subprocess.Popen(
        ["ip", "netns", "exec", ns_b, sys.executable, "-c", RECEIVER, str(len(wires))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout.readline().strip() == "ready"
        subprocess.run(["ip", "netns", "exec", ns_a, sys.executable, "-c", SENDER, "10.79.0.2",
                        str(ENTROPY_BASE)],
                       input="".join(w.hex() + "\n" for w in wires), text=True, check=True,
                       timeout=30)
        received, err = receiver.communicate(timeout=30)
        assert receiver.returncode == 0, err
    finally:
        if receiver.poll() is None:
            receiver.kill()
        try:
            tcpdump.wait(timeout=20)
        finally:
            if tcpdump.poll() is None:
                tcpdump.kill()
    assert tcpdump.returncode == 0, tcpdump.stderr.read()

    # every byte sent arrived, each from its own entropy source port
    got = [line.split() for line in received.splitlines()]
    assert [bytes.fromhex(h) for _, h in got] == wires
    assert [int(p) for p, _ in got] == [ENTROPY_BASE + i for i in range(len(wires))]

    frames = [f for f in rdpcap(str(pcap)) if f.haslayer(UDP) and f[UDP].dport == 4793]
    assert [bytes(f[UDP].payload) for f in frames] == wires
    decoded = decode_pcap(pcap)
    assert len(decoded) == len(wires)
    for wire, frame, lua in zip(wires, frames, decoded, strict=True):
        rc, pkt = c_parse(wire)
        assert rc > 0
        c_fields = pkt_to_dict(pkt)
        # tshark, through the Lua dissector
        assert "nwuet.error" not in lua
        lua_fields = as_c_fields(lua)
        assert lua_fields == {k: c_fields[k] for k in lua_fields}
        assert set(nonzero(c_fields)) <= set(lua_fields)
        assert payload_of(lua) == wire[rc:]
        # scapy, through the UDP port binding
        uet = frame[UDP].payload
        assert type(uet) is layers.PDS_CLASSES[pkt.pds.type]
        scapy_decoded, scapy_payload = scapy_fields(uet)
        assert scapy_decoded == {k: c_fields[k] for k in scapy_decoded}
        assert set(nonzero(c_fields)) <= set(scapy_decoded)
        assert scapy_payload == wire[rc:]


@pytest.fixture
def loopback_namespace():
    """A fresh namespace whose loopback carries only this test's traffic."""
    ns = f"nwwireL{os.getpid() % 100000}"
    try:
        _ip("netns", "add", ns)
        _ip("-n", ns, "link", "set", "lo", "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30, check=False)


def _wait_for_marker(pcap: Path, marker: bytes, tcpdump: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and tcpdump.poll() is None:
        if pcap.exists() and marker in pcap.read_bytes():
            return
        time.sleep(0.05)
    raise AssertionError("tcpdump did not write the end marker")


def test_engine_traffic_capture_decodes_and_carries_the_written_bytes(loopback_namespace,
                                                                        tmp_path):
    """An RMA write by the real engine (C I/O thread, per-packet entropy ports),
    captured on loopback: every packet decodes in tshark and scapy exactly as the
    C codec parses it, and the write's payloads on the wire are the source bytes."""
    ns = loopback_namespace
    pcap = tmp_path / "engine.pcap"
    tcpdump = _start_tcpdump(ns, "lo", pcap)
    try:
        run = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", ENGINE_TRANSFER,
                              str(100_000), "no-gso"], capture_output=True, text=True,
                             timeout=120, check=False)
        assert run.returncode == 0, run.stderr
        _wait_for_marker(pcap, b"netweft-end", tcpdump)
    finally:
        tcpdump.terminate()
        _, err = tcpdump.communicate(timeout=10)
    assert re.search(r"^0 packets dropped by kernel", err, re.M), err
    source = bytes.fromhex(run.stdout.strip())

    frames = [f for f in rdpcap(str(pcap)) if f.haslayer(UDP) and f[UDP].dport == 4793]
    decoded = decode_pcap(pcap, "-Y", "udp.dstport == 4793")
    assert len(decoded) == len(frames) > 0
    written, entropy, acks = {}, set(), 0
    for frame, lua in zip(frames, decoded, strict=True):
        wire = bytes(frame[UDP].payload)
        rc, pkt = c_parse(wire)
        assert rc > 0, wire[:64].hex()
        c_fields = pkt_to_dict(pkt)
        assert "nwuet.error" not in lua
        lua_fields = as_c_fields(lua)
        assert lua_fields == {k: c_fields[k] for k in lua_fields}
        assert set(nonzero(c_fields)) <= set(lua_fields)
        scapy_decoded, scapy_payload = scapy_fields(frame[UDP].payload)
        assert scapy_decoded == {k: c_fields[k] for k in scapy_decoded}
        assert scapy_payload == wire[rc:]
        if pkt.pds.next_hdr == lib.NW_NH_REQ_STD and pkt.ses.opcode == lib.NW_SES_OP_WRITE:
            offset = 0 if pkt.ses.flags & lib.NW_SES_F_SOM else pkt.ses.message_offset
            assert written.setdefault(offset, wire[rc:]) == wire[rc:]  # retransmits agree
            entropy.add(frame[UDP].sport)
        acks += pkt.pds.type == lib.NW_PDS_ACK_CC
    assert b"".join(written[o] for o in sorted(written)) == source
    assert acks > 0
    assert len(entropy) > 1, "every data packet left from the same source port"


def test_gso_capture_decodes_segment_by_segment(loopback_namespace, tmp_path):
    """With the default I/O settings (UDP GSO: the engine hands the kernel pairs of
    packets as one datagram), a loopback capture holds super-datagrams. The Lua
    dissector splits each into its packets; every segment decodes exactly as the C
    codec parses those bytes, and the write's payloads are the source bytes."""
    ns = loopback_namespace
    pcap = tmp_path / "gso.pcap"
    tcpdump = _start_tcpdump(ns, "lo", pcap)
    try:
        run = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", ENGINE_TRANSFER,
                              str(200_000), "gso"], capture_output=True, text=True,
                             timeout=120, check=False)
        assert run.returncode == 0, run.stderr
        _wait_for_marker(pcap, b"netweft-end", tcpdump)
    finally:
        tcpdump.terminate()
        _, err = tcpdump.communicate(timeout=10)
    assert re.search(r"^0 packets dropped by kernel", err, re.M), err
    source = bytes.fromhex(run.stdout.strip())

    frames = [f for f in rdpcap(str(pcap)) if f.haslayer(UDP) and f[UDP].dport == 4793]
    decoded = decode_pcap_segments(pcap, "-Y", "udp.dstport == 4793")
    assert len(decoded) == len(frames) > 0
    written, bundles = {}, 0
    for frame, segments in zip(frames, decoded, strict=True):
        wire = bytes(frame[UDP].payload)
        size = int(segments[0].get("nwuet.gso_size", len(wire)))
        parts = [wire[i:i + size] for i in range(0, len(wire), size)]
        assert len(parts) == len(segments), (len(wire), size, len(segments))
        bundles += len(parts) > 1
        for part, lua in zip(parts, segments, strict=True):
            rc, pkt = c_parse(part)
            assert rc > 0, part[:64].hex()
            assert "nwuet.error" not in lua
            c_fields = pkt_to_dict(pkt)
            lua_fields = as_c_fields(lua)
            assert lua_fields == {k: c_fields[k] for k in lua_fields}
            assert set(nonzero(c_fields)) <= set(lua_fields)
            assert payload_of(lua) == part[rc:]
            if pkt.pds.next_hdr == lib.NW_NH_REQ_STD and pkt.ses.opcode == lib.NW_SES_OP_WRITE:
                offset = 0 if pkt.ses.flags & lib.NW_SES_F_SOM else pkt.ses.message_offset
                assert written.setdefault(offset, part[rc:]) == part[rc:]
    assert bundles > 0, "no GSO super-datagram was captured: the test proves nothing"
    assert b"".join(written[o] for o in sorted(written)) == source
    # The preference forces a segment size: the data bundles split the same way.
    forced = decode_pcap_segments(pcap, "-Y", "udp.dstport == 4793",
                                  "-o", "nwuet.gso_segment_size:8972")
    big = [i for i, f in enumerate(frames) if len(f[UDP].payload) > 8972]
    assert big and [forced[i] for i in big] == [decoded[i] for i in big]
