"""The C I/O driver over real UDP sockets on loopback: data integrity in each
transmit mode, completion notification through the eventfd, and per-packet
entropy in the UDP source port as seen by a plain socket."""

import os
import select
import socket
from collections import Counter

import pytest
from engine_net import EngineNet, ip

from netweft.nic_offload import ffi, lib

MODES = {"socket": lib.NW_IO_TX_SOCKET, "ports": lib.NW_IO_TX_PORTS, "raw": lib.NW_IO_TX_RAW}


class Host:
    """An engine plus its I/O thread bound to addr:4793."""

    def __init__(self, addr: str, tx: str, flags: int, drop_ppm: int = 0, port: int = 4793,
                 **cfg_fields):
        cfg = ffi.new("nw_config_t *")
        lib.nw_config_default(cfg)
        cfg.local_ip = ip(addr)
        cfg.mtu = 8972
        for k, v in cfg_fields.items():
            setattr(cfg, k, v)
        self.engine = ffi.gc(lib.nw_engine_new(cfg), lib.nw_engine_free)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((addr, port))
        io_cfg = ffi.new("nw_io_config_t *")
        lib.nw_io_config_default(io_cfg)
        io_cfg.rx_fd = self.sock.fileno()
        io_cfg.tx_mode = MODES[tx]
        io_cfg.flags = flags
        io_cfg.local_ip = ip(addr)
        io_cfg.rx_drop_ppm = drop_ppm
        err = ffi.new("int32_t *")
        self.io = lib.nw_io_start(self.engine, io_cfg, err)
        assert self.io != ffi.NULL, ffi.string(lib.nw_strerror(err[0]))
        self.keep = []

    def register(self, size, access, fill=None):
        buf = ffi.new("uint8_t[]", size)
        if fill:
            ffi.memmove(buf, fill, len(fill))
        rkey = ffi.new("uint32_t *")
        assert lib.nw_io_mr_register(self.io, buf, size, access, rkey) == 0
        self.keep.append(buf)
        return buf, rkey[0]

    def wait(self, n, timeout_s=20.0):
        out, comps = [], ffi.new("nw_completion_t[16]")
        while len(out) < n:
            got = lib.nw_io_wait_cq(self.io, comps, 16, int(timeout_s * 1e9))
            assert got > 0, "timed out waiting for completions"
            out += [(comps[i].wr_id, comps[i].status, comps[i].opcode) for i in range(got)]
        return out

    def close(self):
        assert lib.nw_io_stop(self.io) == 0
        self.sock.close()


@pytest.fixture
def hosts(request):
    made = []

    def make(*args, **kw):
        h = Host(*args, **kw)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


@pytest.mark.parametrize(
    "tx,flags",
    [("socket", 0), ("socket", lib.NW_IO_GSO | lib.NW_IO_GRO), ("ports", lib.NW_IO_GSO),
     ("raw", 0), ("ports", lib.NW_IO_GSO | lib.NW_IO_INLINE),
     ("ports", lib.NW_IO_GSO | lib.NW_IO_INLINE | lib.NW_IO_BUSY_POLL)],
)
def test_write_then_read_back_over_loopback(hosts, tx, flags):
    a = hosts("127.0.77.1", tx, flags, entropy_burst=8)
    b = hosts("127.0.77.2", tx, flags, entropy_burst=8)
    size = 8 << 20
    data = os.urandom(size)
    src, _ = a.register(size, lib.NW_ACCESS_LOCAL, data)
    dst, rkey = b.register(size, lib.NW_ACCESS_REMOTE_WRITE | lib.NW_ACCESS_REMOTE_READ)
    peer = ffi.new("uint32_t *")
    assert lib.nw_io_peer_add(a.io, ip("127.0.77.2"), 0, lib.NW_MODE_RUD, peer) == 0
    assert lib.nw_io_post_write(a.io, peer[0], 1, src, size, rkey, 0) == 0
    assert a.wait(1) == [(1, 0, lib.NW_OP_WRITE)]
    assert bytes(ffi.buffer(dst, size)) == data
    back, _ = a.register(size, lib.NW_ACCESS_LOCAL)
    assert lib.nw_io_post_read(a.io, peer[0], 2, back, size, rkey, 0) == 0
    assert a.wait(1) == [(2, 0, lib.NW_OP_READ)]
    assert bytes(ffi.buffer(back, size)) == data
    st, io_st = ffi.new("nw_stats_t *"), ffi.new("nw_io_stats_t *")
    lib.nw_io_stats_get(b.io, st, io_st)
    assert st.placed_bytes == size and io_st.recv_pkts > 0


@pytest.mark.parametrize("mode", [0, lib.NW_IO_INLINE, lib.NW_IO_INLINE | lib.NW_IO_BUSY_POLL])
def test_injected_loss_is_recovered_with_gro_on(hosts, mode):
    flags = lib.NW_IO_GSO | lib.NW_IO_GRO | mode
    a = hosts("127.0.77.1", "socket", flags, drop_ppm=20_000)
    b = hosts("127.0.77.2", "socket", flags, drop_ppm=20_000)
    size = 16 << 20
    data = os.urandom(size)
    src, _ = a.register(size, lib.NW_ACCESS_LOCAL, data)
    dst, rkey = b.register(size, lib.NW_ACCESS_REMOTE_WRITE)
    peer = ffi.new("uint32_t *")
    assert lib.nw_io_peer_add(a.io, ip("127.0.77.2"), 0, lib.NW_MODE_RUD, peer) == 0
    assert lib.nw_io_post_write(a.io, peer[0], 1, src, size, rkey, 0) == 0
    assert a.wait(1) == [(1, 0, lib.NW_OP_WRITE)]
    assert bytes(ffi.buffer(dst, size)) == data
    st, io_st = ffi.new("nw_stats_t *"), ffi.new("nw_io_stats_t *")
    lib.nw_io_stats_get(b.io, st, io_st)
    assert io_st.injected_drops > 0 and st.placed_bytes == size
    lib.nw_io_stats_get(a.io, st, io_st)
    assert st.retransmits > 0


def test_event_fd_signals_completions(hosts):
    a = hosts("127.0.77.1", "socket", 0)
    b = hosts("127.0.77.2", "socket", 0)
    buf = ffi.new("uint8_t[]", 1000)
    assert lib.nw_io_post_recv(b.io, 9, buf, 1000) == 0
    fd = lib.nw_io_event_fd(b.io)
    assert select.select([fd], [], [], 0)[0] == []
    peer = ffi.new("uint32_t *")
    assert lib.nw_io_peer_add(a.io, ip("127.0.77.2"), 0, lib.NW_MODE_RUD, peer) == 0
    assert lib.nw_io_post_send(a.io, peer[0], 1, b"hello", 5) == 0
    assert select.select([fd], [], [], 20)[0] == [fd]
    comps = ffi.new("nw_completion_t[4]")
    assert lib.nw_io_poll_cq(b.io, comps, 4) == 1
    assert (comps[0].wr_id, comps[0].status, comps[0].bytes) == (9, 0, 5)
    assert bytes(ffi.buffer(buf, 5)) == b"hello"
    assert select.select([fd], [], [], 0)[0] == []  # drained: no longer readable


@pytest.mark.parametrize("tx", ["ports", "raw"])
def test_each_packet_carries_the_next_entropy_value(hosts, tx):
    base, count = 40000, 8
    a = hosts("127.0.77.1", tx, 0, entropy_base=base, entropy_count=count, entropy_burst=1,
              mtu=1472)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # a peer that never answers
    sink.bind(("127.0.77.3", 4793))
    sink.settimeout(10)
    try:
        peer = ffi.new("uint32_t *")
        assert lib.nw_io_peer_add(a.io, ip("127.0.77.3"), 0, lib.NW_MODE_RUD, peer) == 0
        payload = os.urandom(64 * 1416)
        a.keep.append(payload)  # the engine resends it until teardown stops the I/O thread
        assert lib.nw_io_post_send(a.io, peer[0], 1, payload, len(payload)) == 0
        got = [sink.recvfrom(2048) for _ in range(64)]
    finally:
        sink.close()
    parsed = ffi.new("nw_wire_pkt_t *")
    by_psn = {}
    for data, (_, port) in got:
        assert lib.nw_wire_parse(data, len(data), parsed) > 0
        by_psn[parsed.pds.psn] = port
    assert len(by_psn) == 64  # 64 first transmissions (sockets may reorder them)
    first = min(by_psn, key=lambda psn: (psn - parsed.pds.psn + 2**31) % 2**32)
    ports = [by_psn[(first + k) % 2**32] for k in range(64)]
    assert Counter(ports) == {base + i: 8 for i in range(count)}
    start = ports[0] - base
    assert ports == [base + (start + k) % count for k in range(64)]  # next value per packet


def test_entropy_rotates_per_packet_in_the_sans_io_engine():
    net = EngineNet(seed=3)
    a = net.add("10.0.0.1", entropy_base=1000, entropy_count=5, entropy_burst=3)
    b = net.add("10.0.0.2")
    net.record = True
    src, _ = net.register(a, 40 * 1416, lib.NW_ACCESS_LOCAL)
    _, rkey = net.register(b, 40 * 1416, lib.NW_ACCESS_REMOTE_WRITE)
    p = net.peer(a, b)
    assert lib.nw_post_write(a.engine, p, 1, src, 40 * 1416, rkey, 0) == 0
    net.run(until=lambda: a.completions)
    ports = [sp for sp, dst, _ in net.sent if dst == b.addr]
    assert set(ports) == set(range(1000, 1005))
    runs = [ports[i:i + 3] for i in range(0, 39, 3)]
    assert all(len(set(r)) == 1 for r in runs)  # bursts of three per value
    assert all(runs[i][0] != runs[i + 1][0] for i in range(len(runs) - 1))



def test_a_listen_port_inside_the_entropy_range_sends_that_value_itself(hosts):
    # An ephemeral listen port can land in the entropy range; binding an entropy
    # socket there would fail, so the driver sends that value from the listen socket.
    base = 52000
    a = hosts("127.0.77.5", "ports", lib.NW_IO_GSO, port=base + 3, entropy_base=base,
              entropy_count=8, local_port=base + 3)
    b = hosts("127.0.77.6", "ports", lib.NW_IO_GSO)
    peer_b = ffi.new("uint32_t *")
    assert lib.nw_io_peer_add(b.io, ip("127.0.77.5"), base + 3, lib.NW_MODE_RUD, peer_b) == 0
    size = 300_000
    data = os.urandom(size)
    src, _ = a.register(size, lib.NW_ACCESS_LOCAL, data)
    dst, rkey = b.register(size, lib.NW_ACCESS_REMOTE_WRITE)
    peer = ffi.new("uint32_t *")
    assert lib.nw_io_peer_add(a.io, ip("127.0.77.6"), 0, lib.NW_MODE_RUD, peer) == 0
    assert lib.nw_io_post_write(a.io, peer[0], 7, src, size, rkey, 0) == 0
    assert a.wait(1) == [(7, 0, lib.NW_OP_WRITE)]
    assert bytes(ffi.buffer(dst, size)) == data


def test_peer_close_reaches_the_remote_over_sockets(hosts):
    a = hosts("127.0.77.5", "socket", 0)
    b = hosts("127.0.77.6", "socket", 0)
    data = os.urandom(100_000)
    src, _ = a.register(len(data), lib.NW_ACCESS_LOCAL, data)
    dst, rkey = b.register(len(data), lib.NW_ACCESS_REMOTE_WRITE)
    peer = ffi.new("uint32_t *")
    assert lib.nw_io_peer_add(a.io, ip("127.0.77.6"), 0, lib.NW_MODE_RUD, peer) == 0
    assert lib.nw_io_post_write(a.io, peer[0], 1, src, len(data), rkey, 0) == 0
    assert a.wait(1) == [(1, 0, lib.NW_OP_WRITE)]
    assert lib.nw_io_peer_close(a.io, peer[0]) == 0
    assert lib.nw_io_post_write(a.io, peer[0], 2, src, 1, rkey, 0) == lib.NW_ENOPEER
    st, io_st = ffi.new("nw_stats_t *"), ffi.new("nw_io_stats_t *")
    for _ in range(2000):  # wait (up to ~20 s) for the CTRL CLOSE to be processed
        lib.nw_io_stats_get(b.io, st, io_st)
        if st.pdc_closed:
            break
        select.select([], [], [], 0.01)
    assert st.pdc_closed == 1
    assert bytes(ffi.buffer(dst, len(data))) == data


@pytest.mark.parametrize("busy", [0, lib.NW_IO_BUSY_POLL])
def test_inline_mode_sends_from_the_caller_and_the_thread_keeps_the_timers(hosts, busy):
    """NW_IO_INLINE: a post leaves from the posting thread; with nobody waiting, the
    driver's thread still fires the retransmission timeout that post armed."""
    a = hosts("127.0.77.1", "socket", lib.NW_IO_INLINE | busy, rto_init_ns=2_000_000)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # a peer that never answers
    sink.bind(("127.0.77.3", 4793))
    sink.settimeout(10)
    try:
        peer = ffi.new("uint32_t *")
        assert lib.nw_io_peer_add(a.io, ip("127.0.77.3"), 0, lib.NW_MODE_RUD, peer) == 0
        payload = b"x" * 100
        a.keep.append(payload)  # resent until teardown stops the I/O thread
        st, io_st = ffi.new("nw_stats_t *"), ffi.new("nw_io_stats_t *")
        loops = -1
        while loops != io_st.loops:  # the thread sleeps (else the post would kick it)
            loops = io_st.loops
            select.select([], [], [], 0.05)
            lib.nw_io_stats_get(a.io, st, io_st)
        assert lib.nw_io_post_send(a.io, peer[0], 1, payload, len(payload)) == 0
        lib.nw_io_stats_get(a.io, st, io_st)
        assert io_st.inline_steps >= 1 and io_st.send_pkts == 1  # sent before the call returned
        first, _ = sink.recvfrom(2048)
        again, _ = sink.recvfrom(2048)  # only the thread's timer can send this one
    finally:
        sink.close()
    parsed = ffi.new("nw_wire_pkt_t *")
    assert lib.nw_wire_parse(again, len(again), parsed) > 0
    assert parsed.pds.flags & lib.NW_PDS_F_RETX
    lib.nw_io_stats_get(a.io, st, io_st)
    assert st.rto_fired >= 1


def test_bad_io_flags_are_refused():
    cfg = ffi.new("nw_io_config_t *")
    lib.nw_io_config_default(cfg)
    cfg.rx_fd = 0
    cfg.flags = 0x100
    engine_cfg = ffi.new("nw_config_t *")
    lib.nw_config_default(engine_cfg)
    engine = ffi.gc(lib.nw_engine_new(engine_cfg), lib.nw_engine_free)
    err = ffi.new("int32_t *")
    assert lib.nw_io_start(engine, cfg, err) == ffi.NULL and err[0] == lib.NW_EINVAL
