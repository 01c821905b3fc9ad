"""The UDP driver: real sockets, the C I/O thread, over loopback and over veth."""

from __future__ import annotations

import os
import random
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from netweft.transport import EndpointClosedError, InvalidArgumentError, udp_endpoint

SCRIPT = Path(__file__).with_name("udp_peer_script.py")
# Every I/O mode goes through the exactly-once and injected-loss tests below, on
# the kernel's UDP sockets (tx=ports) and on AF_PACKET rings (tx=packet, which
# needs root: those run in a network namespace of their own, over its loopback).
IO_MODES = ["thread", "inline", "busy"]
TX_PATHS = ["ports", pytest.param("packet", marks=pytest.mark.netns)]


@pytest.fixture(params=TX_PATHS)
def tx(request):
    """The transmit path; for tx=packet the test runs inside a fresh namespace."""
    if request.param != "packet":
        yield request.param
        return
    from pyroute2 import netns

    name = f"nwtest-{os.getpid()}-{random.randrange(1 << 30)}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        # Frames a packet socket puts on lo carry no route, so the kernel routes them
        # as if they came from a wire, and refuses 127/8 then unless route_localnet
        # is set (the hostile-datagram test's plain UDP socket needs it; endpoints on
        # rings read their frames before the stack and do not).
        subprocess.run(["ip", "netns", "exec", name, "sysctl", "-qw",
                        "net.ipv4.conf.all.route_localnet=1",
                        "net.ipv4.conf.lo.route_localnet=1"], check=True)
        netns.pushns(name)
        try:
            yield "packet"
        finally:
            netns.popns()
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def _loopback_ips() -> tuple[str, str]:
    """Two distinct, rarely used loopback addresses, so parallel runs never share ports."""
    r = random.Random(os.getpid())
    base = f"127.{r.randrange(1, 250)}.{r.randrange(1, 250)}"
    return f"{base}.1", f"{base}.2"


@pytest.fixture(params=IO_MODES)
def loop_pair(request, tx):
    ip_a, ip_b = _loopback_ips()
    a = udp_endpoint((ip_a, 0), mtu=8972, io=request.param, tx=tx)
    b = udp_endpoint((ip_b, 0), mtu=8972, io=request.param, tx=tx)
    yield a, b
    a.close()
    b.close()


def _exercise(a, b, size: int) -> None:
    """Write, read back and send/recv ``size`` random bytes; compare every byte."""
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    src = a.register(data)
    dst_buf = np.zeros(size, dtype=np.uint8)
    dst = b.register(dst_buf)
    peer = a.connect(b.address)
    b.connect(a.address)  # replies to a's port
    a.cq.wait_for(peer.write(src, dst.remote()), timeout=30).check()
    assert np.array_equal(dst_buf, data)
    back = np.zeros(size, dtype=np.uint8)
    a.cq.wait_for(peer.read(a.register(back), dst.remote()), timeout=30).check()
    assert np.array_equal(back, data)
    rid = b.post_recv(bytearray(size))
    a.cq.wait_for(peer.send(data), timeout=30).check()
    got = b.cq.wait_for(rid, timeout=30).check()
    assert bytes(got.data) == data.tobytes()
    assert b.peer(got.peer).address == a.address


def test_loopback_write_read_send(loop_pair, tx):
    a, b = loop_pair
    _exercise(a, b, (3 << 20) + 11)
    stats = a.stats()
    assert stats["pkts_out"] > 0 and stats["io_send_calls"] > 0
    if tx == "packet":  # the packets went through the rings, not the UDP sockets
        assert stats["io_ring_tx_frames"] >= stats["pkts_out"] - stats["io_ring_tx_fallback"]
        assert stats["io_ring_tx_fallback"] <= 64  # only before b was heard from
        assert stats["io_ring_rx_frames"] == stats["pkts_in"] > 0
        assert stats["io_ring_rx_malformed"] == stats["io_recv_calls"] == 0


@pytest.mark.parametrize("tx", ["socket", "raw"])
def test_loopback_other_transmit_modes(tx):
    ip_a, ip_b = _loopback_ips()
    with udp_endpoint((ip_a, 0), mtu=8972, tx=tx) as a, \
            udp_endpoint((ip_b, 0), mtu=8972, tx=tx) as b:
        _exercise(a, b, (1 << 20) + 3)


@pytest.mark.parametrize("io", IO_MODES)
def test_loopback_with_injected_loss_still_delivers_every_byte(io, tx):
    ip_a, ip_b = _loopback_ips()
    with udp_endpoint((ip_a, 0), mtu=8972, loss=0.05, io=io, tx=tx) as a, \
            udp_endpoint((ip_b, 0), mtu=8972, loss=0.05, io=io, tx=tx) as b:
        _exercise(a, b, 2 << 20)
        assert a.stats()["retransmits"] > 0


@pytest.mark.parametrize("io", IO_MODES)
def test_loopback_coded_writes_under_injected_loss(io, tx):
    """ec:8,2 over real sockets: parity leaves, losses are decoded, every byte arrives."""
    ip_a, ip_b = _loopback_ips()
    with udp_endpoint((ip_a, 0), mtu=8972, loss=0.05, io=io, tx=tx) as a, \
            udp_endpoint((ip_b, 0), mtu=8972, loss=0.05, io=io, tx=tx) as b:
        size = 2 << 20
        data = np.random.default_rng(7).integers(0, 256, size, dtype=np.uint8)
        src, dst_buf = a.register(data), np.zeros(size, dtype=np.uint8)
        dst = b.register(dst_buf)
        peer = a.connect(b.address)
        b.connect(a.address)
        peer.set_reliability("ec:8,2")
        assert peer.path()["k"] == 8
        for _ in range(2):
            a.cq.wait_for(peer.write(src, dst.remote()), timeout=30).check()
            assert np.array_equal(dst_buf, data)
            dst_buf[:] = 0
        assert a.stats()["ec_parity_pkts_out"] > 0
        assert b.stats()["ec_pkts_recovered"] > 0


def test_udp_misuse_is_reported_clearly(loop_pair):
    a, b = loop_pair
    with pytest.raises(InvalidArgumentError, match="cannot bind"):
        udp_endpoint(("192.0.2.123", 0))
    with pytest.raises(InvalidArgumentError, match="tx must be"):
        udp_endpoint(("127.0.0.1", 0), tx="carrier-pigeon")
    with pytest.raises(InvalidArgumentError, match="io must be one of thread, inline, busy"):
        udp_endpoint(("127.0.0.1", 0), io="telepathy")
    with pytest.raises(InvalidArgumentError, match="busy_poll_us"):
        udp_endpoint(("127.0.0.1", 0), io="busy", busy_poll_us=0)
    a.close()
    with pytest.raises(EndpointClosedError):
        a.connect(b.address)


@pytest.mark.netns
@pytest.mark.parametrize("tx,offloads", [("ports", "on"), ("packet", "on"), ("packet", "off")])
def test_veth_between_namespaces(tx, offloads):
    """4 MiB written, read back and hashed across a veth; tx=packet with checksum
    offload (veth passes the partial checksum on) and without (the kernel completes
    it on the way out, the receiving ring verifies it)."""
    import json

    from netweft.emulation.network import Network

    net = Network()
    h1, h2 = net.add_host("h1", "10.0.0.1/24"), net.add_host("h2", "10.0.0.2/24")
    net.add_link(h1, h2, mtu=9000)
    env = dict(os.environ, NETWEFT_PEER_OPTIONS=json.dumps({"tx": tx}), NETWEFT_PEER_STATS="1")
    with net:
        for h in (h1, h2):
            h.cmd("ethtool", "-K", "eth0", "tx", offloads, "rx", offloads)
        target = h1.popen(sys.executable, str(SCRIPT), "target", "10.0.0.1", env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
        port, rkey, length = target.stdout.readline().split()
        res = h2.cmd(sys.executable, str(SCRIPT), "initiator", "10.0.0.2", "10.0.0.1", port,
                     rkey, length, timeout=120, env=env)
        assert res.returncode == 0, res.stderr
        target.stdin.write("check\n")
        target.stdin.flush()
        digest = target.stdout.readline().strip()
        assert digest == res.stdout.split()[-1]
        served = json.loads(target.communicate(timeout=30)[1].strip().splitlines()[-1])
    sent = json.loads(res.stderr.strip().splitlines()[-1])
    if tx == "packet":
        for st in (served, sent):
            assert st["io_ring_rx_frames"] == st["pkts_in"] > 0
            # every frame leaves by the ring but those for a peer whose MAC the ring has
            # not learnt yet (io_ring_tx_fallback: they take the socket; seen once in a
            # loaded run of the whole suite)
            assert st["io_ring_tx_frames"] + st["io_ring_tx_fallback"] == st["pkts_out"], st
            assert st["io_ring_tx_fallback"] <= st["pkts_out"] // 100, st
            assert st["io_ring_rx_malformed"] == st["io_ring_rx_drops"] == 0


@pytest.mark.netns
def test_packet_path_refusals_say_what_it_needs():
    with pytest.raises(InvalidArgumentError, match="tx=packet needs the local address"):
        udp_endpoint(("0.0.0.0", 0), tx="packet")
    code = ("from netweft.transport import udp_endpoint\n"
            "udp_endpoint(('127.0.0.1', 0), tx='packet')\n")
    res = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                          sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "tx=packet needs root (CAP_NET_RAW" in res.stderr, res.stderr


def test_each_packet_leaves_from_an_entropy_source_port():
    ip_a, ip_b = _loopback_ips()
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind((ip_b, 0))
    sink.settimeout(5)
    try:
        with udp_endpoint((ip_a, 0), mtu=1472, tx="ports", entropy_base=40000,
                          entropy_count=8) as a:
            peer = a.connect(sink.getsockname())
            payload = a.max_payload
            peer.send(bytes(20 * payload))  # 20 packets; the sink never acknowledges
            ports = [sink.recvfrom(2048)[1][1] for _ in range(20)]
    finally:
        sink.close()
    assert set(ports) <= set(range(40000, 40008))
    assert len(set(ports)) == 8  # spread over every entropy value


def test_event_fd_signals_completions(loop_pair):
    a, b = loop_pair
    fd = a.fileno()
    src = a.register(bytearray(b"x" * 100_000))
    dst = b.register(bytearray(100_000))
    b.connect(a.address)
    wr = a.connect(b.address).write(src, dst.remote())
    readable, _, _ = select.select([fd], [], [], 30)
    assert readable == [fd]
    assert [c.wr_id for c in a.cq.poll()] == [wr]


def test_hostile_datagrams_are_counted_dropped_and_harmless(loop_pair):
    a, b = loop_pair
    src = a.register(np.arange(100_000, dtype=np.uint8))
    dst = b.register(np.zeros(100_000, dtype=np.uint8))
    peer = a.connect(b.address)
    b.connect(a.address)
    a.cq.wait_for(peer.write(src, dst.remote()), timeout=30).check()
    # A real packet from a's engine, captured by pointing a second peer at a plain socket.
    tap = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tap.bind((b.address[0], 0))
    tap.settimeout(5)
    a.connect(tap.getsockname()).send(b"x" * 100)
    real, _ = tap.recvfrom(65535)
    tap.close()
    before = b.stats()
    rng = random.Random(9)
    hostile = [b"", real[:3], real[: len(real) // 2], bytes(9000), rng.randbytes(700),
               bytes([real[0] ^ 0xFF]) + real[1:]]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for datagram in hostile:
            s.sendto(datagram, b.address)
    dst.buffer[:] = 0
    a.cq.wait_for(peer.write(src, dst.remote()), timeout=30).check()  # still works
    assert np.array_equal(dst.buffer, src.buffer)
    # With tx=packet the oversized datagram takes the UDP socket, which the driver
    # reads when a poll finds it readable or every 64 passes: it may trail the write.
    deadline = time.monotonic() + 10
    while True:
        after = b.stats()
        dropped = sum(after[k] - before[k] for k in after if k.startswith("drop_"))
        if dropped >= len(hostile) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert dropped == len(hostile)
    assert after["drop_oversized"] > before["drop_oversized"]
    assert after["drop_truncated"] > before["drop_truncated"]


@pytest.mark.parametrize("io", IO_MODES)
def test_rod_order_and_uud_loss_reports_on_real_sockets(io, tx):
    ip_a, ip_b = _loopback_ips()
    with udp_endpoint((ip_a, 0), mtu=8972, loss=0.05, io=io, tx=tx) as a, \
            udp_endpoint((ip_b, 0), mtu=8972, loss=0.05, io=io, tx=tx) as b:
        b.connect(a.address, mode="rod")
        b.connect(a.address, mode="uud")
        mp = a.max_payload
        msgs = [bytes([i]) * (1 + (i * 7919) % (3 * mp)) for i in range(60)]
        rids = [b.post_recv(bytearray(3 * mp)) for _ in msgs]
        rod = a.connect(b.address, mode="rod")
        a.cq.wait_all([rod.send(m) for m in msgs], timeout=60)
        got = [bytes(c.check().data) for c in b.cq.wait_all(rids, timeout=60)]
        assert got == msgs  # every message, intact, in the order sent
        uud = a.connect(b.address, mode="uud")
        big = [bytes([i]) * (4 * mp) for i in range(40)]
        rids = [b.post_recv(bytearray(4 * mp)) for _ in big]
        assert all(c.ok for c in a.cq.wait_all([uud.send(m) for m in big], timeout=30))
        deadline = time.monotonic() + 5
        seen = []
        while time.monotonic() < deadline and len(seen) < len(big):
            seen += b.cq.poll()
            time.sleep(0.01)
        lost = [c for c in seen if c.status == -10]  # NW_ELOST
        assert lost and all(c.data is None for c in lost)
        assert all(bytes(c.data) in big for c in seen if c.ok)
        assert len(seen) <= len(rids)
