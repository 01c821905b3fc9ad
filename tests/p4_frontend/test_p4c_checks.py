"""Front-end checks p4c performs (each a file:line:col error, p4c's message first);
the programs of p4c's own error tests these mirror are named in each test."""

from __future__ import annotations

import pytest

from netweft.p4.compiler import P4Error, compile_p4_source

from .conftest import SKELETON


def refused(src: str) -> P4Error:
    with pytest.raises(P4Error) as err:
        compile_p4_source(src, "t.p4")
    return err.value


def line_col(src: str, text: str) -> tuple[int, int]:
    """1-based line and column of the first occurrence of ``text``."""
    before = src[:src.index(text)]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def at(err: P4Error, src: str, text: str) -> bool:
    return (err.loc.file, err.loc.line, err.loc.col) == ("t.p4", *line_col(src, text))


def program(top: str = "", locals_: str = "", body: str = "") -> str:
    return SKELETON.format(top=top, locals=locals_, body=body)


def with_parser(states: str, top: str = "") -> str:
    src = program(top=top)
    start = src.index("parser P(")
    end = src.index("control VC")
    return src[:start] + ("parser P(packet_in pkt, out headers hdr, inout meta_t meta, "
                          "inout standard_metadata_t sm) {\n" + states + "\n}\n") + src[end:]


def test_calls_in_select_cases():  # p4c: issue122.p4
    src = with_parser("state start { pkt.extract(hdr.h); transition select(hdr.h.a) {\n"
                      "    f(): accept; default: reject; } }", top="bit<8> f() { return 1; }")
    err = refused(src)
    assert at(err, src, "f(): accept")
    assert err.msg.startswith("f(): no function calls allowed in this context")


def test_int_parameter_with_a_direction():  # p4c: issue2354.p4
    src = program(top="bit<8> g(in int val) { return 1; }")
    err = refused(src)
    assert at(err, src, "in int val") or at(err, src, "val")
    assert err.msg.startswith("val: parameters with type int must be directionless")


def test_top_level_instantiation_of_a_control():  # p4c: issue388.p4
    src = program().replace("V1Switch(", "VC() vc_top;\nV1Switch(")
    err = refused(src)
    assert at(err, src, "vc_top;")
    assert err.msg.startswith("vc_top: cannot instantiate at top-level")


def test_action_call_inside_a_parser():  # p4c: issue413.p4
    src = with_parser("state start { pkt.extract(hdr.h); bump(); transition accept; }",
                      top="action bump() { }")
    err = refused(src)
    assert at(err, src, "bump();")
    assert err.msg.startswith("bump(): Action calls are not allowed within parsers")


@pytest.mark.parametrize("where", ["default_action = set(hdr.h.a);",
                                   "const entries = { 1: set(meta.x); }"])
def test_non_constant_action_arguments_in_a_table(where):  # p4c: issue473.p4
    locals_ = ("action set(bit<8> v) { hdr.h.a = v; }\n"
               "table t { key = { hdr.h.b: exact; } actions = { set; } " + where + " }")
    src = program(locals_=locals_, body="t.apply();")
    err = refused(src)
    arg = "hdr.h.a" if "default" in where else "meta.x"
    assert err.loc.line == line_col(src, where)[0]
    assert err.msg.startswith(f"{arg}: action argument must be a compile-time constant")


def test_directional_arguments_in_a_table_may_be_variables():
    locals_ = ("action set(inout bit<8> x, bit<8> v) { x = v; }\n"
               "table t { key = { hdr.h.b: exact; } actions = { set(hdr.h.a); } "
               "default_action = set(hdr.h.a, 3); }")
    compile_p4_source(program(locals_=locals_, body="t.apply();"), "t.p4")


def test_complex_key_without_name():  # p4c: key-name.p4
    locals_ = "table t { key = { hdr.h.a + hdr.h.a : exact; } actions = { NoAction; } }"
    src = program(locals_=locals_, body="t.apply();")
    err = refused(src)
    assert at(err, src, "hdr.h.a + hdr.h.a")
    assert err.msg.startswith("hdr.h.a + hdr.h.a: Complex key expression requires a @name")
    named = locals_.replace(": exact;", ': exact @name("twice");')
    prog = compile_p4_source(program(locals_=named, body="t.apply();"), "t.p4")
    assert [k.name for k in prog.tables["I.t"].keys] == ["twice"]


def test_invalid_lpm_mask_in_const_entries():  # p4c: table-entries-lpm-2.p4
    locals_ = ("table t { key = { hdr.h.a : lpm; } actions = { NoAction; }\n"
               "  const entries = { 0x10 &&& 0xF0 : NoAction(); 0x11 &&& 0xE1 : NoAction(); } }")
    src = program(locals_=locals_, body="t.apply();")
    err = refused(src)
    assert at(err, src, "0x11 &&& 0xE1")
    assert err.msg.startswith("17 &&& 225 invalid mask for LPM key")


def test_entries_before_the_key():  # p4c: table-entries-decl-order.p4
    locals_ = ("table t { const entries = { 1 : NoAction(); }\n"
               "  key = { hdr.h.a : exact; } actions = { NoAction; } }")
    src = program(locals_=locals_, body="t.apply();")
    err = refused(src)
    assert err.loc.line == line_col(src, "const entries")[0]
    assert "Entries list must be after table key" in err.msg


def test_parser_that_never_reaches_accept_or_reject():  # p4c: issue2373.p4
    src = with_parser("state start { pkt.extract(hdr.h); transition next; }\n"
                      "state next { transition select(hdr.h.a) { 1: start; default: next; } }")
    err = refused(src)
    assert at(err, src, "P(packet_in")
    assert err.msg.startswith("parser P: Parser never reaches accept or reject state")


def test_a_table_before_the_action_its_entries_use():
    # P4 declares before use: an action declared after the table is unknown there
    locals_ = ("table t { key = { hdr.h.a: exact; } actions = { set; }\n"
               "  const entries = { 1: set(2); } }\n"
               "action set(bit<8> v) { hdr.h.b = (bit<16>)v; }")
    src = program(locals_=locals_, body="t.apply();")
    err = refused(src)
    assert at(err, src, "set; }")
    assert err.msg.startswith("unknown action 'set'")


def test_priorities_on_a_table_without_ternary_range_or_optional_keys():
    # p4c: init-entries-error1-bmv2.p4
    locals_ = ("table t { key = { hdr.h.a : exact; } actions = { NoAction; }\n"
               "  entries = { priority = 10: 1 : NoAction(); } }")
    src = program(locals_=locals_, body="t.apply();")
    err = refused(src)
    assert err.loc.line == line_col(src, "table t { key")[0]
    assert err.msg.startswith("key match type does not require priorities, but some are "
                              "specified")


def test_an_optional_key_entry_with_a_mask():
    # p4c: table-entries-optional-2-bmv2.p4
    locals_ = ("table t { key = { hdr.h.a : optional; hdr.h.b : optional; }\n"
               "  actions = { NoAction; }\n"
               "  const entries = { (0x0a, default) : NoAction();\n"
               "                    (0xaa &&& 0xf0, 0x11) : NoAction(); } }")
    src = program(locals_=locals_, body="t.apply();")
    err = refused(src)
    assert at(err, src, "0xaa &&& 0xf0")
    assert "invalid key expression" in err.msg
    # value and default stay valid optional keysets
    compile_p4_source(program(locals_=locals_.replace("0xaa &&& 0xf0", "0xaa"),
                              body="t.apply();"), "t.p4")


def test_a_shift_by_a_value_of_a_type_declaration():
    # p4c: issue5094-type-bmv2.p4
    top = "type bit<8> amount_t;\nheader sh_t { bit<32> v; amount_t n; }"
    locals_ = "sh_t sh;"
    src = program(top=top, locals_=locals_, body="sh.v = sh.v << sh.n;")
    err = refused(src)
    assert at(err, src, "sh.n;")
    assert err.msg.startswith("the right operand of '<<' must be bit<S>")
    # cast to its bit<S> the shift is fine, as in p4c
    compile_p4_source(program(top=top, locals_=locals_,
                              body="sh.v = sh.v << (bit<8>)sh.n;"), "t.p4")
