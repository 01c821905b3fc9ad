"""A small v1model program built directly as typed IR (what ``compile_p4`` produces).

It lets the back end be tested independently of the front end.  The program:

    parser:  extract(hdr.ethernet); select(etherType) { 0x0800: parse_ipv4; default: accept }
             parse_ipv4: extract(hdr.ipv4); accept
    ingress: action fwd(bit<9> port) { sm.egress_spec = port; meta.x = meta.x |+| 200;
                                        hdr.ipv4.ttl = hdr.ipv4.ttl - 1 }
             action drop() { mark_to_drop(sm) }
             table t { key = { hdr.ethernet.dstAddr: exact; } actions = { fwd; drop; }
                       default_action = drop(); }
             apply { if (hdr.ethernet.isValid()) { t.apply(); } }
    deparser: emit(hdr.ethernet); emit(hdr.ipv4)
"""

from __future__ import annotations

from netweft.p4.compiler import ir
from netweft.p4.compiler.program import Block, Program

ERRORS = ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
          "ParserTimeout", "ParserInvalidArgument"]


def bits(w: int, signed: bool = False) -> ir.Type_Bits:
    return ir.Type_Bits(width=w, signed=signed)


def const(v: int, w: int) -> ir.Constant:
    return ir.Constant(value=v, type=bits(w))


def path(decl, t) -> ir.PathExpression:
    return ir.PathExpression(name=getattr(decl, "name", "x"), decl=decl, type=t)


def member(e, name: str, t) -> ir.Member:
    return ir.Member(expr=e, member=name, type=t)


def header(name: str, fields: list[tuple[str, int]]) -> ir.Type_Header:
    return ir.Type_Header(name=name, fields=[ir.StructField(name=n, type=bits(w))
                                             for n, w in fields])


def standard_metadata_type() -> ir.Type_Struct:
    fields = [("ingress_port", bits(9)), ("egress_spec", bits(9)), ("egress_port", bits(9)),
              ("instance_type", bits(32)), ("packet_length", bits(32)),
              ("enq_timestamp", bits(32)), ("enq_qdepth", bits(19)),
              ("deq_timedelta", bits(32)), ("deq_qdepth", bits(19)),
              ("ingress_global_timestamp", bits(48)), ("egress_global_timestamp", bits(48)),
              ("mcast_grp", bits(16)), ("egress_rid", bits(16)), ("checksum_error", bits(1)),
              ("parser_error", ir.Type_Error()), ("priority", bits(3))]
    return ir.Type_Struct(name="standard_metadata_t",
                          fields=[ir.StructField(name=n, type=t) for n, t in fields])


def call(kind: str, method_name: str, instance=None, target=None, args=(), t=None):
    return ir.MethodCallExpression(method=ir.PathExpression(name=method_name), kind=kind,
                                   method_name=method_name, instance=instance, target=target,
                                   bound_args=list(args), type=t or ir.Type_Void())


def build() -> Program:
    eth_t = header("ethernet_t", [("dstAddr", 48), ("srcAddr", 48), ("etherType", 16)])
    ipv4_t = header("ipv4_t", [("version", 4), ("ihl", 4), ("diffserv", 8), ("totalLen", 16),
                               ("identification", 16), ("flags", 3), ("fragOffset", 13),
                               ("ttl", 8), ("protocol", 8), ("hdrChecksum", 16),
                               ("srcAddr", 32), ("dstAddr", 32)])
    hdrs_t = ir.Type_Struct(name="headers_t", fields=[ir.StructField(name="ethernet", type=eth_t),
                                                       ir.StructField(name="ipv4", type=ipv4_t)])
    meta_t = ir.Type_Struct(name="meta_t", fields=[ir.StructField(name="x", type=bits(8))])
    sm_t = standard_metadata_type()
    pin = ir.Type_ExternInstance(extern=ir.Type_Extern(name="packet_in"))
    pout = ir.Type_ExternInstance(extern=ir.Type_Extern(name="packet_out"))

    # ---- parser
    p_b = ir.Parameter(name="b", direction="", type=pin)
    p_hdr = ir.Parameter(name="hdr", direction="out", type=hdrs_t)
    p_meta = ir.Parameter(name="meta", direction="inout", type=meta_t)
    p_sm = ir.Parameter(name="sm", direction="inout", type=sm_t)
    accept = ir.ParserState(name="accept", builtin=True)
    reject = ir.ParserState(name="reject", builtin=True)
    eth = member(path(p_hdr, hdrs_t), "ethernet", eth_t)
    ipv4_state = ir.ParserState(
        name="parse_ipv4",
        components=[ir.MethodCallStatement(call=call(
            ir.CALL_PACKET, "extract", path(p_b, pin), args=[member(path(p_hdr, hdrs_t),
                                                                   "ipv4", ipv4_t)]))],
        select_expression=path(accept, ir.Type_State()))
    start = ir.ParserState(
        name="start",
        components=[ir.MethodCallStatement(call=call(ir.CALL_PACKET, "extract", path(p_b, pin),
                                                     args=[eth]))],
        select_expression=ir.SelectExpression(
            select=ir.ListExpression(components=[member(eth, "etherType", bits(16))]),
            cases=[ir.SelectCase(keyset=const(0x0800, 16), state=path(ipv4_state,
                                                                      ir.Type_State())),
                   ir.SelectCase(keyset=ir.DefaultExpression(), state=path(accept,
                                                                            ir.Type_State()))]))
    parser = ir.P4Parser(name="P", params=[p_b, p_hdr, p_meta, p_sm],
                         states=[start, ipv4_state, accept, reject], fqn="P")

    # ---- ingress
    i_hdr = ir.Parameter(name="hdr", direction="inout", type=hdrs_t)
    i_meta = ir.Parameter(name="meta", direction="inout", type=meta_t)
    i_sm = ir.Parameter(name="sm", direction="inout", type=sm_t)
    a_port = ir.Parameter(name="port", direction="", type=bits(9))
    i_eth = member(path(i_hdr, hdrs_t), "ethernet", eth_t)
    i_ipv4 = member(path(i_hdr, hdrs_t), "ipv4", ipv4_t)
    ttl = member(i_ipv4, "ttl", bits(8))
    meta_x = member(path(i_meta, meta_t), "x", bits(8))
    fwd = ir.P4Action(name="fwd", params=[a_port], fqn="MyIngress.fwd", body=ir.BlockStatement(
        components=[
            ir.AssignmentStatement(left=member(path(i_sm, sm_t), "egress_spec", bits(9)),
                                   right=path(a_port, bits(9))),
            ir.AssignmentStatement(left=meta_x, right=ir.Binary(
                op="|+|", left=meta_x, right=const(200, 8), type=bits(8))),
            ir.AssignmentStatement(left=ttl, right=ir.Binary(op="-", left=ttl,
                                                             right=const(1, 8), type=bits(8))),
        ]))
    mark = ir.Method(name="mark_to_drop", type=ir.Type_Method())
    drop = ir.P4Action(name="drop", fqn="MyIngress.drop", body=ir.BlockStatement(components=[
        ir.MethodCallStatement(call=call(ir.CALL_EXTERN_FUNCTION, "mark_to_drop", target=mark,
                                         args=[path(i_sm, sm_t)]))]))
    fwd_ref = ir.ActionRef(expression=path(fwd, None), action=fwd, args=[])
    drop_ref = ir.ActionRef(expression=path(drop, None), action=drop, args=[])
    table = ir.P4Table(name="t", fqn="MyIngress.t",
                       keys=[ir.KeyElement(expression=member(i_eth, "dstAddr", bits(48)),
                                           match_kind="exact", name="hdr.ethernet.dstAddr")],
                       action_refs=[fwd_ref, drop_ref],
                       default_action=ir.DefaultAction(action_ref=ir.ActionRef(
                           expression=call(ir.CALL_ACTION, "drop", target=drop),
                           action=drop, args=[])),
                       entries=[], size=16)
    is_valid = call(ir.CALL_HEADER, "isValid", instance=i_eth, t=ir.Type_Boolean())
    apply_t = call(ir.CALL_TABLE_APPLY, "apply", target=table,
                   t=ir.Type_TableApplyResult(table=table))
    ingress = ir.P4Control(
        name="MyIngress", fqn="MyIngress", params=[i_hdr, i_meta, i_sm],
        locals=[fwd, drop, table],
        body=ir.BlockStatement(components=[ir.IfStatement(
            condition=is_valid,
            if_true=ir.BlockStatement(components=[ir.MethodCallStatement(call=apply_t)]))]))

    def empty_control(name: str, with_sm: bool) -> ir.P4Control:
        params = [ir.Parameter(name="hdr", direction="inout", type=hdrs_t),
                  ir.Parameter(name="meta", direction="inout", type=meta_t)]
        if with_sm:
            params.append(ir.Parameter(name="sm", direction="inout", type=sm_t))
        return ir.P4Control(name=name, fqn=name, params=params, body=ir.BlockStatement())

    d_b = ir.Parameter(name="b", direction="", type=pout)
    d_hdr = ir.Parameter(name="hdr", direction="in", type=hdrs_t)
    deparser = ir.P4Control(name="D", fqn="D", params=[d_b, d_hdr], body=ir.BlockStatement(
        components=[ir.MethodCallStatement(call=call(
            ir.CALL_PACKET, "emit", path(d_b, pout), args=[path(d_hdr, hdrs_t)]))]))

    prog = Program(source_path="<handbuilt>", ast=ir.P4Program())
    prog.blocks = {
        "parser": Block("parser", "P", parser),
        "verify_checksum": Block("verify_checksum", "V", empty_control("V", False)),
        "ingress": Block("ingress", "MyIngress", ingress),
        "egress": Block("egress", "E", empty_control("E", True)),
        "compute_checksum": Block("compute_checksum", "C", empty_control("C", False)),
        "deparser": Block("deparser", "D", deparser),
    }
    prog.tables = {"MyIngress.t": table}
    prog.actions = {"MyIngress.fwd": fwd, "MyIngress.drop": drop}
    prog.errors = list(ERRORS)
    return prog
