"""Control-plane rules of SoftSwitch: const entries, const defaults, profiles, names."""

import pytest

from netweft.emulation.switch import SoftSwitch, SwitchError
from netweft.emulation.v1model.match_table import TableError
from netweft.p4.compiler import compile_p4_source

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> r; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    action put(bit<8> v) { hdr.h.r = v; }
    action fallback() { hdr.h.r = 0xFF; }
    table fixed {
        key = { hdr.h.k: ternary; }
        actions = { put; }
        const entries = {
            0x10 &&& 0xF0 : put(1);
            0x12 : put(2);
        }
    }
    table open {
        key = { hdr.h.k: exact; }
        actions = { put; @defaultonly fallback; }
        const default_action = fallback();
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k >= 0x20) { open.apply(); } else { fixed.apply(); }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

PROG = compile_p4_source(PROGRAM, "cp.p4")


def result(sw, k):
    (_, data), = sw.process(0, bytes([k, 0]))
    return data[1]


def test_const_entries_apply_in_program_order_and_cannot_change():
    sw = SoftSwitch(PROG)
    assert result(sw, 0x12) == 1  # the first entry wins over the later exact one
    assert result(sw, 0x05) == 0
    with pytest.raises(SwitchError, match="const entries"):
        sw.table_add("fixed", {"hdr.h.k": 0x05}, "put", {"v": 9})
    with pytest.raises(SwitchError, match="const entries"):
        sw.table_clear("I.fixed")
    assert len(sw.table_entries("fixed")) == 2


def test_const_default_action_and_defaultonly():
    sw = SoftSwitch(PROG)
    assert result(sw, 0x30) == 0xFF
    with pytest.raises(TableError, match="const"):
        sw.table_set_default("open", "put", {"v": 1})
    with pytest.raises(TableError, match="defaultonly"):
        sw.table_add("open", {"hdr.h.k": 0x30}, "fallback", {})
    entry = sw.table_add("open", {"hdr.h.k": 0x30}, "put", {"v": 7})
    assert result(sw, 0x30) == 7
    sw.table_modify("open", entry, "put", {"v": 8})
    assert result(sw, 0x30) == 8
    sw.table_delete("open", entry)
    assert result(sw, 0x30) == 0xFF


def test_profile_calls_on_a_plain_table_are_refused():
    sw = SoftSwitch(PROG)
    with pytest.raises(SwitchError, match="no action profile"):
        sw.act_prof_add_member("open", "put", {"v": 1})


def test_unknown_names_list_what_exists():
    sw = SoftSwitch(PROG)
    with pytest.raises(SwitchError, match=r"unknown register 'r'.*known: none"):
        sw.register_read("r", 0)
    with pytest.raises(SwitchError, match="unknown table 'nope'"):
        sw.table_set_default("nope", "put")
