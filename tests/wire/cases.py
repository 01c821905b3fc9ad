"""The C wire codec seen from Python, and hypothesis strategies of valid packets.

A packet is described as a flat dict of the C struct's fields, keyed
``"pds.psn"``, ``"ses.opcode"``, ``"rsp.payload_length"``, ``"parity.k"``; fields
not in the dict are zero. ``c_build`` and ``c_parse`` go through the C codec.
"""

from __future__ import annotations

from hypothesis import strategies as st

from netweft.nic_offload import ffi, lib

SUBSTRUCTS = ("pds", "ses", "rsp", "parity")

REQUEST_TYPES = (lib.NW_PDS_RUD, lib.NW_PDS_ROD, lib.NW_PDS_RUD_CC, lib.NW_PDS_ROD_CC)
ACK_TYPES = (lib.NW_PDS_ACK, lib.NW_PDS_ACK_CC, lib.NW_PDS_ACK_CCX)
NACK_TYPES = (lib.NW_PDS_NACK, lib.NW_PDS_NACK_CCX)
RUDI_TYPES = (lib.NW_PDS_RUDI_REQ, lib.NW_PDS_RUDI_RESP)
ALL_TYPES = (*REQUEST_TYPES, *ACK_TYPES, *NACK_TYPES, *RUDI_TYPES, lib.NW_PDS_UUD, lib.NW_PDS_CTRL)
RESPONSE_HEADERS = (lib.NW_NH_NONE, lib.NW_NH_RSP, lib.NW_NH_RSP_DATA, lib.NW_NH_RSP_DATA_SMALL)
NEXT_HEADERS = (*RESPONSE_HEADERS, lib.NW_NH_REQ_STD, lib.NW_NH_NW_PARITY)


def next_headers_of(pkt_type: int) -> tuple[int, ...]:
    """The next headers a PDS type may carry: ACKs and NACKs only SES responses."""
    if pkt_type == lib.NW_PDS_CTRL:
        return (lib.NW_NH_NONE,)
    return RESPONSE_HEADERS if pkt_type in (*ACK_TYPES, *NACK_TYPES) else NEXT_HEADERS


def _field_names(ctype) -> list[str]:
    return [name for name, _ in ctype.fields]


def new_pkt(fields: dict) -> object:
    """A zeroed ``nw_wire_pkt_t *`` with ``fields`` filled in."""
    pkt = ffi.new("nw_wire_pkt_t *")
    for key, value in fields.items():
        part, name = key.split(".")
        target = getattr(pkt, part)
        if isinstance(value, bytes):
            ffi.memmove(getattr(target, name), value, len(value))
        else:
            setattr(target, name, value)
    return pkt


def pkt_to_dict(pkt) -> dict:
    """Every field of a ``nw_wire_pkt_t *``, arrays as bytes (zeros included)."""
    out = {}
    for part in SUBSTRUCTS:
        sub = getattr(pkt, part)
        for name in _field_names(ffi.typeof(sub)):
            value = getattr(sub, name)
            if isinstance(value, ffi.CData):
                value = bytes(ffi.buffer(value))
            out[f"{part}.{name}"] = value
    return out


def nonzero(fields: dict) -> dict:
    """The fields of a dict whose value is not zero (or all-zero bytes)."""
    return {k: v for k, v in fields.items() if (any(v) if isinstance(v, bytes) else v)}


def c_build(fields: dict, payload: bytes = b"", cap: int = 256) -> bytes:
    """Headers from the C codec followed by ``payload``; raises on a codec error."""
    buf = ffi.new("uint8_t[]", cap)
    n = lib.nw_wire_build(new_pkt(fields), buf, cap)
    if n < 0:
        raise ValueError(f"nw_wire_build: {ffi.string(lib.nw_wire_strerror(n)).decode()} ({n})")
    return bytes(buf[0:n]) + payload


def c_build_rc(fields: dict, cap: int = 256) -> int:
    """The raw return value of nw_wire_build."""
    buf = ffi.new("uint8_t[]", max(cap, 1))
    return lib.nw_wire_build(new_pkt(fields), buf, cap)


def c_parse(data: bytes) -> tuple[int, object]:
    """(return value, parsed ``nw_wire_pkt_t *``) from the C codec."""
    pkt = ffi.new("nw_wire_pkt_t *")
    return lib.nw_wire_parse(data, len(data), pkt), pkt


def declared_payload_len(fields: dict) -> int | None:
    """The payload length a packet's header fields announce, if any."""
    if fields.get("pds.type") == lib.NW_PDS_CTRL:
        return None
    nh = fields.get("pds.next_hdr", 0)
    if nh == lib.NW_NH_REQ_STD:
        return None if fields.get("ses.flags", 0) & lib.NW_SES_F_SOM else fields.get(
            "ses.payload_length", 0)
    if nh in (lib.NW_NH_RSP_DATA, lib.NW_NH_RSP_DATA_SMALL):
        return fields.get("rsp.payload_length", 0)
    if nh == lib.NW_NH_NW_PARITY:
        return fields.get("parity.shard_len", 0)
    return None


# ---- hypothesis strategies of valid packets --------------------------------

def _u(bits: int) -> st.SearchStrategy[int]:
    return st.integers(0, (1 << bits) - 1)


def _s16() -> st.SearchStrategy[int]:
    return st.integers(-(1 << 15), (1 << 15) - 1)


@st.composite
def pds_fields(draw, pkt_type: int | None = None) -> dict:
    """PDS fields of one valid header of ``pkt_type`` (any supported type if None)."""
    t = draw(st.sampled_from(ALL_TYPES)) if pkt_type is None else pkt_type
    f = {"pds.type": t, "pds.flags": draw(_u(7))}
    if t == lib.NW_PDS_CTRL:
        f["pds.ctl_type"] = draw(st.integers(0, lib.NW_CTRL_CREDIT_REQ))
        f.update({"pds.probe_opaque": draw(_u(16)), "pds.psn": draw(_u(32)),
                  "pds.spdcid": draw(_u(16)), "pds.dpdcid": draw(_u(16)),
                  "pds.ctrl_payload": draw(_u(32))})
        return f
    f["pds.next_hdr"] = draw(st.sampled_from(next_headers_of(t)))
    if t in REQUEST_TYPES:
        f.update({"pds.clear_psn_off": draw(_s16()), "pds.psn": draw(_u(32)),
                  "pds.spdcid": draw(_u(16))})
        if f["pds.flags"] & lib.NW_PDS_F_SYN:
            f["pds.use_rsv_pdc"] = draw(_u(1))
            f["pds.start_psn_off"] = draw(_u(12))
        else:
            f["pds.dpdcid"] = draw(_u(16))
        if t in (lib.NW_PDS_RUD_CC, lib.NW_PDS_ROD_CC):
            f["pds.ccc_id"] = draw(_u(8))
            f["pds.credit_target"] = draw(_u(24))
    elif t in ACK_TYPES:
        f.update({"pds.ack_psn_off": draw(_s16()), "pds.cack_psn": draw(_u(32)),
                  "pds.spdcid": draw(_u(16)), "pds.dpdcid": draw(_u(16))})
        if t != lib.NW_PDS_ACK:
            f.update({"pds.cc_type": draw(_u(4)), "pds.cc_flags": draw(_u(4)),
                      "pds.mpr": draw(_u(8)), "pds.sack_psn_off": draw(_s16()),
                      "pds.sack_bitmap": draw(_u(64))})
        if t == lib.NW_PDS_ACK_CC:
            if f["pds.cc_type"] == lib.NW_CC_CREDIT:
                f["pds.credit"] = draw(_u(24))
            else:
                f.update({"pds.service_time": draw(_u(16)), "pds.restore_cwnd": draw(_u(1)),
                          "pds.rcv_cwnd_pend": draw(_u(7)), "pds.rcvd_bytes": draw(_u(24))})
            f["pds.ooo_count"] = draw(_u(16))
        if t == lib.NW_PDS_ACK_CCX:
            f["pds.ccx_state"] = draw(st.binary(min_size=16, max_size=16))
    elif t in NACK_TYPES:
        f.update({"pds.nack_code": draw(_u(8)), "pds.nack_vendor": draw(_u(8)),
                  "pds.nack_psn": draw(_u(32)), "pds.spdcid": draw(_u(16)),
                  "pds.dpdcid": draw(_u(16)), "pds.nack_payload": draw(_u(32))})
        if t == lib.NW_PDS_NACK_CCX:
            f["pds.ccx_state"] = draw(st.binary(min_size=16, max_size=16))
    elif t in RUDI_TYPES:
        f["pds.rudi_pkt_id"] = draw(_u(32))
    return f


@st.composite
def next_fields(draw, next_hdr: int, payload_len: int) -> dict:
    """Fields of the header after PDS for ``next_hdr``, announcing ``payload_len``."""
    if next_hdr == lib.NW_NH_REQ_STD:
        f = {"ses.opcode": draw(_u(6)), "ses.flags": draw(_u(6)), "ses.message_id": draw(_u(16)),
             "ses.ri_generation": draw(_u(8)), "ses.job_id": draw(_u(24)),
             "ses.pid_on_fep": draw(_u(12)), "ses.resource_index": draw(_u(12)),
             "ses.buffer_offset": draw(_u(64)), "ses.initiator": draw(_u(32)),
             "ses.mem_key": draw(_u(64)), "ses.request_length": draw(_u(32))}
        if f["ses.flags"] & lib.NW_SES_F_SOM:
            f["ses.header_data"] = draw(_u(64))
        else:
            f["ses.payload_length"] = payload_len
            f["ses.message_offset"] = draw(_u(32))
        return f
    if next_hdr in (lib.NW_NH_RSP, lib.NW_NH_RSP_DATA, lib.NW_NH_RSP_DATA_SMALL):
        f = {"rsp.list": draw(_u(2)), "rsp.opcode": draw(_u(6)), "rsp.return_code": draw(_u(6))}
        if next_hdr == lib.NW_NH_RSP_DATA_SMALL:
            f["rsp.payload_length"] = payload_len
            return f
        f.update({"rsp.message_id": draw(_u(16)), "rsp.job_id": draw(_u(24)),
                  "rsp.modified_length": draw(_u(32))})
        if next_hdr == lib.NW_NH_RSP:
            f["rsp.ri_generation"] = draw(_u(8))
        else:
            f.update({"rsp.read_req_message_id": draw(_u(16)),
                      "rsp.payload_length": payload_len, "rsp.message_offset": draw(_u(32))})
        return f
    if next_hdr == lib.NW_NH_NW_PARITY:
        return {"parity.base_psn": draw(_u(32)), "parity.k": draw(_u(8)),
                "parity.m": draw(_u(8)), "parity.index": draw(_u(8)),
                "parity.shard_len": payload_len}
    return {}


@st.composite
def packets(draw, pkt_type: int | None = None, max_payload: int = 48) -> tuple[dict, bytes]:
    """(fields, payload) of one valid packet whose length fields match its payload."""
    f = draw(pds_fields(pkt_type))
    payload = draw(st.binary(max_size=max_payload))
    if f["pds.type"] != lib.NW_PDS_CTRL:
        f.update(draw(next_fields(f["pds.next_hdr"], len(payload))))
    return f, payload
