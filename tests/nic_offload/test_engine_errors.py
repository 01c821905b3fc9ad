"""Misuse of the engine API, remote access errors, timeouts and RTO backoff,
receiver-not-ready, and hostile packets (each counted by reason and dropped)."""

import os

import pytest
from engine_net import EngineNet, Impairments, ip

from netweft.nic_offload import ffi, lib

RW = lib.NW_ACCESS_REMOTE_WRITE | lib.NW_ACCESS_REMOTE_READ


def pair(seed=1, imp=None, **cfg):
    net = EngineNet(seed=seed, imp=imp or Impairments())
    return net, net.add("10.0.0.1", **cfg), net.add("10.0.0.2", **cfg)


# ------------------------------------------------------------ configuration


@pytest.mark.parametrize(
    "field,value,word",
    [("mtu", 40, "mtu"), ("window_pkts", 100, "window_pkts"), ("entropy_count", 0, "entropy"),
     ("rto_max_ns", 1, "rto"), ("max_peers", 0, "max_peers")],
)
def test_config_check_names_the_bad_field(field, value, word):
    cfg = ffi.new("nw_config_t *")
    lib.nw_config_default(cfg)
    assert lib.nw_config_check(cfg) == ffi.NULL
    setattr(cfg, field, value)
    assert word in ffi.string(lib.nw_config_check(cfg)).decode()
    assert lib.nw_engine_new(cfg) == ffi.NULL


def test_misuse_returns_error_codes():
    net, a, b = pair()
    buf = ffi.new("uint8_t[]", 16)
    assert lib.nw_post_write(a.engine, 5, 1, buf, 16, 1, 0) == lib.NW_ENOPEER
    p = net.peer(a, b)
    assert lib.nw_post_write(a.engine, p, 1, buf, 2**32, 1, 0) == lib.NW_EINVAL
    assert lib.nw_post_send(a.engine, p, 1, ffi.NULL, 10) == lib.NW_EINVAL
    assert lib.nw_mr_deregister(a.engine, 12345) == lib.NW_ENOKEY
    rkey = ffi.new("uint32_t *")
    assert lib.nw_mr_register(a.engine, buf, 16, 0, rkey) == lib.NW_EINVAL
    assert lib.nw_peer_add(a.engine, 1, 0, 9, rkey) == lib.NW_EINVAL
    uud = net.peer(a, b, lib.NW_MODE_UUD)
    assert lib.nw_post_read(a.engine, uud, 1, buf, 16, 1, 0) == lib.NW_EINVAL
    assert ffi.string(lib.nw_strerror(lib.NW_EREMOTE_ACCESS)).decode().startswith("remote")


def test_credits_bound_outstanding_work_and_return_on_poll():
    net, a, b = pair(max_wrs=4)
    p = net.peer(a, b)
    buf = ffi.new("uint8_t[]", 8)
    for i in range(4):
        assert lib.nw_post_send(a.engine, p, i, buf, 8) == 0
    assert lib.nw_post_send(a.engine, p, 9, buf, 8) == lib.NW_EAGAIN
    # the engine writes into posted buffers later: they must outlive the posting call
    rx_bufs = [ffi.new("uint8_t[]", 8) for _ in range(4)]
    for i, rx in enumerate(rx_bufs):
        assert lib.nw_post_recv(b.engine, i, rx, 8) == 0
    net.run(until=lambda: len(a.completions) == 4)
    assert lib.nw_post_send(a.engine, p, 9, buf, 8) == 0  # credits came back with the poll


def test_deregistered_region_refuses_writes_and_stale_rkey_never_aliases():
    net, a, b = pair()
    src, _ = net.register(a, 64, lib.NW_ACCESS_LOCAL, b"x" * 64)
    dst, rkey = net.register(b, 64, RW)
    assert lib.nw_mr_deregister(b.engine, rkey) == 0
    dst2, rkey2 = net.register(b, 64, RW)  # reuses the slot with a new generation
    assert rkey2 != rkey
    p = net.peer(a, b)
    assert lib.nw_post_write(a.engine, p, 1, src, 64, rkey, 0) == 0
    net.run(until=lambda: a.completions)
    assert a.completions[0][1] == lib.NW_EREMOTE_ACCESS
    assert bytes(ffi.buffer(dst2, 64)) == bytes(64)


# ------------------------------------------------------------ remote errors


@pytest.mark.parametrize("case", ["bad_rkey", "out_of_bounds", "no_write_access"])
def test_rma_write_errors_complete_with_remote_access(case):
    net, a, b = pair(imp=Impairments(loss=0.02))
    size = 20_000
    src, _ = net.register(a, size, lib.NW_ACCESS_LOCAL, os.urandom(size))
    access = lib.NW_ACCESS_REMOTE_READ if case == "no_write_access" else RW
    dst, rkey = net.register(b, size, access)
    p = net.peer(a, b)
    key = rkey ^ 0x5A5A0000 if case == "bad_rkey" else rkey
    off = 10 if case == "out_of_bounds" else 0
    assert lib.nw_post_write(a.engine, p, 1, src, size, key, off) == 0
    net.run(until=lambda: a.completions)
    assert a.completions[0][:3] == (1, lib.NW_EREMOTE_ACCESS, lib.NW_OP_WRITE)
    assert bytes(ffi.buffer(dst, size)) == bytes(size)
    assert b.stats()["remote_access_errors"] >= 1 and b.stats()["placed_bytes"] == 0


@pytest.mark.parametrize("seed", range(8))
def test_write_refusal_survives_lost_acks(seed):
    import random

    rng = random.Random(seed)
    net, a, b = pair(seed=seed, imp=Impairments(loss=0.05))
    # Lose a fifth of b's ACKs on top of the random loss.
    net.imp.drop_filter = lambda pkt: pkt[0] >> 3 == lib.NW_PDS_ACK_CC and rng.random() < 0.2
    src, _ = net.register(a, 30_000, lib.NW_ACCESS_LOCAL)
    _, rkey = net.register(b, 30_000, RW)
    p = net.peer(a, b)
    for i in range(4):
        assert lib.nw_post_write(a.engine, p, i, src, 30_000, rkey ^ 0x30000, 0) == 0
    net.run(until=lambda: len(a.completions) == 4)
    assert [c[1] for c in a.completions] == [lib.NW_EREMOTE_ACCESS] * 4


def test_lost_responses_are_recovered_by_req_ack_probes():
    net, a, b = pair(seed=3)
    dropped = []

    def drop_responses(pkt):
        # ACK_CC with an SES response riding on it: next_hdr (bits 10..7) == RSP.
        if pkt[0] >> 3 == lib.NW_PDS_ACK_CC and ((pkt[0] << 8 | pkt[1]) >> 7) & 0xF == 4:
            if len(dropped) < 6:
                dropped.append(pkt)
                return True
        return False

    net.imp.drop_filter = drop_responses
    net.record = True
    src, _ = net.register(a, 5000, lib.NW_ACCESS_LOCAL, os.urandom(5000))
    dst, rkey = net.register(b, 5000, RW)
    p = net.peer(a, b)
    assert lib.nw_post_write(a.engine, p, 1, src, 5000, rkey, 0) == 0
    net.run(until=lambda: a.completions)
    assert a.completions[0][:2] == (1, 0)
    assert bytes(ffi.buffer(dst, 5000)) == bytes(ffi.buffer(src, 5000))
    probes = [pkt for _, _, pkt in net.sent if pkt[0] >> 3 == lib.NW_PDS_CTRL]
    assert dropped and probes  # the first responses were lost; REQ_ACK fetched one


def test_rma_read_errors_complete_with_remote_access():
    net, a, b = pair()
    _, rkey = net.register(b, 100, lib.NW_ACCESS_REMOTE_WRITE)  # no read right
    p = net.peer(a, b)
    out = ffi.new("uint8_t[]", 100)
    assert lib.nw_post_read(a.engine, p, 1, out, 100, rkey, 0) == 0
    assert lib.nw_post_read(a.engine, p, 2, out, 100, 999, 0) == 0
    net.run(until=lambda: len(a.completions) == 2)
    assert sorted(c[:3] for c in a.completions) == [
        (1, lib.NW_EREMOTE_ACCESS, lib.NW_OP_READ),
        (2, lib.NW_EREMOTE_ACCESS, lib.NW_OP_READ),
    ]


def test_message_too_long_fails_on_both_sides_and_next_message_still_lands():
    net, a, b = pair()
    p = net.peer(a, b)
    small, big = ffi.new("uint8_t[]", 100), ffi.new("uint8_t[]", 10_000)
    assert lib.nw_post_recv(b.engine, 1, small, 100) == 0
    assert lib.nw_post_recv(b.engine, 2, big, 10_000) == 0
    m1, m2 = os.urandom(5000), os.urandom(3000)
    assert lib.nw_post_send(a.engine, p, 10, m1, len(m1)) == 0
    net.run(until=lambda: a.completions)
    assert lib.nw_post_send(a.engine, p, 11, m2, len(m2)) == 0
    net.run(until=lambda: len(a.completions) == 2 and len(b.completions) == 2)
    assert b.completions[0][:4] == (1, lib.NW_ETOOLONG, lib.NW_OP_RECV, 5000)
    assert b.completions[1][:4] == (2, 0, lib.NW_OP_RECV, 3000)
    assert bytes(ffi.buffer(small, 100)) == bytes(100)
    assert bytes(ffi.buffer(big, 3000)) == m2
    assert [c[:2] for c in a.completions] == [(10, lib.NW_ETOOLONG), (11, 0)]


def test_receiver_not_ready_then_delivered_once_a_buffer_is_posted():
    net, a, b = pair()
    p = net.peer(a, b)
    msg = os.urandom(4000)
    assert lib.nw_post_send(a.engine, p, 1, msg, len(msg)) == 0
    net.run(max_ns=3_000_000, until=lambda: b.stats()["drop_rnr"] > 0)
    assert b.completions == []
    buf = ffi.new("uint8_t[]", 4000)
    assert lib.nw_post_recv(b.engine, 5, buf, 4000) == 0
    net.run(until=lambda: a.completions and b.completions)
    assert bytes(ffi.buffer(buf, 4000)) == msg
    assert a.completions[0][:2] == (1, 0) and b.completions[0][:2] == (5, 0)


# ------------------------------------------------------------ timeouts


def test_rto_backs_off_exponentially_to_the_cap_then_fails_the_pdc():
    rto, cap = 1_000_000, 8_000_000
    net, a, b = pair(rto_init_ns=rto, rto_max_ns=cap, max_retries=6)
    net.imp.drop_filter = lambda pkt: True  # black hole
    net.record = True
    p = net.peer(a, b)
    buf = ffi.new("uint8_t[]", 100)
    assert lib.nw_post_send(a.engine, p, 1, buf, 100) == 0
    times = []
    orig = net._transmit

    def spy(src, data, dst_ip, src_port):
        times.append(net.now)
        orig(src, data, dst_ip, src_port)

    net._transmit = spy
    net.run()
    assert a.completions[0][:2] == (1, lib.NW_ETIMEDOUT)
    gaps = [t1 - t0 for t0, t1 in zip(times, times[1:], strict=False)]
    assert gaps == [1 * rto, 2 * rto, 4 * rto, 8 * rto, 8 * rto, 8 * rto]
    assert a.stats()["rto_fired"] == 7 and a.stats()["pdc_failed"] == 1
    assert lib.nw_post_send(a.engine, p, 2, buf, 100) == lib.NW_ETIMEDOUT


def test_a_single_hole_is_repaired_by_fast_retransmit_not_by_timeout():
    net, a, b = pair()
    size = 200_000
    src, _ = net.register(a, size, lib.NW_ACCESS_LOCAL, os.urandom(size))
    dst, rkey = net.register(b, size, RW)
    dropped = []

    def drop_fifth_data_packet(pkt):
        parsed = ffi.new("nw_wire_pkt_t *")
        if lib.nw_wire_parse(pkt, len(pkt), parsed) < 0 or parsed.pds.type != lib.NW_PDS_RUD:
            return False
        if len(dropped) < 1 and parsed.ses.message_offset == 4 * 1416:
            dropped.append(parsed.pds.psn)
            return True
        return False

    net.imp.drop_filter = drop_fifth_data_packet
    p = net.peer(a, b)
    assert lib.nw_post_write(a.engine, p, 1, src, size, rkey, 0) == 0
    net.run(until=lambda: a.completions)
    assert dropped and a.completions[0][1] == 0
    st = a.stats()
    assert st["rto_fired"] == 0 and st["fast_retransmits"] == 1 and st["retransmits"] == 1
    assert bytes(ffi.buffer(dst, size)) == bytes(ffi.buffer(src, size))


def test_trimmed_packet_is_nacked_and_resent_at_once():
    """A switch trims a data packet to 64 bytes and sets the T flag (docs/wire.md):
    the receiver NACKs it (TRIMMED) and the sender resends it without waiting
    for a timeout."""
    net, a, b = pair()
    trimmed = []

    def trim_third_data_packet(pkt):
        if pkt[0] >> 3 == lib.NW_PDS_RUD and len(pkt) > 64 and not (pkt[1] & 0x10):
            trimmed.append(pkt)
            if len(trimmed) == 3:
                return bytes([pkt[0], pkt[1] | 0x40]) + pkt[2:64]
        return pkt

    net.imp.mutate = trim_third_data_packet
    size = 20 * 1416
    src, _ = net.register(a, size, lib.NW_ACCESS_LOCAL, os.urandom(size))
    dst, rkey = net.register(b, size, RW)
    p = net.peer(a, b)
    assert lib.nw_post_write(a.engine, p, 1, src, size, rkey, 0) == 0
    net.run(until=lambda: a.completions)
    assert a.completions[0][:2] == (1, 0)
    assert bytes(ffi.buffer(dst, size)) == bytes(ffi.buffer(src, size))
    assert b.stats()["nacks_out"] == 1 and a.stats()["nacks_in"] == 1
    assert a.stats()["rto_fired"] == 0 and a.stats()["retransmits"] == 1
    assert b.stats()["placed_bytes"] == size


# ------------------------------------------------------------ hostile packets


def build(**fields):
    """A packet from the C codec; fields are 'pds.x', 'ses.y' style keywords."""
    pkt = ffi.new("nw_wire_pkt_t *")
    payload = fields.pop("payload", b"")
    for key, value in fields.items():
        part, name = key.split("__")
        setattr(getattr(pkt, part), name, value)
    buf = ffi.new("uint8_t[]", 16448)
    n = lib.nw_wire_build(pkt, buf, 16448)
    assert n > 0, n
    return bytes(ffi.buffer(buf, n)) + payload


@pytest.fixture
def established():
    """a wrote 4 KiB into b: b has a PDC for a with a known PSN window."""
    net, a, b = pair()
    net.record = True
    src, _ = net.register(a, 4096, lib.NW_ACCESS_LOCAL, os.urandom(4096))
    dst, rkey = net.register(b, 4096, RW)
    p = net.peer(a, b)
    assert lib.nw_post_write(a.engine, p, 1, src, 4096, rkey, 0) == 0
    net.run(until=lambda: a.completions)
    net.run()
    last = ffi.new("nw_wire_pkt_t *")
    data = [pkt for _, dst_ip, pkt in net.sent if dst_ip == b.addr]
    assert lib.nw_wire_parse(data[-1], len(data[-1]), last) > 0
    ids = dict(spdcid=last.pds.spdcid, psn=last.pds.psn)
    acks = [pkt for _, dst_ip, pkt in net.sent if dst_ip == a.addr]
    ack = ffi.new("nw_wire_pkt_t *")
    assert lib.nw_wire_parse(acks[-1], len(acks[-1]), ack) > 0
    ids["dpdcid"] = ack.pds.spdcid
    return net, a, b, dst, rkey, ids


def write_pkt(ids, rkey, psn_delta=1, payload=b"evil", **over):
    f = dict(
        pds__type=lib.NW_PDS_RUD, pds__next_hdr=lib.NW_NH_REQ_STD, pds__psn=ids["psn"] + psn_delta,
        pds__spdcid=ids["spdcid"], pds__dpdcid=ids["dpdcid"], ses__opcode=lib.NW_SES_OP_WRITE,
        ses__flags=lib.NW_SES_F_SOM | lib.NW_SES_F_EOM, ses__mem_key=rkey,
        ses__request_length=len(payload), ses__message_id=4242, payload=payload,
    )
    f.update(over)
    return build(**f)


def inject(net, node, pkt, src="10.0.0.1"):
    return lib.nw_input(node.engine, pkt, len(pkt), ip(src), 50000, net.now)


def test_a_well_formed_crafted_write_is_accepted(established):
    net, a, b, dst, rkey, ids = established
    before = bytes(ffi.buffer(dst, 4096))
    assert inject(net, b, write_pkt(ids, rkey)) == 0
    assert bytes(ffi.buffer(dst, 4)) == b"evil" and before[4:] == bytes(ffi.buffer(dst, 4096))[4:]


@pytest.mark.parametrize(
    "case,counter",
    [
        ("truncated", "drop_truncated"),
        ("oversized", "drop_oversized"),
        ("wrong_version", "drop_bad_version"),
        ("reserved_type", "drop_bad_version"),
        ("unknown_pdc", "drop_unknown_pdc"),
        ("spoofed_source_ip", "drop_spoofed_pdc"),
        ("spoofed_source_pdc", "drop_spoofed_pdc"),
        ("out_of_window", "drop_out_of_window"),
        ("stale_psn", "dup_pkts"),
        ("length_beyond_message", "drop_malformed"),
        ("bad_rkey", "remote_access_errors"),
    ],
)
def test_bad_packets_are_counted_and_dropped(established, case, counter):
    net, a, b, dst, rkey, ids = established
    src = "10.0.0.1"
    pkt = write_pkt(ids, rkey)
    if case == "truncated":
        pkt = pkt[:9]
    elif case == "oversized":
        pkt = pkt + bytes(b.cfg.mtu)
    elif case == "wrong_version":
        b2 = bytearray(pkt)
        b2[12 + 1] |= 0x40  # SES version bits
        pkt = bytes(b2)
    elif case == "reserved_type":
        pkt = bytes([0xF8 | pkt[0] & 0x07]) + pkt[1:]
    elif case == "unknown_pdc":
        pkt = write_pkt(ids, rkey, pds__dpdcid=77)
    elif case == "spoofed_source_ip":
        src = "10.0.0.66"
    elif case == "spoofed_source_pdc":
        pkt = write_pkt(ids, rkey, pds__spdcid=ids["spdcid"] ^ 0x100)
    elif case == "out_of_window":
        pkt = write_pkt(ids, rkey, psn_delta=100_000)
    elif case == "stale_psn":
        pkt = write_pkt(ids, rkey, psn_delta=-1)
    elif case == "length_beyond_message":
        pkt = write_pkt(ids, rkey, ses__request_length=2)
    elif case == "bad_rkey":
        pkt = write_pkt(ids, rkey ^ 0x10000)
    before = b.stats()
    mem = bytes(ffi.buffer(dst, 4096))
    inject(net, b, pkt, src)
    after = b.stats()
    assert after[counter] == before[counter] + 1
    assert after["placed_bytes"] == before["placed_bytes"]
    assert bytes(ffi.buffer(dst, 4096)) == mem
    changed = {k for k in after if k.startswith("drop_") and after[k] != before[k]}
    assert changed <= {counter}


def test_random_and_corrupted_packets_never_crash_and_are_all_accounted(established):
    import random

    net, a, b, dst, rkey, ids = established
    rng = random.Random(7)
    good = write_pkt(ids, rkey, payload=b"z" * 64)
    for i in range(3000):
        if i % 2:
            pkt = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 120)))
        else:
            b2 = bytearray(good)
            for _ in range(rng.randrange(1, 4)):
                b2[rng.randrange(len(b2))] = rng.getrandbits(8)
            pkt = bytes(b2[: rng.randrange(1, len(b2) + 1)])
        inject(net, b, pkt, rng.choice(["10.0.0.1", "10.0.0.3"]))
    lib.nw_on_time(b.engine, net.now + 10**9)
    st = b.stats()
    assert st["pkts_in"] > 3000
