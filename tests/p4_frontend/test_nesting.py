"""Nesting limits: a program nested deeper than netweft's explicit limits is refused
at the node that crosses them; one just inside the limits compiles and runs."""

from __future__ import annotations

import pytest

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import P4Error, compile_p4_source
from netweft.p4.compiler.nesting import (
    MAX_EXPRESSION_NESTING,
    MAX_LOOP_NESTING,
    MAX_STATEMENT_NESTING,
)

from .conftest import BODY_FIRST_LINE, SKELETON


def compiled(body: str):
    return compile_p4_source(SKELETON.format(top="", locals="", body=body), "t.p4")


def refused(body: str) -> P4Error:
    with pytest.raises(P4Error) as err:
        compiled(body)
    return err.value


def signed_chain(terms: int) -> str:
    # hdr.h.s - hdr.h.s - ...: Binary nodes nest terms - 1 deep, plus the Member/Path
    # nodes of the first operand (3 levels)
    return "hdr.h.s = " + " - ".join(["hdr.h.s"] * terms) + ";"


def test_an_expression_at_the_limit_compiles_and_runs_correctly():
    terms = MAX_EXPRESSION_NESTING - 2
    prog = compiled(signed_chain(terms))
    pkt = bytes([0, 0, 0, 0, 0, 0, 0, 5])
    out = SoftSwitch(prog).process(0, pkt)
    want = (5 - 5 * (terms - 1)) & 0xFF
    assert out[0][1][7] == want


def test_an_expression_beyond_the_limit_is_refused_where_it_crosses():
    err = refused(signed_chain(MAX_EXPRESSION_NESTING))
    assert err.loc.file == "t.p4" and err.loc.line == BODY_FIRST_LINE
    assert err.msg.startswith(f"expression nested more than {MAX_EXPRESSION_NESTING} levels deep")


def nested_ifs(n: int) -> str:
    return "if (hdr.h.a == 1) {" * n + "hdr.h.a = 2;" + "}" * n


def test_statements_at_the_limit_compile_and_beyond_are_refused():
    # the apply block is one level: n ifs nest n + 1 deep
    prog = compiled(nested_ifs(MAX_STATEMENT_NESTING - 1))
    assert SoftSwitch(prog).process(0, bytes([1] + [0] * 7))[0][1][0] == 2
    err = refused(nested_ifs(MAX_STATEMENT_NESTING))
    assert err.loc.line == BODY_FIRST_LINE
    assert err.msg.startswith(f"statements nested more than {MAX_STATEMENT_NESTING} levels")


def test_a_long_else_if_chain_is_not_nesting():
    chain = "if (hdr.h.a == 0) { hdr.h.b = 0; }" + "".join(
        f" else if (hdr.h.a == {i}) {{ hdr.h.b = {i}; }}" for i in range(1, 300))
    out = SoftSwitch(compiled(chain)).process(0, bytes([250] + [0] * 7))
    assert out[0][1][1:3] == (250).to_bytes(2, "big")


def test_loops_beyond_the_limit_are_refused():
    loops = "for (bit<8> i = 0; i < 1; i = i + 1) {" * (MAX_LOOP_NESTING + 1)
    err = refused(loops + "hdr.h.a = 2;" + "}" * (MAX_LOOP_NESTING + 1))
    assert err.msg.startswith(f"loops nested more than {MAX_LOOP_NESTING} deep")


def test_the_parser_limit_names_itself():
    err = refused("hdr.h.a = " + "(" * 5000 + "hdr.h.a" + ")" * 5000 + ";")
    assert err.loc.line == BODY_FIRST_LINE
    assert err.msg.startswith("program nested too deeply: more than")
