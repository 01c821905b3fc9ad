"""udp_frame.c (Ethernet/IPv4/UDP header writer and bounds-checked parser),
checksum.c's running sum and neighbor_cache.c, against scapy and a reference
parser written here in Python."""

from __future__ import annotations

import socket
import struct
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP, IPOption_Router_Alert
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from netweft.nic_offload import ffi, lib

DST_MAC = bytes.fromhex("02aabbccddee")
SRC_MAC = bytes.fromhex("0211223344f5")
SRC_IP, DST_IP = "10.0.0.1", "10.0.0.2"
ETH, IP_UDP = lib.NW_ETH_HLEN, lib.NW_IP_UDP_HLEN
CODES = {lib.NW_FRAME_OK, lib.NW_FRAME_SHORT, lib.NW_FRAME_NOT_IPV4, lib.NW_FRAME_BAD_IP,
         lib.NW_FRAME_BAD_IP_CSUM, lib.NW_FRAME_FRAGMENT, lib.NW_FRAME_NOT_UDP,
         lib.NW_FRAME_BAD_UDP_LEN, lib.NW_FRAME_BAD_UDP_CSUM}


def ip_int(dotted: str) -> int:
    return struct.unpack("!I", socket.inet_aton(dotted))[0]


def ip_str(value: int) -> str:
    return socket.inet_ntoa(struct.pack("!I", value))


def ones_sum(data: bytes) -> int:
    """RFC 1071 one's-complement sum (folded, not complemented), big-endian words."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def pseudo_sum(src: int, dst: int, udp_len: int) -> int:
    return ones_sum(struct.pack("!IIBBH", src, dst, 0, socket.IPPROTO_UDP, udp_len))


# ---- the C functions -------------------------------------------------------


def c_frame(payload: bytes, src_ip: int, dst_ip: int, sport: int, dport: int, ecn: int = 0,
            csum: int = lib.NW_UDP_CSUM_FULL, dst_mac: bytes = DST_MAC,
            src_mac: bytes = SRC_MAC) -> bytes:
    """An Ethernet frame written by nw_eth_write + nw_ipv4_udp_write."""
    buf = ffi.new("uint8_t[]", b"\xee" * lib.NW_FRAME_HLEN + payload)  # junk the writer overwrites
    a = ffi.new("nw_udp_addr_t *", {"src_ip": src_ip, "dst_ip": dst_ip, "src_port": sport,
                                     "dst_port": dport, "ecn": ecn})
    lib.nw_eth_write(buf, dst_mac, src_mac)
    lib.nw_ipv4_udp_write(buf + ETH, len(payload), a, csum)
    return bytes(ffi.buffer(buf, lib.NW_FRAME_HLEN + len(payload)))


def c_parse(frame: bytes, verify: int = 1):
    """(rc, nw_frame_t) from nw_frame_parse over an exact-size copy; out starts as junk."""
    buf = ffi.new("uint8_t[]", max(len(frame), 1))
    ffi.memmove(buf, frame, len(frame))
    out = ffi.new("nw_frame_t *")
    ffi.memmove(out, b"\x5a" * ffi.sizeof("nw_frame_t"), ffi.sizeof("nw_frame_t"))
    rc = lib.nw_frame_parse(buf, len(frame), verify, out)
    return rc, out


def fields(out) -> dict:
    a = out.addr
    return {"src_ip": ip_str(a.src_ip), "dst_ip": ip_str(a.dst_ip), "sport": a.src_port,
            "dport": a.dst_port, "ecn": a.ecn, "src_mac": bytes(out.src_mac),
            "reserved": bytes(out.reserved), "payload_off": out.payload_off,
            "payload_len": out.payload_len}


def scapy_frame(payload: bytes = b"netweft!", ecn: int = 0, sport: int = 4000,
                dport: int = 4793, **udp_kw) -> bytes:
    """What nw_ipv4_udp_write writes, built by scapy: DF, ID 0, TTL 64, DSCP 0."""
    return bytes(Ether(dst=DST_MAC, src=SRC_MAC)
                 / IP(src=SRC_IP, dst=DST_IP, flags="DF", id=0, ttl=64, tos=ecn)
                 / UDP(sport=sport, dport=dport, **udp_kw) / Raw(payload))


def fix_ip_csum(frame: bytearray) -> bytearray:
    """Recomputes the IPv4 header checksum after a test edited the header."""
    ihl = (frame[ETH] & 0x0F) * 4
    frame[ETH + 10:ETH + 12] = b"\0\0"
    frame[ETH + 10:ETH + 12] = struct.pack("!H", ~ones_sum(bytes(frame[ETH:ETH + ihl])) & 0xFFFF)
    return frame


# ---- a reference parser (the contract of udp_frame.h, written independently) ----


def ref_parse(f: bytes, verify: bool):
    """(rc, fields or None), following the checks in nw_frame_parse's order."""
    if len(f) < ETH + 20:
        return lib.NW_FRAME_SHORT, None
    if f[12:14] != b"\x08\x00" or f[ETH] >> 4 != 4:
        return lib.NW_FRAME_NOT_IPV4, None
    ip = f[ETH:]
    ihl = (ip[0] & 0x0F) * 4
    total = struct.unpack("!H", ip[2:4])[0]
    if ihl < 20 or total < ihl:
        return lib.NW_FRAME_BAD_IP, None
    if total > len(ip):
        return lib.NW_FRAME_SHORT, None
    if ones_sum(ip[:ihl]) != 0xFFFF:
        return lib.NW_FRAME_BAD_IP_CSUM, None
    if struct.unpack("!H", ip[6:8])[0] & 0x3FFF:
        return lib.NW_FRAME_FRAGMENT, None
    if ip[9] != socket.IPPROTO_UDP:
        return lib.NW_FRAME_NOT_UDP, None
    if total - ihl < 8:
        return lib.NW_FRAME_SHORT, None
    udp = ip[ihl:total]
    sport, dport, ulen, check = struct.unpack("!HHHH", udp[:8])
    if ulen < 8 or ulen > total - ihl:
        return lib.NW_FRAME_BAD_UDP_LEN, None
    src, dst = struct.unpack("!II", ip[12:20])
    if verify and check != 0 and ones_sum(
            struct.pack("!IIBBH", src, dst, 0, 17, ulen) + udp[:ulen]) != 0xFFFF:
        return lib.NW_FRAME_BAD_UDP_CSUM, None
    return lib.NW_FRAME_OK, {
        "src_ip": ip_str(src), "dst_ip": ip_str(dst), "sport": sport, "dport": dport,
        "ecn": ip[1] & 3, "src_mac": f[6:12], "reserved": b"\0\0",
        "payload_off": ETH + ihl + 8, "payload_len": ulen - 8}


# ---- the writer against scapy ----------------------------------------------


@pytest.mark.parametrize("plen", [0, 1, 2, 7, 8, 63, 1472, 8972])
@pytest.mark.parametrize("ecn", [0, 1, 2, 3])
def test_full_checksum_frame_matches_scapy_byte_for_byte(plen, ecn):
    payload = bytes((i * 7 + 3) & 0xFF for i in range(plen))
    c = c_frame(payload, ip_int(SRC_IP), ip_int(DST_IP), 4000, 4793, ecn=ecn)
    s = scapy_frame(payload, ecn=ecn)
    assert c == s
    # scapy's own view of what C wrote: checksums recomputed from scratch agree
    pkt = Ether(c)
    ip_ck, udp_ck = pkt[IP].chksum, pkt[UDP].chksum
    del pkt[IP].chksum, pkt[UDP].chksum
    again = Ether(bytes(pkt))
    assert (again[IP].chksum, again[UDP].chksum) == (ip_ck, udp_ck)
    assert ones_sum(c[ETH:ETH + 20]) == 0xFFFF


def test_no_checksum_mode_leaves_zero():
    payload = b"abcdefghi"
    c = c_frame(payload, ip_int(SRC_IP), ip_int(DST_IP), 4000, 4793, csum=lib.NW_UDP_CSUM_NONE)
    assert c == scapy_frame(payload, chksum=0)


@pytest.mark.parametrize("plen", [0, 1, 33, 1024])
def test_partial_checksum_is_the_folded_pseudo_header_sum(plen):
    """CHECKSUM_PARTIAL (virtio_net_hdr NEEDS_CSUM): the check field holds the folded,
    uncomplemented pseudo-header sum (Linux: ~csum_tcpudp_magic(saddr, daddr, len, 17, 0)),
    and finishing it as skb_checksum_help does (sum from csum_start to the end, fold,
    complement, 0 -> 0xffff) gives the full checksum."""
    payload = bytes(range(256)) * 5
    payload = payload[:plen]
    src, dst = ip_int("192.168.7.200"), ip_int("172.16.254.3")
    c = c_frame(payload, src, dst, 65535, 4793, csum=lib.NW_UDP_CSUM_PARTIAL)
    udp = c[ETH + 20:]
    check = struct.unpack("!H", udp[6:8])[0]
    assert check == pseudo_sum(src, dst, 8 + plen)
    finished = ~ones_sum(udp) & 0xFFFF or 0xFFFF
    full = c_frame(payload, src, dst, 65535, 4793, csum=lib.NW_UDP_CSUM_FULL)
    assert struct.unpack("!H", full[ETH + 26:ETH + 28])[0] == finished
    assert c[:ETH + 26] == full[:ETH + 26] and c[ETH + 28:] == full[ETH + 28:]
    assert lib.nw_frame_parse(c, len(c), 0, ffi.new("nw_frame_t *")) == lib.NW_FRAME_OK


def payload_with_zero_checksum(src: int, dst: int, sport: int, dport: int) -> bytes:
    """A payload whose UDP checksum computes to 0 (sent as 0xffff): the last word
    absorbs the complement of everything else."""
    head = b"zero-sum"
    rest = ones_sum(struct.pack("!IIBBHHHHH", src, dst, 0, 17, 8 + len(head) + 2, sport, dport,
                                8 + len(head) + 2, 0) + head)
    return head + struct.pack("!H", ~rest & 0xFFFF)


def test_checksum_that_computes_to_zero_is_sent_as_ffff_and_verifies():
    src, dst = ip_int(SRC_IP), ip_int(DST_IP)
    payload = payload_with_zero_checksum(src, dst, 4000, 4793)
    c = c_frame(payload, src, dst, 4000, 4793)
    assert c[ETH + 26:ETH + 28] == b"\xff\xff"
    assert c == scapy_frame(payload)
    rc, out = c_parse(c, verify=1)
    assert rc == lib.NW_FRAME_OK and out.payload_len == len(payload)


# ---- the parser on scapy's frames --------------------------------------------


def expected(ihl: int, payload: bytes, ecn: int = 0, sport: int = 4000, dport: int = 4793):
    return {"src_ip": SRC_IP, "dst_ip": DST_IP, "sport": sport, "dport": dport, "ecn": ecn,
            "src_mac": SRC_MAC, "reserved": b"\0\0", "payload_off": ETH + ihl + 8,
            "payload_len": len(payload)}


@pytest.mark.parametrize("verify", [0, 1])
def test_parses_plain_frame(verify):
    payload = b"hello, fabric"
    rc, out = c_parse(scapy_frame(payload, sport=1, dport=65535), verify)
    assert rc == lib.NW_FRAME_OK
    assert fields(out) == expected(20, payload, sport=1, dport=65535)


@pytest.mark.parametrize("options,ihl", [
    ([IPOption_Router_Alert()], 24),
    ([IPOption_NOP()] * 4, 24),
    ([IPOption_NOP()] * 40, 60),
])
def test_parses_frame_with_ip_options(options, ihl):
    payload = b"with options" * 3
    f = bytes(Ether(dst=DST_MAC, src=SRC_MAC)
              / IP(src=SRC_IP, dst=DST_IP, options=options, tos=0x02)
              / UDP(sport=4000, dport=4793) / Raw(payload))
    assert (f[ETH] & 0x0F) * 4 == ihl
    rc, out = c_parse(f, 1)
    assert rc == lib.NW_FRAME_OK
    assert fields(out) == expected(ihl, payload, ecn=2)
    assert f[out.payload_off:out.payload_off + out.payload_len] == payload


def test_parses_frame_with_ethernet_padding():
    """A 1-byte payload makes a 43-byte frame: padded to 60 on the wire, and the
    padding is not payload."""
    f = bytes(Ether(dst=DST_MAC, src=SRC_MAC) / IP(src=SRC_IP, dst=DST_IP)
              / UDP(sport=4000, dport=4793) / Raw(b"x"))
    padded = f + b"\xa5" * (60 - len(f))
    for frame in (f, padded):
        rc, out = c_parse(frame, 1)
        assert rc == lib.NW_FRAME_OK
        assert fields(out) == expected(20, b"x")


@pytest.mark.parametrize("tos", [0xB8, 0xB9, 0xBA, 0xBB, 0xFF, 0x03])
def test_ecn_is_the_low_tos_bits_whatever_the_dscp(tos):
    f = bytes(Ether(dst=DST_MAC, src=SRC_MAC) / IP(src=SRC_IP, dst=DST_IP, tos=tos)
              / UDP(sport=4000, dport=4793) / Raw(b"dscp"))
    rc, out = c_parse(f, 1)
    assert rc == lib.NW_FRAME_OK and out.addr.ecn == tos & 3


def test_zero_udp_checksum_is_accepted_when_verifying():
    payload = b"no checksum"
    rc, out = c_parse(scapy_frame(payload, chksum=0), verify=1)
    assert rc == lib.NW_FRAME_OK and fields(out) == expected(20, payload)


def test_udp_length_shorter_than_ip_payload_bounds_the_payload():
    """The UDP length, not the IP total length, says where the payload ends."""
    payload = b"0123456789"
    f = bytes(Ether(dst=DST_MAC, src=SRC_MAC) / IP(src=SRC_IP, dst=DST_IP)
              / UDP(sport=4000, dport=4793, len=8 + 4, chksum=0) / Raw(payload))
    rc, out = c_parse(f, 1)
    assert rc == lib.NW_FRAME_OK
    assert out.payload_len == 4 and f[out.payload_off:out.payload_off + 4] == b"0123"


# ---- every refusal ---------------------------------------------------------------


def edited(edit, frame: bytes | None = None, fix_csum: bool = True) -> bytes:
    f = bytearray(frame if frame is not None else scapy_frame(b"payload!"))
    edit(f)
    return bytes(fix_ip_csum(f) if fix_csum else f)


def _set(offset: int, value: bytes):
    def edit(f):
        f[offset:offset + len(value)] = value
    return edit


GOOD = scapy_frame(b"payload!")
REFUSALS = {
    "empty": (b"", lib.NW_FRAME_SHORT),
    "33 bytes": (GOOD[:33], lib.NW_FRAME_SHORT),
    "no UDP header in frame": (GOOD[:ETH + 20], lib.NW_FRAME_SHORT),
    "truncated payload": (GOOD[:-1], lib.NW_FRAME_SHORT),
    "IPv6 ethertype": (edited(_set(12, b"\x86\xdd")), lib.NW_FRAME_NOT_IPV4),
    "ARP ethertype": (edited(_set(12, b"\x08\x06")), lib.NW_FRAME_NOT_IPV4),
    "VLAN tag": (edited(_set(12, b"\x81\x00")), lib.NW_FRAME_NOT_IPV4),
    "IP version 6": (edited(_set(ETH, b"\x65")), lib.NW_FRAME_NOT_IPV4),
    "IHL 4": (edited(_set(ETH, b"\x44")), lib.NW_FRAME_BAD_IP),
    "IHL 0": (edited(_set(ETH, b"\x40")), lib.NW_FRAME_BAD_IP),
    "total length < IHL": (edited(_set(ETH + 2, b"\x00\x13")), lib.NW_FRAME_BAD_IP),
    "total length beyond frame": (edited(_set(ETH + 2, struct.pack("!H", len(GOOD) - ETH + 1))),
                                  lib.NW_FRAME_SHORT),
    "IHL beyond total length": (edited(_set(ETH, b"\x4f")), lib.NW_FRAME_BAD_IP),
    "IP checksum": (edited(_set(ETH + 8, b"\x3f"), fix_csum=False), lib.NW_FRAME_BAD_IP_CSUM),
    "MF": (edited(_set(ETH + 6, b"\x20\x00")), lib.NW_FRAME_FRAGMENT),
    "MF and DF": (edited(_set(ETH + 6, b"\x60\x00")), lib.NW_FRAME_FRAGMENT),
    "fragment offset": (edited(_set(ETH + 6, b"\x40\x01")), lib.NW_FRAME_FRAGMENT),
    "last fragment": (edited(_set(ETH + 6, b"\x1f\xff")), lib.NW_FRAME_FRAGMENT),
    "TCP": (bytes(Ether(dst=DST_MAC, src=SRC_MAC) / IP(src=SRC_IP, dst=DST_IP)
                  / TCP(sport=4000, dport=4793) / Raw(b"tcp")), lib.NW_FRAME_NOT_UDP),
    "ICMP": (edited(_set(ETH + 9, b"\x01")), lib.NW_FRAME_NOT_UDP),
    "IP total leaves < 8 for UDP": (edited(_set(ETH + 2, b"\x00\x1b")), lib.NW_FRAME_SHORT),
    "UDP length 7": (scapy_frame(b"payload!", len=7), lib.NW_FRAME_BAD_UDP_LEN),
    "UDP length 0": (scapy_frame(b"payload!", len=0, chksum=0), lib.NW_FRAME_BAD_UDP_LEN),
    "UDP length beyond IP payload": (scapy_frame(b"payload!", len=8 + 9),
                                     lib.NW_FRAME_BAD_UDP_LEN),
    "UDP length beyond IP total, within padding": (
        edited(_set(ETH + 2, struct.pack("!H", 20 + 8 + 4)),
               scapy_frame(b"payload!", chksum=0)), lib.NW_FRAME_BAD_UDP_LEN),
    "UDP checksum": (edited(_set(len(GOOD) - 1, b"?")), lib.NW_FRAME_BAD_UDP_CSUM),
    "UDP checksum 0xffff for nonzero sum": (edited(_set(ETH + 26, b"\xff\xff")),
                                            lib.NW_FRAME_BAD_UDP_CSUM),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refusal(name):
    frame, code = REFUSALS[name]
    assert GOOD != frame
    rc, _ = c_parse(frame, verify=1)
    assert rc == code
    assert ref_parse(frame, True)[0] == code
    # without verification only the UDP checksum refusal goes away
    rc, out = c_parse(frame, verify=0)
    if code == lib.NW_FRAME_BAD_UDP_CSUM:
        assert rc == lib.NW_FRAME_OK and fields(out) == expected(20, b"payload!")
    else:
        assert rc == code


def test_good_frame_is_good():
    rc, out = c_parse(GOOD, 1)
    assert rc == lib.NW_FRAME_OK and fields(out) == expected(20, b"payload!")


# ---- properties ------------------------------------------------------------------

u32 = st.integers(0, 2**32 - 1)
u16 = st.integers(0, 2**16 - 1)
macs = st.binary(min_size=6, max_size=6)


@settings(max_examples=400, deadline=None)
@given(payload=st.binary(max_size=1600), src=u32, dst=u32, sport=u16, dport=u16,
       ecn=st.integers(0, 3), dmac=macs, smac=macs,
       csum=st.sampled_from(["none", "full", "partial"]), pad=st.binary(max_size=64))
def test_writer_parser_round_trip(payload, src, dst, sport, dport, ecn, dmac, smac, csum, pad):
    mode = {"none": lib.NW_UDP_CSUM_NONE, "full": lib.NW_UDP_CSUM_FULL,
            "partial": lib.NW_UDP_CSUM_PARTIAL}[csum]
    frame = c_frame(payload, src, dst, sport, dport, ecn, mode, dmac, smac)
    verify = 0 if csum == "partial" else 1
    rc, out = c_parse(frame + pad, verify)
    assert rc == lib.NW_FRAME_OK
    a = out.addr
    assert (a.src_ip, a.dst_ip, a.src_port, a.dst_port, a.ecn) == (src, dst, sport, dport, ecn)
    assert bytes(out.src_mac) == smac and bytes(out.reserved) == b"\0\0"
    assert out.payload_off == lib.NW_FRAME_HLEN and out.payload_len == len(payload)
    assert frame[:6] == dmac and frame[12:14] == b"\x08\x00"
    if csum != "partial":
        s = Ether(frame)
        assert (s[IP].src, s[IP].dst, s[IP].tos, s[UDP].sport, s[UDP].dport) == (
            ip_str(src), ip_str(dst), ecn, sport, dport)
        assert bytes(s[UDP].payload) == payload
        if csum == "full":
            assert frame == bytes(Ether(dst=dmac, src=smac)
                                  / IP(src=ip_str(src), dst=ip_str(dst), flags="DF", id=0,
                                       ttl=64, tos=ecn)
                                  / UDP(sport=sport, dport=dport) / Raw(payload))


def check_against_reference(frame: bytes) -> None:
    for verify in (0, 1):
        rc, out = c_parse(frame, verify)
        assert rc in CODES
        ref_rc, ref_fields = ref_parse(frame, bool(verify))
        assert rc == ref_rc
        if rc == lib.NW_FRAME_OK:
            assert fields(out) == ref_fields
            assert out.payload_off + out.payload_len <= len(frame)
            assert out.payload_off >= lib.NW_FRAME_HLEN


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes(frame):
    check_against_reference(frame)


@st.composite
def mutated_frames(draw):
    """Valid frames (options, padding) with a few bytes overwritten, and perhaps
    truncated or extended: most get past the early checks."""
    payload = draw(st.binary(max_size=64))
    nopts = draw(st.integers(0, 10))
    f = bytearray(bytes(Ether(dst=DST_MAC, src=SRC_MAC)
                        / IP(src=SRC_IP, dst=DST_IP, options=[IPOption_NOP()] * (4 * nopts),
                             tos=draw(st.integers(0, 255)), flags=draw(st.sampled_from([0, 2])))
                        / UDP(sport=draw(u16), dport=draw(u16)) / Raw(payload)))
    f += draw(st.binary(max_size=20))
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(f) - 1))
        f[i] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        fix_ip_csum(f)
    cut = draw(st.integers(0, len(f)))
    return bytes(f[:cut] if draw(st.booleans()) else f)


@settings(max_examples=600, deadline=None)
@given(mutated_frames())
def test_mutated_frames(frame):
    check_against_reference(frame)


# ---- the running checksum ------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.data())
def test_csum_add_in_even_pieces_matches_one_sum(data, draw):
    cuts = sorted(draw.draw(st.lists(st.integers(0, len(data) // 2), max_size=4)))
    s, prev = 0, 0
    for c in [2 * c for c in cuts] + [len(data)]:
        s = lib.nw_csum_add(s, data[prev:c], c - prev)
        prev = c
    folded = lib.nw_csum_fold(s)
    # memory order: the folded value's bytes, as stored by memcpy, are the big-endian sum
    as_stored = struct.pack("=H", folded)
    assert as_stored == struct.pack("!H", ones_sum(data))
    assert lib.nw_csum16(data, len(data)) == ~ones_sum(data) & 0xFFFF


# ---- the neighbor cache --------------------------------------------------------


def slot_of(ip: int) -> int:
    return ((ip * 2654435761) & 0xFFFFFFFF) >> 22


def mac_of(ip: int) -> bytes:
    return b"\x02" + struct.pack("!I", ip) + b"\x01"


@pytest.fixture
def neigh():
    c = ffi.new("nw_neigh_cache_t *")
    lib.nw_neigh_init(c)
    return c


def find(c, ip: int) -> bytes | None:
    p = lib.nw_neigh_find(c, ip)
    return None if p == ffi.NULL else bytes(ffi.buffer(p, 6))


def stored(c) -> int:
    return sum(1 for k in range(lib.NW_NEIGH_SLOTS) if c.slot[k].ip != 0)


def test_neighbor_learn_find_refresh(neigh):
    a, b = ip_int("10.0.0.7"), ip_int("10.0.0.8")
    assert find(neigh, a) is None
    lib.nw_neigh_learn(neigh, a, mac_of(a))
    assert find(neigh, a) == mac_of(a) and find(neigh, b) is None
    lib.nw_neigh_learn(neigh, a, b"\x02\0\0\0\0\x09")  # moved behind another port
    assert find(neigh, a) == b"\x02\0\0\0\0\x09"
    lib.nw_neigh_learn(neigh, a, b"\x02\0\0\0\0\x09")
    assert stored(neigh) == 1


def test_neighbor_ip_zero_is_never_stored(neigh):
    lib.nw_neigh_learn(neigh, 0, b"\x02\0\0\0\0\x01")
    assert stored(neigh) == 0 and find(neigh, 0) is None
    lib.nw_neigh_learn(neigh, 1, mac_of(1))
    assert find(neigh, 0) is None and find(neigh, 1) == mac_of(1)


def colliding(n: int, slot: int) -> list[int]:
    out, ip = [], 1
    while len(out) < n:
        if slot_of(ip) == slot:
            out.append(ip)
        ip += 1
    return out


def test_neighbor_full_probe_sequence_evicts_its_first_slot(neigh):
    ips = colliding(lib.NW_NEIGH_PROBES + 1, 100)
    for ip in ips[:-1]:
        lib.nw_neigh_learn(neigh, ip, mac_of(ip))
    assert all(find(neigh, ip) == mac_of(ip) for ip in ips[:-1])
    lib.nw_neigh_learn(neigh, ips[-1], mac_of(ips[-1]))
    assert find(neigh, ips[0]) is None  # it sat in slot 100
    assert all(find(neigh, ip) == mac_of(ip) for ip in ips[1:])
    assert stored(neigh) == lib.NW_NEIGH_PROBES
    # a refresh of an entry later in the sequence does not evict anything
    lib.nw_neigh_learn(neigh, ips[3], b"\x02\0\0\0\0\x33")
    assert all(find(neigh, ip) is not None for ip in ips[1:])


def test_neighbor_table_is_capped_and_keeps_the_newest(neigh):
    ips = [ip_int("10.0.0.0") + k for k in range(1, 20001)]
    for n, ip in enumerate(ips):
        lib.nw_neigh_learn(neigh, ip, mac_of(ip))
        assert find(neigh, ip) == mac_of(ip)
        if n % 997 == 0:
            assert stored(neigh) <= lib.NW_NEIGH_SLOTS
    found = [ip for ip in ips if find(neigh, ip) is not None]
    assert len(found) <= lib.NW_NEIGH_SLOTS and stored(neigh) == len(found)
    assert all(find(neigh, ip) == mac_of(ip) for ip in found)  # never someone else's MAC
    assert len(found) > lib.NW_NEIGH_SLOTS // 2


def test_neighbor_from_kernel_unknown_interface(neigh):
    assert lib.nw_neigh_from_kernel(neigh, ip_int("10.0.0.1"), b"no-such-if0") == 0
    assert stored(neigh) == 0


ARP_PROBE = """
import socket, struct, sys
from netweft.nic_offload import ffi, lib
c = ffi.new("nw_neigh_cache_t *")
for dotted, ifname in [a.split("@") for a in sys.argv[1:]]:
    lib.nw_neigh_init(c)
    ip = struct.unpack("!I", socket.inet_aton(dotted))[0]
    got = lib.nw_neigh_from_kernel(c, ip, ifname.encode())
    p = lib.nw_neigh_find(c, ip)
    print(dotted, ifname, got, "-" if p == ffi.NULL else bytes(ffi.buffer(p, 6)).hex())
"""


@pytest.mark.netns
@pytest.mark.host_tools("ip")
def test_neighbor_from_kernel_takes_the_next_hops_complete_arp_entry_on_its_interface():
    """nw_neigh_from_kernel: the route out of the interface (longest prefix; the
    gateway or the peer itself on the link), then that hop's complete or permanent
    ARP entry on the same interface."""
    setup = " && ".join([
        "ip link add d0 type veth peer name d1", "ip link set d0 up", "ip link set d1 up",
        "ip addr add 10.1.2.1/24 dev d0", "ip addr add 10.1.3.1/24 dev d1",
        "ip neigh add 10.1.2.3 lladdr 02:11:22:33:44:55 dev d0 nud permanent",
        "ip neigh add 10.1.2.4 lladdr 02:11:22:33:44:66 dev d0 nud stale",
        "ip neigh add 10.1.2.6 dev d0 nud incomplete",
        "ip neigh add 10.1.2.7 dev d0 nud failed",
        "ip neigh add 10.1.3.5 lladdr 02:11:22:33:44:77 dev d1 nud permanent",
        "ip neigh add 10.1.3.6 lladdr 02:11:22:33:44:88 dev d1 nud permanent",
        "ip route add 10.9.0.0/16 via 10.1.3.5 dev d1",
        "ip route add 10.9.7.0/24 via 10.1.3.6 dev d1",
    ])
    queries = ["10.1.2.3@d0", "10.1.2.4@d0", "10.1.2.6@d0", "10.1.2.7@d0", "10.1.2.9@d0",
               "10.1.2.3@d1", "10.1.2.3@d", "10.1.3.5@d1", "10.1.3.5@d0",
               "10.9.1.1@d1", "10.9.7.7@d1", "10.9.1.1@d0", "10.8.0.1@d1"]
    run = subprocess.run(["unshare", "-n", "sh", "-c", f'{setup} && exec "$@"', "sh",
                          sys.executable, "-c", ARP_PROBE, *queries],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[:-1] == [
        "10.1.2.3 d0 1 021122334455",  # on the link, permanent
        "10.1.2.4 d0 1 021122334466",  # stale: still complete
        "10.1.2.6 d0 0 -",             # incomplete
        "10.1.2.7 d0 0 -",             # failed
        "10.1.2.9 d0 0 -",             # no ARP entry
        "10.1.2.3 d1 0 -",             # no route out of d1
        "10.1.2.3 d 0 -",              # interface names match whole
        "10.1.3.5 d1 1 021122334477",
        "10.1.3.5 d0 0 -",
        "10.9.1.1 d1 1 021122334477",  # through the gateway
        "10.9.7.7 d1 1 021122334488",  # the longest prefix's gateway
        "10.9.1.1 d0 0 -",
        "10.8.0.1 d1 0 -",             # no route at all
    ]
