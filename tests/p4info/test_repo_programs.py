"""P4Info of the programs in p4/, checked object by object against expectations
written by hand from each program's source (names, aliases, widths, scopes) and
p4c's id rule (kind in the top byte, name hash below, see test_ids.py)."""

from string import Template

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.compiler.p4info_ids import ACTION, COUNTER, REGISTER, TABLE, hashed_id
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


def test_ecmp_spray():
    got = build_p4info(compile_p4(program("ecmp_spray")))
    A, T = ACTION, TABLE
    v = {n: hashed_id(A, "MyIngress." + n) for n in (
        "drop", "set_next_hop", "forward", "set_group", "hash_ipv4_flow", "hash_ipv6_flow",
        "spray_next_member")}
    v.update({n: hashed_id(A, "MyEgress." + n) for n in ("set_ecn_threshold", "no_ecn")})
    v.update({n: hashed_id(T, "MyIngress." + n) for n in (
        "ipv4_routes", "ipv6_routes", "group_members")})
    v["ecn_config"] = hashed_id(T, "MyEgress.ecn_config")
    v["cursor"] = hashed_id(REGISTER, "MyIngress.spray_cursor")
    v["tx"] = hashed_id(COUNTER, "MyEgress.tx_port")
    v["marked"] = hashed_id(COUNTER, "MyEgress.ecn_marked")
    want = _expected(Template("""
pkg_info { arch: "v1model" }
tables {
  preamble { id: ${ipv4_routes} name: "MyIngress.ipv4_routes" alias: "ipv4_routes" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  action_refs { id: ${forward} } action_refs { id: ${set_group} }
  action_refs { id: ${drop} }
  initial_default_action { action_id: ${drop} }
  size: 4096
}
tables {
  preamble { id: ${ipv6_routes} name: "MyIngress.ipv6_routes" alias: "ipv6_routes" }
  match_fields { id: 1 name: "hdr.ipv6.dstAddr" bitwidth: 128 match_type: LPM }
  action_refs { id: ${forward} } action_refs { id: ${set_group} }
  action_refs { id: ${drop} }
  initial_default_action { action_id: ${drop} }
  size: 4096
}
tables {
  preamble { id: ${group_members} name: "MyIngress.group_members" alias: "group_members" }
  match_fields { id: 1 name: "meta.group_id" bitwidth: 16 match_type: EXACT }
  match_fields { id: 2 name: "meta.member" bitwidth: 16 match_type: EXACT }
  action_refs { id: ${set_next_hop} } action_refs { id: ${drop} }
  initial_default_action { action_id: ${drop} }
  size: 4096
}
tables {
  preamble { id: ${ecn_config} name: "MyEgress.ecn_config" alias: "ecn_config" }
  match_fields { id: 1 name: "standard_metadata.egress_port" bitwidth: 9 match_type: EXACT }
  action_refs { id: ${set_ecn_threshold} } action_refs { id: ${no_ecn} }
  initial_default_action { action_id: ${no_ecn} }
  size: 512
}
actions { preamble { id: ${drop} name: "MyIngress.drop" alias: "drop" } }
actions {
  preamble { id: ${set_next_hop} name: "MyIngress.set_next_hop" alias: "set_next_hop" }
  params { id: 1 name: "dmac" bitwidth: 48 } params { id: 2 name: "port" bitwidth: 9 }
}
actions {
  preamble { id: ${forward} name: "MyIngress.forward" alias: "forward" }
  params { id: 1 name: "dmac" bitwidth: 48 } params { id: 2 name: "port" bitwidth: 9 }
}
actions {
  preamble { id: ${set_group} name: "MyIngress.set_group" alias: "set_group" }
  params { id: 1 name: "group_id" bitwidth: 16 }
  params { id: 2 name: "group_size" bitwidth: 16 }
  params { id: 3 name: "mode" bitwidth: 1 }
}
actions { preamble { id: ${hash_ipv4_flow} name: "MyIngress.hash_ipv4_flow"
                     alias: "hash_ipv4_flow" } }
actions { preamble { id: ${hash_ipv6_flow} name: "MyIngress.hash_ipv6_flow"
                     alias: "hash_ipv6_flow" } }
actions { preamble { id: ${spray_next_member} name: "MyIngress.spray_next_member"
                     alias: "spray_next_member" } }
actions {
  preamble { id: ${set_ecn_threshold} name: "MyEgress.set_ecn_threshold"
             alias: "set_ecn_threshold" }
  params { id: 1 name: "threshold" bitwidth: 19 }
}
actions { preamble { id: ${no_ecn} name: "MyEgress.no_ecn" alias: "no_ecn" } }
counters {
  preamble { id: ${tx} name: "MyEgress.tx_port" alias: "tx_port" }
  spec { unit: BOTH } size: 512
}
counters {
  preamble { id: ${marked} name: "MyEgress.ecn_marked" alias: "ecn_marked" }
  spec { unit: BOTH } size: 512
}
registers {
  preamble { id: ${cursor} name: "MyIngress.spray_cursor" alias: "spray_cursor" }
  type_spec { bitstring { bit { bitwidth: 16 } } }
  size: 256
}
type_info { }
""").substitute(v))
    assert got == want, text_format.MessageToString(got)


def test_aggregation():
    """p4/aggregation.p4: the controls of include/aggregation.p4 applied as
    MyIngress.aggregation and MyEgress.aggregation, one register per lane (64 by
    default), agg_parents for the levels of hierarchical jobs."""
    got = build_p4info(compile_p4(program("aggregation")))
    ing, eg = "MyIngress.aggregation.", "MyEgress.aggregation."
    actions = [(ing + "set_job", [("base", 32), ("size", 32), ("workers", 8), ("mcast_grp", 16)]),
               (ing + "not_aggregated", []),
               (ing + "set_parent", [("port", 9), ("mac", 48), ("child_id", 8)]),
               (ing + "root", []), (ing + "partial_to_parent", []), (ing + "reject", []),
               (ing + "multicast_result", []), (ing + "unicast_result", []),
               ("MyIngress.drop", []), ("MyIngress.forward", [("dmac", 48), ("port", 9)]),
               (eg + "to_worker", [("mac", 48), ("addr", 32), ("udp_port", 16)]),
               (eg + "no_worker", [])]
    aid = {name: hashed_id(ACTION, name) for name, _ in actions}

    def table(name, fields, acts, default, size):
        keys = "".join(f'match_fields {{ id: {i} name: "{f}" bitwidth: {w} match_type: {m} }}'
                       for i, (f, w, m) in enumerate(fields, 1))
        refs = "".join(f"action_refs {{ id: {aid[a]} }}" for a in acts)
        return (f'tables {{ preamble {{ id: {hashed_id(TABLE, name)} name: "{name}" '
                f'alias: "{name.rsplit(".", 1)[1]}" }} {keys} {refs} '
                f"initial_default_action {{ action_id: {aid[default]} }} size: {size} }}")

    def preamble(kind, name):
        return f'preamble {{ id: {hashed_id(kind, name)} name: "{name}" ' \
               f'alias: "{name.rsplit(".", 1)[1]}" }}'

    text = 'pkg_info { arch: "v1model" }'
    text += table(ing + "agg_jobs", [("ipv4.dstAddr", 32, "EXACT"), ("agg.job_id", 16, "EXACT")],
                  [ing + "set_job", ing + "not_aggregated"], ing + "not_aggregated", 256)
    text += table(ing + "agg_parents", [("ipv4.dstAddr", 32, "EXACT"),
                                        ("agg.job_id", 16, "EXACT")],
                  [ing + "set_parent", ing + "root"], ing + "root", 256)
    text += table("MyIngress.ipv4_routes", [("hdr.base.ipv4.dstAddr", 32, "LPM")],
                  ["MyIngress.forward", "MyIngress.drop"], "MyIngress.drop", 4096)
    text += table(eg + "agg_workers", [("agg.job_id", 16, "EXACT"),
                                       ("standard_metadata.egress_rid", 16, "EXACT")],
                  [eg + "to_worker", eg + "no_worker"], eg + "no_worker", 8192)
    for name, params in actions:
        text += f"actions {{ {preamble(ACTION, name)} " + "".join(
            f'params {{ id: {i} name: "{p}" bitwidth: {w} }}'
            for i, (p, w) in enumerate(params, 1)) + "}"
    for name, size in ((ing + "events", 10), ("MyIngress.drops", 4), (eg + "copies", 2)):
        text += f"counters {{ {preamble(COUNTER, name)} spec {{ unit: PACKETS }} size: {size} }}"
    widths = [("bitmap", 32), ("count", 8), ("block", 32), ("exponent", 16)]
    widths += [(f"lane{i}", 32) for i in range(64)]
    for name, width in widths:
        text += (f"registers {{ {preamble(REGISTER, ing + name)} "
                 f"type_spec {{ bitstring {{ bit {{ bitwidth: {width} }} }} }} size: 2048 }}")
    text += "type_info { }"
    want = _expected(text)
    assert got == want, text_format.MessageToString(got)


def _objects(p4info) -> dict[tuple[str, str], object]:
    """(kind, name) -> the P4Info message of every table, action, counter, register."""
    return {(kind, obj.preamble.name): obj for kind in ("tables", "actions", "counters",
                                                         "registers")
            for obj in getattr(p4info, kind)}


def test_fabric_aggregation_is_the_two_programs_side_by_side():
    """p4/fabric_aggregation.p4: every object of fabric.p4 under its own name, every
    aggregation object of aggregation.p4 under FabricIngress/FabricEgress, nothing else
    (tables, actions, counters, registers; ids follow from the names)."""
    composed = _objects(build_p4info(compile_p4(program("fabric_aggregation"))))
    fabric = _objects(build_p4info(compile_p4(program("fabric"))))
    aggregation = build_p4info(compile_p4(program("aggregation")))
    moved = {"MyIngress.aggregation.": "FabricIngress.aggregation.",
             "MyEgress.aggregation.": "FabricEgress.aggregation."}
    want = dict(fabric)
    for kind in ("tables", "actions", "counters", "registers"):
        for obj in getattr(aggregation, kind):
            prefix = next((p for p in moved if obj.preamble.name.startswith(p)), None)
            if prefix is None:
                continue  # aggregation.p4's own forwarding
            renamed = type(obj)()
            renamed.CopyFrom(obj)
            renamed.preamble.name = moved[prefix] + obj.preamble.name[len(prefix):]
            kind_id = {"tables": TABLE, "actions": ACTION, "counters": COUNTER,
                       "registers": REGISTER}[kind]
            renamed.preamble.id = hashed_id(kind_id, renamed.preamble.name)
            if kind == "tables":
                for ref in renamed.action_refs:
                    name = next(a.preamble.name for a in aggregation.actions
                                if a.preamble.id == ref.id)
                    p = next(p for p in moved if name.startswith(p))
                    ref.id = hashed_id(ACTION, moved[p] + name[len(p):])
                default = next(a.preamble.name for a in aggregation.actions
                               if a.preamble.id == renamed.initial_default_action.action_id)
                p = next(p for p in moved if default.startswith(p))
                renamed.initial_default_action.action_id = hashed_id(
                    ACTION, moved[p] + default[len(p):])
            want[(kind, renamed.preamble.name)] = renamed
    assert sorted(composed) == sorted(want)
    for key, obj in want.items():
        assert composed[key] == obj, key


# p4/fabric.p4, read off its source (include/fabric_forwarding.p4): tables as
# (name, [(key, width, match)], [actions], default, size); actions as (name,
# [(param, width)]); counters as (name, unit, size); registers as (name, width,
# size); each list in the order the controls declare them.
_FABRIC_TABLES = [
    ("FabricIngress.acks.ack_groups", [("mcast.group", 16, "EXACT")],
     ["aggregate_acks", "pass_acks"], "pass_acks", 64),
    ("FabricIngress.forwarding.ipv4_routes", [("ipv4.dstAddr", 32, "LPM")],
     ["route_to_port", "route_to_group", "route_to_multicast", "drop"], "drop", 4096),
    ("FabricIngress.forwarding.ipv6_routes", [("ipv6.dstAddr", 128, "LPM")],
     ["route_to_port", "route_to_group", "route_to_multicast", "drop"], "drop", 4096),
    ("FabricIngress.forwarding.ecmp_groups", [("fm.group_id", 16, "EXACT")],
     ["set_members", "no_members"], "no_members", 1024),
    ("FabricIngress.trim.trim_config", [("standard_metadata.egress_spec", 9, "EXACT")],
     ["set_trim", "no_trim"], "no_trim", 512),
    ("FabricEgress.queues.neighbors", [("standard_metadata.egress_port", 9, "EXACT")],
     ["set_neighbor", "keep_macs"], "keep_macs", 512),
    ("FabricEgress.queues.mcast_host_copies", [("standard_metadata.egress_rid", 16, "EXACT"),
                                               ("standard_metadata.egress_port", 9, "EXACT")],
     ["deliver_to_host", "keep_group_address"], "keep_group_address", 4096),
    ("FabricEgress.queues.ecn_config", [("standard_metadata.egress_port", 9, "EXACT")],
     ["set_ecn_threshold", "no_ecn"], "no_ecn", 512),
]
_FABRIC_ACTIONS = [
    ("FabricIngress.acks.aggregate_acks", [("expected", 32)]),
    ("FabricIngress.acks.pass_acks", []),
    ("FabricIngress.forwarding.drop", []),
    ("FabricIngress.forwarding.route_to_port", [("port", 9)]),
    ("FabricIngress.forwarding.route_to_group", [("group_id", 16), ("mode", 3)]),
    ("FabricIngress.forwarding.route_to_multicast", [("mcast_grp", 16)]),
    ("FabricIngress.forwarding.set_members", [("size", 16)] + [(f"port{i}", 9) for i in range(8)]),
    ("FabricIngress.forwarding.no_members", []),
    ("FabricIngress.forwarding.hash_ipv4_flow", []),
    ("FabricIngress.forwarding.hash_ipv6_flow", []),
    ("FabricIngress.forwarding.hash_entropy", []),
    ("FabricIngress.forwarding.pick_random", []),
    ("FabricIngress.forwarding.pick_round_robin", []),
    ("FabricIngress.forwarding.port_load", []),            # directional parameters only
    ("FabricIngress.forwarding.pick_adaptive_start", []),
    ("FabricIngress.trim.set_trim", [("threshold", 19), ("priority", 3), ("dscp", 6)]),
    ("FabricIngress.trim.no_trim", []),
    ("FabricEgress.queues.set_neighbor", [("dmac", 48), ("smac", 48)]),
    ("FabricEgress.queues.keep_macs", []),
    ("FabricEgress.queues.deliver_to_host", [("dst", 32)]),
    ("FabricEgress.queues.keep_group_address", []),
    ("FabricEgress.queues.set_ecn_threshold", [("threshold", 19)]),
    ("FabricEgress.queues.no_ecn", []),
]
_FABRIC_COUNTERS = [
    ("FabricIngress.drops", "PACKETS", 8),
    ("FabricIngress.acks.acks_absorbed", "PACKETS", 64),
    ("FabricIngress.acks.acks_forwarded", "PACKETS", 64),
    ("FabricIngress.acks.acks_stale", "PACKETS", 64),
    ("FabricIngress.trim.trimmed", "BOTH", 512),
    ("FabricEgress.queues.tx_port", "BOTH", 512),
    ("FabricEgress.queues.ecn_marked", "BOTH", 512),
    ("FabricEgress.queues.mcast_pruned", "PACKETS", 512),
]
_FABRIC_REGISTERS = [
    ("port_qdepth", 19, 512),
    ("port_arrivals", 19, 512),
    ("FabricIngress.acks.ack_seq", 32, 16384),
    ("FabricIngress.acks.ack_receivers", 32, 16384),
    ("FabricIngress.forwarding.rr_cursor", 16, 1024),
]


def _alias(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _fabric_expected() -> p4info_pb2.P4Info:
    want = p4info_pb2.P4Info()
    want.pkg_info.arch = "v1model"
    action_ids = {n: hashed_id(ACTION, n) for n, _ in _FABRIC_ACTIONS}
    for name, keys, actions, default, size in _FABRIC_TABLES:
        control = name.rsplit(".", 1)[0] + "."
        t = want.tables.add()
        t.preamble.id, t.preamble.name, t.preamble.alias = hashed_id(TABLE, name), name, _alias(name)
        for i, (key, width, match) in enumerate(keys, 1):
            m = t.match_fields.add()
            m.id, m.name, m.bitwidth = i, key, width
            m.match_type = p4info_pb2.MatchField.MatchType.Value(match)
        for a in actions:
            t.action_refs.add().id = action_ids[control + a]
        t.initial_default_action.action_id = action_ids[control + default]
        t.size = size
    for name, params in _FABRIC_ACTIONS:
        a = want.actions.add()
        a.preamble.id, a.preamble.name, a.preamble.alias = action_ids[name], name, _alias(name)
        for i, (param, width) in enumerate(params, 1):
            p = a.params.add()
            p.id, p.name, p.bitwidth = i, param, width
    for name, unit, size in _FABRIC_COUNTERS:
        c = want.counters.add()
        c.preamble.id, c.preamble.name, c.preamble.alias = hashed_id(COUNTER, name), name, \
            _alias(name)
        c.spec.unit = p4info_pb2.CounterSpec.Unit.Value(unit)
        c.size = size
    for name, width, size in _FABRIC_REGISTERS:
        r = want.registers.add()
        r.preamble.id, r.preamble.name, r.preamble.alias = hashed_id(REGISTER, name), name, \
            _alias(name)
        r.type_spec.bitstring.bit.bitwidth = width
        r.size = size
    want.type_info.SetInParent()
    return want


def test_fabric():
    got = build_p4info(compile_p4(program("fabric")))
    assert got == _fabric_expected(), text_format.MessageToString(got)


def test_every_program_in_p4_has_an_expectation_here():
    shipped = sorted(p.stem for p in program("basic_forward").parent.glob("*.p4"))
    covered = ["aggregation", "basic_forward", "ecmp_spray", "fabric",
               "fabric_aggregation"]  # the tests above
    assert shipped == covered, "write the expected P4Info of each new program in p4/ here"
