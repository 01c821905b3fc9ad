"""Operations on canonical P4 types: equality, printing, widths, classification."""

from __future__ import annotations

from netweft.p4.compiler import ir


def same_type(a: ir.Type, b: ir.Type) -> bool:
    """Structural equality of canonical types (declarations compare by identity)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, ir.Type_Bits):
        return a.width == b.width and a.signed == b.signed
    if isinstance(a, ir.Type_Varbits):
        return a.size == b.size
    if isinstance(a, (ir.Type_InfInt, ir.Type_Boolean, ir.Type_String, ir.Type_Void,
                      ir.Type_Error, ir.Type_MatchKind, ir.Type_State, ir.Type_Dontcare)):
        return True
    if isinstance(a, ir.Type_Stack):
        return a.size == b.size and same_type(a.element, b.element)
    if isinstance(a, ir.Type_Tuple):
        return len(a.components) == len(b.components) and all(
            same_type(x, y) for x, y in zip(a.components, b.components, strict=True))
    if isinstance(a, (ir.Type_Set, ir.Type_List)):
        return same_type(a.element, b.element)
    if isinstance(a, ir.Type_Var):
        return a.name == b.name
    if isinstance(a, ir.Type_ExternInstance):
        return a.extern is b.extern and len(a.type_args) == len(b.type_args) and all(
            same_type(x, y) for x, y in zip(a.type_args, b.type_args, strict=True))
    if isinstance(a, (ir.Type_Table, ir.Type_TableApplyResult, ir.Type_ActionEnum)):
        return a.table is b.table
    return False


def type_str(t: ir.Type | None) -> str:
    """A readable name of a type for error messages."""
    if t is None:
        return "<unknown>"
    if isinstance(t, ir.Type_Bits):
        return f"{'int' if t.signed else 'bit'}<{t.width}>"
    if isinstance(t, ir.Type_InfInt):
        return "int"
    if isinstance(t, ir.Type_Varbits):
        return f"varbit<{t.size}>"
    simple = {ir.Type_Boolean: "bool", ir.Type_String: "string", ir.Type_Void: "void",
              ir.Type_Error: "error", ir.Type_MatchKind: "match_kind", ir.Type_State: "state",
              ir.Type_Dontcare: "_"}
    for cls, name in simple.items():
        if isinstance(t, cls):
            return name
    if isinstance(t, ir.Type_Stack):
        return f"{type_str(t.element)}[{t.size}]"
    if isinstance(t, ir.Type_Tuple):
        return "tuple<" + ", ".join(type_str(c) for c in t.components) + ">"
    if isinstance(t, ir.Type_Set):
        return f"set<{type_str(t.element)}>"
    if isinstance(t, ir.Type_List):
        return f"list<{type_str(t.element)}>"
    if isinstance(t, ir.Type_ExternInstance):
        if t.type_args:
            return f"{t.extern.name}<" + ", ".join(type_str(c) for c in t.type_args) + ">"
        return t.extern.name
    if isinstance(t, ir.Type_Table):
        return f"table {t.table.name}"
    if isinstance(t, ir.Type_TableApplyResult):
        return f"result of {t.table.name}.apply()"
    if isinstance(t, ir.Type_ActionEnum):
        return f"action_run of {t.table.name}"
    if isinstance(t, ir.Type_Action):
        return f"action {t.action.name}"
    if isinstance(t, ir.Type_Specialized):
        return f"{t.base.name}<" + ", ".join(type_str(c) for c in t.args) + ">"
    name = getattr(t, "name", None)
    if name:
        return str(name)
    return type(t).__name__


def is_numeric(t: ir.Type) -> bool:
    return isinstance(t, (ir.Type_Bits, ir.Type_InfInt))


def bit_width(t: ir.Type) -> int | None:
    """Width in bits of a fixed-size serializable type (bits, bool, ser. enum,
    header, struct of those, stack); None when not fixed-size."""
    if isinstance(t, ir.Type_Bits):
        return t.width
    if isinstance(t, ir.Type_Boolean):
        return 1
    if isinstance(t, ir.Type_SerEnum):
        return bit_width(t.underlying)
    if isinstance(t, ir.Type_Varbits):
        return None
    if isinstance(t, (ir.Type_Header, ir.Type_Struct)):
        total = 0
        for f in t.fields:
            w = bit_width(f.type)
            if w is None:
                return None
            total += w
        return total
    if isinstance(t, ir.Type_Stack):
        w = bit_width(t.element)
        return None if w is None else w * t.size
    return None


def min_size_in_bits(t: ir.Type) -> int | None:
    """Like ``bit_width`` but counts varbit fields as 0 (P4's minSizeInBits)."""
    if isinstance(t, ir.Type_Varbits):
        return 0
    if isinstance(t, (ir.Type_Header, ir.Type_Struct)):
        total = 0
        for f in t.fields:
            w = min_size_in_bits(f.type)
            if w is None:
                return None
            total += w
        return total
    if isinstance(t, ir.Type_HeaderUnion):
        sizes = [min_size_in_bits(f.type) for f in t.fields]
        return None if any(s is None for s in sizes) else min(sizes or [0])  # type: ignore
    return bit_width(t)


def contains_type_var(t: ir.Type) -> bool:
    if isinstance(t, ir.Type_Var):
        return True
    if isinstance(t, ir.Type_Tuple):
        return any(contains_type_var(c) for c in t.components)
    if isinstance(t, (ir.Type_Stack, ir.Type_List)):
        return contains_type_var(t.element)
    if isinstance(t, ir.Type_ExternInstance):
        return any(contains_type_var(c) for c in t.type_args)
    return False


def is_header_like(t: ir.Type) -> bool:
    return isinstance(t, (ir.Type_Header, ir.Type_HeaderUnion))
