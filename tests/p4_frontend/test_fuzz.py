"""Fuzzing the front end: whatever the input, compile succeeds or raises P4Error."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netweft.p4.compiler import P4Error, compile_p4_source
from netweft.p4.compiler.lexer import KEYWORDS, OPERATORS

from .conftest import PROGRAMS

CORPUS = {p.name: p.read_text() for p in sorted(PROGRAMS.glob("*.p4"))}

VOCABULARY = sorted(KEYWORDS) + list(OPERATORS) + [
    "x", "hdr", "meta", "standard_metadata", "h_t", "bit<8>", "8w255", "0x10", "4s7", "1",
    '"s"', "packet_in", "V1Switch", "main", "NoAction", "mark_to_drop", "register", "#",
    "#include <core.p4>\n", "#define A 1\n", "#if A\n", "#endif\n", "\n", "/*", "*/", "//",
    "start", "accept", "key", "actions", "apply", "isValid", "extract", "priority", "lpm",
    # contextual words of newer P4-16 versions
    "for", "break", "continue", "list", "list<bit<8>>", "static_assert", "@priority(1)",
]


def check(source: str) -> None:
    try:
        compile_p4_source(source, "fuzz.p4")
    except P4Error as exc:
        text = str(exc)
        assert text.startswith("fuzz.p4:") or ".p4:" in text, text
        assert "internal front-end error" not in text, text


FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(st.lists(st.sampled_from(VOCABULARY), max_size=60))
def test_token_soup(tokens):
    check(" ".join(tokens))


@FUZZ
@given(st.lists(st.sampled_from(VOCABULARY), max_size=40))
def test_token_soup_after_v1model(tokens):
    check("#include <core.p4>\n#include <v1model.p4>\n" + " ".join(tokens))


@st.composite
def mutated_program(draw):
    name = draw(st.sampled_from(sorted(CORPUS)))
    text = CORPUS[name]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        pos = draw(st.integers(0, len(text)))
        if kind == "delete":
            end = min(len(text), pos + draw(st.integers(1, 40)))
            text = text[:pos] + text[end:]
        elif kind == "insert":
            text = text[:pos] + " " + draw(st.sampled_from(VOCABULARY)) + " " + text[pos:]
        elif kind == "duplicate":
            end = min(len(text), pos + draw(st.integers(1, 120)))
            text = text[:pos] + text[pos:end] + text[pos:]
        else:
            end = min(len(text), pos + draw(st.integers(1, 10)))
            text = text[:pos] + draw(st.sampled_from(VOCABULARY)) + text[end:]
    return text


@FUZZ
@given(mutated_program())
def test_mutated_real_programs(text):
    check(text)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=200))
def test_arbitrary_text(text):
    check(text)


def test_deeply_nested_input_is_an_error_not_a_crash():
    check("const bit<8> A = " + "(" * 5000 + "1" + ")" * 5000 + ";")
    check("control C() { apply { " + "{" * 3000 + "}" * 3000 + " } }")
