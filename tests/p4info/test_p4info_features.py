"""P4Info of tests/p4info/programs/p4info_features.p4, written by hand from the
program and p4c's rules (p4RuntimeSerializer.cpp, p4RuntimeArchStandard.h):
object names and aliases, field ids, widths, scopes, annotations, type_info.
Ids follow p4c's rule (kind << 24 | low 24 bits of the name's hash; checked against
p4c's own outputs in test_ids.py), except the action with @id."""

from pathlib import Path
from string import Template

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from netweft.p4.compiler import P4Error, compile_p4, compile_p4_source
from netweft.p4.compiler import p4info_ids as ids
from netweft.p4.compiler.p4info import build_p4info

PROGRAM = Path(__file__).parent / "programs" / "p4info_features.p4"


def _id(kind, name):
    return ids.hashed_id(kind, name)


@pytest.fixture(scope="module")
def info():
    return build_p4info(compile_p4(PROGRAM))


def _expected() -> p4info_pb2.P4Info:
    A, T = ids.ACTION, ids.TABLE
    v = {
        "noaction": _id(A, "NoAction"), "drop": _id(A, "I.drop"),
        "forward": 0x01000ABC, "set_tag": _id(A, "I.set_tag"), "learn": _id(A, "I.learn"),
        "fwd": _id(T, "I.fwd"), "ecmp": _id(T, "I.ecmp"), "tagger": _id(T, "I.tagger"),
        "consts": _id(T, "I.consts"), "efwd": _id(T, "E.fwd"),
        "sel": _id(ids.ACTION_PROFILE, "I.ecmp_sel"),
        "hits": _id(ids.DIRECT_COUNTER, "I.fwd_hits"),
        "ctr": _id(ids.COUNTER, "I.port_counter"), "mtr": _id(ids.METER, "I.port_meter"),
        "reg": _id(ids.REGISTER, "I.seen"), "digest": _id(ids.DIGEST, "learn_t"),
        "vs": _id(ids.VALUE_SET, "P.ethertypes"),
        "pin": _id(ids.CONTROLLER_HEADER, "packet_in_t"),
        "pout": _id(ids.CONTROLLER_HEADER, "packet_out_t"),
    }
    text = Template("""
pkg_info { arch: "v1model" }
tables {
  preamble { id: ${fwd} name: "I.fwd" alias: "I.fwd" doc { description: "L2 forwarding" } }
  match_fields { id: 1 name: "dst" bitwidth: 48 match_type: EXACT }
  match_fields { id: 2 name: "m.tag" bitwidth: 16 match_type: TERNARY type_name { name: "Tag_t" } }
  action_refs { id: ${forward} }
  action_refs { id: ${drop} annotations: "@defaultonly" scope: DEFAULT_ONLY }
  const_default_action_id: ${drop}
  initial_default_action { action_id: ${drop} }
  direct_resource_ids: ${hits}
  size: 2048
  idle_timeout_behavior: NOTIFY_CONTROL
}
tables {
  preamble { id: ${ecmp} name: "I.ecmp" alias: "ecmp" }
  match_fields { id: 1 name: "hdr.eth.dst" bitwidth: 48 match_type: EXACT }
  action_refs { id: ${forward} }
  action_refs { id: ${noaction} annotations: "@defaultonly" scope: DEFAULT_ONLY }
  initial_default_action { action_id: ${noaction} }
  implementation_id: ${sel}
  size: 1024
}
tables {
  preamble { id: ${tagger} name: "I.tagger" alias: "tagger" }
  match_fields { id: 1 name: "m.color" bitwidth: 8 match_type: EXACT }
  match_fields { id: 2 name: "hdr.eth.type" bitwidth: 16 match_type: RANGE }
  action_refs { id: ${set_tag} }
  action_refs { id: ${learn} annotations: "@tableonly" scope: TABLE_ONLY }
  initial_default_action {
    action_id: ${set_tag}
    arguments { param_id: 1 value: "\\000\\007" }
    arguments { param_id: 2 value: "\\002" }
  }
  size: 1024
}
tables {
  preamble { id: ${consts} name: "I.consts" alias: "consts" }
  match_fields { id: 1 name: "hdr.eth.type" bitwidth: 16 match_type: EXACT }
  action_refs { id: ${drop} }
  action_refs { id: ${noaction} }
  initial_default_action { action_id: ${noaction} }
  size: 1024
  is_const_table: true
  has_initial_entries: true
}
tables {
  preamble { id: ${efwd} name: "E.fwd" alias: "E.fwd" }
  match_fields { id: 1 name: "sm.egress_port" bitwidth: 9 match_type: EXACT }
  action_refs { id: ${noaction} }
  initial_default_action { action_id: ${noaction} }
  size: 1024
}
actions { preamble { id: ${noaction} name: "NoAction" alias: "NoAction"
                     annotations: "@noWarn(\\"unused\\")" } }
actions { preamble { id: ${drop} name: "I.drop" alias: "drop" } }
actions {
  preamble { id: ${forward} name: "I.forward" alias: "forward" }
  params { id: 1 name: "port" bitwidth: 32 doc { brief: "egress" } type_name { name: "Port_t" } }
  params { id: 2 name: "dmac" bitwidth: 48 annotations: "@format(MAC_ADDRESS)" }
}
actions {
  preamble { id: ${set_tag} name: "I.set_tag" alias: "set_tag" }
  params { id: 1 name: "tag" bitwidth: 16 type_name { name: "Tag_t" } }
  params { id: 2 name: "color" bitwidth: 8 }
}
actions { preamble { id: ${learn} name: "I.learn" alias: "learn" } }
action_profiles {
  preamble { id: ${sel} name: "I.ecmp_sel" alias: "ecmp_sel" }
  table_ids: ${ecmp}
  with_selector: true
  size: 1024
  max_group_size: 8
}
counters {
  preamble { id: ${ctr} name: "I.port_counter" alias: "port_counter" }
  spec { unit: BOTH }
  size: 128
}
direct_counters {
  preamble { id: ${hits} name: "I.fwd_hits" alias: "fwd_hits" }
  spec { unit: PACKETS }
  direct_table_id: ${fwd}
}
meters {
  preamble { id: ${mtr} name: "I.port_meter" alias: "port_meter" doc { brief: "per-port rate" } }
  spec { unit: BYTES }
  size: 64
}
controller_packet_metadata {
  preamble { id: ${pin} name: "packet_in" alias: "packet_in"
             annotations: "@controller_header(\\"packet_in\\")" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
  metadata { id: 5 name: "pad" bitwidth: 7 }
}
controller_packet_metadata {
  preamble { id: ${pout} name: "packet_out" alias: "packet_out"
             annotations: "@controller_header(\\"packet_out\\")" }
  metadata { id: 1 name: "egress_port" bitwidth: 32 type_name { name: "Port_t" } }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
value_sets {
  preamble { id: ${vs} name: "P.ethertypes" alias: "ethertypes" }
  match { id: 1 bitwidth: 16 match_type: EXACT }
  size: 4
}
registers {
  preamble { id: ${reg} name: "I.seen" alias: "seen" }
  type_spec { bitstring { bit { bitwidth: 32 } } }
  size: 256
}
digests {
  preamble { id: ${digest} name: "learn_t" alias: "learn_t" }
  type_spec { struct { name: "learn_t" } }
}
type_info {
  structs {
    key: "learn_t"
    value {
      members { name: "src" type_spec { bitstring { bit { bitwidth: 48 } } } }
      members { name: "port" type_spec { new_type { name: "Port_t" } } }
    }
  }
  serializable_enums {
    key: "Color"
    value {
      underlying_type { bitwidth: 8 }
      members { name: "RED" value: "\\001" }
      members { name: "GREEN" value: "\\002" }
    }
  }
  new_types {
    key: "Port_t"
    value { translated_type { uri: "example.org/Port_t" sdn_bitwidth: 32 } }
  }
  new_types {
    key: "Tag_t"
    value { original_type { bitstring { bit { bitwidth: 16 } } } }
  }
}
""").substitute(v)
    return text_format.Parse(text, p4info_pb2.P4Info())


def test_every_object_as_p4c_writes_it(info):
    want = _expected()
    for field in ("tables", "actions", "action_profiles", "counters", "direct_counters",
                  "meters", "controller_packet_metadata", "value_sets", "registers",
                  "digests", "type_info", "pkg_info"):
        assert getattr(info, field) == getattr(want, field), (
            f"{field}:\n{text_format.MessageToString(info)}")
    assert info == want


def test_unused_and_hidden_objects_are_left_out(info):
    names = {a.preamble.name for a in info.actions} | {t.preamble.name for t in info.tables}
    assert "I.unused_action" not in names and "I.unused_table" not in names
    assert "I.count_it" not in names  # @hidden


SKELETON = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    %s
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    %s
}
control CC(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_duplicate_table_names_are_an_error_at_the_second():
    ingress = ('@name(".same") table a { key = { hdr.h.a : exact; } actions = { NoAction; } }'
               ' apply { a.apply(); }')
    egress = ('@name(".same") table b { key = { hdr.h.a : exact; } actions = { NoAction; } }'
              ' apply { b.apply(); }')
    prog = compile_p4_source(SKELETON % (ingress, egress), "dup.p4")
    with pytest.raises(P4Error) as err:
        build_p4info(prog)
    assert str(err.value).startswith("dup.p4:14:")
    assert "Name 'same' is used for multiple table objects" in str(err.value)


def test_conflicting_action_names_are_an_error():
    ingress = ('@name(".act") action x() { } table a { key = { hdr.h.a : exact; } '
               'actions = { x; } } apply { a.apply(); }')
    egress = ('@name(".act") action y() { } table b { key = { hdr.h.a : exact; } '
              'actions = { y; } } apply { b.apply(); }')
    prog = compile_p4_source(SKELETON % (ingress, egress), "dupact.p4")
    with pytest.raises(P4Error, match="conflicting control plane name: 'act'"):
        build_p4info(prog)


def test_inline_profile_without_name_is_refused():
    ingress = ('table a { key = { hdr.h.a : exact; } actions = { NoAction; } '
               'implementation = action_profile(32w16); } apply { a.apply(); }')
    prog = compile_p4_source(SKELETON % (ingress, "apply { }"), "anon.p4")
    with pytest.raises(P4Error, match="anonymous table property 'implementation'"):
        build_p4info(prog)


def test_explicit_table_id_and_sub_control_names():
    ingress = """
    control Sub(inout hs hdr) {
        @id(0x0200000f) table t { key = { hdr.h.a : exact; } actions = { NoAction; } }
        table u { key = { hdr.h.a : exact; } actions = { NoAction; } }
        apply { t.apply(); u.apply(); }
    }
    Sub() left; Sub() right;
    apply { left.apply(hdr); }
    """
    src = SKELETON % ("%s", "apply { }")
    sub_ctl, rest = ingress.split("Sub() left;")
    src = src.replace("control I(", sub_ctl + "control I(").replace(
        "%s", "Sub() left;" + rest)
    info = build_p4info(compile_p4_source(src, "sub.p4"))
    # only the applied instance is inlined; @id keeps its value with the table prefix
    assert [(t.preamble.name, t.preamble.alias, t.preamble.id) for t in info.tables] == [
        ("I.left.t", "t", 0x0200000F), ("I.left.u", "u", _id(ids.TABLE, "I.left.u"))]


MORE = Path(__file__).parent / "programs" / "p4info_more.p4"


def test_more_features_as_p4c_writes_them():
    got = build_p4info(compile_p4(MORE))
    A, T, AP = ids.ACTION, ids.TABLE, ids.ACTION_PROFILE
    v = {"noaction": _id(A, "NoAction"), "named": _id(A, "I.named"), "nop": _id(A, "I.nop"),
         "by_error": _id(T, "I.by_error"), "balanced": _id(T, "I.balanced"),
         "profiled": _id(T, "I.profiled"), "sel": _id(AP, "I.sel"),
         "metered": _id(T, "I.metered"), "meter": _id(ids.DIRECT_METER, "inline_meter"),
         "inline": _id(AP, "inline_profile"), "pvs": _id(ids.VALUE_SET, "P.pvs"),
         "reports": _id(ids.REGISTER, "I.reports")}
    want = text_format.Parse(Template("""
pkg_info { name: "more" version: "1.2" arch: "v1model" }
tables {
  preamble {
    id: ${by_error} name: "I.by_error" alias: "by_error"
    structured_annotations {
      name: "Tags"
      kv_pair_list {
        kv_pairs { key: "owner" value { string_value: "ops" } }
        kv_pairs { key: "level" value { int64_value: 2 } }
      }
    }
  }
  match_fields { id: 1 name: "sm.parser_error" match_type: EXACT }
  action_refs { id: ${named} }
  action_refs { id: ${nop} }
  initial_default_action { action_id: ${nop} }
  size: 1024
}
tables {
  preamble { id: ${balanced} name: "I.balanced" alias: "balanced" }
  match_fields { id: 1 name: "hdr.a.x" bitwidth: 8 match_type: EXACT }
  action_refs { id: ${nop} }
  action_refs { id: ${noaction} annotations: "@defaultonly" scope: DEFAULT_ONLY }
  initial_default_action { action_id: ${noaction} }
  implementation_id: ${sel}
  size: 1024
}
tables {
  preamble { id: ${profiled} name: "I.profiled" alias: "profiled" }
  match_fields { id: 1 name: "hdr.a.y" bitwidth: 16 match_type: EXACT }
  action_refs { id: ${nop} }
  action_refs { id: ${noaction} annotations: "@defaultonly" scope: DEFAULT_ONLY }
  initial_default_action { action_id: ${noaction} }
  implementation_id: ${inline}
  size: 1024
}
tables {
  preamble { id: ${metered} name: "I.metered" alias: "metered" }
  match_fields { id: 1 name: "hdr.a.x" bitwidth: 8 match_type: EXACT }
  action_refs { id: ${nop} }
  action_refs { id: ${noaction} annotations: "@defaultonly" scope: DEFAULT_ONLY }
  initial_default_action { action_id: ${noaction} }
  direct_resource_ids: ${meter}
  size: 1024
}
actions { preamble { id: ${noaction} name: "NoAction" alias: "NoAction"
                     annotations: "@noWarn(\\"unused\\")" } }
actions {
  preamble { id: ${named} name: "I.named" alias: "named" }
  params { id: 1 name: "who" type_name { name: "Name_t" } }
  params { id: 2 name: "mode" type_name { name: "Mode" } }
}
actions { preamble { id: ${nop} name: "I.nop" alias: "nop" } }
action_profiles {
  preamble { id: ${sel} name: "I.sel" alias: "sel" }
  table_ids: ${balanced}
  with_selector: true
  size: 256
  sum_of_members { max_member_weight: 100 }
}
action_profiles {
  preamble { id: ${inline} name: "inline_profile" alias: "inline_profile" }
  table_ids: ${profiled}
  size: 64
}
direct_meters {
  preamble { id: ${meter} name: "inline_meter" alias: "inline_meter" }
  spec { unit: PACKETS }
  direct_table_id: ${metered}
}
value_sets {
  preamble { id: ${pvs} name: "P.pvs" alias: "pvs" }
  match { id: 1 name: "x" bitwidth: 8 match_type: TERNARY }
  match { id: 2 name: "y" bitwidth: 16 match_type: EXACT }
  size: 8
}
registers {
  preamble { id: ${reports} name: "I.reports" alias: "reports" }
  type_spec { struct { name: "report_t" } }
  size: 4
}
type_info {
  structs {
    key: "report_t"
    value {
      members { name: "hdr" type_spec { header { name: "a_t" } } }
      members { name: "k" type_spec { bitstring { bit { bitwidth: 8 } } } }
    }
  }
  headers {
    key: "a_t"
    value {
      members { name: "x" type_spec { bit { bitwidth: 8 } } }
      members { name: "y" type_spec { bit { bitwidth: 16 } } }
    }
  }
  enums {
    key: "Mode"
    value { members { name: "FAST" } members { name: "SAFE" } }
  }
  error {
    members: ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds",
              "HeaderTooShort", "ParserTimeout", "ParserInvalidArgument"]
  }
  new_types {
    key: "Name_t"
    value { translated_type { uri: "example.org/name" sdn_string { } } }
  }
}
""").substitute(v), p4info_pb2.P4Info())
    assert got == want, text_format.MessageToString(got)
