"""Packets of a real coded transfer (data marked EC, parity headers, empty parity
resends) decode the same in the C codec, scapy and the Lua dissector."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from netweft.nic_offload import ffi, lib
from netweft.transport.engine_handle import EngineHandle, make_config
from netweft.transport.wire import layers

from .cases import c_parse, nonzero, pkt_to_dict
from .scapy_view import scapy_fields
from .tshark import LUA_DISSECTOR, TSHARK, as_c_fields, decode_pcap, payload_of

A, B = 0x0A000001, 0x0A000002


@pytest.fixture(scope="module")
def coded_packets() -> list[bytes]:
    """Every request A sent for a 20 kB write coded (4, 2): block 0 loses both parity
    packets (resent empty), block 1 a data packet (decoded)."""
    ea = EngineHandle(make_config(local_ip=A, mtu=1472, seed=1))
    eb = EngineHandle(make_config(local_ip=B, mtu=1472, seed=2))
    peer = ea.peer_add("10.0.0.2", 4793, lib.NW_MODE_RUD)
    ea.peer_set_coding(peer, 4, 2)
    size = 20_000
    src = np.random.default_rng(1).integers(0, 256, size, dtype=np.uint8)
    dst = np.zeros(size, dtype=np.uint8)
    sp, dp = ffi.from_buffer(src), ffi.from_buffer(dst)
    ea.mr_register(sp, size, lib.NW_ACCESS_LOCAL)
    rkey = eb.mr_register(dp, size, lib.NW_ACCESS_REMOTE_WRITE)
    ea.post_write(peer, 1, sp, size, rkey, 0)
    sent, now, done = [], 0, []
    for _ in range(20_000):
        while (out := ea.output(now)) is not None:
            pkt = out[0]
            sent.append(pkt)
            if len(sent) not in (5, 6, 8):  # lose block 0's parity, a data packet of block 1
                eb.input(pkt, A, out[3], now)
        while (out := eb.output(now)) is not None:
            ea.input(out[0], B, 4793, now)
        done += ea.poll_cq(4)
        idle = not any(lib.nw_has_output(e.ptr) or e.next_deadline() for e in (ea, eb))
        if done and idle:
            break  # completed, and the parity PSNs are acknowledged too
        now += 50_000
        for e in (ea, eb):
            d = e.next_deadline()
            if d is not None and d <= now:
                e.on_time(now)
    assert len(done) == 1 and done[0].status == 0
    assert np.array_equal(src, dst)
    assert eb.stats()["ec_pkts_recovered"] == 1
    return sent


def _parity(pkt: bytes) -> bool:
    return ((pkt[0] << 8 | pkt[1]) >> 7) & 0xF == lib.NW_NH_NW_PARITY


def test_engine_marks_coded_data_and_sends_parity_and_empty_resends(coded_packets):
    parsed = [c_parse(p)[1] for p in coded_packets]
    data = [p for p, raw in zip(parsed, coded_packets, strict=True) if not _parity(raw)]
    parity = [p for p, raw in zip(parsed, coded_packets, strict=True) if _parity(raw)]
    assert all(p.pds.flags & lib.NW_PDS_F_EC for p in data)
    assert {(p.parity.k, p.parity.m) for p in parity} >= {(4, 2)}
    for p in parity:  # a parity PSN follows its block: base + k + index
        assert p.pds.psn == (p.parity.base_psn + p.parity.k + p.parity.index) & 0xFFFFFFFF
    assert any(p.parity.shard_len == 0 and p.pds.flags & lib.NW_PDS_F_RETX for p in parity)


def test_scapy_decodes_coded_packets_like_the_c_codec(coded_packets):
    for wire in coded_packets:
        decoded, payload = scapy_fields(layers.UET(wire))
        rc, pkt = c_parse(wire)
        c_fields = pkt_to_dict(pkt)
        assert decoded == {k: c_fields[k] for k in decoded}
        assert set(nonzero(c_fields)) <= set(decoded)
        assert payload == wire[rc:]
    flags = layers.UET(coded_packets[0]).flags
    assert "EC" in str(flags)


@pytest.mark.tshark
@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (scripts/setup installs it)")
def test_lua_dissector_decodes_coded_packets_like_the_c_codec(coded_packets, tmp_path):
    frames = [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=49152, dport=4793)
              / Raw(p) for p in coded_packets]
    pcap = tmp_path / "coded.pcap"
    wrpcap(str(pcap), frames)
    for wire, lua in zip(coded_packets, decode_pcap(pcap), strict=True):
        assert "nwuet.error" not in lua
        rc, pkt = c_parse(wire)
        c_fields = pkt_to_dict(pkt)
        lua_fields = as_c_fields(lua)
        assert lua_fields == {k: c_fields[k] for k in lua_fields}
        assert set(nonzero(c_fields)) <= set(lua_fields)
        assert payload_of(lua) == wire[rc:]
    run = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{LUA_DISSECTOR}", "-r", str(pcap),
                          "-T", "fields", "-e", "_ws.col.Info"],
                         capture_output=True, text=True, timeout=120, check=True)
    infos = [line for line in run.stdout.splitlines() if "parity" in line]
    first = c_parse(next(p for p in coded_packets if _parity(p)))[1]
    assert infos[0].endswith(f" parity block={first.parity.base_psn} index=0/2")
    assert len(infos) == sum(_parity(p) for p in coded_packets)
