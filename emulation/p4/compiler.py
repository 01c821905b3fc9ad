"""``compile_p4``: preprocess, parse and check a P4-16 program into a :class:`Program`."""

from __future__ import annotations

import os
from collections.abc import Sequence

from netweft.emulation.p4.architecture import resolve_main
from netweft.emulation.p4.errors import P4Error
from netweft.emulation.p4.lexer import tokenize
from netweft.emulation.p4.parser import parse_tokens
from netweft.emulation.p4.preprocessor import PreprocessedSource, Preprocessor
from netweft.emulation.p4.program import Program
from netweft.emulation.p4.typecheck import TypeChecker


def compile_p4(path: str | os.PathLike, include_dirs: Sequence[str | os.PathLike] = ()) -> Program:
    """Compile the P4 file at ``path``; raises P4Error (``file:line:col: message``)."""
    pre = Preprocessor(include_dirs)
    return _compile(lambda: pre.run_file(path), str(path))


def compile_p4_source(text: str, filename: str = "<string>",
                      include_dirs: Sequence[str | os.PathLike] = ()) -> Program:
    """Compile P4 source text (handy for tests)."""
    pre = Preprocessor(include_dirs)
    return _compile(lambda: pre.run_text(text, filename), filename)


def _compile(preprocess, source_path: str) -> Program:
    checker: TypeChecker | None = None
    try:
        src: PreprocessedSource = preprocess()
        ast = parse_tokens(tokenize(src))
        result = Program(source_path=source_path, ast=ast)
        checker = TypeChecker(ast, result)
        checker.check()
        resolve_main(checker, result)
        return result
    except P4Error:
        raise
    except RecursionError:
        loc = checker.current_loc() if checker is not None else None
        raise P4Error("program nested too deeply", loc) from None
    except Exception as exc:  # an internal bug must still surface as file:line:col
        loc = checker.current_loc() if checker is not None else None
        raise P4Error(f"internal front-end error ({type(exc).__name__}: {exc}); "
                      "please report this program", loc) from exc
