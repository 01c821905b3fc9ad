"""``@field_list(NAME)`` with NAME a constant (as the tutorials' flowcache.p4 writes
it): the clone carries the listed metadata, read at the end of ingress."""

from __future__ import annotations

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
const int FL_TO_CPU = 3;
header h_t { bit<8> a; bit<8> b; }
struct meta_t {
    @field_list(FL_TO_CPU) bit<8> kept;
    bit<8> dropped;
}
struct headers_t { h_t h; }
parser P(packet_in p, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        clone_preserving_field_list(CloneType.I2E, 7, FL_TO_CPU);
        m.kept = 0x5a;          // after the call: still preserved (end of ingress)
        m.dropped = 0x66;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) { hdr.h.a = m.kept; hdr.h.b = m.dropped; }
    }
}
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out p, in headers_t hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_a_field_list_named_by_a_constant_is_preserved(tmp_path):
    source = tmp_path / "field_list_constant.p4"
    source.write_text(PROGRAM)
    switch = SoftSwitch(compile_p4(source), backend="python")
    switch.clone_session_set(7, 9)
    out = dict(switch.process(0, b"\x01\x02"))
    assert out[1] == b"\x01\x02"
    assert out[9] == b"\x5a\x00"       # the listed field came with the clone, the other not
