"""Type checking, widths, implicit casts, name resolution and semantic errors."""

from __future__ import annotations

import pytest

from netweft.p4.compiler import P4Error, compile_p4_source, ir
from netweft.p4.compiler.typesys import type_str

from .conftest import SKELETON, in_ingress


def ingress_body(prog) -> list[ir.Node]:
    return prog.ingress.decl.body.components


def stmt(body: str, locals_: str = "", top: str = "", index: int = -1):
    return ingress_body(in_ingress(body, locals_, top))[index]


def test_literal_takes_width_of_the_assigned_field():
    s = stmt("hdr.h.a = 300;")
    assert isinstance(s.right, ir.Constant)
    assert (s.right.value, type_str(s.right.type)) == (44, "bit<8>")


def test_literal_operand_takes_width_of_the_other_operand():
    s = stmt("hdr.h.b = hdr.h.b + 1;")
    assert type_str(s.right.type) == "bit<16>"
    assert isinstance(s.right.right, ir.Constant) and type_str(s.right.right.type) == "bit<16>"


def test_slice_concat_and_cast_types():
    prog = in_ingress("hdr.h.a = hdr.h.c[15:8];\n"
                      "meta.y = hdr.h.a ++ meta.x;\n"
                      "hdr.h.b = (bit<16>) hdr.h.a;\n"
                      "hdr.h.s = (int<8>) hdr.h.a;\n")
    sl, cc, cast, scast = ingress_body(prog)
    assert (sl.right.hi_value, sl.right.lo_value, type_str(sl.right.type)) == (15, 8, "bit<8>")
    assert type_str(cc.right.type) == "bit<16>"
    assert isinstance(cast.right, ir.Cast) and type_str(cast.right.type) == "bit<16>"
    assert type_str(scast.right.type) == "int<8>"


def test_signed_literal_and_negation_fold_with_wrap_around():
    s = stmt("hdr.h.s = -128 - 1;")
    assert isinstance(s.right, ir.Constant)
    assert s.right.value == 127 and type_str(s.right.type) == "int<8>"


def test_constants_defines_and_widths_are_folded():
    prog = in_ingress("meta.y = (bit<16>) K;",
                      top="#define W 6\nconst int N = 2;\n"
                          "const bit<(W * N)> K = (1 << 11) | 3 + N;")
    k = next(o for o in prog.ast.objects if isinstance(o, ir.Declaration_Constant)
             and o.name == "K")
    assert type_str(k.type) == "bit<12>"
    assert k.initializer.value == (1 << 11) | 5
    cast = ingress_body(prog)[-1].right
    assert isinstance(cast, ir.Constant) and cast.value == 2053


def test_serializable_enum_members_carry_values_and_convert_to_bits():
    prog = in_ingress("meta.x = En.B;", top="enum bit<8> En { A = 1, B = 0x20 }")
    s = ingress_body(prog)[-1]
    assert isinstance(s.right, ir.Cast) and type_str(s.right.type) == "bit<8>"
    member = s.right.expr
    assert isinstance(member.decl, ir.SerEnumMember) and member.decl.value == 0x20


def test_errors_are_numbered_in_declaration_order():
    prog = in_ingress("", top="error { Mine, Yours }")
    assert prog.errors[:3] == ["NoError", "PacketTooShort", "NoMatch"]
    assert prog.error_code("Mine") == 7 and prog.error_code("Yours") == 8


def test_method_calls_are_classified():
    locals_ = ("register<bit<8>>(4) r; action a(bit<8> v) { hdr.h.a = v; } "
               "table t { key = { hdr.h.a: exact; } actions = { a; NoAction; } }")
    body = ("if (hdr.h.isValid()) { t.apply(); }\n"
            "r.read(meta.x, 0);\n"
            "mark_to_drop(sm);\n"
            "a(3);\n"
            "hdr.h.setInvalid();\n")
    prog = in_ingress(body, locals_)
    if_, read, drop, act, inval = ingress_body(prog)
    assert if_.condition.kind == ir.CALL_HEADER and if_.condition.method_name == "isValid"
    apply_call = if_.if_true.components[0].call
    assert apply_call.kind == ir.CALL_TABLE_APPLY and apply_call.target.fqn == "I.t"
    assert read.call.kind == ir.CALL_EXTERN_METHOD and read.call.method_name == "read"
    assert read.call.instance.decl.fqn == "I.r"
    assert type_str(read.call.bound_args[1].type) == "bit<32>"   # index widened to bit<32>
    assert drop.call.kind == ir.CALL_EXTERN_FUNCTION and drop.call.target.name == "mark_to_drop"
    assert act.call.kind == ir.CALL_ACTION and act.call.target.fqn == "I.a"
    assert inval.call.kind == ir.CALL_HEADER and inval.call.method_name == "setInvalid"
    parser_extract = prog.parser.decl.state("start").components[0].call
    assert parser_extract.kind == ir.CALL_PACKET and parser_extract.method_name == "extract"


def test_sub_control_instances_are_specialised_with_constructor_arguments():
    top = """control Sub(inout headers hdr)(bit<8> value, bit<32> n) {
    action set() { hdr.h.a = value; }
    table tt { key = { hdr.h.a: exact; } actions = { set; } size = n; }
    apply { tt.apply(); }
}"""
    prog = in_ingress("one.apply(hdr); two.apply(hdr);",
                      locals_="Sub(1, 16) one; @name(\"second\") Sub(2, 32) two;", top=top)
    assert prog.tables["I.one.tt"].size == 16
    assert prog.tables["I.second.tt"].size == 32
    set1 = prog.actions["I.one.set"].body.components[0].right
    set2 = prog.actions["I.second.set"].body.components[0].right
    assert (set1.value, set2.value) == (1, 2)
    call = ingress_body(prog)[0].call
    assert call.kind == ir.CALL_APPLY_INSTANCE and call.target.fqn == "I.one"


def test_table_properties_are_resolved():
    locals_ = """action a(bit<8> v) { hdr.h.a = v; }
    table t {
        key = { hdr.h.a: ternary; hdr.h.b: exact @name("bee"); }
        actions = { a; @defaultonly NoAction; }
        const default_action = NoAction();
        const entries = {
            (0x10 &&& 0xF0, 1): a(5);
            (_, 2): a(6);
        }
        size = 128;
        support_timeout = true;
    }"""
    prog = in_ingress("t.apply();", locals_)
    t = prog.tables["I.t"]
    assert [(k.name, k.match_kind) for k in t.keys] == [("hdr.h.a", "ternary"), ("bee", "exact")]
    assert [r.action.fqn for r in t.action_refs] == ["I.a", "NoAction"]
    assert [r.default_only for r in t.action_refs] == [False, True]
    assert t.default_action.is_const and t.default_action.action_ref.action.fqn == "NoAction"
    assert t.entries_const and t.size == 128
    first, second = t.entries
    assert first.keys[0].op == "&&&" and first.keys[0].right.value == 0xF0
    assert isinstance(second.keys[0], ir.DefaultExpression)
    assert [e.action.args[0].value for e in t.entries] == [5, 6]
    assert first.priority > second.priority  # earlier entries win
    assert t.other_properties["support_timeout"].value.value is True


def test_header_stack_operations_and_unions():
    decls = ("header e_t { bit<8> v; } header_union u_t { h_t h; e_t e; }\n"
             "struct headers { h_t h; e_t[3] st; u_t u; }")
    body = ("hdr.st.push_front(2); hdr.st[0].v = hdr.st[2].v;"
            " if (hdr.u.isValid()) { hdr.u.e.v = 1; }")
    src = SKELETON.format(top="", locals="", body=body).replace(
        "struct headers { h_t h; }", decls).replace(
        "pkt.extract(hdr.h); transition accept;",
        "pkt.extract(hdr.st.next); meta.y = (bit<16>) hdr.st.lastIndex;"
        " transition select(hdr.st.last.v) { 0: accept; default: start; }")
    prog = compile_p4_source(src, "t.p4")
    push, assign, if_ = ingress_body(prog)
    assert push.call.kind == ir.CALL_STACK and push.call.bound_args[0].value == 2
    assert type_str(assign.right.type) == "bit<8>"
    assert if_.condition.kind == ir.CALL_HEADER
    start = prog.parser.decl.state("start")
    assert start.components[0].call.bound_args[0].member == "next"
    assert type_str(start.components[1].right.expr.type) == "bit<32>"
    assert start.select_expression.select.components[0].expr.member == "last"
    for bad in ("hdr.st.last.v = 1;", "meta.y = (bit<16>) hdr.st.lastIndex;"):
        with pytest.raises(P4Error, match="of a header stack may only be used in a parser"):
            compile_p4_source(src.replace("hdr.st.push_front(2);", bad), "t.p4")
    with pytest.raises(P4Error, match="'exit' is not allowed in a parser"):
        compile_p4_source(src.replace("meta.y = (bit<16>)", "exit; meta.y = (bit<16>)"), "t.p4")


def checked_roots(prog):
    """Top-level declarations plus the specialised blocks (control and parser
    declarations in ``prog.ast`` are the unchecked templates)."""
    for obj in prog.ast.objects:
        if not isinstance(obj, (ir.P4Control, ir.P4Parser)):
            yield obj
    for block in prog.blocks.values():
        yield block.decl


def test_every_expression_is_typed_and_every_name_resolved_in_the_corpus(corpus_programs):
    for prog in corpus_programs:
        seen: set[int] = set()
        for node in (n for root in checked_roots(prog) for n in walk(root, seen)):
            if isinstance(node, ir.Expression):
                assert node.type is not None, f"{node.loc}: {type(node).__name__} untyped"
            if isinstance(node, ir.PathExpression):
                assert node.decl is not None, f"{node.loc}: '{node.name}' unresolved"
            if isinstance(node, ir.MethodCallExpression):
                assert node.kind is not None, f"{node.loc}: call not classified"
            if isinstance(node, ir.Type_Bits):
                assert node.width_expr is None or node.width >= 0


def walk(node, seen=None):
    """Every node reachable through dataclass fields, excluding back references."""
    import dataclasses
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    yield node
    for f in dataclasses.fields(node):
        if not f.repr or f.name in ("type", "loc", "annotations"):
            continue
        v = getattr(node, f.name)
        items = v if isinstance(v, list) else [v]
        for item in items:
            if isinstance(item, ir.Node) and not isinstance(item, ir.Type):
                yield from walk(item, seen)
    # specialised instances live outside the top-level list
    for attr in ("instantiated",):
        inst = getattr(node, attr, None)
        if isinstance(inst, ir.Node):
            yield from walk(inst, seen)


def anchor_loc(src: str, anchor: str, nth: int = 0) -> tuple[int, int]:
    pos = -1
    for _ in range(nth + 1):
        pos = src.index(anchor, pos + 1)
    line = src.count("\n", 0, pos) + 1
    col = pos - (src.rfind("\n", 0, pos) + 1) + 1
    return line, col


SEMANTIC_ERRORS = [
    # (body, locals, top, anchor text, message)
    ("hdr.h.a = hdr.h.a + hdr.h.b;", "", "", "+ hdr.h.b",
     "operands of '+' have different types: bit<8> and bit<16> "
     "(P4 has no implicit width conversion; use a cast)"),
    ("hdr.h.a = nosuch;", "", "", "nosuch", "undeclared name 'nosuch'"),
    ("hdr.h.zz = 1;", "", "", "hdr.h.zz", "'h_t' has no field 'zz'"),
    ("hdr.h.a = hdr.h.b;", "", "", "hdr.h.b;",
     "assignment: cannot implicitly convert bit<16> to bit<8> "
     "(widths/signedness differ; use a cast)"),
    ("hdr.h.a = hdr.h.c[40:33];", "", "", "hdr.h.c[40:33]", "invalid slice [40:33] of bit<32>"),
    ("hdr.h.a = hdr.h.c[meta.x:0];", "", "", "hdr.h.c[meta.x:0]",
     "slice bounds must be compile-time constants"),
    ("if (hdr.h.a) { }", "", "", "hdr.h.a)",
     "if condition: type mismatch: expected bool, got bit<8>"),
    ("", "action a(in bit<8> v) { v = 1; }", "", "v = 1",
     "cannot assign to 'v': it is an 'in' parameter"),
    ("", "action a(bit<8> v) { v = 1; }", "", "v = 1",
     "cannot assign to 'v': it is a directionless parameter"),
    ("hdr.h.a = 1 / 0;", "", "", "/ 0", "division by zero"),
    ("hdr.h.frob();", "", "", "hdr.h.frob", "a value of type h_t has no method 'frob'"),
    ("mark_to_drop(sm, sm);", "", "", "mark_to_drop",
     "no overload of 'mark_to_drop' takes 2 arguments"),
    ("hdr.h.setValid(1);", "", "", "hdr.h.setValid", "setValid() takes no arguments"),
    ("", "action a() { } table t { key = { hdr.h.a: fancy; } actions = { a; } }", "",
     "hdr.h.a: fancy", "unknown match kind 'fancy'"),
    ("", "action a() { } action b() { } table t { actions = { a; } default_action = b(); }",
     "", "b();", "default action 'b' is not in the actions of table 't'"),
    ("", "action a() { } action a() { exit; }", "", "a() { exit", "duplicate declaration of 'a' "
     "(previous at t.p4:12:8)"),
    ("hdr.h.a = meta.x &&& 3;", "", "", "&&&",
     "expected ';' after assignment but found '&&&'"),
    ("", "action a() { return 1; }", "", "return",
     "return with a value outside a function returning a value"),
    ("hdr.h.a = (bit<8>) hdr.h;", "", "", "(bit<8>) hdr.h",
     "cannot cast h_t to bit<8>"),
    ("hdr.h.s = hdr.h.s / 2;", "", "", "/ 2", "'/' is not supported on signed int<8> values"),
    ("meta.x = meta.x << hdr.h.s;", "", "", "<<",
     "shift amount must be an unsigned integer, not int<8>"),
    ("meta.y = 1 ++ meta.x;", "", "", "++",
     "operands of '++' must be bit<W> or int<W> with known widths, not int"),
    ("", "g v;", "struct g<T> { T f; }", "g v",
     "generic type 'g' needs type arguments (g<...>)"),
    ("", "", "header bad_t { h_t inner; }", "inner",
     "header field 'inner' has type h_t; header fields must be bit<W>, int<W>, varbit<W>, "
     "bool, a serializable enum or a struct of those"),
    ("", "", "const bit<8> C = hdr;", "hdr;", "undeclared name 'hdr'"),
    ("", "Zork() z;", "", "Zork", "unknown type 'Zork'"),
    ("", "action a() { } table t { actions = { a; } } action b() { t.apply(); }", "",
     "t.apply(); }", "table 't' cannot be applied inside an action"),
    ("", "G<bit<8>, bit<16>>() g;", "control G<T>(inout T x) { apply { } }", "g;",
     "'G' expects 1 type arguments, got 2"),
    ("", "register(4) r;", "", "r;", "cannot infer type argument 'T' of extern 'register'; "
     "write register<...>(...)"),
]


@pytest.mark.parametrize("body, locals_, top, anchor, message", SEMANTIC_ERRORS)
def test_semantic_errors_have_exact_locations(body, locals_, top, anchor, message):
    src = SKELETON.format(top=top, locals=locals_, body=body)
    with pytest.raises(P4Error) as info:
        compile_p4_source(src, "t.p4")
    line, col = anchor_loc(src, anchor)
    assert str(info.value) == f"t.p4:{line}:{col}: {message}"


def test_parser_errors_unknown_state_and_missing_start():
    src = SKELETON.format(top="", locals="", body="").replace(
        "transition accept;", "transition nowhere;")
    with pytest.raises(P4Error) as info:
        compile_p4_source(src, "t.p4")
    line, col = anchor_loc(src, "nowhere")
    assert str(info.value) == f"t.p4:{line}:{col}: unknown parser state 'nowhere'"
    src = SKELETON.format(top="", locals="", body="").replace("state start", "state begin")
    with pytest.raises(P4Error) as info:
        compile_p4_source(src, "t.p4")
    line, col = anchor_loc(src, "P(")
    assert str(info.value) == f"t.p4:{line}:{col}: parser 'P' has no 'start' state"


def test_unsupported_package_is_named():
    src = ("#include <core.p4>\nparser Pr(); package Pkg(Pr p);\n"
           "parser MyP() { state start { transition accept; } }\nPkg(MyP()) main;\n")
    with pytest.raises(P4Error) as info:
        compile_p4_source(src, "t.p4")
    assert str(info.value) == ("t.p4:4:12: unsupported architecture package 'Pkg' "
                               "(netweft supports v1model's V1Switch)")


def test_block_signature_mismatch_is_reported():
    src = SKELETON.format(top="", locals="", body="").replace(
        "control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm)",
        "control E(inout headers hdr, inout meta_t meta)")
    with pytest.raises(P4Error, match="'E' has 2 parameters but V1Switch expects 3"):
        compile_p4_source(src, "t.p4")


PRIORITY_TABLE = """action a(bit<8> v) {{ hdr.h.a = v; }}
    table t {{
        key = {{ hdr.h.a: exact; hdr.h.b: ternary; }}
        actions = {{ a; }}
        {props}
        entries = {{
{entries}
        }}
    }}"""


def entry_priorities(props: str, entries: list[str]) -> list[int | None]:
    locals_ = PRIORITY_TABLE.format(props=props, entries="\n".join(entries))
    return [e.priority for e in in_ingress("t.apply();", locals_).tables["I.t"].entries]


def test_entry_priorities_follow_the_specification_example():
    entries = ["const priority=10: (0x01, 0x1111 &&& 0xF) : a(1);",
               "(0x02, 0x1181) : a(2);",
               "(0x03, 0x1000 &&& 0xF000) : a(3);",
               "const (0x04, 0x0210 &&& 0x02F0) : a(4);",
               "priority=40: (0x04, 0x0010 &&& 0x02F0) : a(5);",
               "(0x06, _) : a(6);"]
    props = "largest_priority_wins = false; priority_delta = 10;"
    assert entry_priorities(props, entries) == [10, 20, 30, 40, 40, 50]


def test_implicit_priorities_rank_earlier_entries_higher():
    entries = ["(1, 1 &&& 1) : a(1);", "(2, 2) : a(2);", "(3, _) : a(3);"]
    assert entry_priorities("", entries) == [3, 2, 1]
    assert entry_priorities("priority_delta = 5;", entries) == [11, 6, 1]
    assert entry_priorities("largest_priority_wins = false;", entries) == [1, 2, 3]
    assert entry_priorities("", ["priority = 7: (1, 1) : a(1);", "(2, 2) : a(2);"]) == [7, 6]


def test_first_entry_needs_a_priority_when_others_have_one():
    entries = ["(1, 1) : a(1);", "priority = 3: (2, 2) : a(2);"]
    with pytest.raises(P4Error, match="the first entry must have one too"):
        entry_priorities("", entries)


def test_generic_control_instances_bind_their_type_parameters():
    top = """control Inc<T>(inout T v)(T step) {
    apply { v = v + step; }
}"""
    prog = in_ingress("i8.apply(meta.x); i16.apply(meta.y);",
                      locals_="Inc<bit<8>>(1) i8; Inc<bit<16>>(300) i16;", top=top)
    i8, i16 = (d.instantiated for d in prog.ingress.decl.locals)
    assert type_str(i8.params[0].type) == "bit<8>" and type_str(i16.params[0].type) == "bit<16>"
    add8 = i8.body.components[0].right
    add16 = i16.body.components[0].right
    assert (add8.right.value, type_str(add8.type)) == (1, "bit<8>")
    assert (add16.right.value, type_str(add16.type)) == (300, "bit<16>")


def test_priority_annotation_on_entries_is_honoured():
    # p4c's BMv2 back end: @priority(n) as is, others their 1-based position; smaller wins
    entries = ["(1, 1 &&& 1) : a(1) @priority(30);", "(2, 2) : a(2);"]
    assert entry_priorities("", entries) == [1, 29]


def test_value_sets_of_scalars_and_structs_match_select_keys():
    src = SKELETON.format(top="struct one_t { bit<8> f; } struct two_t { bit<8> a; bit<16> b; }",
                          locals="", body="")
    src = src.replace(
        "state start { pkt.extract(hdr.h); transition accept; }",
        """value_set<bit<8>>(2) plain; value_set<one_t>(4) one; value_set<two_t>(8) two;
    state start { pkt.extract(hdr.h); transition select(hdr.h.a) {
        plain: s2; one: s2; default: accept; } }
    state s2 { transition select(hdr.h.a, hdr.h.b) { two: accept; default: reject; } }""")
    prog = compile_p4_source(src, "t.p4")
    assert [(v.fqn, v.size) for v in prog.value_sets.values()] == [
        ("P.plain", 2), ("P.one", 4), ("P.two", 8)]
    cases = prog.parser.decl.state("start").select_expression.cases
    assert [c.keyset.decl.name for c in cases[:2]] == ["plain", "one"]
    bad = src.replace("plain: s2; one: s2;", "two: s2;")
    with pytest.raises(P4Error, match="value_set 'two' has type two_t but the select key "
                                      "has type bit<8>"):
        compile_p4_source(bad, "t.p4")


def test_legacy_table_parentheses_and_in_for_inout_block_parameters():
    src = SKELETON.format(top="", locals="action a() { } table t() { actions = { a; } }",
                          body="t.apply();")
    src = src.replace("control VC(inout headers hdr, inout meta_t meta)",
                      "control VC(in headers hdr, inout meta_t meta)")
    prog = compile_p4_source(src, "t.p4")
    assert "I.t" in prog.tables and prog.verify_checksum.params[0].direction == "in"
    with pytest.raises(P4Error, match="parameter 'meta' of 'VC' must be 'inout'"):
        compile_p4_source(src.replace("control VC(in headers hdr, inout meta_t meta)",
                                      "control VC(in headers hdr, out meta_t meta)"), "t.p4")


@pytest.mark.parametrize("body, locals_, message", [
    ("sm.egres_spec = 1;", "",
     "'standard_metadata_t' has no field 'egres_spec' (did you mean 'egress_spec'?)"),
    ("hdr.h.a = hdrr.h.a;", "", "undeclared name 'hdrr' (did you mean 'hdr'?)"),
    ("mark_to_dro(sm);", "", "undeclared name 'mark_to_dro' (did you mean 'mark_to_drop'?)"),
    ("", "action fwd() { } table t { key = { hdr.h.a: exakt; } actions = { fwd; } }",
     "unknown match kind 'exakt' (did you mean 'exact'?)"),
    ("", "action fwd() { } table t { key = { hdr.h.a: exact; } actions = { fwdd; } }",
     "unknown action 'fwdd' (did you mean 'fwd'?)"),
    ("sm.parser_error = error.NoMach;", "", "unknown error 'NoMach' (did you mean 'NoMatch'?)"),
    ("", "register<bit<8>>(4) r; action a() { r.wirte(0, 1); }",
     "extern 'register' has no method 'wirte' (did you mean 'write'?)"),
])
def test_unknown_names_suggest_the_closest_one(body, locals_, message):
    with pytest.raises(P4Error) as info:
        in_ingress(body, locals_)
    assert str(info.value).split(": ", 1)[1] == message


def test_dots_initialisers_fill_default_values():
    top = ("enum Shade { DARK, LIGHT } enum bit<4> Lvl { HI = 3 }\n"
           "struct inner_t { bool on; Shade s; Lvl l; error e; }"
           " struct big_t { bit<8> a; inner_t inr; h_t hh; tuple<bit<2>, bool> t; }")
    prog = in_ingress("v = { a = 7, ... }; w = {...}; p = { 8w1, ... };",
                      locals_="big_t v; big_t w; tuple<bit<8>, bit<16>> p;", top=top)
    v_assign, w_assign, p_assign = ingress_body(prog)
    v = {c.name: c.expr for c in v_assign.right.components}
    assert v["a"].value == 7
    inner = {c.name: c.expr for c in v["inr"].components}
    assert inner["on"].value is False
    assert inner["s"].decl.name == "DARK" and inner["e"].decl.name == "NoError"
    assert isinstance(inner["l"], ir.Cast) and inner["l"].expr.value == 0
    assert isinstance(v["hh"], ir.InvalidHeader) and v["hh"].type.name == "h_t"
    assert [c.value for c in v["t"].components] == [0, False]
    assert [c.name for c in w_assign.right.components] == ["a", "inr", "hh", "t"]
    assert [c.value for c in p_assign.right.components] == [1, 0]
    assert type_str(p_assign.right.components[1].type) == "bit<16>"
    with pytest.raises(P4Error, match="cannot infer the type of this '...' initializer"):
        in_ingress("log_msg(\"x\", {1, ...});")


def test_generic_structs_are_specialised_per_argument_list():
    top = "struct pair_t<A, B> { A first; B second; }"
    prog = in_ingress("p8.first = 1; p16.second = 2; q.first = p8.first;",
                      locals_="pair_t<bit<8>, bool> p8; pair_t<bool, bit<16>> p16; "
                              "pair_t<bit<8>, bool> q;", top=top)
    p8, p16, q = prog.ingress.decl.locals
    assert p8.type.name == "pair_t<bit<8>, bool>" and p8.type is q.type
    assert [type_str(f.type) for f in p16.type.fields] == ["bool", "bit<16>"]
    first, second, copy_ = ingress_body(prog)
    assert type_str(first.right.type) == "bit<8>" and type_str(second.right.type) == "bit<16>"


def test_parenthesised_single_keysets():
    src = SKELETON.format(top="", locals="", body="").replace(
        "pkt.extract(hdr.h); transition accept;",
        "pkt.extract(hdr.h); transition select(hdr.h.b) {"
        " (0x0800 &&& 0xFF00): accept; (1 .. 5): reject; (7): accept; default: accept; }")
    cases = compile_p4_source(src, "t.p4").parser.decl.state("start").select_expression.cases
    assert [getattr(c.keyset, "op", None) for c in cases] == ["&&&", "..", None, None]
    assert cases[2].keyset.value == 7
