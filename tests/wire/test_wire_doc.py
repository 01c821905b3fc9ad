"""docs/wire.md and the scapy layers' value names against the C codec's constants,
so that the layout document cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from netweft.nic_offload import lib
from netweft.transport.wire import layers

from .cases import c_build_rc

DOC = (Path(__file__).resolve().parents[2] / "docs" / "wire.md").read_text()


def _table_after(header: str) -> list[list[str]]:
    """The rows (cells stripped) of the markdown table whose header line starts with ``header``."""
    lines = DOC[DOC.index(header):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _numbers(cell: str) -> list[int]:
    """``"7"`` -> [7]; ``"15..31"`` -> [15, ..., 31]."""
    low, _, high = cell.partition("..")
    return list(range(int(low, 0), int(high or low, 0) + 1))


def _pairs(header: str) -> list[tuple[int, str]]:
    """(code, NAME) from a two-column-pair table such as the NACK codes."""
    out = []
    for row in _table_after(header):
        for code, name in zip(row[0::2], row[1::2], strict=True):
            out.append((int(code, 0), name.split()[0]))
    return out


def test_pds_type_table_matches_header_lengths():
    rows = _table_after("| type | name | header length")
    assert len(rows) >= 15
    for cell, _name, length in rows:
        for pkt_type in _numbers(cell):
            got = c_build_rc({"pds.type": pkt_type}, cap=64)
            assert got == (int(length) if length.isdigit() else lib.NW_WIRE_ETYPE), pkt_type


def test_next_header_table_matches_header_lengths():
    rows = _table_after("| next_hdr | SES header that follows | length |")
    for cell, _name, length in rows:
        for nh in _numbers(cell):
            fields = {"pds.type": lib.NW_PDS_RUD, "pds.next_hdr": nh}
            expected = lib.NW_WIRE_PDS_REQ_LEN + int(length) if length.isdigit() \
                else lib.NW_WIRE_ENEXTHDR
            assert c_build_rc(fields, cap=64) == expected, nh


@pytest.mark.parametrize("header, prefix", [
    ("| code | name | code | name |", "NW_NACK_"),
    ("| opcode | name | opcode | name |", "NW_SES_OP_"),
])
def test_code_tables_match_the_c_constants(header, prefix):
    pairs = _pairs(header)
    assert len(pairs) >= 16
    for code, name in pairs:
        assert getattr(lib, prefix + name) == code, name


def test_control_type_table_matches_the_c_constants():
    rows = [r for r in _table_after("| ctl_type | name | payload |") if r[0].isdigit()]
    assert [int(r[0]) for r in rows] == list(range(9))
    for code, name, _ in rows:
        assert getattr(lib, "NW_CTRL_" + name) == int(code)


def test_error_table_matches_the_c_constants():
    rows = _table_after("| code | name | when |")
    assert len(rows) == lib.NW_WIRE_ERR_LAST - lib.NW_WIRE_ERR_FIRST + 1
    for code, name, _ in rows:
        assert getattr(lib, name.strip("`")) == int(code)


@pytest.mark.parametrize("name", ["NW_WIRE_MAX_HDR", "NW_WIRE_TRIM_KEEP", "NW_WIRE_MAX_PAYLOAD",
                                  "NW_WIRE_MAX_PKT"])
def test_sizes_quoted_in_the_doc_are_the_c_values(name):
    quoted = re.findall(rf"`{name}` = (\d+)", DOC)
    assert quoted and all(int(q) == getattr(lib, name) for q in quoted)


@pytest.mark.parametrize("names, prefix", [
    (layers.PDS_TYPES, "NW_PDS_"), (layers.NEXT_HEADERS, "NW_NH_"),
    (layers.CTRL_TYPES, "NW_CTRL_"), (layers.NACK_CODES, "NW_NACK_"),
    (layers.SES_OPCODES, "NW_SES_OP_"), (layers.SES_RSP_OPCODES, "NW_SES_RSP_"),
])
def test_scapy_value_names_are_the_c_names(names, prefix):
    for value, name in names.items():
        assert getattr(lib, prefix + name) == value, name
