"""Front-end behaviour that programs written for p4c rely on.

Each test isolates one thing p4c accepts (or means) that real v1model programs use:
p4c's include guards, fields of older v1model versions, and so on.
"""

from __future__ import annotations

import pytest

from netweft.p4.compiler import P4Error, compile_p4_source

from .conftest import SKELETON, in_ingress
from .test_typecheck import walk


def test_core_and_v1model_define_p4cs_include_guards():
    body = """
#ifndef _CORE_P4_
#error "no _CORE_P4_"
#endif
#ifndef _V1_MODEL_P4_
#error "no _V1_MODEL_P4_"
#endif
"""
    # the #error directives would raise P4Error if a guard were missing
    assert in_ingress(top=body).source_path == "t.p4"


def test_error_directive_fires_without_the_guard():
    with pytest.raises(P4Error, match="no such guard"):
        in_ingress(top='\n#ifndef _NO_SUCH_GUARD_\n#error "no such guard"\n#endif\n')


def test_obsolete_standard_metadata_fields_of_older_v1model_compile():
    prog = in_ingress(body="sm.drop = 1; sm.clone_spec = 5; sm.recirculate_port = 2;")
    fields = [f.name for f in prog.struct_types["standard_metadata_t"].fields]
    assert {"drop", "clone_spec", "recirculate_port"} <= set(fields)


def test_unknown_standard_metadata_field_is_still_an_error():
    with pytest.raises(P4Error, match="no field 'no_such_field'"):
        in_ingress(body="sm.no_such_field = 1;")


VARBIT_TOP = "header v_t { bit<8> n; varbit<16> v; }\nstruct vs_t { v_t x; v_t y; }"


def _comparisons(prog) -> list:
    """Every == / != node in the ingress control, in source order."""
    from netweft.p4.compiler import ir
    return [n for n in walk(prog.ingress.decl)
            if isinstance(n, ir.Binary) and n.op in ("==", "!=")]


def test_varbit_values_compare_with_equality_operators():
    prog = in_ingress(top=VARBIT_TOP, locals_="vs_t vs;",
                      body="if (vs.x.v == vs.y.v || vs.x.v != vs.y.v) { sm.egress_spec = 1; }")
    ops = _comparisons(prog)
    assert [c.op for c in ops] == ["==", "!="]
    assert all(type(c.left.type).__name__ == "Type_Varbits" for c in ops)
    assert all(type(c.type).__name__ == "Type_Boolean" for c in ops)


def test_headers_with_varbit_fields_and_stacks_compare():
    prog = in_ingress(top=VARBIT_TOP, locals_="vs_t vs; h_t[2] s1; h_t[2] s2;",
                      body="if (vs.x == vs.y && s1 == s2) { sm.egress_spec = 1; }")
    assert len(_comparisons(prog)) == 2


def test_varbits_of_different_widths_do_not_compare():
    with pytest.raises(P4Error, match="cannot compare"):
        in_ingress(top="header a_t { varbit<8> v; }\nheader b_t { varbit<16> v; }",
                   locals_="a_t a; b_t b;", body="if (a.v == b.v) { sm.egress_spec = 1; }")


def test_extern_instances_still_do_not_compare():
    with pytest.raises(P4Error, match="cannot be compared"):
        in_ingress(locals_="register<bit<8>>(4) r1; register<bit<8>>(4) r2;",
                   body="if (r1 == r2) { sm.egress_spec = 1; }")


STEP_TOP = """
control step_t(inout bit<8> x);
control AddOne(inout bit<8> x) { apply { x = x + 1; } }
control Twice(inout bit<8> x)(step_t s) { apply { s.apply(x); s.apply(x); } }
"""


def _sub_applies(block) -> list:
    """Sub-control/parser apply calls inside ``block`` (a P4Control)."""
    from netweft.p4.compiler import ir
    return [n for n in walk(block)
            if isinstance(n, ir.MethodCallExpression) and n.kind == ir.CALL_APPLY_INSTANCE]


def test_control_instance_is_accepted_as_a_constructor_argument_of_control_type():
    prog = in_ingress(top=STEP_TOP, locals_="AddOne() one; Twice(one) twice;",
                      body="twice.apply(hdr.h.a);")
    twice = next(d for d in prog.ingress.decl.locals if getattr(d, "name", "") == "twice")
    inner = _sub_applies(twice.instantiated)
    # inside Twice, s.apply resolves to the AddOne instance passed in
    assert [c.target.name for c in inner] == ["AddOne", "AddOne"]


def test_control_argument_with_other_apply_parameters_is_rejected():
    top = STEP_TOP + "control Wide(inout bit<16> x) { apply { } }\n"
    with pytest.raises(P4Error, match="parameter 'x' of 'Wide' does not match"):
        in_ingress(top=top, locals_="Wide() w; Twice(w) twice;", body="")


def test_parser_is_rejected_where_a_control_is_expected():
    top = STEP_TOP + "parser Pp(packet_in b) { state start { transition accept; } }\n"
    with pytest.raises(P4Error, match="expected a control of type step_t"):
        in_ingress(top=top, locals_="Pp() pp; Twice(pp) twice;", body="")


def test_direct_invocation_of_a_control_type_creates_a_named_instance():
    top = """
control Count(inout bit<8> x) {
    action inc() { x = x + 1; }
    table t { actions = { inc; } default_action = inc(); }
    apply { t.apply(); }
}"""
    prog = in_ingress(top=top, body="Count.apply(hdr.h.a);")
    # p4c names the anonymous instance like the type, inside the enclosing control
    assert "I.Count.t" in prog.tables
    assert [c.target.name for c in _sub_applies(prog.ingress.decl)] == ["Count"]


def test_direct_invocation_needs_a_control_without_constructor_parameters():
    with pytest.raises(P4Error, match="has constructor parameters"):
        in_ingress(top=STEP_TOP, body="Twice.apply(hdr.h.a);")


def test_header_stack_accepts_a_signed_run_time_index():
    prog = in_ingress(locals_="h_t[3] st;", body="st[hdr.h.s].a = 1;")
    from netweft.p4.compiler import ir
    idx = [n for n in walk(prog.ingress.decl) if isinstance(n, ir.ArrayIndex)]
    assert idx and idx[0].index.type.signed


def test_header_stack_index_must_still_be_an_integer():
    with pytest.raises(P4Error, match="array index must be an integer, not bool"):
        in_ingress(locals_="h_t[3] st;", body="st[true].a = 1;")


def test_legacy_priority_annotation_means_smaller_wins():
    from .test_typecheck import entry_priorities
    entries = ["(1, 1 &&& 1) : a(1) @priority(3);", "(2, 2 &&& 2) : a(2) @priority(1);",
               "(3, 3 &&& 3) : a(3) @priority(2);"]
    prios = entry_priorities("", entries)
    # mirrored into the specification's default reading (larger wins), same ranking
    assert prios == [1, 3, 2]


def test_legacy_priority_entries_without_annotation_rank_by_position():
    from .test_typecheck import entry_priorities
    entries = ["(1, 1 &&& 1) : a(1) @priority(5);", "(2, 2 &&& 2) : a(2);"]
    assert entry_priorities("", entries) == [1, 4]  # BMv2 ranks: 5 and 2 (position)
    assert entry_priorities("largest_priority_wins = false;", entries) == [5, 2]


def test_legacy_priority_cannot_mix_with_priority_syntax():
    from .test_typecheck import entry_priorities
    entries = ["priority = 4: (1, 1 &&& 1) : a(1);", "(2, 2 &&& 2) : a(2) @priority(1);"]
    with pytest.raises(P4Error, match="cannot mix"):
        entry_priorities("", entries)


def _statements(block, kind) -> list:
    from netweft.p4.compiler import ir
    return [n for n in walk(block) if isinstance(n, getattr(ir, kind))]


def test_for_loop_with_declaration_condition_and_updates_is_typed():
    prog = in_ingress(body="""
        bit<8> total = 0;
        for (bit<8> i = 0, j = 1; i < hdr.h.a; i = i + 1, j = j << 1) {
            if (i == 3) { continue; }
            if (j == 0) { break; }
            total = total + i;
        }
        hdr.h.a = total;""".replace("bit<8> i = 0, j = 1", "bit<8> i = 0, bit<8> j = 1"))
    loop = _statements(prog.ingress.decl, "ForStatement")[0]
    assert [d.name for d in loop.init] == ["i", "j"]
    assert type(loop.condition.type).__name__ == "Type_Boolean"
    assert len(loop.updates) == 2
    assert len(_statements(loop.body, "ContinueStatement")) == 1
    assert len(_statements(loop.body, "BreakStatement")) == 1


def test_for_loop_parts_may_be_empty_and_reuse_a_variable():
    prog = in_ingress(locals_="action spin() { bit<8> n = 0; for (; ; ) { n = n + 1; "
                              "if (n == 9) { break; } } hdr.h.a = n; }",
                      body="spin();")
    loop = _statements(prog.actions["I.spin"], "ForStatement")[0]
    assert loop.init == [] and loop.condition is None and loop.updates == []


def test_for_in_over_a_range_a_stack_and_a_list():
    prog = in_ingress(locals_="h_t[3] st;", body="""
        for (bit<8> v in 1 .. hdr.h.a) { hdr.h.b = hdr.h.b + (bit<16>)v; }
        for (h_t e in st) { hdr.h.a = hdr.h.a + e.a; }
        for (bit<16> w in {1, 2, 3}) { hdr.h.b = hdr.h.b + w; }""")
    loops = _statements(prog.ingress.decl, "ForInStatement")
    assert [lp.variable.name for lp in loops] == ["v", "e", "w"]
    rng = loops[0].collection
    assert rng.op == ".." and rng.left.type.width == 8 and rng.right.type.width == 8
    assert [type(c.type).__name__ for c in loops[2].collection.components] == ["Type_Bits"] * 3


def test_for_loop_variable_is_scoped_to_the_loop():
    with pytest.raises(P4Error, match="undeclared name 'i'"):
        in_ingress(body="for (bit<8> i = 0; i < 4; i = i + 1) { } hdr.h.a = i;")


@pytest.mark.parametrize("body, message", [
    ("break;", "'break' outside a for loop"),
    ("if (hdr.h.a == 1) { continue; }", "'continue' outside a for loop"),
    ("for (bit<8> i = 0; i; i = i + 1) { }", "for-loop condition"),
    ("for (bool b in 1 .. 3) { }", "needs a bit<W> or int<W> loop variable"),
    ("for (bit<8> v in hdr.h.b) { }", "needs a range"),
    ("for (bit<8> i = 0; i < 3; i + 1) { }", "must be an assignment, a method call"),
])
def test_bad_for_loops_are_rejected_with_a_message(body, message):
    with pytest.raises(P4Error, match=message):
        in_ingress(body=body)


def test_for_break_and_continue_remain_usable_as_names():
    prog = in_ingress(locals_="bit<8> for; bit<8> break;",
                      body="for = 1; break = for; hdr.h.a = break;")
    assigned = [getattr(a.left, "name", None)
                for a in _statements(prog.ingress.decl.body, "AssignmentStatement")]
    assert assigned == ["for", "break", None]


def _call_args(prog, name: str) -> list:
    from netweft.p4.compiler import ir
    return [n for n in walk(prog.ingress.decl)
            if isinstance(n, ir.MethodCallExpression) and n.method_name == name]


@pytest.mark.parametrize("decl, call, width", [
    ("extern void f<T>(in T a, out T b);", "f(3, meta.x);", 8),
    ("extern void f<T>(in T a, in T b);", "f(3, meta.y);", 16),
    ("extern void f<T>(in T a, in T b);", "f(meta.y, 3);", 16),
])
def test_literal_before_the_argument_that_binds_its_type_variable_gets_that_width(
        decl, call, width):
    prog = in_ingress(top=decl, body=call)
    (c,) = _call_args(prog, "f")
    assert [a.type.width for a in c.bound_args] == [width, width]
    assert c.type_args_resolved[0].width == width


def test_literal_beyond_the_bound_width_is_wrapped_like_other_implicit_casts():
    prog = in_ingress(top="extern void f<T>(in T a, out T b);", body="f(300, meta.x);")
    (c,) = _call_args(prog, "f")
    assert c.bound_args[0].value == 300 % 256


def test_type_variable_bound_twice_to_different_widths_is_an_error():
    with pytest.raises(P4Error, match="cannot implicitly convert bit<16> to bit<8>"):
        in_ingress(top="extern void f<T>(in T a, in T b);", body="f(meta.x, meta.y);")


def test_newtype_is_treated_as_its_underlying_type():
    # decision: netweft is lenient with `type` (p4c would demand casts); programs that
    # p4c accepts (with casts) compile the same, and the back end sees plain bit<W>
    prog = in_ingress(top="type bit<8> Tag_t;", locals_="Tag_t tag;",
                      body="tag = hdr.h.a; hdr.h.a = (bit<8>)tag; tag = (Tag_t)8w3;")
    from netweft.p4.compiler import ir
    tag = [n for n in walk(prog.ingress.decl)
           if isinstance(n, ir.Declaration_Variable) and n.name == "tag"][0]
    assert type(tag.type).__name__ == "Type_Bits" and tag.type.width == 8


@pytest.mark.parametrize("top, message", [
    ("control U(inout bit<8> x)(bit<8> n) { apply { x = x + nothing; } }",
     "undeclared name 'nothing'"),
    ("control U(inout bit<8> x)(bit<8> n) { apply { x = n == 1; } }",
     "type mismatch: expected bit<8>, got bool"),
    ("control ct(inout bit<8> x);\ncontrol U(inout bit<8> x)(ct c) { apply { c.apply(true); } }",
     "not an l-value"),
])
def test_unused_controls_with_constructor_parameters_are_checked(top, message):
    with pytest.raises(P4Error, match=message):
        in_ingress(top=top)


@pytest.mark.parametrize("top", [
    "control U(inout bit<8> x)(bit<8> n) { apply { x = x + n; } }",
    "control U(inout bit<8> x)(bit<32> n) { action a() { x = 1; } "
    "table t { actions = { a; } size = n; } apply { t.apply(); } }",
    "control U(inout bit<8> x)(bit<8> n) { register<bit<8>>((bit<32>)n) r; "
    "apply { r.read(x, 0); } }",
    "control ct(inout bit<8> x);\ncontrol U(inout bit<8> x)(ct c) { apply { c.apply(x); } }",
])
def test_unused_controls_needing_constant_constructor_arguments_still_compile(top):
    prog = in_ingress(top=top)
    assert not any(name.startswith("U.") for name in list(prog.tables) + list(prog.externs))


SER_ENUM_TABLE = """
    action to(bit<9> p) {{ sm.egress_spec = p; }}
    table t {{
        key = {{ (Kind)hdr.h.a : ternary @name("kind"); }}
        actions = {{ to; }}
        const entries = {{ {entry} : to(2); }}
    }}"""


@pytest.mark.parametrize("entry", ["((bit<8>)Kind.B) &&& 0xf0", "Kind.B &&& 0xf0",
                                   "8w0x20 &&& 8w0xf0", "0x20", "Kind.A"])
def test_serializable_enum_keys_accept_values_of_the_underlying_type(entry):
    prog = in_ingress(top="enum bit<8> Kind { A = 0x10, B = 0x20 }",
                      locals_=SER_ENUM_TABLE.format(entry=entry), body="t.apply();")
    (e,) = prog.tables["I.t"].entries
    key = e.keys[0]
    parts = [key.left, key.right] if getattr(key, "op", None) == "&&&" else [key]
    for part in parts:
        t = part.type
        width = t.width if type(t).__name__ == "Type_Bits" else t.underlying.width
        assert type(t).__name__ in ("Type_Bits", "Type_SerEnum") and width == 8


def test_serializable_enum_key_rejects_another_width():
    with pytest.raises(P4Error, match="keyset"):
        in_ingress(top="enum bit<8> Kind { A = 0x10, B = 0x20 }",
                   locals_=SER_ENUM_TABLE.format(entry="16w0x20 &&& 16w0xf0"),
                   body="t.apply();")


def test_static_assert_passes_folds_and_disappears_as_a_statement():
    prog = in_ingress(top='const bool ok = static_assert(V1MODEL_VERSION >= 20180101, "old");',
                      body="static_assert(8 == 8);")
    from netweft.p4.compiler import ir
    assert not [n for n in walk(prog.ingress.decl) if isinstance(n, ir.MethodCallExpression)
                and n.method_name == "static_assert"]


@pytest.mark.parametrize("top, body, message", [
    ('const bool ok = static_assert(1 > 2, "one is not above two");', "",
     "static_assert failed: one is not above two"),
    ("", "static_assert(false);", "static_assert failed: condition is false"),
    ("", "static_assert(hdr.h.a == 8);", "needs a compile-time constant condition"),
])
def test_static_assert_failures_are_compile_errors(top, body, message):
    with pytest.raises(P4Error, match=message):
        in_ingress(top=top, body=body)


def test_list_type_for_extern_parameters_constants_and_for_in():
    top = """extern Tab { Tab(list<bit<16>> init); bit<16> get(in bit<8> i); }
const list<bit<8>> L = {1, 2, 3};"""
    prog = in_ingress(top=top, locals_="Tab({1, 2, 300}) tab;",
                      body="hdr.h.b = tab.get(hdr.h.a);"
                           "for (bit<8> v in L) { hdr.h.a = hdr.h.a + v; }"
                           "for (bit<8> w in (list<bit<8>>){4, 5}) { hdr.h.a = hdr.h.a + w; }")
    init = prog.externs["I.tab"].args[0]
    assert type(init.type).__name__ == "Type_List" and init.type.element.width == 16
    assert [c.value for c in init.components] == [1, 2, 300]
    loops = _statements(prog.ingress.decl, "ForInStatement")
    assert [[c.value for c in lp.collection.components] for lp in loops] == [[1, 2, 3], [4, 5]]


@pytest.mark.parametrize("top, locals_, message", [
    ("", "list<bit<8>> xs;", "list<T> values are compile-time only"),
    ("struct bad_t { list<bit<8>> xs; }", "", "cannot have type list<bit<8>>"),
    ("const list<bit<8>> L = {1, true};", "", "expected bit<8>, got bool"),
])
def test_list_type_misuse_is_rejected(top, locals_, message):
    with pytest.raises(P4Error, match=message):
        in_ingress(top=top, locals_=locals_)


def test_list_stays_usable_as_a_name():
    prog = in_ingress(locals_="bit<8> list = 3;", body="hdr.h.a = list < 4 ? 8w1 : 8w0;")
    assert prog.ingress.decl.locals[0].name == "list"


def skeleton_with(top: str = "", locals_: str = "", body: str = "") -> str:
    return SKELETON.format(top=top, locals=locals_, body=body)


def test_v1model_version_20200408_gives_counter_meter_register_an_index_type():
    src = "#define V1MODEL_VERSION 20200408\n" + skeleton_with(
        locals_="register<bit<8>, bit<4>>(16) r; counter<bit<4>>(16, CounterType.packets) c; "
                "meter<bit<4>>(16, MeterType.packets) mt;",
        body="bit<8> v; r.read(v, hdr.h.a[3:0]); r.write(4w2, v); c.count(4w1); "
             "bit<2> col; mt.execute_meter(4w1, col);")
    prog = compile_p4_source(src, "t.p4")
    widths = {k: [t.width for t in e.type_args] for k, e in prog.externs.items()}
    assert widths == {"I.r": [8, 4], "I.c": [4], "I.mt": [4]}


def test_default_v1model_version_keeps_bit32_indices():
    with pytest.raises(P4Error, match="expects 1 type arguments, got 2"):
        in_ingress(locals_="register<bit<8>, bit<4>>(16) r;")
    prog = in_ingress(locals_="register<bit<8>>(16) r; counter(4, CounterType.bytes) c;",
                      body="r.write(1, 2); c.count(3);")
    assert [len(e.type_args) for e in prog.externs.values()] == [1, 0]


def test_parser_state_without_transition_goes_to_reject():
    # P4-16 12.5: a state with no transition statement transitions to reject
    src = SKELETON.format(top="", locals="", body="").replace(
        "state start { pkt.extract(hdr.h); transition accept; }",
        "state start { pkt.extract(hdr.h); transition select(hdr.h.a) { 1: accept; "
        "default: dead_end; } }\n    state dead_end { }")
    prog = compile_p4_source(src, filename="t.p4")
    parser = next(b.decl for b in prog.blocks.values() if b.decl.name == "P")
    dead_end = next(s for s in parser.states if s.name == "dead_end")
    assert dead_end.select_expression.name == "reject"
    assert dead_end.select_expression.decl.name == "reject"


def test_header_stack_index_of_a_serializable_enum():
    top = ("header e_t { bit<8> v; }\nenum bit<8> Slot_t { FIRST = 0, SECOND = 1 }\n"
           "struct hs_t { e_t[2] e; }")
    prog = in_ingress(top=top, locals_="hs_t hs;",
                      body="Slot_t i = (Slot_t) hdr.h.a; hs.e[i].v = 3;")
    assert prog.source_path == "t.p4"


def test_a_non_integer_index_is_still_refused():
    top = "header e_t { bit<8> v; }\nenum Plain_t { A, B }\nstruct hs_t { e_t[2] e; }"
    with pytest.raises(P4Error, match="array index must be an integer, not Plain_t"):
        in_ingress(top=top, locals_="hs_t hs;", body="hs.e[Plain_t.A].v = 3;")


def test_extern_instantiated_through_a_typedef_name():
    from netweft.p4.compiler.p4info import build_p4info
    top = "typedef bit<12> Slot_t;\ntypedef register<Slot_t> Slots_t;"
    prog = in_ingress(top=top, locals_="Slots_t(64) slots; register<bit<8>>(4) plain;",
                      body="Slot_t v; slots.read(v, 0); plain.write(0, 1);")
    assert prog.externs["I.slots"].extern_type == "register"
    # p4c's P4Info knows an extern instance by the extern's name in its declared type,
    # so the typedef'd one is left out, the plain one is written
    assert [r.preamble.name for r in build_p4info(prog).registers] == ["I.plain"]
