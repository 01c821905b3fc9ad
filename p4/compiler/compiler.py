"""``compile_p4``: preprocess, parse and check a P4-16 program into a :class:`Program`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from netweft.p4.compiler.architecture import resolve_main
from netweft.p4.compiler.errors import P4Error, SourceLoc
from netweft.p4.compiler.lexer import tokenize
from netweft.p4.compiler.nesting import check_nesting
from netweft.p4.compiler.parser import Parser
from netweft.p4.compiler.preprocessor import PreprocessedSource, Preprocessor
from netweft.p4.compiler.program import Program
from netweft.p4.compiler.typecheck import TypeChecker


def compile_p4(path: str | os.PathLike, include_dirs: Sequence[str | os.PathLike] = (),
               defines: Mapping[str, str] | None = None) -> Program:
    """Compile the P4 file at ``path``; raises P4Error (``file:line:col: message``).

    ``defines`` are predefined macros, as ``-D NAME=VALUE`` on p4c's command line.
    """
    pre = Preprocessor(include_dirs, defines)
    return _compile(lambda: pre.run_file(path), str(path))


def compile_preprocessed(src: PreprocessedSource, source_path: str) -> Program:
    """Compile an already preprocessed program (e.g. one stored in a device config);
    errors still name the original files through ``src.line_origins``."""
    return _compile(lambda: src, source_path)


def compile_p4_source(text: str, filename: str = "<string>",
                      include_dirs: Sequence[str | os.PathLike] = ()) -> Program:
    """Compile P4 source text (handy for tests)."""
    pre = Preprocessor(include_dirs)
    return _compile(lambda: pre.run_text(text, filename), filename)


# Python frames the parser (bounded by its own depth limit) and the checker (bounded
# by check_nesting's limits) may need; the limits, not this number, stop deep input.
_RECURSION_LIMIT = 20_000


def _compile(preprocess, source_path: str) -> Program:
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
    where: list = [lambda: SourceLoc(source_path, 1, 1)]
    try:
        src: PreprocessedSource = preprocess()
        parser = Parser(tokenize(src))
        where[0] = lambda: parser.peek().loc
        ast = parser.parse_program()
        check_nesting(ast)
        result = Program(source_path=source_path, ast=ast)
        checker = TypeChecker(ast, result)
        where[0] = checker.current_loc
        checker.check()
        resolve_main(checker, result)
        return result
    except P4Error:
        raise
    except Exception as exc:  # an internal bug must still surface as file:line:col
        raise P4Error(f"internal front-end error ({type(exc).__name__}: {exc}); "
                      "please report this program", where[0]()) from exc
    finally:
        sys.setrecursionlimit(old_limit)
