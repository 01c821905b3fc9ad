"""Invariants of the typed IR that the back end relies on, checked over the corpus."""

from __future__ import annotations

from netweft.p4.compiler import ir
from netweft.p4.compiler.typesys import same_type, type_str

from .test_typecheck import checked_roots, walk

UNTYPED_OK = ("<<", ">>", "++", "&&", "||", "&&&", "..")


def nodes(prog):
    seen: set[int] = set()
    for root in checked_roots(prog):
        yield from walk(root, seen)


def test_assignments_and_operators_have_matching_types(corpus_programs):
    checked = 0
    for prog in corpus_programs:
        for n in nodes(prog):
            if isinstance(n, ir.AssignmentStatement):
                assert same_type(n.left.type, n.right.type), \
                    f"{n.loc}: {type_str(n.left.type)} = {type_str(n.right.type)}"
                checked += 1
            elif isinstance(n, ir.Binary) and n.op not in UNTYPED_OK:
                lt, rt = n.left.type, n.right.type
                assert same_type(lt, rt), f"{n.loc}: {type_str(lt)} {n.op} {type_str(rt)}"
                assert not isinstance(lt, ir.Type_InfInt), f"{n.loc}: unsized operand left"
                checked += 1
    assert checked > 100


def test_literals_in_typed_positions_carry_widths(corpus_programs):
    for prog in corpus_programs:
        for n in nodes(prog):
            if isinstance(n, ir.MethodCallExpression) and n.bound_args is not None:
                params = getattr(n.target, "params", None)
                if params is None and isinstance(n.target, ir.Method):
                    params = n.target.type.params
                for p, a in zip(params or [], n.bound_args, strict=False):
                    if isinstance(a, ir.Constant) and isinstance(p.type, ir.Type_Bits):
                        assert same_type(a.type, p.type), f"{a.loc}: argument {p.name}"
            if isinstance(n, ir.SelectExpression):
                key_types = [c.type for c in n.select.components]
                for case in n.cases:
                    ks = case.keyset.components if len(key_types) > 1 and isinstance(
                        case.keyset, ir.ListExpression) else [case.keyset]
                    for k, kt in zip(ks, key_types, strict=False):
                        if isinstance(k, ir.Constant):
                            assert same_type(k.type, kt), f"{k.loc}: keyset {type_str(k.type)}"
            if isinstance(n, ir.Entry):
                for k in n.keys:
                    assert k.type is not None and not isinstance(k.type, ir.Type_InfInt)


def test_slices_and_casts_are_annotated(corpus_programs):
    seen_slice = seen_cast = 0
    for prog in corpus_programs:
        for n in nodes(prog):
            if isinstance(n, ir.SliceExpr):
                assert n.type.width == n.hi_value - n.lo_value + 1
                seen_slice += 1
            if isinstance(n, ir.Cast):
                assert n.type is n.dest_type or same_type(n.type, n.dest_type)
                assert not isinstance(n.dest_type, (ir.Type_Name, ir.Type_Typedef))
                seen_cast += 1
    assert seen_slice and seen_cast
