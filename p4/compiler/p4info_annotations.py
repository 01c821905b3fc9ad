"""P4 annotations as p4c writes them into P4Info: ``annotations`` strings (its ToP4
printer), ``structured_annotations`` and ``doc`` (``@brief``/``@description``)."""

from __future__ import annotations

from collections.abc import Callable

from p4.config.v1 import p4info_pb2, p4types_pb2

from netweft.p4.compiler import ir

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


def _literal(e: ir.Expression, out: p4types_pb2.Expression) -> None:
    if isinstance(e, ir.StringLiteral):
        out.string_value = e.value
    elif isinstance(e, ir.BoolLiteral):
        out.bool_value = e.value
    elif isinstance(e, ir.Constant):
        out.int64_value = e.value


def add_annotations(message, node: ir.Node | None,
                    skip: Callable[[str], bool] = lambda _name: False) -> None:
    """Append ``node``'s annotations to ``message.annotations`` /
    ``message.structured_annotations`` (p4c's ``addAnnotations``)."""
    for a in getattr(node, "annotations", None) or ():
        if a.kv is not None:
            sa = message.structured_annotations.add(name=a.name)
            for k, v in a.kv.items():
                kv = sa.kv_pair_list.kv_pairs.add(key=k)
                _literal(v, kv.value)
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
                 skip: Callable[[str], bool] = lambda _name: False) -> None:
    """Fill a P4Info preamble as p4c's ``setPreamble``."""
    preamble.id = ident
    preamble.name = name
    preamble.alias = alias
    add_annotations(preamble, node, skip)
    add_documentation(preamble, node)


def has_annotation(node: ir.Node | None, name: str) -> bool:
    return node is not None and ir.find_annotation(node, name) is not None
