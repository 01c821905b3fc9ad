"""P4 annotations as p4c writes them into P4Info: ``annotations`` strings (its ToP4
printer), ``structured_annotations`` and ``doc`` (``@brief``/``@description``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from p4.config.v1 import p4info_pb2, p4types_pb2

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

# never written as annotation strings: P4Info carries them elsewhere
_SKIPPED = frozenset({"name", "id", "brief", "description"})

# annotations whose body p4c parses as expressions (printed "a, b"); others keep
# their tokens (printed separated by single spaces)
_PARSED = frozenset({
    "name", "deprecated", "noWarn", "length", "synchronous", "field_list", "match",
    "controller_header", "id", "brief", "description", "max_group_size",
    "selector_size_semantics", "max_member_weight", "p4runtime_translation",
})


def _expression_p4(e: ir.Expression) -> str:
    if isinstance(e, ir.StringLiteral):
        return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(e, ir.BoolLiteral):
        return "true" if e.value else "false"
    if isinstance(e, ir.Constant):
        if e.base == 16:
            return hex(e.value)
        return str(e.value)
    from netweft.p4.compiler.naming import expression_text
    return expression_text(e)


def annotation_text(a: ir.Annotation) -> str:
    """``@name(body)`` as p4c's ToP4 prints an annotation."""
    if not a.body:
        return "@" + a.name
    if a.name in _PARSED and a.args:
        return "@" + a.name + "(" + ", ".join(_expression_p4(x) for x in a.args) + ")"
    return "@" + a.name + "(" + " ".join(a.body) + ")"


_FOLD_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "&&": lambda a, b: a and b, "||": lambda a, b: a or b, "&": lambda a, b: a & b,
    "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
}


def fold_literal(e: ir.Expression, constants: Mapping[str, ir.Expression]):
    """The value of a structured annotation's expression (p4c folds them): a str,
    bool or int, or None when it is not a compile-time literal."""
    if isinstance(e, ir.StringLiteral):
        return e.value
    if isinstance(e, ir.BoolLiteral):
        return e.value
    if isinstance(e, ir.Constant):
        return e.value
    if isinstance(e, ir.PathExpression) and e.name in constants:
        return fold_literal(constants[e.name], constants)
    if isinstance(e, ir.Unary):
        v = fold_literal(e.expr, constants)
        if e.op == "!" and isinstance(v, bool):
            return not v
        if e.op == "-" and isinstance(v, int) and not isinstance(v, bool):
            return -v
        return None
    if isinstance(e, ir.Binary) and e.op in _FOLD_OPS:
        a, b = fold_literal(e.left, constants), fold_literal(e.right, constants)
        if a is None or b is None:
            return None
        return _FOLD_OPS[e.op](a, b)
    return None


def _literal(e: ir.Expression, out: p4types_pb2.Expression,
             constants: Mapping[str, ir.Expression]) -> None:
    v = fold_literal(e, constants)
    if isinstance(v, bool):
        out.bool_value = v
    elif isinstance(v, int):
        out.int64_value = v
    elif isinstance(v, str):
        out.string_value = v
    else:
        raise P4Error("structured annotation expression must be a compile-time value",
                      e.loc)


def add_annotations(message, node: ir.Node | None,
                    skip: Callable[[str], bool] = lambda _name: False,
                    constants: Mapping[str, ir.Expression] | None = None) -> None:
    """Append ``node``'s annotations to ``message.annotations`` /
    ``message.structured_annotations`` (p4c's ``addAnnotations``; ``constants``
    names the global constants a structured annotation may use)."""
    constants = constants or {}
    for a in getattr(node, "annotations", None) or ():
        if a.structured:
            sa = message.structured_annotations.add(name=a.name)
            if a.kv is not None:
                for k, v in a.kv.items():
                    kv = sa.kv_pair_list.kv_pairs.add(key=k)
                    _literal(v, kv.value, constants)
            else:
                sa.expression_list.SetInParent()
                for v in a.args:
                    _literal(v, sa.expression_list.expressions.add(), constants)
            continue
        if a.name in _SKIPPED or skip(a.name):
            continue
        message.annotations.append(annotation_text(a))


def add_documentation(message, node: ir.Node | None) -> None:
    """``doc`` from ``@brief("...")`` and ``@description("...")``."""
    brief = description = None
    for a in getattr(node, "annotations", None) or ():
        if a.name in ("brief", "description") and a.args and isinstance(a.args[0],
                                                                         ir.StringLiteral):
            if a.name == "brief":
                brief = a.args[0].value
            else:
                description = a.args[0].value
    if brief is not None:
        message.doc.brief = brief
    if description is not None:
        message.doc.description = description


def set_preamble(preamble: p4info_pb2.Preamble, ident: int, name: str, alias: str,
                 node: ir.Node | None,
                 skip: Callable[[str], bool] = lambda _name: False,
                 constants: Mapping[str, ir.Expression] | None = None) -> None:
    """Fill a P4Info preamble as p4c's ``setPreamble``."""
    preamble.id = ident
    preamble.name = name
    preamble.alias = alias
    add_annotations(preamble, node, skip, constants)
    add_documentation(preamble, node)


def key_values(a: ir.Annotation) -> dict[str, ir.Expression | str]:
    """The ``key=value`` pairs of an annotation such as ``@pkginfo(name="x", ...)``:
    parsed values where the parser kept them, else the value tokens' text."""
    if a.kv is not None:
        return dict(a.kv)
    out: dict[str, ir.Expression | str] = {}
    toks = a.body
    i = 0
    while i + 2 < len(toks) + 0 and toks[i + 1] == "=":
        out[toks[i]] = toks[i + 2]
        i += 3
        if i < len(toks) and toks[i] == ",":
            i += 1
    return out


def has_annotation(node: ir.Node | None, name: str) -> bool:
    return node is not None and ir.find_annotation(node, name) is not None
