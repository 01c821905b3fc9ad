"""Minimal reproductions of conformance gaps found by running p4c's STF samples.

Each program here is written fresh for netweft (not taken from p4c); it isolates
one root cause that made p4c's BMv2 samples fail on the embedded switch (see the
STF section of docs/guide-switch.md). Open gaps are strict xfails: when a fix lands the test
XPASSes, the suite fails, and the mark must be removed. Tests without a mark
reproduce gaps that have since been fixed and now guard against regressions.
"""

from __future__ import annotations

from netweft.emulation.stf import run_stf
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

# A one-header v1model skeleton; {decls} and {ingress} fill in the program.
SKELETON = """
#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<8> b; }}
struct hs {{ h_t h; }}
struct m_t {{ }}
{decls}
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {{
    state start {{ p.extract(hdr.h); transition accept; }}
}}
control V(inout hs hdr, inout m_t m) {{ apply {{ }} }}
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {{
    {ingress}
}}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout hs hdr, inout m_t m) {{ apply {{ }} }}
control D(packet_out p, in hs hdr) {{ apply {{ p.emit(hdr.h); }} }}
{main}
"""

MAIN = "V1Switch(P(), V(), I(), E(), C(), D()) main;"


def run(decls: str, ingress: str, stf: str, main: str = MAIN):
    prog = compile_p4_source(SKELETON.format(decls=decls, ingress=ingress, main=main),
                             "gap.p4")
    return run_stf(SoftSwitch(prog), stf, "gap.stf")


def test_skeleton_passes_as_a_control():
    # the harness itself works: a plain forwarder passes
    result = run("", "apply { sm.egress_spec = 1; }", "packet 0 07 08\nexpect 1 07 08 $\n")
    assert result.passed


def test_core_p4_defines_the_p4c_include_guard():
    main = "#ifdef _CORE_P4_\n" + MAIN + "\n#endif"
    result = run("", "apply { sm.egress_spec = 1; }", "packet 0 07 08\nexpect 1 07 08 $\n",
                 main=main)
    assert result.passed


def test_or_does_not_run_the_right_operand_side_effects():
    decls = "bool set_one(inout bit<8> v) { v = 1; return true; }"
    ingress = ("apply { bool x = hdr.h.b == 0 || set_one(hdr.h.a); "
               "sm.egress_spec = 1; }")
    result = run(decls, ingress, "packet 0 00 00\nexpect 1 00 00 $\n"
                                 "packet 0 00 05\nexpect 1 01 05 $\n")
    assert [v.ok for v in result.verdicts] == [True, True]


def test_and_does_not_run_the_right_operand_side_effects():
    decls = "bool set_one(inout bit<8> v) { v = 1; return true; }"
    ingress = ("apply { bool x = hdr.h.b != 0 && set_one(hdr.h.a); "
               "sm.egress_spec = 1; }")
    result = run(decls, ingress, "packet 0 00 00\nexpect 1 00 00 $\n"
                                 "packet 0 00 05\nexpect 1 01 05 $\n")
    assert [v.ok for v in result.verdicts] == [True, True]


def test_varbit_equality():
    prog = """
#include <core.p4>
#include <v1model.p4>
header v_t { bit<8> n; varbit<16> v; }
struct hs { v_t x; v_t y; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.x, 16); p.extract(hdr.y, 16); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 2; if (hdr.x.v == hdr.y.v) { sm.egress_spec = 1; } }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.x); p.emit(hdr.y); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    sw = SoftSwitch(compile_p4_source(prog, "varbit.p4"))
    result = run_stf(sw, "packet 0 00 abcd 00 abcd\nexpect 1 00 abcd 00 abcd $\n"
                         "packet 0 00 abcd 00 abce\nexpect 2 00 abcd 00 abce $\n", "v.stf")
    assert result.passed


def test_control_instance_as_constructor_argument():
    decls = """
control step_t(inout bit<8> x);
control AddOne(inout bit<8> x) { apply { x = x + 1; } }
control Twice(inout bit<8> x)(step_t s) { apply { s.apply(x); s.apply(x); } }
"""
    ingress = "AddOne() one; Twice(one) twice; apply { twice.apply(hdr.h.a); sm.egress_spec = 1; }"
    result = run(decls, ingress, "packet 0 05 00\nexpect 1 07 00 $\n")
    assert result.passed


def test_range_key_const_entry_with_a_single_value():
    ingress = """
    action to(bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { hdr.h.a : range; }
        actions = { to; }
        default_action = to(9);
        const entries = { 1 .. 4 : to(1); 7 : to(7); }
    }
    apply { t.apply(); }"""
    result = run("", ingress, "packet 0 07 00\nexpect 7 07 00 $\n"
                              "packet 0 03 00\nexpect 1 03 00 $\n"
                              "packet 0 08 00\nexpect 9 08 00 $\n")
    assert result.passed


def test_assignment_to_a_nested_slice():
    ingress = ("apply { bit<8> n = 8w0xff; n[7:4][3:0][1:0] = 2w0; hdr.h.a = n; "
               "sm.egress_spec = 1; }")
    result = run("", ingress, "packet 0 00 00\nexpect 1 cf 00 $\n")
    assert result.passed


def test_emit_a_stack_of_header_unions():
    prog = """
#include <core.p4>
#include <v1model.p4>
header b_t { bit<8> v; }
header w_t { bit<16> v; }
header_union u_t { b_t b; w_t w; }
header k_t { bit<8> kind; }
struct hs { k_t k; u_t[2] u; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.k); p.extract(hdr.u[0].b); p.extract(hdr.u[1].w);
                  transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply { hdr.u[1].w.v = 0xabcd; sm.egress_spec = 1; }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    sw = SoftSwitch(compile_p4_source(prog, "ustack.p4"))
    result = run_stf(sw, "packet 0 07 11 0000 99\nexpect 1 07 11 abcd 99 $\n", "u.stf")
    assert result.passed


def test_legacy_priority_annotation_smaller_wins():
    ingress = """
    action to(bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { hdr.h.a : ternary; }
        actions = { to; }
        default_action = to(9);
        const entries = {
            0x01 &&& 0x0f : to(1) @priority(3);
            0x11 &&& 0xf0 : to(2) @priority(1);
        }
    }
    apply { t.apply(); }"""
    # 0x11 matches both entries: @priority(1) is the higher priority in p4c/BMv2
    result = run("", ingress, "packet 0 11 00\nexpect 2 11 00 $\n"
                              "packet 0 01 00\nexpect 1 01 00 $\n")
    assert result.passed


def test_for_loop_in_an_action():
    ingress = """
    action count_down() {
        bit<8> n = 0;
        for (bit<8> i = hdr.h.a; i > 0; i = i - 1) {
            if (i == 2) { continue; }
            n = n + 1;
        }
        hdr.h.b = n;
    }
    apply { count_down(); sm.egress_spec = 1; }"""
    # a = 4: i = 4, 3, (2 skipped), 1 -> n = 3
    result = run("", ingress, "packet 0 04 00\nexpect 1 04 03 $\n"
                              "packet 0 00 00\nexpect 1 00 00 $\n")
    assert result.passed


def test_serializable_enum_key_with_a_masked_bit_keyset():
    decls = "enum bit<8> Kind { A = 0x10, B = 0x20 }"
    ingress = """
    action to(bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { hdr.h.a : exact; (Kind)hdr.h.b : ternary @name("kind"); }
        actions = { to; }
        default_action = to(9);
        const entries = {
            (1, ((bit<8>)Kind.B) &&& 0xf0) : to(2);
            (1, _)                          : to(3);
        }
    }
    apply { t.apply(); }"""
    result = run(decls, ingress, "packet 0 01 2f\nexpect 2 01 2f $\n"
                                 "packet 0 01 1f\nexpect 3 01 1f $\n"
                                 "packet 0 02 2f\nexpect 9 02 2f $\n")
    assert result.passed


def test_varbit_extract_of_a_non_byte_multiple_is_parser_invalid_argument():
    prog = """
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> bits; bit<8> err; }
header opt_t { varbit<16> v; }
struct hs { len_t l; opt_t o; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.l); p.extract(hdr.o, (bit<32>)hdr.l.bits); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.ParserInvalidArgument) { hdr.l.err = 6; }
        else if (sm.parser_error == error.NoError) { hdr.l.err = 0; }
        else { hdr.l.err = 9; }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.l); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    sw = SoftSwitch(compile_p4_source(prog, "vbits.p4"))
    # 8 bits: extracted, no error; 3 bits: ParserInvalidArgument, nothing consumed
    result = run_stf(sw, "packet 0 08 ff aa bbcc\nexpect 1 08 00 bbcc $\n"
                         "packet 0 03 ff aa bbcc\nexpect 1 03 06 aa bbcc $\n", "v.stf")
    assert result.passed


def test_extract_into_dont_care_skips_a_header():
    prog = """
#include <core.p4>
#include <v1model.p4>
header w_t { bit<16> v; }
struct hs { w_t w; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract<w_t>(_); p.extract(hdr.w); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.w); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    sw = SoftSwitch(compile_p4_source(prog, "skip.p4"))
    result = run_stf(sw, "packet 0 aaaa bbbb cc\nexpect 1 bbbb cc $\n", "s.stf")
    assert result.passed


def test_assignment_evaluates_the_lvalue_index_before_the_rvalue():
    prog = """
#include <core.p4>
#include <v1model.p4>
header b_t { bit<8> v; }
header k_t { bit<8> i; }
struct hs { k_t k; b_t[2] s; }
struct m_t { }
bit<8> take(inout bit<8> i) { i = 0; return 7; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.k); p.extract(hdr.s.next); p.extract(hdr.s.next);
                  transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply { hdr.s[hdr.k.i].v = take(hdr.k.i); sm.egress_spec = 1; }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.k); p.emit(hdr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    sw = SoftSwitch(compile_p4_source(prog, "order.p4"))
    # index 1 is read before take() zeroes it: s[1] gets 7
    result = run_stf(sw, "packet 0 01 00 00\nexpect 1 00 00 07 $\n", "o.stf")
    assert result.passed
