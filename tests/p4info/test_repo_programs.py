"""P4Info of the programs in p4/, checked object by object against expectations
written by hand from each program's source (names, aliases, widths, scopes) and
p4c's id rule (kind in the top byte, name hash below, see test_ids.py)."""

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.compiler.p4info_ids import ACTION, TABLE, hashed_id
from netweft.p4.programs import program


def _expected(text: str) -> p4info_pb2.P4Info:
    return text_format.Parse(text, p4info_pb2.P4Info())


def test_basic_forward():
    got = build_p4info(compile_p4(program("basic_forward")))
    table = hashed_id(TABLE, "MyIngress.ipv4_lpm")
    fwd = hashed_id(ACTION, "MyIngress.ipv4_forward")
    drop = hashed_id(ACTION, "MyIngress.drop")
    noaction = 21257015  # p4c's id for NoAction (basic_routing-bmv2 reference output)
    want = _expected(f"""
        pkg_info {{ arch: "v1model" }}
        tables {{
          preamble {{ id: {table} name: "MyIngress.ipv4_lpm" alias: "ipv4_lpm" }}
          match_fields {{ id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }}
          action_refs {{ id: {fwd} }}
          action_refs {{ id: {drop} }}
          action_refs {{ id: {noaction} }}
          initial_default_action {{ action_id: {drop} }}
          size: 1024
        }}
        actions {{
          preamble {{ id: {noaction} name: "NoAction" alias: "NoAction"
                     annotations: "@noWarn(\\"unused\\")" }}
        }}
        actions {{ preamble {{ id: {drop} name: "MyIngress.drop" alias: "drop" }} }}
        actions {{
          preamble {{ id: {fwd} name: "MyIngress.ipv4_forward" alias: "ipv4_forward" }}
          params {{ id: 1 name: "dstAddr" bitwidth: 48 }}
          params {{ id: 2 name: "port" bitwidth: 9 }}
        }}
        type_info {{ }}
    """)
    assert got == want, text_format.MessageToString(got)
