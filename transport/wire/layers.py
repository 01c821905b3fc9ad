"""Scapy layers for netweft's Ultra Ethernet wire format (docs/wire.md).

Field names are those of the C codec's structs (``nic_offload/include/uet_wire.h``)
so that tests can compare the two field by field. Importing this module binds
the layers to UDP destination port 4793::

    from scapy.all import rdpcap
    from netweft.transport.wire import layers  # noqa: F401  (binds the layers)
    pkt = rdpcap("capture.pcap")[0]
    pkt[layers.UETRequest].psn, pkt[layers.SESStd].opcode

``UET`` dispatches on the PDS type to the right header class; build packets with
the concrete classes, e.g. ``UDP()/UETRequest(psn=7)/SESStd(opcode=1)/payload``.
"""

from __future__ import annotations

from scapy.fields import (
    BitEnumField,
    BitField,
    ByteEnumField,
    ByteField,
    ConditionalField,
    FlagsField,
    IntField,
    LongField,
    ShortField,
    SignedShortField,
    StrFixedLenField,
    X3BytesField,
    XByteField,
    XIntField,
    XLongField,
    XShortField,
)
from scapy.layers.inet import UDP
from scapy.packet import Packet, Raw, bind_bottom_up, bind_layers, bind_top_down

UET_UDP_PORT = 4793
# Source port of packets built with these layers unless given: the engine's default entropy base.
DEFAULT_ENTROPY_PORT = 49152

PDS_TYPES = {
    0: "RESERVED", 1: "ENC", 2: "RUD", 3: "ROD", 4: "RUDI_REQ", 5: "RUDI_RESP", 6: "UUD",
    7: "ACK", 8: "ACK_CC", 9: "ACK_CCX", 10: "NACK", 11: "CTRL", 12: "NACK_CCX",
    13: "RUD_CC", 14: "ROD_CC",
}
NEXT_HEADERS = {
    0: "NONE", 1: "REQ_SMALL", 2: "REQ_MEDIUM", 3: "REQ_STD", 4: "RSP", 5: "RSP_DATA",
    6: "RSP_DATA_SMALL", 15: "NW_PARITY",
}
CTRL_TYPES = {
    0: "NOOP", 1: "REQ_ACK", 2: "CLEAR", 3: "REQ_CLEAR", 4: "CLOSE", 5: "REQ_CLOSE",
    6: "PROBE", 7: "CREDIT", 8: "CREDIT_REQ",
}
NACK_CODES = {
    0x01: "TRIMMED", 0x02: "TRIMMED_LASTHOP", 0x03: "TRIMMED_ACK", 0x04: "NO_PDC_AVAIL",
    0x05: "NO_CCC_AVAIL", 0x06: "NO_BITMAP", 0x07: "NO_PKT_BUFFER", 0x08: "NO_GTD_DEL_AVAIL",
    0x09: "NO_SES_MSG_AVAIL", 0x0A: "NO_RESOURCE", 0x0B: "PSN_OOR_WINDOW", 0x0D: "ROD_OOO",
    0x0E: "INV_DPDCID", 0x0F: "PDC_HDR_MISMATCH", 0x10: "CLOSING", 0x11: "CLOSING_IN_ERR",
    0x12: "PKT_NOT_RCVD", 0x13: "GTD_DEL_RESP_UNAVAIL", 0x14: "ACK_WITH_DATA",
    0x15: "INVALID_SYN", 0x16: "PDC_MODE_MISMATCH", 0x17: "NEW_START_PSN",
    0x18: "RCVD_SES_PROCG", 0x19: "UNEXP_EVENT", 0x1A: "RCVR_INFER_LOSS",
    0xFD: "EXP_NORMAL", 0xFE: "EXP_ERR", 0xFF: "EXP_FATAL",
}
SES_OPCODES = {
    0x00: "NO_OP", 0x01: "WRITE", 0x02: "READ", 0x03: "ATOMIC", 0x04: "FETCHING_ATOMIC",
    0x05: "SEND", 0x06: "RENDEZVOUS_SEND", 0x07: "DATAGRAM_SEND", 0x08: "DEFERRABLE_SEND",
    0x09: "TAGGED_SEND", 0x0A: "RENDEZVOUS_TSEND", 0x0B: "DEFERRABLE_TSEND",
    0x0C: "DEFERRABLE_RTR", 0x0D: "TSEND_ATOMIC", 0x0E: "TSEND_FETCH_ATOMIC",
    0x0F: "MSG_ERROR",
}
SES_RSP_OPCODES = {0: "DEFAULT", 1: "RESPONSE", 2: "WITH_DATA", 3: "NONE"}

# Flag names, least significant bit first, as scapy's FlagsField wants them.
REQUEST_FLAGS = ["r0", "EC", "SYN", "AR", "RETX", "r5", "T"]  # EC, T: netweft extensions
ACK_FLAGS = ["r0", "REQ0", "REQ1", "P", "RETX", "M", "DUP"]
NACK_FLAGS = ["r0", "r1", "r2", "NT", "RETX", "M", "r6"]
SES_FLAGS = ["SOM", "EOM", "HD", "REL", "IE", "DC"]

SYN = 0x04
SOM = 0x01
CC_CREDIT = 1


def _prologue(types: dict[int, str], default_type: int, flag_names: list[str]) -> list:
    """The 16-bit PDS prologue: type (5), next header (4), flags (7)."""
    return [
        BitEnumField("type", default_type, 5, types),
        BitEnumField("next_hdr", 0, 4, NEXT_HEADERS),
        FlagsField("flags", 0, 7, flag_names),
    ]


def _is_syn(pkt: Packet) -> bool:
    return bool(int(pkt.flags) & SYN)


class UET(Packet):
    """Dispatcher: decodes a UDP payload as the PDS header class its type names."""

    name = "UET"
    fields_desc: list = []

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args, **kargs):
        if _pkt and len(_pkt) >= 2:
            return PDS_CLASSES.get(_pkt[0] >> 3, Raw)
        return cls


class UETRequest(Packet):
    """RUD/ROD request (types 2, 3) and their CC variants (13, 14)."""

    name = "UET PDS request"
    fields_desc = [
        *_prologue({k: PDS_TYPES[k] for k in (2, 3, 13, 14)}, 2, REQUEST_FLAGS),
        SignedShortField("clear_psn_off", 0),
        IntField("psn", 0),
        ShortField("spdcid", 0),
        ConditionalField(ShortField("dpdcid", 0), lambda p: not _is_syn(p)),
        ConditionalField(BitField("use_rsv_pdc", 0, 1), _is_syn),
        ConditionalField(BitField("pdc_info_rsvd", 0, 3), _is_syn),
        ConditionalField(BitField("start_psn_off", 0, 12), _is_syn),
        ConditionalField(ByteField("ccc_id", 0), lambda p: p.type in (13, 14)),
        ConditionalField(X3BytesField("credit_target", 0), lambda p: p.type in (13, 14)),
    ]


class UETUUD(Packet):
    """UUD request (type 6): prologue and two reserved bytes."""

    name = "UET PDS UUD request"
    fields_desc = [
        *_prologue({6: "UUD"}, 6, REQUEST_FLAGS),
        XShortField("uud_rsvd", 0),
    ]


class UETRUDI(Packet):
    """RUDI request and response (types 4, 5)."""

    name = "UET PDS RUDI"
    fields_desc = [
        *_prologue({4: "RUDI_REQ", 5: "RUDI_RESP"}, 4, [f"r{i}" for i in range(7)]),
        XShortField("rudi_rsvd", 0),
        IntField("rudi_pkt_id", 0),
    ]


def _ack_ext(pkt: Packet) -> bool:
    return pkt.type in (8, 9)


def _nscc(pkt: Packet) -> bool:
    return pkt.type == 8 and pkt.cc_type != CC_CREDIT


def _credit(pkt: Packet) -> bool:
    return pkt.type == 8 and pkt.cc_type == CC_CREDIT


class UETAck(Packet):
    """ACK (type 7), ACK_CC (8) with SACK and CC state, ACK_CCX (9)."""

    name = "UET PDS ACK"
    fields_desc = [
        *_prologue({7: "ACK", 8: "ACK_CC", 9: "ACK_CCX"}, 8, ACK_FLAGS),
        SignedShortField("ack_psn_off", 0),
        IntField("cack_psn", 0),
        ShortField("spdcid", 0),
        ShortField("dpdcid", 0),
        ConditionalField(BitField("cc_type", 0, 4), _ack_ext),
        ConditionalField(BitField("cc_flags", 0, 4), _ack_ext),
        ConditionalField(ByteField("mpr", 0), _ack_ext),
        ConditionalField(SignedShortField("sack_psn_off", 0), _ack_ext),
        ConditionalField(XLongField("sack_bitmap", 0), _ack_ext),
        ConditionalField(ShortField("service_time", 0), _nscc),
        ConditionalField(BitField("restore_cwnd", 0, 1), _nscc),
        ConditionalField(BitField("rcv_cwnd_pend", 0, 7), _nscc),
        ConditionalField(X3BytesField("rcvd_bytes", 0), _nscc),
        ConditionalField(X3BytesField("credit", 0), _credit),
        ConditionalField(X3BytesField("credit_rsvd", 0), _credit),
        ConditionalField(ShortField("ooo_count", 0), lambda p: p.type == 8),
        ConditionalField(StrFixedLenField("ccx_state", b"\0" * 16, 16), lambda p: p.type == 9),
    ]


class UETNack(Packet):
    """NACK (type 10) and NACK_CCX (12)."""

    name = "UET PDS NACK"
    fields_desc = [
        *_prologue({10: "NACK", 12: "NACK_CCX"}, 10, NACK_FLAGS),
        ByteEnumField("nack_code", 0, NACK_CODES),
        XByteField("nack_vendor", 0),
        IntField("nack_psn", 0),
        ShortField("spdcid", 0),
        ShortField("dpdcid", 0),
        IntField("nack_payload", 0),
        ConditionalField(StrFixedLenField("ccx_state", b"\0" * 16, 16), lambda p: p.type == 12),
    ]


class UETCtrl(Packet):
    """CTRL (type 11): the 4-bit field after the type is the control type."""

    name = "UET PDS CTRL"
    fields_desc = [
        BitEnumField("type", 11, 5, {11: "CTRL"}),
        BitEnumField("ctl_type", 0, 4, CTRL_TYPES),
        FlagsField("flags", 0, 7, REQUEST_FLAGS),
        XShortField("probe_opaque", 0),
        IntField("psn", 0),
        ShortField("spdcid", 0),
        ShortField("dpdcid", 0),
        XIntField("ctrl_payload", 0),
    ]


class _LengthFromPayload(Packet):
    """Fills a 14/16-bit payload length field left as None from the payload size."""

    length_field = ""
    length_offset = 0  # byte offset of the 16 bits that end with the length

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        field = self.length_field
        if getattr(self, field, 0) is None and self._has_length():
            off = self.length_offset
            old = int.from_bytes(pkt[off:off + 2], "big")
            new = (old & ~self._length_mask()) | (len(pay) & self._length_mask())
            pkt = pkt[:off] + new.to_bytes(2, "big") + pkt[off + 2:]
        return pkt + pay

    def _has_length(self) -> bool:
        return True

    def _length_mask(self) -> int:
        return 0x3FFF


class SESStd(_LengthFromPayload):
    """SES standard request (next header 3), 44 bytes."""

    name = "UET SES standard request"
    length_field = "payload_length"
    length_offset = 34
    fields_desc = [
        BitField("ses_rsvd", 0, 2),
        BitEnumField("opcode", 0, 6, SES_OPCODES),
        BitField("version", 0, 2),
        FlagsField("flags", 0, 6, SES_FLAGS),
        ShortField("message_id", 0),
        ByteField("ri_generation", 0),
        X3BytesField("job_id", 0),
        BitField("pid_rsvd", 0, 4),
        BitField("pid_on_fep", 0, 12),
        BitField("ri_rsvd", 0, 4),
        BitField("resource_index", 0, 12),
        LongField("buffer_offset", 0),
        XIntField("initiator", 0),
        XLongField("mem_key", 0),
        ConditionalField(XLongField("header_data", 0), lambda p: int(p.flags) & SOM),
        ConditionalField(BitField("len_rsvd", 0, 18), lambda p: not int(p.flags) & SOM),
        ConditionalField(BitField("payload_length", None, 14), lambda p: not int(p.flags) & SOM),
        ConditionalField(IntField("message_offset", 0), lambda p: not int(p.flags) & SOM),
        IntField("request_length", 0),
    ]

    def _has_length(self) -> bool:
        return not int(self.flags) & SOM


def _rsp_prefix(default_opcode: int) -> list:
    return [
        BitField("list", 0, 2),
        BitEnumField("opcode", default_opcode, 6, SES_RSP_OPCODES),
        BitField("version", 0, 2),
        BitField("return_code", 1, 6),
    ]


class SESRsp(Packet):
    """SES response (next header 4), 12 bytes."""

    name = "UET SES response"
    fields_desc = [
        *_rsp_prefix(1),
        ShortField("message_id", 0),
        ByteField("ri_generation", 0),
        X3BytesField("job_id", 0),
        IntField("modified_length", 0),
    ]


class SESRspData(_LengthFromPayload):
    """SES response with data (next header 5), 20 bytes."""

    name = "UET SES response with data"
    length_field = "payload_length"
    length_offset = 10
    fields_desc = [
        *_rsp_prefix(2),
        ShortField("message_id", 0),
        XByteField("rsp_rsvd", 0),
        X3BytesField("job_id", 0),
        ShortField("read_req_message_id", 0),
        BitField("len_rsvd", 0, 2),
        BitField("payload_length", None, 14),
        IntField("modified_length", 0),
        IntField("message_offset", 0),
    ]


class SESRspDataSmall(_LengthFromPayload):
    """SES response with data, small form (next header 6), 4 bytes."""

    name = "UET SES response with data (small)"
    length_field = "payload_length"
    length_offset = 2
    fields_desc = [
        *_rsp_prefix(2),
        BitField("len_rsvd", 0, 2),
        BitField("payload_length", None, 14),
    ]


class NWParity(_LengthFromPayload):
    """netweft extension: erasure-coding parity header (next header 15), 12 bytes."""

    name = "netweft parity"
    length_field = "shard_len"
    length_offset = 8
    fields_desc = [
        IntField("base_psn", 0),
        ByteField("k", 0),
        ByteField("m", 0),
        ByteField("index", 0),
        XByteField("parity_rsvd", 0),
        ShortField("shard_len", None),
        XShortField("parity_rsvd2", 0),
    ]

    def _length_mask(self) -> int:
        return 0xFFFF


PDS_CLASSES: dict[int, type[Packet]] = {
    2: UETRequest, 3: UETRequest, 13: UETRequest, 14: UETRequest,
    4: UETRUDI, 5: UETRUDI, 6: UETUUD,
    7: UETAck, 8: UETAck, 9: UETAck,
    10: UETNack, 12: UETNack, 11: UETCtrl,
}
SES_CLASSES: dict[int, type[Packet]] = {
    3: SESStd, 4: SESRsp, 5: SESRspData, 6: SESRspDataSmall, 15: NWParity,
}
RESPONSE_ONLY = (UETAck, UETNack)  # ACKs and NACKs carry SES responses only


def bind_port(port: int = UET_UDP_PORT) -> None:
    """Decode UDP datagrams to ``port`` as UET (4793 is bound on import).

    The binding goes first in UDP's list so that it wins over bindings on the
    source port (the UET source port is entropy and may be any value).
    """
    bind_bottom_up(UDP, UET, dport=port)
    UDP.payload_guess.remove(({"dport": port}, UET))
    UDP.payload_guess.insert(0, ({"dport": port}, UET))


bind_port(UET_UDP_PORT)
for _pds in {cls for cls in PDS_CLASSES.values() if cls is not UETCtrl}:
    bind_top_down(UDP, _pds, sport=DEFAULT_ENTROPY_PORT, dport=UET_UDP_PORT)
    for _nh, _ses in SES_CLASSES.items():
        if _pds not in RESPONSE_ONLY or _ses in (SESRsp, SESRspData, SESRspDataSmall):
            bind_layers(_pds, _ses, next_hdr=_nh)
bind_top_down(UDP, UETCtrl, sport=DEFAULT_ENTROPY_PORT, dport=UET_UDP_PORT)
