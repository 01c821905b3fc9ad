"""The C wire codec: exact byte layouts, round trips and every error path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netweft.nic_offload import ffi, lib

from .cases import (
    ALL_TYPES,
    c_build,
    c_build_rc,
    c_parse,
    declared_payload_len,
    nonzero,
    packets,
    pkt_to_dict,
)

WRITE_SOM = {
    "pds.type": lib.NW_PDS_RUD, "pds.next_hdr": lib.NW_NH_REQ_STD,
    "pds.flags": lib.NW_PDS_F_SYN | lib.NW_PDS_F_AR, "pds.psn": 1000, "pds.spdcid": 7,
    "ses.opcode": lib.NW_SES_OP_WRITE, "ses.flags": lib.NW_SES_F_SOM | lib.NW_SES_F_EOM,
    "ses.message_id": 1, "ses.mem_key": 0x2A, "ses.buffer_offset": 4096,
    "ses.request_length": 5,
}


def test_rma_write_first_packet_has_the_documented_bytes():
    data = c_build(WRITE_SOM, b"hello")
    assert data.hex(" ") == (
        "11 8c 00 00 00 00 03 e8 00 07 00 00 "          # PDS RUD, nh 3, SYN|AR, PSN 1000, spdcid 7
        "01 03 00 01 00 00 00 00 00 00 00 00 "          # WRITE, SOM|EOM, msg 1
        "00 00 00 00 00 00 10 00 00 00 00 00 "          # buffer offset 4096, initiator 0
        "00 00 00 00 00 00 00 2a 00 00 00 00 "          # mem_key 0x2a, header data
        "00 00 00 00 00 00 00 05 "                      # request length 5
        "68 65 6c 6c 6f"
    )


def test_prologue_bit_positions():
    # type in the top 5 bits, next header in the next 4, flags in the low 7.
    data = c_build({"pds.type": lib.NW_PDS_UUD, "pds.next_hdr": lib.NW_NH_NW_PARITY,
                    "pds.flags": 0x55, "parity.shard_len": 0})
    word = int.from_bytes(data[:2], "big")
    assert word >> 11 == 6 and (word >> 7) & 0xF == 15 and word & 0x7F == 0x55
    assert len(data) == lib.NW_WIRE_PDS_UUD_LEN + lib.NW_WIRE_PARITY_LEN


def test_syn_replaces_dpdcid_with_pdc_info():
    fields = {"pds.type": lib.NW_PDS_ROD, "pds.flags": lib.NW_PDS_F_SYN, "pds.psn": 9,
              "pds.use_rsv_pdc": 1, "pds.start_psn_off": 0xABC, "pds.dpdcid": 0x1234}
    data = c_build(fields)
    assert data[10:12] == bytes([0x8A, 0xBC])  # use_rsv in bit 15, offset in the low 12 bits
    rc, pkt = c_parse(data)
    assert rc == 12 and pkt.pds.dpdcid == 0 and pkt.pds.start_psn_off == 0xABC


def test_ack_cc_carries_sack_and_nscc_state_at_documented_offsets():
    fields = {"pds.type": lib.NW_PDS_ACK_CC, "pds.cack_psn": 0x01020304, "pds.ack_psn_off": -2,
              "pds.cc_type": lib.NW_CC_NSCC, "pds.cc_flags": 0x5, "pds.mpr": 64,
              "pds.sack_psn_off": 1, "pds.sack_bitmap": 0x8000000000000001,
              "pds.service_time": 0x1111, "pds.restore_cwnd": 1, "pds.rcv_cwnd_pend": 0x22,
              "pds.rcvd_bytes": 0x333333, "pds.ooo_count": 0x4444}
    data = c_build(fields)
    assert len(data) == lib.NW_WIRE_PDS_ACK_CC_LEN
    assert data[2:4] == b"\xff\xfe" and data[4:8] == bytes([1, 2, 3, 4])
    assert data[12] == 0x05 and data[13] == 64 and data[14:16] == b"\x00\x01"
    assert data[16:24] == bytes([0x80, 0, 0, 0, 0, 0, 0, 0x01])
    assert data[24:32] == bytes([0x11, 0x11, 0xA2, 0x33, 0x33, 0x33, 0x44, 0x44])


def test_ack_cc_credit_state():
    fields = {"pds.type": lib.NW_PDS_ACK_CC, "pds.cc_type": lib.NW_CC_CREDIT,
              "pds.credit": 0xABCDEF, "pds.ooo_count": 3}
    data = c_build(fields)
    assert data[12] == 0x10 and data[24:32] == bytes([0xAB, 0xCD, 0xEF, 0, 0, 0, 0, 3])
    rc, pkt = c_parse(data)
    assert rc == 32 and pkt.pds.credit == 0xABCDEF and pkt.pds.rcvd_bytes == 0


def test_ses_std_without_som_carries_length_and_offset():
    fields = {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": lib.NW_NH_REQ_STD,
              "ses.opcode": lib.NW_SES_OP_WRITE, "ses.flags": lib.NW_SES_F_EOM,
              "ses.payload_length": 3, "ses.message_offset": 8192, "ses.request_length": 8195,
              "ses.header_data": 0xDEAD}  # ignored without SOM
    data = c_build(fields, b"abc")
    ses = data[12:56]
    assert ses[32:36] == bytes([0, 0, 0, 3]) and ses[36:40] == (8192).to_bytes(4, "big")
    rc, pkt = c_parse(data)
    assert rc == 56 and pkt.payload_len == 3 and pkt.ses.header_data == 0
    assert pkt.ses.message_offset == 8192


@pytest.mark.parametrize("pkt_type", ALL_TYPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_build_then_parse_round_trips_every_type(pkt_type, data):
    fields, payload = data.draw(packets(pkt_type))
    wire = c_build(fields, payload)
    rc, pkt = c_parse(wire)
    assert rc >= 0, ffi.string(lib.nw_wire_strerror(rc))
    assert rc == pkt.hdr_len == lib.nw_wire_hdr_len(pkt)
    assert pkt.payload_len == len(payload) and wire[rc:] == payload
    assert nonzero(pkt_to_dict(pkt)) == nonzero(fields)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=120))
def test_parse_of_arbitrary_bytes_is_an_error_or_rebuilds_identically(data):
    rc, pkt = c_parse(data)
    if rc < 0:
        assert lib.NW_WIRE_ERR_FIRST <= rc <= lib.NW_WIRE_ERR_LAST
        return
    assert rc + pkt.payload_len == len(data)
    again = c_build(pkt_to_dict(pkt), data[rc:])
    rc2, pkt2 = c_parse(again)
    assert rc2 == rc and pkt_to_dict(pkt2) == pkt_to_dict(pkt)


@settings(max_examples=80, deadline=None)
@given(packets())
def test_every_shorter_prefix_is_rejected(case):
    fields, payload = case
    wire = c_build(fields, payload)
    rc, pkt = c_parse(wire)
    hdr = lib.nw_wire_hdr_len(pkt)
    length_checked = declared_payload_len(fields) is not None and not pkt.trimmed
    for cut in range(len(wire)):
        rc, _ = c_parse(wire[:cut])
        if cut < hdr or length_checked:
            assert rc == lib.NW_WIRE_ETRUNC, (cut, rc)
        else:
            assert rc == hdr  # nothing announces the length: a shorter payload is a packet


def test_longer_payload_than_announced_is_oversized():
    fields = {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": lib.NW_NH_RSP_DATA,
              "rsp.opcode": 2, "rsp.payload_length": 4}
    assert c_parse(c_build(fields, b"abcd"))[0] == 32
    assert c_parse(c_build(fields, b"abcde"))[0] == lib.NW_WIRE_EOVERSIZE
    assert c_parse(c_build(fields, b"abc"))[0] == lib.NW_WIRE_ETRUNC


def test_datagram_longer_than_max_is_oversized():
    fields = {"pds.type": lib.NW_PDS_UUD, "pds.next_hdr": lib.NW_NH_REQ_STD,
              "ses.flags": lib.NW_SES_F_SOM}
    at_limit = c_build(fields, bytes(lib.NW_WIRE_MAX_PKT - 48))
    assert len(at_limit) == lib.NW_WIRE_MAX_PKT and c_parse(at_limit)[0] == 48
    assert c_parse(at_limit + b"x")[0] == lib.NW_WIRE_EOVERSIZE


@pytest.mark.parametrize("nh", [lib.NW_NH_REQ_STD, lib.NW_NH_RSP, lib.NW_NH_RSP_DATA,
                                lib.NW_NH_RSP_DATA_SMALL])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_wrong_ses_version_is_rejected(nh, version):
    fields = {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": nh, "ses.version": version,
              "rsp.version": version, "ses.flags": lib.NW_SES_F_SOM}
    assert c_parse(c_build(fields))[0] == lib.NW_WIRE_EVERSION


@pytest.mark.parametrize("pkt_type", [0, 1, 15, 16, 31])
def test_reserved_and_unsupported_types_are_rejected(pkt_type):
    data = bytes([pkt_type << 3, 0]) + bytes(62)
    assert c_parse(data)[0] == lib.NW_WIRE_ETYPE
    assert c_build_rc({"pds.type": pkt_type}) == lib.NW_WIRE_ETYPE


@pytest.mark.parametrize("nh", [1, 2, 7, 8, 14])
def test_unsupported_next_headers_are_rejected(nh):
    data = ((lib.NW_PDS_RUD << 11) | (nh << 7)).to_bytes(2, "big") + bytes(62)
    assert c_parse(data)[0] == lib.NW_WIRE_ENEXTHDR
    assert c_build_rc({"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": nh}) == lib.NW_WIRE_ENEXTHDR


@pytest.mark.parametrize("pkt_type", [lib.NW_PDS_ACK, lib.NW_PDS_ACK_CC, lib.NW_PDS_ACK_CCX,
                                      lib.NW_PDS_NACK, lib.NW_PDS_NACK_CCX])
@pytest.mark.parametrize("nh", [lib.NW_NH_REQ_STD, lib.NW_NH_NW_PARITY])
def test_acks_and_nacks_carry_only_ses_responses(pkt_type, nh):
    data = ((pkt_type << 11) | (nh << 7)).to_bytes(2, "big") + bytes(100)
    assert c_parse(data)[0] == lib.NW_WIRE_ENEXTHDR
    assert c_build_rc({"pds.type": pkt_type, "pds.next_hdr": nh}) == lib.NW_WIRE_ENEXTHDR
    ok = c_build({"pds.type": pkt_type, "pds.next_hdr": lib.NW_NH_RSP})
    assert c_parse(ok)[0] == len(ok) <= lib.NW_WIRE_MAX_HDR


@pytest.mark.parametrize("ctl", [9, 12, 15])
def test_reserved_control_types_are_rejected(ctl):
    data = ((lib.NW_PDS_CTRL << 11) | (ctl << 7)).to_bytes(2, "big") + bytes(14)
    assert c_parse(data)[0] == lib.NW_WIRE_ENEXTHDR
    assert c_build_rc({"pds.type": lib.NW_PDS_CTRL, "pds.ctl_type": ctl}) == lib.NW_WIRE_ENEXTHDR


def test_ctrl_type_is_not_a_next_header():
    data = c_build({"pds.type": lib.NW_PDS_CTRL, "pds.ctl_type": lib.NW_CTRL_CREDIT,
                    "pds.next_hdr": lib.NW_NH_REQ_STD, "pds.ctrl_payload": 4096})
    rc, pkt = c_parse(data)
    assert rc == 16 and pkt.pds.ctl_type == lib.NW_CTRL_CREDIT and pkt.pds.next_hdr == 0


def test_trimmed_request_skips_length_checks_and_is_reported():
    fields = {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": lib.NW_NH_REQ_STD,
              "pds.flags": lib.NW_PDS_F_TRIMMED, "ses.payload_length": 4000}
    wire = c_build(fields, bytes(4000))[: lib.NW_WIRE_TRIM_KEEP]
    rc, pkt = c_parse(wire)
    assert rc == 56 and pkt.trimmed == 1 and pkt.payload_len == 8
    assert pkt.ses.payload_length == 4000
    # headers cut by the trim are still truncated
    assert c_parse(wire[:40])[0] == lib.NW_WIRE_ETRUNC
    # the same bit on an ACK is carried but means nothing
    ack = c_build({"pds.type": lib.NW_PDS_ACK, "pds.flags": 0x40})
    rc, pkt = c_parse(ack)
    assert rc == 12 and pkt.trimmed == 0 and pkt.pds.flags == 0x40


@pytest.mark.parametrize("fields", [
    {"pds.type": lib.NW_PDS_RUD, "pds.flags": 0x80},
    {"pds.type": lib.NW_PDS_RUD, "pds.flags": lib.NW_PDS_F_SYN, "pds.start_psn_off": 0x1000},
    {"pds.type": lib.NW_PDS_RUD, "pds.flags": lib.NW_PDS_F_SYN, "pds.use_rsv_pdc": 2},
    {"pds.type": lib.NW_PDS_RUD_CC, "pds.credit_target": 1 << 24},
    {"pds.type": lib.NW_PDS_ACK_CC, "pds.cc_type": 16},
    {"pds.type": lib.NW_PDS_ACK_CC, "pds.rcv_cwnd_pend": 0x80},
    {"pds.type": lib.NW_PDS_ACK_CC, "pds.cc_type": 1, "pds.credit": 1 << 24},
    {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": 3, "ses.opcode": 64},
    {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": 3, "ses.job_id": 1 << 24},
    {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": 3, "ses.resource_index": 0x1000},
    {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": 3, "ses.payload_length": 0x4000},
    {"pds.type": lib.NW_PDS_UUD, "pds.next_hdr": 5, "rsp.return_code": 64},
    {"pds.type": lib.NW_PDS_UUD, "pds.next_hdr": 6, "rsp.list": 4},
])
def test_build_rejects_fields_wider_than_their_bits(fields):
    assert c_build_rc(fields) == lib.NW_WIRE_EINVAL


def test_build_checks_the_buffer_size():
    fields = {"pds.type": lib.NW_PDS_RUD_CC, "pds.next_hdr": lib.NW_NH_REQ_STD}
    assert c_build_rc(fields, cap=59) == lib.NW_WIRE_ENOSPC
    assert c_build_rc(fields, cap=60) == 60


def test_null_arguments_are_errors_not_crashes():
    pkt = ffi.new("nw_wire_pkt_t *")
    assert lib.nw_wire_parse(ffi.NULL, 4, pkt) == lib.NW_WIRE_EINVAL
    assert lib.nw_wire_parse(b"\x10\x00", 2, ffi.NULL) == lib.NW_WIRE_EINVAL
    assert lib.nw_wire_build(ffi.NULL, ffi.new("uint8_t[8]"), 8) == lib.NW_WIRE_EINVAL
    pkt.pds.type = lib.NW_PDS_UUD
    assert lib.nw_wire_build(pkt, ffi.NULL, 0) == lib.NW_WIRE_ENOSPC


def test_every_error_has_a_distinct_message():
    codes = range(lib.NW_WIRE_ERR_FIRST, lib.NW_WIRE_ERR_LAST + 1)
    messages = {ffi.string(lib.nw_wire_strerror(c)).decode() for c in codes}
    assert len(messages) == len(codes) and "unknown wire error" not in messages


def test_cffi_declarations_cover_every_define_of_the_header():
    from pathlib import Path

    import netweft.nic_offload as nic

    root = Path(nic.__file__).parent
    header = (root / "include" / "uet_wire.h").read_text()
    cdef = (root / "cdef" / "uet_wire.h").read_text()
    names = [line.split()[1] for line in header.splitlines()
             if line.startswith("#define NW_")]
    missing = [n for n in names if f"#define {n} ..." not in cdef]
    assert names and not missing
