"""Property tests: constant folding against an independent model of P4 arithmetic."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netweft.p4.compiler import P4Error, ir
from netweft.p4.compiler.lexer import tokenize
from netweft.p4.compiler.parser import parse_tokens
from netweft.p4.compiler.preprocessor import preprocess_text
from netweft.p4.compiler.program import Program
from netweft.p4.compiler.typecheck import TypeChecker

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def fold(decls: str, name: str = "R") -> ir.Expression:
    """Check top-level constant declarations and return the folded value of ``name``."""
    ast = parse_tokens(tokenize(preprocess_text(decls, "fold.p4")))
    TypeChecker(ast, Program(source_path="fold.p4", ast=ast)).check()
    decl = next(o for o in ast.objects
                if isinstance(o, ir.Declaration_Constant) and o.name == name)
    return decl.initializer


# ---------------------------------------------------------------- the model
def to_pattern(v: int, w: int) -> int:
    return v % (1 << w)


def from_pattern(p: int, w: int, signed: bool) -> int:
    return p - (1 << w) if signed and p >= 1 << (w - 1) else p


def model_wrap(v: int, w: int, signed: bool) -> int:
    return from_pattern(to_pattern(v, w), w, signed)


def model_binary(op: str, a: int, b: int, w: int, signed: bool) -> int:
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    if op == "+":
        return model_wrap(a + b, w, signed)
    if op == "-":
        return model_wrap(a - b, w, signed)
    if op == "*":
        return model_wrap(a * b, w, signed)
    if op == "|+|":
        return min(hi, max(lo, a + b))
    if op == "|-|":
        return min(hi, max(lo, a - b))
    if op in ("&", "|", "^"):
        pa, pb = to_pattern(a, w), to_pattern(b, w)
        p = pa & pb if op == "&" else pa | pb if op == "|" else pa ^ pb
        return from_pattern(p, w, signed)
    if op == "/":
        return a // b
    if op == "%":
        return a % b
    raise AssertionError(op)


def tname(w: int, signed: bool) -> str:
    return f"{'int' if signed else 'bit'}<{w}>"


widths = st.integers(min_value=1, max_value=70)


@st.composite
def typed_operands(draw, allow_signed=True):
    w = draw(widths)
    signed = draw(st.booleans()) if allow_signed else False
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return w, signed, draw(st.integers(lo, hi)), draw(st.integers(lo, hi))


@SETTINGS
@given(typed_operands(), st.sampled_from(["+", "-", "*", "|+|", "|-|", "&", "|", "^"]))
def test_binary_operators_wrap_and_saturate(ops, op):
    w, signed, a, b = ops
    t = tname(w, signed)
    r = fold(f"const {t} A = ({t})({a}); const {t} B = ({t})({b}); const {t} R = A {op} B;")
    assert isinstance(r, ir.Constant)
    assert (r.type.width, r.type.signed) == (w, signed)
    assert r.value == model_binary(op, a, b, w, signed)


@SETTINGS
@given(typed_operands(allow_signed=False), st.sampled_from(["/", "%"]))
def test_unsigned_division_and_modulo(ops, op):
    w, signed, a, b = ops
    t = tname(w, signed)
    src = f"const {t} A = {a}; const {t} B = {b}; const {t} R = A {op} B;"
    if b == 0:
        with pytest.raises(P4Error, match="division by zero"):
            fold(src)
        return
    assert fold(src).value == model_binary(op, a, b, w, signed)


@SETTINGS
@given(typed_operands(), st.integers(0, 80), st.sampled_from(["<<", ">>"]))
def test_shifts(ops, amount, op):
    w, signed, a, _ = ops
    t = tname(w, signed)
    r = fold(f"const {t} A = ({t})({a}); const {t} R = A {op} 8w{amount % 256};")
    if op == "<<":
        expected = 0 if amount >= w else model_wrap(a << amount, w, signed)
    elif signed:
        expected = a >> amount            # arithmetic shift keeps the sign
    else:
        expected = 0 if amount >= w else a >> amount
    assert r.value == expected


@SETTINGS
@given(typed_operands(), st.data())
def test_slices(ops, data):
    w, signed, a, _ = ops
    hi = data.draw(st.integers(0, w - 1))
    lo = data.draw(st.integers(0, hi))
    t = tname(w, signed)
    r = fold(f"const {t} A = ({t})({a}); const bit<{hi - lo + 1}> R = A[{hi}:{lo}];")
    assert r.value == (to_pattern(a, w) >> lo) % (1 << (hi - lo + 1))
    assert (r.type.width, r.type.signed) == (hi - lo + 1, False)


@SETTINGS
@given(typed_operands(), typed_operands(allow_signed=False))
def test_concatenation(left, right):
    wl, sl, a, _ = left
    wr, _, b, _ = right
    tl = tname(wl, sl)
    r = fold(f"const {tl} A = ({tl})({a}); const bit<{wr}> B = {b};"
             f" const {tname(wl + wr, sl)} R = A ++ B;")
    pattern = (to_pattern(a, wl) << wr) | b
    assert r.value == from_pattern(pattern, wl + wr, sl)
    assert (r.type.width, r.type.signed) == (wl + wr, sl)


@SETTINGS
@given(typed_operands(), widths, st.booleans())
def test_casts_between_widths_and_signedness(ops, w2, s2):
    w, signed, a, _ = ops
    t, t2 = tname(w, signed), tname(w2, s2)
    r = fold(f"const {t} A = ({t})({a}); const {t2} R = ({t2}) A;")
    # extend by the source's signedness (the value), then truncate/reinterpret
    assert r.value == model_wrap(a, w2, s2)


@SETTINGS
@given(typed_operands(), st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
def test_comparisons(ops, op):
    w, signed, a, b = ops
    t = tname(w, signed)
    r = fold(f"const {t} A = ({t})({a}); const {t} B = ({t})({b}); const bool R = A {op} B;")
    expected = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}[op]
    assert isinstance(r, ir.BoolLiteral) and r.value == expected


@SETTINGS
@given(st.integers(-(1 << 40), 1 << 40), st.integers(1, 64), st.booleans())
def test_integer_literals_convert_to_declared_type(value, w, signed):
    t = tname(w, signed)
    assert fold(f"const {t} R = {value};").value == \
        model_wrap(value, w, signed)


@SETTINGS
@given(typed_operands())
def test_negation_and_complement(ops):
    w, signed, a, _ = ops
    t = tname(w, signed)
    neg = fold(f"const {t} A = ({t})({a}); const {t} R = -A;")
    inv = fold(f"const {t} A = ({t})({a}); const {t} R = ~A;")
    assert neg.value == model_wrap(-a, w, signed)
    assert inv.value == from_pattern(to_pattern(a, w) ^ ((1 << w) - 1), w, signed)


def test_mixed_widths_are_rejected_by_folding_too():
    with pytest.raises(P4Error, match="different types: bit<8> and bit<16>"):
        fold("const bit<8> A = 1; const bit<16> B = 2; const bit<16> R = A + B;")


def test_untyped_integer_arithmetic_is_exact():
    r = fold("const int R = (1 << 100) - 1;")
    assert r.value == (1 << 100) - 1 and isinstance(r.type, ir.Type_InfInt)


def test_huge_untyped_constants_are_rejected_not_computed_forever():
    with pytest.raises(P4Error, match="integer constant larger than 65536 bits"):
        fold("const int A = 1 << 60000; const int B = A * A; const int R = B * B;")


# ---------------------------------------------------------------- nested expressions
@st.composite
def typed_expression(draw, w: int, signed: bool, depth: int = 0):
    """(P4 text, model value) of a random expression of type bit<w>/int<w>."""
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    t = tname(w, signed)
    kinds = ["leaf"] if depth >= 3 else ["leaf", "arith", "shift", "cast", "unary", "mux",
                                         "slice", "concat"]
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        v = draw(st.integers(lo, hi))
        return (f"{w}w{v}" if not signed else f"({t})({v})"), v
    if kind == "arith":
        op = draw(st.sampled_from(["+", "-", "*", "|+|", "|-|", "&", "|", "^"]))
        a, va = draw(typed_expression(w, signed, depth + 1))
        b, vb = draw(typed_expression(w, signed, depth + 1))
        return f"({a} {op} {b})", model_binary(op, va, vb, w, signed)
    if kind == "shift":
        a, va = draw(typed_expression(w, signed, depth + 1))
        k = draw(st.integers(0, w + 2))
        op = draw(st.sampled_from(["<<", ">>"]))
        if op == "<<":
            v = 0 if k >= w else model_wrap(va << k, w, signed)
        else:
            v = va >> k if signed else (0 if k >= w else va >> k)
        return f"({a} {op} 8w{k})", v
    if kind == "cast":
        w2, s2 = draw(st.integers(1, 40)), draw(st.booleans())
        a, va = draw(typed_expression(w2, s2, depth + 1))
        return f"(({t})({a}))", model_wrap(va, w, signed)
    if kind == "unary":
        a, va = draw(typed_expression(w, signed, depth + 1))
        if draw(st.booleans()):
            return f"(-({a}))", model_wrap(-va, w, signed)
        return f"(~({a}))", from_pattern(to_pattern(va, w) ^ ((1 << w) - 1), w, signed)
    if kind == "mux":
        a, va = draw(typed_expression(w, signed, depth + 1))
        b, vb = draw(typed_expression(w, signed, depth + 1))
        c1, vc1 = draw(typed_expression(8, False, depth + 1))
        c2, vc2 = draw(typed_expression(8, False, depth + 1))
        return f"(({c1} < {c2}) ? {a} : {b})", va if vc1 < vc2 else vb
    if kind == "slice" and not signed:
        extra = draw(st.integers(0, 8))
        w2, s2 = w + extra, draw(st.booleans())
        a, va = draw(typed_expression(w2, s2, depth + 1))
        low = draw(st.integers(0, extra))
        return f"({a})[{low + w - 1}:{low}]", (to_pattern(va, w2) >> low) % (1 << w)
    if kind == "concat" and w >= 2:
        w1 = draw(st.integers(1, w - 1))
        a, va = draw(typed_expression(w1, signed, depth + 1))
        b, vb = draw(typed_expression(w - w1, draw(st.booleans()), depth + 1))
        pattern = (to_pattern(va, w1) << (w - w1)) | to_pattern(vb, w - w1)
        return f"({a} ++ {b})", from_pattern(pattern, w, signed)
    v = draw(st.integers(lo, hi))
    return f"({t})({v})", v


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 40), st.booleans(), st.data())
def test_nested_expressions_fold_like_the_model(w, signed, data):
    text, value = data.draw(typed_expression(w, signed))
    r = fold(f"const {tname(w, signed)} R = {text};")
    assert isinstance(r, ir.Constant), text
    assert r.value == value, text
