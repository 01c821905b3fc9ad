"""Preprocessor: macros, conditionals, includes and source locations."""

from __future__ import annotations

import pytest

from netweft.p4.compiler import P4Error
from netweft.p4.compiler.preprocessor import preprocess_file, preprocess_text


def lines(text: str) -> list[str]:
    return [ln.strip() for ln in preprocess_text(text).text.split("\n") if ln.strip()]


def test_object_and_function_macros_expand():
    out = lines("#define W 8\n#define ADD(a, b) ((a) + (b))\nbit<W> x = ADD(1, W);\n")
    assert out == ["bit<8> x = ((1) + (8));"]


def test_macros_do_not_expand_inside_strings_or_identifiers():
    out = lines('#define A 1\nlog("A") AB A;\n')
    assert out == ['log("A") AB 1;']


def test_nested_and_recursive_macros_terminate():
    out = lines("#define X Y + 1\n#define Y X\nX;\n")
    assert out == ["X + 1;"]


def test_stringify_and_token_paste():
    out = lines("#define S(x) #x\n#define CAT(a, b) a ## b\nS(hello) CAT(foo, bar);\n")
    assert out == ['"hello" foobar;']


def test_if_elif_else_with_defined_and_arithmetic():
    src = """#define V 3
#if V > 5
big
#elif defined(V) && (V * 2) == 6
middle
#else
small
#endif
#ifdef NOPE
nope
#endif
#ifndef NOPE
yes
#endif
"""
    assert lines(src) == ["middle", "yes"]


def test_nested_conditionals_inside_false_branch_are_skipped():
    src = "#if 0\n#if 1\nA\n#else\nB\n#endif\n#else\nC\n#endif\n"
    assert lines(src) == ["C"]


def test_undef_and_line_continuation():
    out = lines("#define LONG 1 + \\\n 2\nLONG;\n#undef LONG\nLONG;\n")
    assert out == ["1 +   2;", "LONG;"]


def test_comments_are_removed_but_lines_kept():
    src = preprocess_text("a /* x\ny */ b // c\nd\n")
    assert src.text.split("\n")[:3] == ["a     ", "     b     ", "d"]
    assert [o.line for o in src.line_origins[:3]] == [1, 2, 3]


def test_include_tracks_file_and_line(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.p4").write_text("// header\nconst bit<8> A = 1;\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "inc/defs.p4"\nconst bit<8> B = 2;\n')
    src = preprocess_file(main)
    texts = src.text.split("\n")
    rows = [(o.file, o.line, t.strip()) for o, t in zip(src.line_origins, texts, strict=False)
            if t.strip()]
    assert rows == [(str(tmp_path / "inc" / "defs.p4"), 2, "const bit<8> A = 1;"),
                    (str(main), 2, "const bit<8> B = 2;")]


def test_angle_include_searches_include_dirs_then_arch(tmp_path):
    (tmp_path / "mine.p4").write_text("MINE\n")
    src = preprocess_text("#include <mine.p4>\n#include <core.p4>\n", include_dirs=[tmp_path])
    assert "MINE" in src.text
    assert "extern packet_in" in src.text


def test_include_guard_prevents_double_definitions():
    src = preprocess_text("#include <v1model.p4>\n#include <v1model.p4>\n")
    assert src.text.count("package V1Switch") == 1


@pytest.mark.parametrize("text, line, col, message", [
    ("a\n  /* never closed\n", 2, 3, "unterminated comment"),
    ('#include "missing.p4"\n', 1, 1, "include file 'missing.p4' not found"),
    ("x\n #ifdef A\nx\n", 2, 2, "#if without #endif"),
    ("#endif\n", 1, 1, "#endif without #if"),
    ("#else\n", 1, 1, "#else without #if"),
    ('#error "stop here"\n', 1, 1, '#error "stop here"'),
    ("#if (1\n#endif\n", 1, 1, "incomplete #if expression"),
    ("#if (1 2\n#endif\n", 1, 1, "missing ')' in #if expression"),
    ("#if 1 / 0\n#endif\n", 1, 1, "division by zero in #if expression"),
    ("#bogus\n", 1, 1, "unknown preprocessor directive #bogus"),
    ("#define F(a) a\nF(1, 2)\n", 2, 1, "macro F expects 1 arguments, got 2"),
])
def test_preprocessor_errors_have_locations(text, line, col, message):
    with pytest.raises(P4Error) as info:
        preprocess_text(text, "pp.p4")
    assert str(info.value) == f"pp.p4:{line}:{col}: {message}"


def test_unterminated_comment_in_included_file_names_that_file(tmp_path):
    (tmp_path / "bad.p4").write_text("\n\n   /* oops\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "bad.p4"\n')
    with pytest.raises(P4Error) as info:
        preprocess_file(main)
    assert str(info.value) == f"{tmp_path / 'bad.p4'}:3:4: unterminated comment"


def test_recursive_include_is_an_error(tmp_path):
    (tmp_path / "loop.p4").write_text('#include "loop.p4"\n')
    with pytest.raises(P4Error, match="nested too deeply"):
        preprocess_file(tmp_path / "loop.p4")


def test_exponential_macros_are_stopped():
    chain = "".join(f"#define M{i} M{i + 1} M{i + 1}\n" for i in range(40))
    with pytest.raises(P4Error, match="macro expansion too large"):
        preprocess_text(chain + "M0\n", "x.p4")


def test_columns_after_macro_expansion_point_into_the_original_line():
    from netweft.p4.compiler import compile_p4_source
    src = ("#define LONG_NAME_FOR_ONE 1\n#define ADD(a, b) ((a) + (b))\n"
           "const bit<8> A = ADD(LONG_NAME_FOR_ONE, 2) + nope;\n")
    with pytest.raises(P4Error) as info:
        compile_p4_source(src, "m.p4")
    assert str(info.value) == "m.p4:3:46: undeclared name 'nope'"
