"""Programs the back end cannot run fail with P4Error at file:line:col, naming the feature."""

import pytest

from netweft.emulation.p4 import P4Error, compile_p4_source
from netweft.emulation.switch import SoftSwitch

TEMPLATE = """
#include <core.p4>
#include <v1model.p4>
extern Widget { Widget(bit<32> n); void poke(in bit<8> x); }
extern void frobnicate(in bit<8> x);
header h_t { bit<8> a; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    Widget(4) w;
    apply { BODY }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("body, feature", [
    ("w.poke(hdr.h.a);", "the method Widget.poke"),
    ("frobnicate(hdr.h.a);", "the extern function frobnicate"),
])
def test_unknown_externs_are_named_with_their_location(body, feature):
    prog = compile_p4_source(TEMPLATE.replace("BODY", body), "widget.p4")
    with pytest.raises(P4Error) as info:
        SoftSwitch(prog)
    assert str(info.value) == f"widget.p4:15:13: unsupported by the netweft back end: {feature}"


def test_an_unknown_extern_instance_is_named_even_when_unused():
    prog = compile_p4_source(TEMPLATE.replace("BODY", "sm.egress_spec = 3;"), "widget.p4")
    with pytest.raises(P4Error, match=r"^widget.p4:14:\d+: .*the extern Widget$"):
        SoftSwitch(prog)


def test_a_plain_program_from_the_same_template_runs():
    text = TEMPLATE.replace("BODY", "sm.egress_spec = 3;").replace("Widget(4) w;", "")
    sw = SoftSwitch(compile_p4_source(text, "w.p4"))
    assert sw.process(0, b"\x07rest") == [(3, b"\x07rest")]
