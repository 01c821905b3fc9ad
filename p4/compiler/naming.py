"""p4c's control-plane names: fully qualified object names and table key names."""

from __future__ import annotations

from netweft.p4.compiler import ir


def qualified_name(prefix: str | None, node: ir.Node, local_name: str) -> str:
    """The P4Info name of an object declared in a block with name ``prefix``.

    ``@name("x")`` replaces the local name; ``@name(".x")`` is absolute.
    """
    annotated = ir.name_annotation(node)
    if annotated is not None:
        if annotated.startswith("."):
            return annotated[1:]
        local_name = annotated
    return f"{prefix}.{local_name}" if prefix else local_name


def expression_text(e: ir.Expression) -> str:
    """Source-like text of an expression, as p4c writes key names (``hdr.ipv4.dstAddr``)."""
    if isinstance(e, ir.PathExpression):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, ir.Member):
        return f"{expression_text(e.expr)}.{e.member}"
    if isinstance(e, ir.TypeNameExpression):
        return getattr(e.typename, "name", None) or "error"
    if isinstance(e, ir.ArrayIndex):
        return f"{expression_text(e.left)}[{expression_text(e.index)}]"
    if isinstance(e, ir.SliceExpr):
        hi = e.hi_value if e.hi_value is not None else expression_text(e.hi)
        lo = e.lo_value if e.lo_value is not None else expression_text(e.lo)
        return f"{expression_text(e.expr)}[{hi}:{lo}]"
    if isinstance(e, ir.Constant):
        t = e.type
        if isinstance(t, ir.Type_Bits):
            return f"{t.width}{'s' if t.signed else 'w'}{e.value}"
        return str(e.value)
    if isinstance(e, ir.BoolLiteral):
        return "true" if e.value else "false"
    if isinstance(e, ir.StringLiteral):
        return f'"{e.value}"'
    if isinstance(e, ir.MethodCallExpression):
        args = ", ".join(expression_text(a.expr) for a in e.args)
        return f"{expression_text(e.method)}({args})"
    if isinstance(e, ir.Unary):
        return f"{e.op}{expression_text(e.expr)}"
    if isinstance(e, ir.Binary):
        return f"{expression_text(e.left)} {e.op} {expression_text(e.right)}"
    if isinstance(e, ir.Cast):
        from netweft.p4.compiler.typesys import type_str
        return f"({type_str(e.dest_type)}){expression_text(e.expr)}"
    if isinstance(e, ir.Mux):
        return (f"{expression_text(e.cond)} ? {expression_text(e.e1)} : "
                f"{expression_text(e.e2)}")
    if isinstance(e, ir.ListExpression):
        return "{" + ", ".join(expression_text(c) for c in e.components) + "}"
    return type(e).__name__


def key_name(e: ir.Expression) -> str | None:
    """p4c's name for a table key without ``@name`` (its TableKeyNames pass), on a
    checked expression: paths, fields (a field's ``@name`` honoured), stack
    indices, slices, ``& mask`` and ``h.isValid()`` (``h.$valid$``); None for a
    complex key, which needs ``@name``."""
    if isinstance(e, ir.PathExpression):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, ir.Member):
        base_type = e.expr.type
        fname = e.member
        if isinstance(base_type, ir.Type_Header | ir.Type_HeaderUnion) and fname == "isValid":
            fname = "$valid$"
        elif isinstance(base_type, ir.Type_StructLike):
            f = base_type.field_named(fname)
            if f is not None:
                fname = ir.name_annotation(f) or fname
        if fname.startswith("."):
            return fname[1:]
        base = key_name(e.expr)
        return None if base is None else f"{base}.{fname}"
    if isinstance(e, ir.ArrayIndex):
        left, right = key_name(e.left), key_name(e.index)
        return None if left is None or right is None else f"{left}[{right}]"
    if isinstance(e, ir.Constant):
        return hex(e.value) if e.base == 16 else str(e.value)
    if isinstance(e, ir.SliceExpr):
        base = key_name(e.expr)
        if base is None or e.hi_value is None or e.lo_value is None:
            return None
        return f"{base}[{e.hi_value}:{e.lo_value}]"
    if isinstance(e, ir.Binary) and e.op == "&":
        left, right = key_name(e.left), key_name(e.right)
        return None if left is None or right is None else f"{left} & {right}"
    if isinstance(e, ir.MethodCallExpression) and not e.args:
        m = key_name(e.method)
        if m is not None and m.endswith("$valid$"):
            return m
    if isinstance(e, ir.Cast):
        return key_name(e.expr)
    return None


def start_loc(e: ir.Expression):
    """Where an expression's text starts (a binary node's own location is its operator)."""
    while True:
        if isinstance(e, ir.Binary):
            e = e.left
        elif isinstance(e, (ir.Member, ir.SliceExpr)):
            e = e.expr
        elif isinstance(e, ir.ArrayIndex):
            e = e.left
        else:
            return e.loc
