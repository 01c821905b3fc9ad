"""The scapy layers against the C codec, field by field, in both directions."""

from __future__ import annotations

from hypothesis import given, settings
from scapy.layers.inet import IP, UDP
from scapy.packet import Packet, Raw

from netweft.nic_offload import lib
from netweft.transport.wire import layers

from .cases import c_build, c_parse, nonzero, packets, pkt_to_dict
from .scapy_view import PART_OF, scapy_fields


def scapy_packet(fields: dict, payload: bytes) -> Packet:
    """The scapy packet for a C field dict (lengths given explicitly)."""
    pds_cls = layers.PDS_CLASSES[fields["pds.type"]]

    def kwargs(cls, part):
        names = {f.name for f in cls.fields_desc}
        return {k.split(".")[1]: v for k, v in fields.items()
                if k.startswith(part + ".") and k.split(".")[1] in names}

    pkt = pds_cls(**kwargs(pds_cls, "pds"))
    nh = fields.get("pds.next_hdr", 0)
    if pds_cls is not layers.UETCtrl and nh in layers.SES_CLASSES:
        ses_cls = layers.SES_CLASSES[nh]
        ses_kwargs = kwargs(ses_cls, PART_OF[ses_cls])
        for length in ("payload_length", "shard_len"):
            if any(f.name == length for f in ses_cls.fields_desc):
                ses_kwargs.setdefault(length, 0)
        pkt = pkt / ses_cls(**ses_kwargs)
    return pkt / Raw(payload) if payload else pkt


@settings(max_examples=400, deadline=None)
@given(packets())
def test_scapy_decodes_c_built_packets_field_by_field(case):
    fields, payload = case
    wire = c_build(fields, payload)
    decoded, decoded_payload = scapy_fields(layers.UET(wire))
    c_fields = pkt_to_dict(c_parse(wire)[1])
    assert decoded == {k: c_fields[k] for k in decoded}
    assert set(nonzero(c_fields)) <= set(decoded), "scapy misses fields the C codec fills"
    assert decoded_payload == payload


@settings(max_examples=400, deadline=None)
@given(packets())
def test_scapy_builds_the_same_bytes_as_the_c_codec(case):
    fields, payload = case
    built = bytes(scapy_packet(fields, payload))
    assert built == c_build(fields, payload)
    rc, pkt = c_parse(built)
    assert rc >= 0 and nonzero(pkt_to_dict(pkt)) == nonzero(fields)


def test_udp_port_4793_decodes_as_uet_whatever_the_source_port():
    for sport in (53, 4793, 49152, 65535):  # the source port is entropy
        wire = c_build({"pds.type": lib.NW_PDS_ACK_CC, "pds.cack_psn": 77})
        pkt = IP(bytes(IP() / UDP(sport=sport, dport=4793) / Raw(wire)))
        assert pkt.haslayer(layers.UETAck) and pkt[layers.UETAck].cack_psn == 77


def test_scapy_fills_payload_lengths_the_c_codec_accepts():
    assert bytes(UDP() / layers.UETCtrl())[:4] == bytes.fromhex("c00012b9")  # 49152 -> 4793
    pkt = (UDP(sport=50000) / layers.UETRequest(psn=3, dpdcid=9)
           / layers.SESStd(opcode="WRITE", flags="EOM", message_offset=100) / (b"z" * 300))
    raw = bytes(pkt)[8:]
    assert bytes(pkt)[2:4] == (4793).to_bytes(2, "big")
    rc, parsed = c_parse(raw)
    assert rc == 56 and parsed.ses.payload_length == 300 and parsed.ses.message_offset == 100
    parity = bytes(layers.UETRequest() / layers.NWParity(k=4, m=1) / (b"p" * 33))
    rc, parsed = c_parse(parity)
    assert rc == 24 and parsed.parity.shard_len == 33 and parsed.pds.next_hdr == 15
