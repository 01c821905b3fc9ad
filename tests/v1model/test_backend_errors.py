"""Programs the back end cannot run fail with P4Error at file:line:col, naming the feature."""

import pytest

from netweft.emulation.native.build import compiler
from netweft.emulation.switch import SoftSwitch, SwitchError
from netweft.p4.compiler import P4Error, compile_p4_source

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


RANDOM_HASH_USES = [
    ("apply { bit<16> v; hash(v, HashAlgorithm.random, 16w0, { hdr.h.a }, 32w16); "
     "hdr.h.a = (bit<8>)v; }"),
    ("apply { bit<16> v; update_checksum(true, { hdr.h.a }, v, HashAlgorithm.random); }"),
]


@pytest.mark.parametrize("body", RANDOM_HASH_USES)
def test_hash_algorithm_random_is_refused_as_bmv2_refuses_it(body):
    text = TEMPLATE.replace("BODY", "").replace("apply {  }", body).replace("Widget(4) w;", "")
    prog = compile_p4_source(text, "rnd.p4")
    with pytest.raises(P4Error, match=r"^rnd.p4:15:\d+: HashAlgorithm.random: BMv2 simple_switch "
                                      r"has no 'random' hash algorithm"):
        SoftSwitch(prog)


def test_an_action_selector_with_hash_algorithm_random_is_refused():
    selector = ("action_selector(HashAlgorithm.random, 32w4, 32w8) sel; action a() { } "
                "table t { key = { hdr.h.a : exact; hdr.h.a : selector; } actions = { a; } "
                "implementation = sel; } apply { t.apply(); }")
    text = TEMPLATE.replace("Widget(4) w;", "").replace("apply { BODY }", selector)
    prog = compile_p4_source(text, "sel.p4")
    with pytest.raises(P4Error, match=r"^sel.p4:15:\d+: HashAlgorithm.random: BMv2"):
        SoftSwitch(prog)


STRUCT_REGISTER = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct pair_t { bit<8> a; bit<8> b; }
struct hs { h_t h; }
struct m_t { pair_t s; bit<8> x; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    register<CELL>(4) reg;
    apply {
        BODY
        sm.egress_spec = 1;
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _struct_register_program(cell: str, body: str) -> str:
    return STRUCT_REGISTER.replace("CELL", cell).replace("BODY", body)


BACKENDS = ["python", "auto",
            pytest.param("c", marks=pytest.mark.skipif(compiler() is None,
                                                       reason="no C compiler"))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cell, body, at", [
    ("pair_t", "reg.read(m.s, 0); m.s.a = m.s.a + 1; reg.write(0, m.s);", "m.s, 0"),
    ("pair_t", "m.s.a = hdr.h.a; reg.write(1, m.s);", "m.s);"),
    ("h_t", "reg.read(hdr.h, 2);", "hdr.h, 2"),
])
def test_a_register_of_a_struct_or_header_is_refused_at_load(backend, cell, body, at):
    """Register cells are bit strings in both back ends, as in BMv2 (p4c-bm2-ss refuses
    the read): the program is refused at the read's result or the written value, never
    run into a packet dropped with an AttributeError."""
    src = _struct_register_program(cell, body)
    line = next(i for i, text in enumerate(src.split("\n"), 1) if at in text)
    col = src.split("\n")[line - 1].index(at) + 1
    with pytest.raises((P4Error, SwitchError)) as info:   # SwitchError: "c" names the back end
        SoftSwitch(compile_p4_source(src, "sreg.p4"), backend=backend)
    expected = (f"sreg.p4:{line}:{col}: {at.split(',')[0].rstrip(');')}: a register cell of a "
                f"struct or header type is not supported (register 'reg' holds {cell};")
    assert str(info.value).removeprefix("switch back end: ").startswith(expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bit_register_reads_into_header_and_struct_fields_and_writes_from_them(backend):
    """The scalar case the refusal leaves alone: ``register<bit<8>>`` read into a header
    field and a struct field, written from both, keeps its cells across packets."""
    body = ("reg.read(hdr.h.a, 0); reg.read(m.s.b, 1); m.s.b = m.s.b + hdr.h.b; "
            "reg.write(1, m.s.b); reg.write(0, hdr.h.b); hdr.h.b = m.s.b;")
    sw = SoftSwitch(compile_p4_source(_struct_register_program("bit<8>", body), "breg.p4"),
                    backend=backend)
    assert sw.process(0, b"\x00\x05") == [(1, b"\x00\x05")]
    assert sw.process(0, b"\x00\x07") == [(1, b"\x05\x0c")]
    assert sw.register_read("I.reg", 0) == 7
    assert sw.register_read("I.reg", 1) == 12
