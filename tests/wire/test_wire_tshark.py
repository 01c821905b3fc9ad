"""The Lua dissector under tshark against the C codec: every field, every verdict."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from netweft.nic_offload import ffi, lib

from .cases import c_build, c_parse, nonzero, packets, pkt_to_dict
from .tshark import LUA_DISSECTOR, TSHARK, as_c_fields, decode_pcap, payload_of

pytestmark = [
    pytest.mark.tshark,
    pytest.mark.host_tools("tshark"),
]

# Each example is one tshark run over a whole list of packets; shrinking a failure
# would rerun tshark hundreds of times, so failures are reported unshrunk.
SETTINGS = settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


def _write(pcap, payloads: list[bytes]) -> None:
    frames = [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=49152 + i, dport=4793)
              / Raw(p) for i, p in enumerate(payloads)]
    wrpcap(str(pcap), frames)


@st.composite
def mutated(draw) -> bytes:
    """A valid packet with one corruption: cut, extended, a byte changed, or the prologue."""
    fields, payload = draw(packets())
    wire = bytearray(c_build(fields, payload))
    how = draw(st.sampled_from(["cut", "extend", "flip", "prologue", "none"]))
    if how == "cut":
        wire = wire[: draw(st.integers(1, len(wire)))]  # UDP never hands an empty payload to a dissector
    elif how == "extend":
        wire += draw(st.binary(min_size=1, max_size=8))
    elif how == "flip":
        at = draw(st.integers(0, len(wire) - 1))
        wire[at] ^= draw(st.integers(1, 255))
    elif how == "prologue":
        wire[0:2] = draw(st.binary(min_size=2, max_size=2))
    return bytes(wire)


@SETTINGS
@given(st.lists(packets(), min_size=40, max_size=40))
def test_lua_dissector_decodes_every_field_like_the_c_codec(tmp_path, cases):
    wires = [c_build(fields, payload) for fields, payload in cases]
    _write(tmp_path / "valid.pcap", wires)
    decoded = decode_pcap(tmp_path / "valid.pcap")
    assert len(decoded) == len(wires)
    for (_fields, payload), wire, lua in zip(cases, wires, decoded, strict=True):
        rc, pkt = c_parse(wire)
        assert rc >= 0
        c_fields = pkt_to_dict(pkt)
        lua_fields = as_c_fields(lua)
        assert "nwuet.error" not in lua, (wire.hex(), lua["nwuet.error"])
        assert lua_fields == {k: c_fields[k] for k in lua_fields}, wire.hex()
        assert set(nonzero(c_fields)) <= set(lua_fields), "the dissector misses fields"
        assert int(lua["nwuet.payload_len"]) == pkt.payload_len
        assert payload_of(lua) == payload
        assert ("nwuet.trimmed" in lua) == bool(pkt.trimmed)


@SETTINGS
@given(st.lists(st.one_of(mutated(), st.binary(min_size=1, max_size=70)), min_size=60, max_size=60))
def test_lua_dissector_gives_the_c_codecs_verdict_on_malformed_packets(tmp_path, wires):
    _write(tmp_path / "mixed.pcap", wires)
    decoded = decode_pcap(tmp_path / "mixed.pcap")
    assert len(decoded) == len(wires)
    for wire, lua in zip(wires, decoded, strict=True):
        rc, pkt = c_parse(wire)
        if rc < 0:
            assert lua.get("nwuet.error") == ffi.string(lib.nw_wire_strerror(rc)).decode(), \
                wire.hex()
        else:
            assert "nwuet.error" not in lua, wire.hex()
            lua_fields = as_c_fields(lua)
            c_fields = pkt_to_dict(pkt)
            assert lua_fields == {k: c_fields[k] for k in lua_fields}, wire.hex()


def test_oversized_datagram_is_flagged(tmp_path):
    wire = c_build({"pds.type": lib.NW_PDS_UUD, "pds.next_hdr": lib.NW_NH_NONE},
                   bytes(lib.NW_WIRE_MAX_PKT))
    _write(tmp_path / "big.pcap", [wire])
    (lua,) = decode_pcap(tmp_path / "big.pcap")
    assert c_parse(wire)[0] == lib.NW_WIRE_EOVERSIZE
    assert lua["nwuet.error"] == "oversized packet"


def test_other_ports_decode_through_the_preference_or_decode_as(tmp_path):
    wire = c_build({"pds.type": lib.NW_PDS_ACK_CC, "pds.cack_psn": 99})
    frames = [Ether() / IP() / UDP(sport=1, dport=port) / Raw(wire) for port in (5000, 4793)]
    wrpcap(str(tmp_path / "ports.pcap"), frames)

    def psns(*options: str) -> list[str | None]:
        return [d.get("nwuet.pds.cack_psn") for d in decode_pcap(tmp_path / "ports.pcap", *options)]

    assert psns() == [None, "99"]
    assert psns("-o", "nwuet.extra_udp_port:5000") == ["99", "99"]
    assert psns("-d", "udp.port==5000,nwuet") == ["99", "99"]


def test_info_column_summarises_each_packet(tmp_path):
    wires = [
        c_build({"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": lib.NW_NH_REQ_STD, "pds.psn": 70,
                 "pds.spdcid": 4, "ses.opcode": lib.NW_SES_OP_READ, "ses.flags": 3}),
        c_build({"pds.type": lib.NW_PDS_ACK_CC, "pds.cack_psn": 70, "pds.spdcid": 5}),
        c_build({"pds.type": lib.NW_PDS_NACK, "pds.nack_code": lib.NW_NACK_PSN_OOR_WINDOW,
                 "pds.nack_psn": 71, "pds.spdcid": 5}),
        c_build({"pds.type": lib.NW_PDS_CTRL, "pds.ctl_type": lib.NW_CTRL_PROBE, "pds.psn": 72,
                 "pds.spdcid": 4}),
        bytes([0x08, 0]),
    ]
    _write(tmp_path / "info.pcap", wires)
    run = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{LUA_DISSECTOR}", "-r",
                          str(tmp_path / "info.pcap"), "-T", "fields", "-e", "_ws.col.Info"],
                         capture_output=True, text=True, timeout=120, check=True)
    assert run.stdout.splitlines() == [
        "UET RUD psn=70 pdc=4 READ",
        "UET ACK_CC cack=70 pdc=5",
        "UET NACK PSN_OOR_WINDOW psn=71 pdc=5",
        "UET CTRL PROBE psn=72 pdc=4",
        "UET [reserved or unsupported PDS type]",
    ]
