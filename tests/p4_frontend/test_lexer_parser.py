"""Lexer and parser: tokens, literals, precedence, ambiguities and syntax errors."""

from __future__ import annotations

import pytest

from netweft.p4.compiler import P4Error, compile_p4_source, ir
from netweft.p4.compiler.lexer import parse_int_literal, tokenize
from netweft.p4.compiler.naming import expression_text
from netweft.p4.compiler.parser import Parser
from netweft.p4.compiler.preprocessor import preprocess_text


def toks(text: str):
    return [(t.kind, t.text) for t in tokenize(preprocess_text(text))][:-1]


def parse_expr(text: str, type_names=()):
    p = Parser(tokenize(preprocess_text(text)))
    p.type_names.update(type_names)
    e = p.parse_expression()
    assert p.peek().kind == "EOF", f"trailing tokens after {text!r}"
    return e


def shape(e: ir.Expression) -> str:
    """Fully parenthesised rendering that exposes the tree structure."""
    if isinstance(e, ir.Binary):
        return f"({shape(e.left)} {e.op} {shape(e.right)})"
    if isinstance(e, ir.Unary):
        return f"({e.op}{shape(e.expr)})"
    if isinstance(e, ir.Mux):
        return f"({shape(e.cond)} ? {shape(e.e1)} : {shape(e.e2)})"
    if isinstance(e, ir.Cast):
        return f"(cast {shape(e.expr)})"
    if isinstance(e, ir.MethodCallExpression):
        targs = f"<{len(e.type_args)}>" if e.type_args else ""
        return f"{shape(e.method)}{targs}({', '.join(shape(a.expr) for a in e.args)})"
    if isinstance(e, ir.SliceExpr):
        return f"{shape(e.expr)}[{shape(e.hi)}:{shape(e.lo)}]"
    if isinstance(e, ir.ArrayIndex):
        return f"{shape(e.left)}[{shape(e.index)}]"
    if isinstance(e, ir.Member):
        return f"{shape(e.expr)}.{e.member}"
    return expression_text(e)


@pytest.mark.parametrize("text, value", [
    ("42", (42, None, False, 10)),
    ("0x2A", (42, None, False, 16)),
    ("0b101_010", (42, None, False, 2)),
    ("0o52", (42, None, False, 8)),
    ("0d42", (42, None, False, 10)),
    ("8w42", (42, 8, False, 10)),
    ("16w0xFF_FF", (0xFFFF, 16, False, 16)),
    ("4s3", (3, 4, True, 10)),
])
def test_integer_literals(text, value):
    from netweft.p4.compiler.errors import SourceLoc
    assert parse_int_literal(text, SourceLoc("x", 1, 1)) == value


def test_shift_right_is_two_tokens_and_keywords_are_recognised():
    assert toks("a >> b") == [("IDENT", "a"), ("OP", ">"), ("OP", ">"), ("IDENT", "b")]
    assert toks("&&& |+| |-| ++ ..") == [("OP", "&&&"), ("OP", "|+|"), ("OP", "|-|"),
                                           ("OP", "++"), ("OP", "..")]
    assert toks("table key") == [("KEYWORD", "table"), ("IDENT", "key")]


@pytest.mark.parametrize("text, expected", [
    ("a + b * c", "(a + (b * c))"),
    ("a - b - c", "((a - b) - c)"),
    ("a << 1 + 2", "(a << (1 + 2))"),
    ("a & b == c", "((a & b) == c)"),
    ("a | b ^ c & d", "(a | (b ^ (c & d)))"),
    ("a == b && c != d || e", "(((a == b) && (c != d)) || e)"),
    ("a < b == c > d", "((a < b) == (c > d))"),
    ("x ++ y + z", "((x ++ y) + z)"),
    ("a |+| b * c", "(a |+| (b * c))"),
    ("-a * ~b", "((-a) * (~b))"),
    ("!a && b", "((!a) && b)"),
    ("c ? a : b ? d : e", "(c ? a : (b ? d : e))"),
    ("a >> 2 >> 1", "((a >> 2) >> 1)"),
    ("h.f[7:0] ++ s[1].g", "(h.f[7:0] ++ s[1].g)"),
    ("(bit<8>) a + b", "((cast a) + b)"),
    ("(a) + b", "(a + b)"),
    ("(T) -a", "(cast (-a))"),
    ("pkt.lookahead<bit<8>>()", "pkt.lookahead<1>()"),
    ("f<bit<8>, T>(x)", "f<2>(x)"),
    ("a < b && c > d", "((a < b) && (c > d))"),
])
def test_expression_precedence(text, expected):
    assert shape(parse_expr(text, type_names={"T"})) == expected


def test_list_struct_and_invalid_header_initialisers():
    assert isinstance(parse_expr("{a, b}"), ir.ListExpression)
    s = parse_expr("{f = 1, g = b}")
    assert isinstance(s, ir.StructExpression) and [c.name for c in s.components] == ["f", "g"]
    assert isinstance(parse_expr("{#}"), ir.InvalidHeader)
    c = parse_expr("(T){ f = 1 }", type_names={"T"})
    assert isinstance(c, ir.Cast) and isinstance(c.expr, ir.StructExpression)


def test_nested_generic_types_close_with_double_angle():
    src = """
#include <core.p4>
extern Box<T> { Box(); T get(); }
struct S { bit<8> a; }
control C() {
    Box<tuple<bit<8>, bit<16>>>() b1;
    Box<bit<32>>() b2;
    apply { }
}
"""
    # everything parses and checks; only the missing package instance is reported
    with pytest.raises(P4Error) as info:
        compile_p4_source(src, "g.p4")
    assert "no 'main' package instance" in str(info.value)


def test_missing_main_is_reported():
    with pytest.raises(P4Error, match="no 'main' package instance"):
        compile_p4_source("#include <core.p4>\nconst bit<8> A = 1;\n", "m.p4")


SYNTAX_ERRORS = [
    # (source lines after the includes, line, col, message)
    ("header h_t { bit<8> a }", 3, 23, "expected ';' after field but found '}'"),
    ("const bit<8> A = 1\nconst bit<8> B = 2;", 4, 1,
     "expected ';' after constant declaration but found 'const'"),
    ("struct s { foo_t a; }", 3, 12, "unknown type 'foo_t'"),
    ("control C() { apply { x == 1; } }", 3, 25, "expected '=' (assignment) but found '=='"),
    ("control C() { apply { if x { } } }", 3, 26, "expected '(' after 'if' but found 'x'"),
    ("parser P() { state start { transition } }", 3, 39,
     "expected a state name or select but found '}'"),
    ("control C() { apply { } ", 4, 1, "expected '}' at end of control but found end of input"),
    ("control C() { table t { key = { a : exact } } apply { } }", 3, 43,
     "expected ';' after key element but found '}'"),
    ("bit<8> x = 1;", 3, 8, "variables cannot be declared at the top level "
                            "(use 'const' for constants)"),
    ("control C() { apply { a = ; } }", 3, 27, "expected an expression but found ';'"),
    ("@", 4, 1, "expected an annotation name but found end of input"),
    ('const string s = "abc;', 3, 18, "unterminated string literal"),
    ("const bit<8> A = 8w3 $ 1;", 3, 22, "unexpected character '$'"),
]


@pytest.mark.parametrize("src, line, col, message", SYNTAX_ERRORS)
def test_syntax_errors_point_at_the_offending_token(src, line, col, message):
    text = "#include <core.p4>\n#include <v1model.p4>\n" + src + "\n"
    with pytest.raises(P4Error) as info:
        compile_p4_source(text, "bad.p4")
    assert str(info.value) == f"bad.p4:{line}:{col}: {message}"


def test_annotations_plain_structured_and_pragma():
    src = """#include <core.p4>
@pragma netronome_entries 100
@structured[k = "v", n = 1 + 1] @listed[1, "two"] @plain @args("x", 3)
const bit<8> A = 1;
"""
    with pytest.raises(P4Error, match="no 'main'"):
        compile_p4_source(src, "a.p4")
    p = Parser(tokenize(preprocess_text(src)))
    prog = p.parse_program()
    const = prog.objects[-1]
    anns = {a.name: a for a in const.annotations}
    assert anns["netronome_entries"].body == ["100"]
    assert set(anns["structured"].kv) == {"k", "n"}
    assert anns["structured"].kv["k"].value == "v"
    assert [expression_text(a) for a in anns["listed"].args] == ['1', '"two"']
    assert anns["plain"].args == [] and anns["plain"].body == []
    assert [expression_text(a) for a in anns["args"].args] == ['"x"', "3"]


def test_unknown_type_suggests_a_declared_one():
    src = ("#include <core.p4>\n#include <v1model.p4>\nheader eth_t { bit<8> a; }\n"
           "struct s { ethh_t e; }\n")
    with pytest.raises(P4Error) as info:
        compile_p4_source(src, "u.p4")
    assert str(info.value) == "u.p4:4:12: unknown type 'ethh_t' (did you mean 'eth_t'?)"


@pytest.mark.parametrize("literal, message", [
    ("8w0x", "malformed integer literal '8w0x'"),
    ("0b102", "malformed integer literal '0b102'"),
    ("12abc", "malformed integer literal '12abc'"),
    ("9" * 5000, "integer literal too long (more than 4000 digits)"),
])
def test_malformed_integer_literals(literal, message):
    with pytest.raises(P4Error) as info:
        compile_p4_source(f"const int A = {literal};\n", "lit.p4")
    assert str(info.value) == f"lit.p4:1:15: {message}"
