"""Mutated versions of real programs either compile or fail with P4Error
carrying a file:line:col location; nothing else escapes the front end."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .harness import PROGRAMS_DIR, REPO_P4_DIR

LOCATION = re.compile(r"^.+?:\d+:\d+: .+", re.S)
SOURCES = [
    (REPO_P4_DIR / "basic_forward.p4").read_text(),
    (PROGRAMS_DIR / "tables.p4").read_text(),
    (PROGRAMS_DIR / "parser_features.p4").read_text(),
]
FRAGMENTS = [";", "}", "{", "(", ")", "bit<8>", "int<4>", "0x", "8w", "<", ">>", "apply",
             "#if 1", "#endif", '"', "/*", "@name(", "..", "&&&", "transition", "select(",
             "header", "varbit<0>", "1/0", "-", "?", ":", "[3:5]", "++", "error.", "_", "\n"]


@st.composite
def mutated_program(draw) -> str:
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 40)):]
        elif kind == "insert":
            text = text[:pos] + draw(st.sampled_from(FRAGMENTS)) + text[pos:]
        else:
            span = draw(st.integers(1, 80))
            text = text[:pos] + text[pos:pos + span] + text[pos:]
    return text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated_program())
def test_mutated_programs_never_crash_the_front_end(text):
    from netweft.p4.compiler import P4Error, compile_p4

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutant.p4"
        path.write_text(text)
        (Path(tmp) / "include").mkdir()
        for name in ("headers.p4", "parsers.p4"):
            (Path(tmp) / "include" / name).write_text((REPO_P4_DIR / "include" / name).read_text())
        try:
            compile_p4(str(path), include_dirs=(tmp,))
        except P4Error as err:
            assert LOCATION.match(str(err)), str(err)
