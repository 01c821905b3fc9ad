"""Lowering of v1model extern calls (functions and methods) to Python source.

The generated code talks to the per-switch context ``X`` (see
:class:`netweft.emulation.v1model.context.PacketContext`) and to the extern
objects ``E_*`` (registers, counters, meters) created by the switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from netweft.emulation.pipeline.types import (
    bit_width,
    field_attr,
    is_aggregate,
    is_signed,
    unsupported,
)
from netweft.emulation.v1model.hash_algorithms import bmv2_refusal
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.naming import expression_text

if TYPE_CHECKING:
    from netweft.emulation.pipeline.codegen import Body, Lowering


def enum_member_name(e: Any) -> str | None:
    """The member name of an enum constant expression (``HashAlgorithm.crc16``)."""
    if isinstance(e, ir.Member):
        return e.member
    decl = getattr(e, "decl", None)
    if isinstance(decl, ir.Declaration_ID):
        return decl.name
    return None


def _algorithm(e: Any) -> str:
    """The HashAlgorithm member named by a constant argument."""
    name = enum_member_name(e)
    if name is None:
        raise unsupported("a hash algorithm that is not a HashAlgorithm constant", e)
    refusal = bmv2_refusal(name)
    if refusal is not None:
        raise P4Error(refusal, e.loc)
    return name


def field_list(lw: Lowering, e: Any, body: Body) -> str:
    """A Python expression for the ``[(value, width), ...]`` list of a data argument.

    Fields of invalid headers are skipped, as in BMv2's ``BufBuilder``.
    """
    parts: list[tuple[str | None, str]] = []
    _flatten(lw, e, e.type, None, body, parts, None)
    if not parts:
        return "()"
    groups: list[tuple[str | None, list[str]]] = []
    for cond, item in parts:  # consecutive fields of one header share one validity test
        if groups and groups[-1][0] == cond:
            groups[-1][1].append(item)
        else:
            groups.append((cond, [item]))
    out = []
    for cond, items in groups:
        tup = "(" + "".join(i + ", " for i in items) + ")"
        out.append(f"({tup} if {cond} else ())" if cond else tup)
    return " + ".join(out)


def field_bits(lw: Lowering, e: Any, body: Body) -> tuple[str, str]:
    """Emit code concatenating a data argument's fields; returns ``(value, nbits)`` names.

    The same bits as :func:`field_list` and BMv2's ``BufBuilder`` (fields of
    invalid headers skipped), computed with shifts in the generated code.
    """
    parts: list[tuple[str | None, str]] = []
    _flatten(lw, e, e.type, None, body, parts, None)
    acc, nbits = lw.tmp("fa"), lw.tmp("fn")
    body.emit(f"{acc} = 0")
    body.emit(f"{nbits} = 0")
    groups: list[tuple[str | None, list[str]]] = []
    for cond, item in parts:
        if groups and groups[-1][0] == cond:
            groups[-1][1].append(item)
        else:
            groups.append((cond, [item]))
    for cond, items in groups:
        if cond:
            body.emit(f"if {cond}:")
            body.indent += 1
        fixed = [i for i in items if "__len)" not in i]
        if len(fixed) == len(items):
            total = 0
            terms = []
            widths = [int(i.rsplit(", ", 1)[1][:-1]) for i in items]
            shift = sum(widths)
            for item, w in zip(items, widths, strict=True):
                value = item[1:].rsplit(", ", 1)[0]
                shift -= w
                terms.append(f"({value} << {shift})" if shift else value)
                total += w
            body.emit(f"{acc} = ({acc} << {total}) | {' | '.join(terms)}")
            body.emit(f"{nbits} += {total}")
        else:
            for item in items:
                value, width = item[1:-1].rsplit(", ", 1)
                body.emit(f"{acc} = ({acc} << {width}) | {value}")
                body.emit(f"{nbits} += {width}")
        if cond:
            body.indent -= 1
    return acc, nbits


def _flatten(lw: Lowering, e: Any, t: Any, ref: str | None, body: Body,
             parts: list[tuple[str | None, str]], valid: str | None) -> None:
    if isinstance(e, (ir.ListExpression, ir.StructExpression)) and ref is None:
        comps = e.components
        for c in comps:
            sub = c.expr if isinstance(c, ir.NamedExpression) else c
            _flatten(lw, sub, sub.type, None, body, parts, None)
        return
    if ref is None:
        ref = lw.expr(e, body)
        # a field of a header: skipped when the header is invalid
        if isinstance(e, ir.Member) and isinstance(e.expr.type, ir.Type_Header):
            valid = f"{lw.expr(e.expr, body)}._v"
    if isinstance(t, ir.Type_Header):
        for f in t.fields:
            _flatten(lw, None, f.type, f"{ref}.{field_attr(f.name)}", body, parts, f"{ref}._v")
        return
    if isinstance(t, ir.Type_Struct):
        for f in t.fields:
            _flatten(lw, None, f.type, f"{ref}.{field_attr(f.name)}", body, parts, valid)
        return
    if isinstance(t, ir.Type_Stack):
        for i in range(t.size):
            _flatten(lw, None, t.element, f"{ref}.e[{i}]", body, parts, valid)
        return
    if isinstance(t, ir.Type_Tuple):
        for i, ct in enumerate(t.components):
            _flatten(lw, None, ct, f"{ref}[{i}]", body, parts, valid)
        return
    if isinstance(t, ir.Type_Varbits):
        item = f"({ref}, {ref}__len)"
    else:
        item = f"({lw.unsigned(ref, t)}, {bit_width(t)})"
    parts.append((valid, item))


def _target(lw: Lowering, e: Any, value: str, body: Body) -> None:
    """Assign ``value`` (an int expression) to the out argument ``e``, truncated to its type."""
    t = e.type
    if isinstance(t, ir.Type_Bits):
        value = lw.wrap(value, t)
    lw.assign_raw(e, value, body)


def lower_extern_function(lw: Lowering, c: ir.MethodCallExpression, args: list[Any],
                          body: Body) -> str:
    """Statement (or expression) source for a call of a v1model/core extern function."""
    name = c.method_name or getattr(c.target, "name", "")
    if name == "mark_to_drop":
        sm = lw.expr(args[0], body) if args else "X.sm"
        body.emit(f"{sm}.egress_spec = 511")
        body.emit(f"{sm}.mcast_grp = 0")
        return ""
    if name == "verify":
        cond = lw.expr(args[0], body)
        code = lw.expr(args[1], body)
        body.emit(f"if not {cond}:")
        body.emit(f"    raise ParserReject({code})")
        return ""
    if name == "hash":
        algo = _algorithm(args[1])
        acc, nbits = field_bits(lw, args[3], body)
        base = lw.expr(args[2], body)
        mx = lw.expr(args[4], body)
        _target(lw, args[0], f"hash_offset(X.hash_bits({algo!r}, {acc}, {nbits}), {base}, {mx})",
                body)
        return ""
    if name == "random":
        lo = lw.expr(args[1], body)
        hi = lw.expr(args[2], body)
        _target(lw, args[0], f"X.random({lo}, {hi})", body)
        return ""
    if name in ("verify_checksum", "verify_checksum_with_payload"):
        cond = lw.expr(args[0], body)
        acc, nbits = field_bits(lw, args[1], body)
        value = lw.expr(args[2], body)
        algo = _algorithm(args[3])
        payload = name.endswith("_with_payload")
        body.emit(f"if {cond} and X.checksum_bits({algo!r}, {acc}, {nbits}, {payload}) != {value}:")
        body.emit("    X.checksum_error = 1")
        return ""
    if name in ("update_checksum", "update_checksum_with_payload"):
        cond = lw.expr(args[0], body)
        algo = _algorithm(args[3])
        payload = name.endswith("_with_payload")
        body.emit(f"if {cond}:")
        body.indent += 1
        acc, nbits = field_bits(lw, args[1], body)
        _target(lw, args[2], f"X.checksum_bits({algo!r}, {acc}, {nbits}, {payload})", body)
        body.indent -= 1
        return ""
    if name in ("clone", "clone3", "clone_preserving_field_list"):
        session = lw.expr(args[1], body)
        if name == "clone_preserving_field_list":
            index = lw.expr(args[2], body)
        elif name == "clone3":
            index = str(lw.data_field_list(args[2]))
        else:
            index = "None"
        body.emit(f"X.clone_session = {session}")
        body.emit(f"X.clone_field_list = {index}")
        return ""
    if name in ("resubmit_preserving_field_list", "resubmit"):
        index = lw.expr(args[0], body) if name.endswith("list") else str(
            lw.data_field_list(args[0]))
        body.emit(f"X.resubmit = ({index},)")
        return ""
    if name in ("recirculate_preserving_field_list", "recirculate"):
        index = lw.expr(args[0], body) if name.endswith("list") else str(
            lw.data_field_list(args[0]))
        body.emit(f"X.recirculate = ({index},)")
        return ""
    if name == "truncate":
        body.emit(f"X.request_truncate({lw.expr(args[0], body)})")
        return ""
    if name == "digest":
        receiver = lw.expr(args[0], body)
        data = args[1]
        body.emit(f"X.digest({receiver}, {_digest_value(lw, data, body)})")
        return ""
    if name == "log_msg":
        msg = lw.expr(args[0], body)
        if len(args) > 1 and args[1] is not None:
            values = field_list(lw, args[1], body)
            body.emit(f"X.log_msg({msg}, [v for v, _w in {values}])")
        else:
            body.emit(f"X.log_msg({msg}, [])")
        return ""
    if name in ("assert", "assume"):
        body.emit(f"if not {lw.expr(args[0], body)}:")
        body.emit(f"    raise AssertionFailed({name!r} + ' failed at {c.loc}')")
        return ""
    raise unsupported(f"the extern function {name}", c)


def _digest_value(lw: Lowering, e: Any, body: Body) -> str:
    t = e.type
    if isinstance(t, ir.Type_StructLike) and not isinstance(e, (ir.ListExpression,
                                                                 ir.StructExpression)):
        ref = lw.expr(e, body)
        items = ", ".join(f"{f.name!r}: {_plain(f.type, f'{ref}.{field_attr(f.name)}')}" for f in t.fields)
        return "{" + items + "}"
    if isinstance(e, ir.StructExpression):
        items = ", ".join(f"{c.name!r}: {lw.expr(c.expr, body)}" for c in e.components)
        return "{" + items + "}"
    if isinstance(e, ir.ListExpression):
        names = [f.name for f in t.fields] if isinstance(t, ir.Type_StructLike) else None
        values = [lw.expr(c, body) for c in e.components]
        if names:
            return "{" + ", ".join(f"{n!r}: {v}" for n, v in zip(names, values,
                                                                  strict=False)) + "}"
        return "(" + "".join(v + ", " for v in values) + ")"
    return lw.expr(e, body)


def _plain(t: Any, ref: str) -> str:
    if is_aggregate(t):
        return f"{ref}._copy()"
    return ref


def struct_register_refusal(name: str, cell_type: Any, c: ir.MethodCallExpression,
                            args: list[Any]) -> P4Error | None:
    """The error for ``read``/``write`` on a ``register<S>`` whose cell type is a struct,
    header or union, else None.

    Both back ends hold bit-string cells, as BMv2 does; p4c-bm2-ss refuses such a
    read ("writing to a structure is not supported on this target"), so the switch
    refuses the program at load, at the read's result (or the written value).
    """
    value = None
    if c.method_name == "read":
        value = args[0] if len(args) == 2 else None
    elif c.method_name == "write" and len(args) == 2:
        value = args[1]
    t = cell_type if isinstance(cell_type, ir.Type_StructLike) else getattr(value, "type", None)
    if not (isinstance(t, ir.Type_StructLike) or (t is not None and is_aggregate(t))):
        return None
    where = value if value is not None else c
    text = expression_text(where) if value is not None else f"{name}.{c.method_name}"
    type_name = getattr(t, "name", "an aggregate")
    return P4Error(f"{text}: a register cell of a struct or header type is not supported "
                   f"(register '{name}' holds {type_name}; BMv2 registers hold bit<W> values "
                   "and p4c-bm2-ss refuses the program)", where.loc or c.loc)


def lower_extern_method(lw: Lowering, c: ir.MethodCallExpression, args: list[Any],
                        body: Body) -> str:
    """Source for ``instance.method(...)`` on a v1model extern object."""
    inst = c.instance
    decl = getattr(inst, "decl", None)
    var = lw.extern_vars.get(id(decl)) if decl is not None else None
    if var is None:
        raise unsupported(f"the method {c.method_name} on this object", c)
    ext = lw.externs_by_var[var].extern_type
    m = c.method_name
    if ext == "register":
        inst_info = lw.externs_by_var[var]
        refusal = struct_register_refusal(
            inst_info.decl.name, inst_info.type_args[0] if inst_info.type_args else None, c, args)
        if refusal is not None:
            raise refusal
        if m == "read":
            if len(args) == 2:
                _target(lw, args[0], f"{var}.read({lw.expr(args[1], body)})", body)
                return ""
            return f"{var}.read({lw.expr(args[0], body)})"
        if m == "write":
            value = lw.expr(args[1], body)
            if is_signed(args[1].type):
                value = f"({value} & {(1 << args[1].type.width) - 1:#x})"
            body.emit(f"{var}.write({lw.expr(args[0], body)}, {value})")
            return ""
    if ext == "counter" and m == "count":
        return f"{var}.count({lw.expr(args[0], body)}, X.ilen)"
    if ext == "direct_counter" and m == "count":
        return ""
    if ext == "meter" and m == "execute_meter":
        _target(lw, args[1], f"{var}.execute({lw.expr(args[0], body)}, X.now, X.ilen)", body)
        return ""
    if ext == "direct_meter" and m == "read":
        _target(lw, args[0], "X.dmeter", body)
        return ""
    if ext == "Checksum16" and m == "get":
        return f"X.checksum('csum16', {field_list(lw, args[0], body)}, False)"
    raise unsupported(f"the method {ext}.{m}", c)
