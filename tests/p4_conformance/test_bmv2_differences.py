"""Every known difference between netweft's switch and BMv2 (docs/bmv2-differences.md),
each pinned: what the BMv2 profile (``check_bmv2``, ``p4check --target bmv2``) says,
and what the embedded switch does."""

from __future__ import annotations

import logging

import pytest

from netweft.emulation.switch import SoftSwitch
from netweft.emulation.v1model.match_table import TableError
from netweft.p4.compiler import compile_p4_source
from netweft.p4.compiler.bmv2_target import ERROR, WARNING, check_bmv2
from netweft.testbed.command_line import main

TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> op; bit<8> k; bit<8> r; bit<8> s; }}
header x_t {{ bit<8> v; }}
struct hs {{ h_t h; x_t x; }}
struct m_t {{ bit<8> kept; }}
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {{
    state start {{ p.extract(hdr.h); transition select(hdr.h.op) {{ 9: extra; 1..8: accept; }} }}
    state extra {{ p.extract(hdr.x); transition accept; }}
}}
control V(inout hs hdr, inout m_t m) {{ apply {{ }} }}
{controls}
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {{
{locals}
    apply {{
        sm.egress_spec = 1;
{body}
    }}
}}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout hs hdr, inout m_t m) {{ apply {{ }} }}
control D(packet_out p, in hs hdr) {{ apply {{ p.emit(hdr.h); p.emit(hdr.x); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

TABLE = """
    action set(bit<8> v) { hdr.h.r = v; }
    action other() { hdr.h.r = 0xEE; }
    table t { key = { hdr.h.k : exact; } actions = { set; other; NoAction; }
              default_action = NoAction(); }
"""


def program(body: str = "", locals_: str = "", controls: str = "", name: str = "diff.p4"):
    return compile_p4_source(TEMPLATE.format(body=body, locals=locals_, controls=controls), name)


def source(body: str = "", locals_: str = "", controls: str = "") -> str:
    return TEMPLATE.format(body=body, locals=locals_, controls=controls)


def line_of(src: str, text: str, nth: int = 1) -> int:
    """1-based line of the ``nth`` line containing ``text``."""
    hits = [i for i, line in enumerate(src.split("\n"), 1) if text in line]
    return hits[nth - 1]


def only(found, severity: str):
    return [d for d in found if d.severity == severity]


# ---------------------------------------------------------------- a table applied twice

TWICE = "if (t.apply().hit) { hdr.h.s = 1; }\n switch (t.apply().action_run) { set: { hdr.h.s = hdr.h.s + 2; } }"


def test_table_applied_twice_with_different_successors_is_refused_for_bmv2():
    found = check_bmv2(program(TWICE, TABLE))
    [err] = only(found, ERROR)
    assert err.message.startswith(
        "Program is not supported by this target, because table I.t has multiple successors")
    line = line_of(source(TWICE, TABLE), "switch (t.apply()")
    assert (err.loc.file, err.loc.line) == ("diff.p4", line)
    assert str(err).startswith(f"diff.p4:{line}:")


def test_table_applied_twice_runs_on_netweft_and_warns_once(caplog):
    prog = program(TWICE, TABLE, name="twice.p4")
    with caplog.at_level(logging.WARNING, logger="netweft.switch"):
        sw = SoftSwitch(prog)
        SoftSwitch(prog)
    warnings = [r.getMessage() for r in caplog.records if r.name == "netweft.switch"]
    assert len(warnings) == 1
    line = line_of(source(TWICE, TABLE), "switch (t.apply()")
    assert warnings[0].startswith(f"twice.p4:{line}:") and "table applied more than once" in warnings[0]
    sw.table_add("I.t", {"hdr.h.k": 5}, "I.set", {"v": 7})
    # both applications ran: hit set s = 1, then the switch on set added 2
    assert sw.process(0, bytes([1, 5, 0, 0])) == [(1, bytes([1, 5, 7, 3]))]


def test_table_applied_twice_with_the_same_successor_is_accepted():
    # p4c merges the two CFG nodes: both continue with the same statement
    body = "if (hdr.h.op == 1) { t.apply(); } else { t.apply(); }\n hdr.h.s = 4;"
    assert only(check_bmv2(program(body, TABLE)), ERROR) == []


def test_a_sub_control_applied_twice_applies_its_table_twice():
    controls = """control Sub(inout bit<8> x) {
    action inc() { x = x + 1; }
    table u { actions = { inc; } default_action = inc(); }
    apply { u.apply(); }
}"""
    body = "sub.apply(hdr.h.r);\n hdr.h.s = 9;\n sub.apply(hdr.h.r);"
    prog = program(body, "    Sub() sub;", controls)
    [err] = only(check_bmv2(prog), ERROR)
    assert "table I.sub.u has multiple successors" in err.message
    assert SoftSwitch(prog).process(0, bytes([1, 0, 0, 0])) == [(1, bytes([1, 0, 2, 9]))]


# ---------------------------------------------------------------- const entries with priorities

PRIORITY_TABLE = """
    action set(bit<8> v) {{ hdr.h.r = v; }}
    table t {{ key = {{ hdr.h.k : ternary; }} actions = {{ set; }}
              const entries = {{
                  {first} 0x05 &&& 0x0F : set(1){ann1};
                  {second} 0x05 : set(2){ann2};
              }} }}
"""


def test_priorities_in_const_entries_are_refused_for_bmv2_and_honoured_by_netweft():
    table = PRIORITY_TABLE.format(first="priority = 1:", second="priority = 5:", ann1="",
                                  ann2="")
    prog = program("t.apply();", table)
    [err] = only(check_bmv2(prog), ERROR)
    assert err.message.startswith("Table with 'const' entries cannot have priorities")
    assert err.loc.line == line_of(source("t.apply();", table), "priority = 1")
    # netweft: larger wins, so the exact-looking second entry (priority 5) matches
    assert SoftSwitch(prog).process(0, bytes([1, 5, 0, 0])) == [(1, bytes([1, 5, 2, 0]))]


def test_priority_annotation_is_a_warning_for_bmv2_and_honoured_by_netweft():
    table = PRIORITY_TABLE.format(first="", second="", ann1=" @priority(2)",
                                  ann2=" @priority(1)")
    prog = program("t.apply();", table)
    found = check_bmv2(prog)
    assert only(found, ERROR) == []
    assert [d.construct for d in only(found, WARNING)] == ["@priority on a const entry"] * 2
    # the annotation ranks (smaller wins), as in the BMv2 JSON p4c-bm2-ss writes: entry 2
    assert SoftSwitch(prog).process(0, bytes([1, 5, 0, 0])) == [(1, bytes([1, 5, 2, 0]))]


# ---------------------------------------------------------------- deprecated externs

@pytest.mark.parametrize("call,name", [
    ("clone3(CloneType.I2E, 32w5, { m.kept });", "clone3"),
    ("resubmit({ m.kept });", "resubmit"),
    ("recirculate({ m.kept });", "recirculate"),
])
def test_deprecated_externs_are_refused_for_bmv2_and_run_on_netweft(call, name):
    prog = program(f"if (sm.instance_type == 0 && hdr.h.op == 1) {{ {call} }}")
    [err] = only(check_bmv2(prog), ERROR)
    assert err.message.startswith(f"{name}: unknown extern function")
    assert err.construct == f"deprecated extern {name}"
    sw = SoftSwitch(prog)
    sw.clone_session_set(5, 3)
    out = sw.process(0, bytes([1, 0, 0, 0]))
    # netweft runs them: clone3 sends a copy to session 5's port as well
    assert sorted(port for port, _ in out) == ([1, 3] if name == "clone3" else [1])


# ---------------------------------------------------------------- a parameter named key

LEAF = """{ctor_decl}control Leaf(in bit<8> {param}, inout bit<8> out_value){ctor} {{
    action set(bit<8> v) {{ out_value = v; }}
    table t {{ key = {{ {param} : exact; }} actions = {{ set; NoAction; }}
              default_action = NoAction(); size = 16; }}
    apply {{ t.apply(); }}
}}"""


@pytest.mark.parametrize("param, ctor, ctor_decl, instance", [
    ("key", "", "", "Leaf() leaf;"),
    ("k", "(bit<8> size)", "", "Leaf(8w4) leaf;"),
], ids=["apply parameter key", "constructor parameter size"])
def test_table_property_named_as_a_parameter_is_refused_as_by_p4c(param, ctor, ctor_decl,
                                                                  instance, tmp_path, capsys):
    controls = LEAF.format(param=param, ctor=ctor, ctor_decl=ctor_decl)
    src = TEMPLATE.format(body="leaf.apply(hdr.h.k, hdr.h.r);", locals=f"    {instance}",
                          controls=controls)
    name = "key" if param == "key" else "size"
    [err] = check_bmv2(compile_p4_source(src, "shadow.p4"))
    line = line_of(src, "table t {") + (0 if name == "key" else 1)
    assert (err.severity, err.loc.line) == (ERROR, line)
    assert err.message.startswith(f"declaration of '{name}' shadows a parameter '{name}'")
    path = tmp_path / "shadow.p4"
    path.write_text(src)
    assert main(["p4check", "-q", "--target", "bmv2", str(path)]) != 0
    assert f"declaration of '{name}' shadows a parameter" in capsys.readouterr().err


def test_table_property_named_as_another_declaration_draws_the_warning_only(tmp_path, capsys):
    controls = LEAF.format(param="k", ctor="", ctor_decl="const bit<8> size = 3;\n")
    src = TEMPLATE.format(body="leaf.apply(hdr.h.k, hdr.h.r);", locals="    Leaf() leaf;",
                          controls=controls)
    [warn] = check_bmv2(compile_p4_source(src, "size.p4"))
    line = line_of(src, "default_action = NoAction(); size = 16;")
    assert (warn.severity, warn.loc.line) == (WARNING, line)
    assert str(warn).startswith(f"size.p4:{line}:")
    assert warn.message.startswith("'size' shadows 'size'")
    path = tmp_path / "size.p4"
    path.write_text(src)
    assert main(["p4check", "-q", "--target", "bmv2", str(path)]) == 0
    assert "warning: 'size' shadows 'size'" in capsys.readouterr().err


# ---------------------------------------------------------------- select with no match

def test_select_without_match_sets_no_match_unless_bmv2_behaviour_is_asked_for():
    body = "hdr.h.s = (bit<8>)(sm.parser_error == error.NoMatch ? 8w0xAA : 8w0xBB);"
    prog = program(body)
    # op 0 matches no case (9, 1..8) and there is no default
    assert SoftSwitch(prog).process(0, bytes([0, 0, 0, 0])) == [(1, bytes([0, 0, 0, 0xAA]))]
    bmv2 = SoftSwitch(prog, bmv2_select_no_match=True)
    assert bmv2.process(0, bytes([0, 0, 0, 0])) == [(1, bytes([0, 0, 0, 0xBB]))]
    # a matching case is unaffected
    assert bmv2.process(0, bytes([9, 0, 0, 0, 3])) == [(1, bytes([9, 0, 0, 0xBB, 3]))]


# ---------------------------------------------------------------- @defaultonly / @tableonly

def test_defaultonly_and_tableonly_are_enforced_by_netweft():
    table = """
    action a(bit<8> v) { hdr.h.r = v; }
    action b(bit<8> v) { hdr.h.s = v; }
    table t { key = { hdr.h.k : exact; } actions = { @defaultonly a; @tableonly b; }
              default_action = a(0); }
"""
    prog = program("t.apply();", table)
    assert check_bmv2(prog) == []  # a compile-time profile cannot see control-plane use
    sw = SoftSwitch(prog)
    with pytest.raises(TableError, match="@defaultonly"):
        sw.tables["I.t"].add({"hdr.h.k": 1}, "I.a", [1])
    with pytest.raises(TableError, match="@tableonly"):
        sw.tables["I.t"].set_default("I.b", [1])


# ---------------------------------------------------------------- multicast copy order

def test_multicast_copies_leave_in_the_groups_order():
    prog = program("sm.mcast_grp = 7;")
    sw = SoftSwitch(prog)
    sw.mc_group_set(7, [(4, 1), (2, 2), (3, 3)])
    out = sw.process(0, bytes([1, 0, 0, 0]))
    assert [port for port, _ in out] == [4, 2, 3]


# ---------------------------------------------------------------- the commands refuse the same

@pytest.mark.parametrize("command", [["p4check", "-q", "--target", "bmv2"], ["netweft-p4c"]])
def test_p4check_bmv2_and_netweft_p4c_refuse_what_p4c_bm2_ss_refuses(tmp_path, capsys,
                                                                    command):
    from netweft.testbed.commands.compile import p4c_main

    src = source(TWICE + "\n if (hdr.h.op == 2) { resubmit({ m.kept }); }", TABLE)
    path = tmp_path / "bad.p4"
    path.write_text(src)
    if command == ["netweft-p4c"]:
        rc = p4c_main(["-o", str(tmp_path / "bad.json"), str(path)])
    else:
        rc = main(command + [str(path)])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"{path}:{line_of(src, 'switch (t.apply()')}:" in err
    assert "has multiple successors" in err
    assert f"{path}:{line_of(src, 'resubmit(')}:" in err and "resubmit: unknown extern" in err
    assert not (tmp_path / "bad.json").exists()
    # the embedded switch's own check (the default target) accepts the program
    assert main(["p4check", "-q", str(path)]) == 0


# ---------------------------------------------------------------- clones in the wrong block

def test_an_i2e_clone_outside_ingress_is_refused_for_bmv2():
    src = source().replace(
        "control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }",
        "control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {\n"
        "    apply { clone(CloneType.I2E, 32w5); clone(CloneType.E2E, 32w5); } }")
    prog = compile_p4_source(src, "clone.p4")
    [err] = only(check_bmv2(prog), ERROR)
    assert err.message.startswith("'clone(I2E, ...) not invoked in ingress")
    assert (err.loc.line, err.construct) == (line_of(src, "clone(CloneType.I2E"),
                                             "I2E clone in egress")
    # netweft runs it; its copy follows the E2E rules
    sw = SoftSwitch(prog)
    sw.clone_session_set(5, 3)
    assert 1 in [port for port, _ in sw.process(0, bytes([1, 0, 0, 0]))]


# ---------------------------------------------------------------- for-in loops

def test_for_in_loops_are_refused_for_bmv2():
    body = ("for (bit<8> i in 1 .. 3) { hdr.h.s = hdr.h.s + i; }\n"
            " for (bit<8> j = 0; j < 2; j = j + 1) { hdr.h.r = hdr.h.r + 1; }")
    prog = program(body)
    [err] = only(check_bmv2(prog), ERROR)
    assert err.message.startswith("BMV2 does not support for-in loops")
    assert err.loc.line == line_of(source(body), "for (bit<8> i in")
    # netweft runs both loops
    assert SoftSwitch(prog).process(0, bytes([1, 0, 0, 0])) == [(1, bytes([1, 0, 2, 6]))]


# ---------------------------------------------------------------- switch in actions, select ranges

def test_a_switch_statement_in_an_action_is_refused_for_bmv2():
    locals_ = ("    action pick() { switch (hdr.h.op) { 1: { hdr.h.r = 9; } "
               "default: { hdr.h.r = 8; } } }")
    prog = program("pick();", locals_)
    [err] = only(check_bmv2(prog), ERROR)
    assert err.message.startswith("switch statements not supported in actions on this target")
    assert err.loc.line == line_of(source("pick();", locals_), "action pick()")
    assert SoftSwitch(prog).process(0, bytes([1, 0, 0, 0])) == [(1, bytes([1, 0, 9, 0]))]


def test_a_select_range_with_a_variable_end_is_refused_for_bmv2():
    src = source().replace("9: extra; 1..8: accept;", "9: extra; 1 .. hdr.h.k: accept;")
    prog = compile_p4_source(src, "range.p4")
    [err] = only(check_bmv2(prog), ERROR)
    assert err.message.startswith("Range boundaries must be a compile-time constants.")
    assert err.loc.line == line_of(src, "1 .. hdr.h.k")
    # netweft evaluates the end per packet: op 3 <= k 5 matches
    sw = SoftSwitch(prog)
    out = sw.process(0, bytes([3, 5, 0, 0]))
    assert out == [(1, bytes([3, 5, 0, 0]))]


# ---------------------------------------------------------------- registers of structs, applies in arguments

def test_reading_a_register_of_a_struct_is_refused_for_bmv2():
    controls = "struct pair_t { bit<8> a; bit<8> b; }"
    locals_ = "    register<pair_t>(4) pairs;\n    register<bit<8>>(4) plain;\n    pair_t p;"
    body = "        pairs.read(p, 0);\n        plain.read(hdr.h.s, 1);"
    src = source(body, locals_, controls)
    [err] = only(check_bmv2(compile_p4_source(src, "reg.p4")), ERROR)
    assert err.message.startswith("p: writing to a structure is not supported on this target")
    assert (err.loc.line, err.loc.col) == (line_of(src, "pairs.read"),
                                           src.split("\n")[line_of(src, "pairs.read") - 1]
                                           .index("p, 0") + 1)


def test_a_table_applied_in_an_action_argument_is_refused_for_bmv2():
    body = "        set(t.apply().hit ? 8w1 : 8w2);"
    src = source(body, TABLE)
    [err] = only(check_bmv2(compile_p4_source(src, "arg.p4")), ERROR)
    assert err.message.startswith("t.apply(): table invocation in action argument")
    assert err.loc.line == line_of(src, "set(t.apply()")
    # the same test outside an action's argument is fine
    plain = source("        if (t.apply().hit) { set(1); }", TABLE)
    assert only(check_bmv2(compile_p4_source(plain, "ok.p4")), ERROR) == []
