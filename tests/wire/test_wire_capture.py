"""A real capture: C-built UET packets sent over a veth pair between two network
namespaces with kernel UDP sockets, captured with tcpdump, decoded with tshark's
Lua dissector and with scapy, and compared with what the C codec says."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from scapy.layers.inet import UDP
from scapy.utils import rdpcap

from netweft.nic_offload import lib
from netweft.transport import layers

from .cases import c_build, c_parse, nonzero, pkt_to_dict
from .scapy_view import scapy_fields
from .tshark import TSHARK, as_c_fields, decode_pcap, payload_of

pytestmark = [
    pytest.mark.netns,
    pytest.mark.tshark,
    pytest.mark.skipif(TSHARK is None or shutil.which("tcpdump") is None,
                       reason="tshark and tcpdump are installed by scripts/setup"),
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


def _start_tcpdump(ns: str, dev: str, pcap: Path, count: int) -> subprocess.Popen:
    """tcpdump that exits by itself after ``count`` UET packets (no timing guesses)."""
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, "tcpdump", "-Z", "root", "-i", dev, "--immediate-mode",
         "-U", "-n", "-s", "0", "-c", str(count), "-w", str(pcap), "udp", "port", "4793"],
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
    tcpdump = _start_tcpdump(ns_b, dev_b, pcap, len(wires))
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
