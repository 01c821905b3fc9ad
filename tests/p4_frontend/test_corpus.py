"""The corpus of tutorial-style programs compiles, and the Program contract holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.p4.compiler import P4Error, compile_p4, compile_p4_source, ir
from netweft.p4.compiler.naming import expression_text
from netweft.p4.compiler.typesys import type_str

from .conftest import PROGRAMS

REPO_P4 = Path(__file__).resolve().parents[2] / "p4"


def program(name: str):
    return compile_p4(PROGRAMS / name)


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("*.p4")), ids=lambda p: p.name)
def test_corpus_program_compiles_into_six_blocks(path):
    prog = compile_p4(path)
    assert prog.package == "V1Switch"
    assert list(prog.blocks) == ["parser", "verify_checksum", "ingress", "egress",
                                 "compute_checksum", "deparser"]
    assert isinstance(prog.parser.decl, ir.P4Parser)
    assert all(isinstance(prog.blocks[r].decl, ir.P4Control) for r in list(prog.blocks)[1:])
    assert prog.source_path == str(path)


@pytest.mark.parametrize("path", sorted(REPO_P4.glob("*.p4")), ids=lambda p: p.name)
def test_repository_programs_compile(path):
    prog = compile_p4(path, include_dirs=[REPO_P4 / "include"])
    assert prog.tables or prog.blocks


def test_standard_metadata_matches_v1model():
    prog = program("basic.p4")
    sm = prog.struct_types["standard_metadata_t"]
    fields = [(f.name, type_str(f.type)) for f in sm.fields]
    assert fields == [
        ("ingress_port", "bit<9>"), ("egress_spec", "bit<9>"), ("egress_port", "bit<9>"),
        ("instance_type", "bit<32>"), ("packet_length", "bit<32>"),
        ("enq_timestamp", "bit<32>"), ("enq_qdepth", "bit<19>"), ("deq_timedelta", "bit<32>"),
        ("deq_qdepth", "bit<19>"), ("ingress_global_timestamp", "bit<48>"),
        ("egress_global_timestamp", "bit<48>"), ("mcast_grp", "bit<16>"),
        ("egress_rid", "bit<16>"), ("checksum_error", "bit<1>"), ("parser_error", "error"),
        ("priority", "bit<3>"),
        # fields of older v1model versions (deprecated, still accepted)
        ("drop", "bit<1>"), ("recirculate_port", "bit<16>"), ("clone_spec", "bit<32>"),
    ]
    assert prog.match_kinds == ["exact", "ternary", "lpm", "range", "optional", "selector"]


def test_basic_program_contract():
    prog = program("basic.p4")
    assert [b.name for b in prog.blocks.values()] == [
        "MyParser", "MyVerifyChecksum", "MyIngress", "MyEgress", "MyComputeChecksum",
        "MyDeparser"]
    t = prog.tables["MyIngress.ipv4_lpm"]
    assert [(k.name, k.match_kind) for k in t.keys] == [("hdr.ipv4.dstAddr", "lpm")]
    assert [r.action.fqn for r in t.action_refs] == ["MyIngress.ipv4_forward", "MyIngress.drop",
                                                    "NoAction"]
    assert t.default_action.action_ref.action.fqn == "MyIngress.drop"
    assert not t.default_action.is_const and t.size == 1024
    fwd = prog.actions["MyIngress.ipv4_forward"]
    assert [(p.name, p.direction, type_str(p.type)) for p in fwd.params] == [
        ("dstAddr", "", "bit<48>"), ("port", "", "bit<9>")]
    assert set(prog.header_types) >= {"ethernet_t", "ipv4_t"}
    assert [p.name for p in prog.ingress.params] == ["hdr", "meta", "standard_metadata"]
    start = prog.parser.decl.state("parse_ethernet").select_expression
    assert isinstance(start, ir.SelectExpression)
    first = start.cases[0]
    assert (first.keyset.value, type_str(first.keyset.type)) == (0x800, "bit<16>")
    assert first.state.decl is prog.parser.decl.state("parse_ipv4")
    assert start.cases[1].state.decl.builtin


def test_mri_stack_and_custom_error():
    prog = program("mri.p4")
    headers = prog.struct_types["headers"]
    stack = headers.field_named("swtraces").type
    assert isinstance(stack, ir.Type_Stack) and stack.size == 9
    assert stack.element is prog.header_types["switch_t"]
    assert prog.error_code("IPHeaderTooShort") == 7
    verify = prog.parser.decl.state("parse_ipv4").components[1].call
    assert verify.kind == ir.CALL_EXTERN_FUNCTION and verify.target.name == "verify"
    assert verify.bound_args[1].decl.value == 7
    extract_next = prog.parser.decl.state("parse_swtrace").components[0].call
    assert isinstance(extract_next.bound_args[0], ir.Member)
    assert extract_next.bound_args[0].member == "next"


def test_calc_lookahead_and_const_entries():
    prog = program("calc.p4")
    sel = prog.parser.decl.state("check_p4calc").select_expression
    look = sel.select.components[0].expr
    assert look.kind == ir.CALL_PACKET and look.method_name == "lookahead"
    assert look.type is prog.header_types["p4calc_t"]
    t = prog.tables["MyIngress.calculate"]
    assert t.entries_const and t.default_action.is_const
    assert [(e.keys[0].value, e.action.action.name) for e in t.entries] == [
        (0x2B, "operation_add"), (0x2D, "operation_sub"), (0x26, "operation_and"),
        (0x7C, "operation_or"), (0x5E, "operation_xor")]
    assert all(e.priority is None for e in t.entries)  # exact keys need no priority


def test_load_balance_hash_type_arguments_are_inferred():
    prog = program("load_balance.p4")
    call = prog.actions["MyIngress.set_ecmp_select"].body.components[0].call
    assert call.kind == ir.CALL_EXTERN_FUNCTION and call.target.name == "hash"
    o, t, d, m = (type_str(x) for x in call.type_args_resolved)
    assert (o, t, m) == ("bit<14>", "bit<16>", "bit<32>")
    assert d == "tuple<bit<32>, bit<32>, bit<8>, bit<16>, bit<16>>"
    assert call.bound_args[1].decl.name == "crc16"


def test_all_features_names_and_instances():
    prog = program("all_features.p4")
    assert list(prog.tables) == [
        "IngressImpl.acl.acl_table", "IngressImpl.backup_acl.acl_table", "IngressImpl.l2",
        "IngressImpl.routes", "IngressImpl.ecmp_members", "IngressImpl.colors"]
    assert "global_nop" in prog.actions  # @name(".global_nop")
    ext = prog.externs
    assert ext["IngressImpl.port_bytes"].extern_type == "register"
    assert type_str(ext["IngressImpl.port_bytes"].type_args[0]) == "bit<32>"
    assert ext["IngressImpl.port_bytes"].args[0].value == 8          # PORTS
    assert ext["IngressImpl.port_counter"].args[0].value == 8        # TABLE_SIZE(4)
    assert ext["IngressImpl.as"].extern_type == "action_selector"
    assert prog.value_sets["ParserImpl.opt_types"].size == 4
    routes = prog.tables["IngressImpl.routes"]
    assert routes.implementation_instance.fqn == "IngressImpl.as"
    assert [r.action.fqn for r in routes.action_refs][-1] == "NoAction"
    assert routes.action_refs[-1].default_only                        # implicit default
    l2 = prog.tables["IngressImpl.l2"]
    assert l2.meters.fqn == "IngressImpl.flow_meter"
    assert [r.default_only for r in l2.action_refs] == [False, False, True, False]
    acl = prog.tables["IngressImpl.acl.acl_table"]
    assert acl.size == 1024 and prog.tables["IngressImpl.backup_acl.acl_table"].size == 16
    assert acl.counters.fqn == "IngressImpl.acl.acl_hits"
    assert [expression_text(k) for k in acl.entries[0].keys] == [
        "32w167772160 &&& 32w4278190080", "DefaultExpression", "16w0 .. 16w1023", "Proto.TCP"]
    assert [e.priority for e in acl.entries] == [100, 99]
    sub = [d for d in prog.ingress.decl.locals if isinstance(d, ir.Declaration_Instance)
           and d.instantiated is not None]
    assert [(d.name, d.fqn) for d in sub] == [("acl", "IngressImpl.acl"),
                                              ("acl2", "IngressImpl.backup_acl")]


def test_all_features_switch_on_action_run_and_values():
    prog = program("all_features.p4")
    switches = [s for s in prog.ingress.decl.body.components if isinstance(s, ir.SwitchStatement)]
    action_switch, value_switch = switches
    assert isinstance(action_switch.expression.type, ir.Type_ActionEnum)
    labels = [c.label for c in action_switch.cases]
    assert [lab.decl.fqn for lab in labels[:3]] == ["IngressImpl.fwd", "IngressImpl.set_mcast",
                                                    "global_nop"]
    assert isinstance(labels[3], ir.DefaultExpression)
    assert action_switch.cases[1].statement is None                     # fall-through
    assert [c.label.decl.value for c in value_switch.cases] == [6, 17]


def test_compile_p4_reports_unreadable_file(tmp_path):
    with pytest.raises(P4Error) as info:
        compile_p4(tmp_path / "missing.p4")
    assert str(info.value).startswith(f"{tmp_path / 'missing.p4'}:1:1: cannot read")


def test_errors_in_included_files_point_into_them(tmp_path):
    (tmp_path / "defs.p4").write_text("header h_t {\n  bit<8> a\n}\n")
    main = tmp_path / "main.p4"
    main.write_text('#include <core.p4>\n#include "defs.p4"\n')
    with pytest.raises(P4Error) as info:
        compile_p4(main)
    assert str(info.value) == f"{tmp_path / 'defs.p4'}:3:1: expected ';' after field but found '}}'"


def test_compile_source_and_file_give_the_same_program(tmp_path):
    text = (PROGRAMS / "ecn.p4").read_text()
    a = compile_p4_source(text, "ecn.p4")
    b = compile_p4(PROGRAMS / "ecn.p4")
    assert list(a.tables) == list(b.tables) and list(a.actions) == list(b.actions)


def test_named_package_arguments_in_any_order_and_structs_in_headers():
    prog = program("named_arguments.p4")
    assert [(b.role, b.name) for b in prog.blocks.values()] == [
        ("parser", "TagParser"), ("verify_checksum", "TagVerify"), ("ingress", "TagIngress"),
        ("egress", "TagEgress"), ("compute_checksum", "TagCompute"),
        ("deparser", "TagDeparser")]
    tag = prog.header_types["tag_t"]
    assert tag.field_named("flags").type is prog.struct_types["flags_t"]
    t = prog.tables["TagIngress.by_level"]
    assert [a.value for a in t.default_action.action_ref.args] == [1]
    drop = prog.actions["TagIngress.discard"].body.components[0].call
    assert drop.target.name == "mark_to_drop" and drop.bound_args == []
