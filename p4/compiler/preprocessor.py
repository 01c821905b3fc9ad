"""The C-style preprocessor that P4 programs rely on.

Handles ``#include <...>``/``"..."`` (include dirs, then netweft's shipped
``arch/``), object- and function-like ``#define`` (with ``#`` and ``##``),
``#undef``, ``#if/#ifdef/#ifndef/#elif/#else/#endif`` with integer
expressions and ``defined``, ``#error``; ``#line``, ``#pragma`` and
``#warning`` are tolerated. Comments are removed here (so that an
unterminated ``/*`` is reported where it starts).

The output is one text plus, for each output line, the original
:class:`SourceLoc` (file and line) it came from and, for lines where macros
were expanded, the original column of every output column, so the lexer can
report positions in the user's files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from netweft.p4.compiler.errors import P4Error, SourceLoc

ARCH_DIR = Path(__file__).parent / "arch"
_MAX_INCLUDE_DEPTH = 50
_MAX_EXPANSION = 100_000

_TOKEN_RE = re.compile(r'"(?:\\.|[^"\\\n])*"?|[A-Za-z_]\w*|\d\w*|##|.', re.S)
_IDENT_RE = re.compile(r"[A-Za-z_]\w*\Z")


@dataclass
class Macro:
    """A ``#define``: ``params`` is None for object-like macros."""

    name: str
    params: list[str] | None
    body: str
    variadic: bool = False


@dataclass
class PreprocessedSource:
    """Preprocessed text and the origin of each of its lines (index 0 = line 1)."""

    text: str
    line_origins: list[SourceLoc] = field(default_factory=list)
    defines: dict[str, Macro] = field(default_factory=dict)
    column_maps: dict[int, list[int]] = field(default_factory=dict)  # lines with macros

    def origin(self, line: int, col: int) -> SourceLoc:
        """Map a 1-based output line/column to the original file location."""
        if 1 <= line <= len(self.line_origins):
            o = self.line_origins[line - 1]
            cmap = self.column_maps.get(line)
            if cmap:
                col = cmap[min(col, len(cmap)) - 1] if col >= 1 else col
            return SourceLoc(o.file, o.line, col)
        last = self.line_origins[-1] if self.line_origins else SourceLoc("<unknown>", 1, 1)
        return SourceLoc(last.file, last.line, col)


def strip_comments(text: str, filename: str) -> str:
    """Replace comments by spaces (keeping newlines) outside string literals."""
    out: list[str] = []
    i, n = 0, len(text)
    line, col = 1, 1
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            col += j - i
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise P4Error("unterminated comment", SourceLoc(filename, line, col))
            chunk = text[i:j + 2]
            out.append(re.sub(r"[^\n]", " ", chunk))
            nl = chunk.count("\n")
            if nl:
                line += nl
                col = len(chunk) - chunk.rfind("\n")
            else:
                col += len(chunk)
            i = j + 2
        else:
            out.append(c)
            if c == "\n":
                line += 1
                col = 1
            else:
                col += 1
            i += 1
    return "".join(out)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash-continued lines; yields (first physical line number, text)."""
    result: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        result.append((start, " ".join(pending)))
        # keep line count: continued lines become empty lines afterwards
        for _ in range(len(pending) - 1):
            result.append((-1, ""))
        pending = []
    if pending:
        result.append((start, " ".join(pending)))
    return result


class Preprocessor:
    """Runs the preprocessor over a root file or text (one instance per compile)."""

    def __init__(self, include_dirs: Sequence[str | os.PathLike] = (),
                 defines: Mapping[str, str] | None = None) -> None:
        self.include_dirs = [Path(d) for d in include_dirs] + [ARCH_DIR]
        self.macros: dict[str, Macro] = {}
        self.out_lines: list[str] = []
        self.origins: list[SourceLoc] = []
        self.column_maps: dict[int, list[int]] = {}
        self._depth = 0
        self._expansions = 0  # macro expansions so far (guards against exponential macros)
        for name, value in (defines or {}).items():  # -D NAME=VALUE
            self._define(f"{name} {value}", SourceLoc("<command line>", 1, 1))

    # ---------------------------------------------------------------- driver
    def run_file(self, path: str | os.PathLike) -> PreprocessedSource:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise P4Error(f"cannot read {str(p)!r}: {exc.strerror or exc}",
                          SourceLoc(str(p), 1, 1)) from None
        return self.run_text(text, str(p))

    def run_text(self, text: str, filename: str) -> PreprocessedSource:
        self._process(text, filename)
        return PreprocessedSource("\n".join(self.out_lines) + "\n", self.origins, self.macros,
                                  self.column_maps)

    def _emit(self, text: str, loc: SourceLoc, column_map: list[int] | None = None) -> None:
        self.out_lines.append(text)
        self.origins.append(loc)
        if column_map is not None:
            self.column_maps[len(self.out_lines)] = column_map

    def _process(self, text: str, filename: str) -> None:
        self._depth += 1
        if self._depth > _MAX_INCLUDE_DEPTH:
            raise P4Error("#include nested too deeply (recursive include?)",
                          SourceLoc(filename, 1, 1))
        text = strip_comments(text.replace("\r\n", "\n"), filename)
        # stack of [active, seen_true_branch, parent_active, saw_else]
        cond: list[list[bool]] = []
        cond_locs: list[SourceLoc] = []
        active = True
        line_offset = 0
        file_label = filename
        for number, line in _logical_lines(text):
            if number < 0:
                continue
            loc_line = number + line_offset
            stripped = line.lstrip()
            if stripped.startswith("#"):
                col = len(line) - len(stripped) + 1
                loc = SourceLoc(file_label, loc_line, col)
                body = stripped[1:].strip()
                m = re.match(r"([A-Za-z_]\w*)\s*(.*)\Z", body, re.S)
                directive, rest = (m.group(1), m.group(2).strip()) if m else (body, "")
                if directive in ("if", "ifdef", "ifndef"):
                    cond_locs.append(loc)
                    if not active:
                        cond.append([False, True, False, False])
                        continue
                    value = self._condition(directive, rest, loc)
                    cond.append([value, value, True, False])
                elif directive == "elif":
                    if not cond or cond[-1][3]:
                        raise P4Error("#elif without #if", loc)
                    top = cond[-1]
                    if top[2] and not top[1]:
                        top[0] = self._condition("if", rest, loc)
                        top[1] = top[0]
                    else:
                        top[0] = False
                elif directive == "else":
                    if not cond or cond[-1][3]:
                        raise P4Error("#else without #if", loc)
                    top = cond[-1]
                    top[0] = top[2] and not top[1]
                    top[1] = True
                    top[3] = True
                elif directive == "endif":
                    if not cond:
                        raise P4Error("#endif without #if", loc)
                    cond.pop()
                    cond_locs.pop()
                elif not active:
                    pass
                elif directive == "define":
                    self._define(rest, loc)
                elif directive == "undef":
                    self.macros.pop(rest.split()[0] if rest.split() else "", None)
                elif directive == "include":
                    self._include(rest, loc, filename)
                elif directive == "error":
                    raise P4Error(f"#error {rest}".rstrip(), loc)
                elif directive == "line":
                    lm = re.match(r'(\d+)(?:\s+"([^"]*)")?', rest)
                    if lm:
                        line_offset = int(lm.group(1)) - number - 1
                        if lm.group(2):
                            file_label = lm.group(2)
                elif directive in ("pragma", "warning", "") or body == "":
                    pass
                else:
                    raise P4Error(f"unknown preprocessor directive #{directive}", loc)
                active = all(c[0] for c in cond)
                self._emit("", loc)
                continue
            if active:
                where = SourceLoc(file_label, loc_line, 1)
                text, column_map = self.expand_line(line, where)
                self._emit(text, where, column_map)
            else:
                self._emit("", SourceLoc(file_label, loc_line, 1))
        if cond:
            raise P4Error("#if without #endif", cond_locs[-1])
        self._depth -= 1

    # ---------------------------------------------------------------- directives
    def _define(self, rest: str, loc: SourceLoc) -> None:
        m = re.match(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)\Z", rest, re.S)
        if not m:
            raise P4Error("#define needs a macro name", loc)
        name, has_params, params_text, body = m.group(1), m.group(2), m.group(3), m.group(4)
        if has_params is None:
            self.macros[name] = Macro(name, None, body.strip())
            return
        params = [p.strip() for p in params_text.split(",")] if params_text.strip() else []
        variadic = bool(params) and params[-1] == "..."
        if variadic:
            params[-1] = "__VA_ARGS__"
        for p in params:
            if not _IDENT_RE.match(p):
                raise P4Error(f"bad macro parameter {p!r} in #define {name}", loc)
        self.macros[name] = Macro(name, params, body.strip(), variadic)

    def _include(self, rest: str, loc: SourceLoc, current: str) -> None:
        rest = self.expand(rest, loc).strip() if rest[:1] not in "<\"" else rest
        m = re.match(r'<([^>]+)>|"([^"]+)"', rest)
        if not m:
            raise P4Error("#include expects <file> or \"file\"", loc)
        name = m.group(1) or m.group(2)
        candidates: list[Path] = []
        if m.group(2) is not None and not current.startswith("<"):
            candidates.append(Path(current).parent / name)
        candidates.extend(d / name for d in self.include_dirs)
        for cand in candidates:
            if cand.is_file():
                try:
                    text = cand.read_text(encoding="utf-8", errors="replace")
                except OSError as exc:
                    raise P4Error(f"cannot read include file {name!r}: {exc}", loc) from None
                self._process(text, str(cand))
                return
        raise P4Error(f"include file {name!r} not found", loc)

    def _condition(self, directive: str, rest: str, loc: SourceLoc) -> bool:
        if directive in ("ifdef", "ifndef"):
            parts = rest.split()
            if not parts:
                raise P4Error(f"#{directive} needs a macro name", loc)
            return (parts[0] in self.macros) == (directive == "ifdef")
        if not rest:
            raise P4Error("#if needs an expression", loc)
        # replace defined(X) / defined X before expansion
        text = re.sub(r"\bdefined\s*\(\s*([A-Za-z_]\w*)\s*\)|\bdefined\s+([A-Za-z_]\w*)",
                      lambda mm: "1" if (mm.group(1) or mm.group(2)) in self.macros else "0",
                      rest)
        text = self.expand(text, loc)
        return _eval_condition(text, loc) != 0

    # ---------------------------------------------------------------- expansion
    def expand(self, line: str, loc: SourceLoc, hide: frozenset[str] = frozenset()) -> str:
        """Macro-expand one line of text."""
        return self._expand(line, loc, hide, track=False)[0]

    def expand_line(self, line: str, loc: SourceLoc) -> tuple[str, list[int] | None]:
        """Expand a source line; also map each output column to its original column
        (None when nothing was expanded, i.e. columns are unchanged)."""
        return self._expand(line, loc, frozenset(), track=True)

    def _expand(self, line: str, loc: SourceLoc, hide: frozenset[str],
                track: bool) -> tuple[str, list[int] | None]:
        if not self.macros:
            return line, None
        matches = list(_TOKEN_RE.finditer(line))
        tokens = [m.group(0) for m in matches]
        out: list[str] = []
        cols: list[int] = []
        changed = False

        def put(text: str, index: int, same_columns: bool) -> None:
            out.append(text)
            if track:
                start = matches[index].start() + 1
                cols.extend(range(start, start + len(text)) if same_columns
                            else [start] * len(text))

        i = 0
        budget = _MAX_EXPANSION
        while i < len(tokens):
            tok = tokens[i]
            macro = self.macros.get(tok)
            if macro is None or tok in hide:
                put(tok, i, True)
                i += 1
                continue
            budget -= 1
            self._expansions += 1
            if budget < 0 or self._expansions > _MAX_EXPANSION:
                raise P4Error("macro expansion too large", loc)
            if macro.params is None:
                put(self.expand(macro.body, loc, hide | {tok}), i, False)
                changed = True
                i += 1
                continue
            j = i + 1
            while j < len(tokens) and tokens[j].isspace():
                j += 1
            if j >= len(tokens) or tokens[j] != "(":
                put(tok, i, True)
                i += 1
                continue
            args, end = _split_args(tokens, j, loc, tok)
            put(self._apply(macro, args, loc, hide | {tok}), i, False)
            changed = True
            i = end
        return "".join(out), (cols if track and changed else None)

    def _apply(self, macro: Macro, args: list[str], loc: SourceLoc, hide: frozenset[str]) -> str:
        params = macro.params or []
        if macro.variadic:
            fixed = len(params) - 1
            if len(args) < fixed:
                raise P4Error(f"macro {macro.name} expects at least {fixed} arguments", loc)
            args = args[:fixed] + [",".join(args[fixed:])]
        elif not (len(args) == len(params) or (not params and args == [""])):
            raise P4Error(f"macro {macro.name} expects {len(params)} arguments, "
                          f"got {len(args)}", loc)
        binding = {p: a.strip() for p, a in zip(params, args, strict=False)}
        body_tokens = _TOKEN_RE.findall(macro.body)
        out: list[str] = []
        k = 0
        while k < len(body_tokens):
            t = body_tokens[k]
            if t == "#" and k + 1 < len(body_tokens) and body_tokens[k + 1] in binding:
                out.append('"' + binding[body_tokens[k + 1]].replace('"', '\\"') + '"')
                k += 2
                continue
            if t == "##":
                while out and out[-1].isspace():
                    out.pop()
                k += 1
                while k < len(body_tokens) and body_tokens[k].isspace():
                    k += 1
                if k < len(body_tokens):
                    nxt = body_tokens[k]
                    out.append(binding.get(nxt, nxt))
                    k += 1
                continue
            if t in binding:
                out.append(self.expand(binding[t], loc, hide))
            else:
                out.append(t)
            k += 1
        return self.expand("".join(out), loc, hide)


def _split_args(tokens: list[str], open_index: int, loc: SourceLoc,
                name: str) -> tuple[list[str], int]:
    depth = 0
    args: list[str] = []
    cur: list[str] = []
    for j in range(open_index, len(tokens)):
        t = tokens[j]
        if t == "(":
            depth += 1
            if depth == 1:
                continue
        elif t == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return args, j + 1
        elif t == "," and depth == 1:
            args.append("".join(cur))
            cur = []
            continue
        cur.append(t)
    raise P4Error(f"unterminated argument list of macro {name}", loc)


# ---------------------------------------------------------------- #if expressions

_COND_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*|<<|>>|<=|>=|==|!=|&&|\|\||.)")
_BINARY_PREC = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
                "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def _eval_condition(text: str, loc: SourceLoc) -> int:
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _COND_TOKEN.match(text, pos)
        if not m or not m.group(1).strip():
            break
        tokens.append(m.group(1))
        pos = m.end()
    idx = [0]

    def peek() -> str | None:
        return tokens[idx[0]] if idx[0] < len(tokens) else None

    def take() -> str:
        t = peek()
        if t is None:
            raise P4Error("incomplete #if expression", loc)
        idx[0] += 1
        return t

    def primary() -> int:
        t = take()
        if t == "(":
            v = ternary()
            if take() != ")":
                raise P4Error("missing ')' in #if expression", loc)
            return v
        if t in ("!", "-", "+", "~"):
            v = primary()
            return {"!": int(not v), "-": -v, "+": v, "~": ~v}[t]
        if re.match(r"\d", t):
            digits = t.rstrip("uUlL")
            return int(digits, 0) if not re.match(r"0\d", digits) else int(digits, 8)
        if _IDENT_RE.match(t):
            return 0  # undefined identifiers evaluate to 0, as in C
        raise P4Error(f"unexpected {t!r} in #if expression", loc)

    def binary(min_prec: int) -> int:
        left = primary()
        while True:
            op = peek()
            prec = _BINARY_PREC.get(op or "")
            if prec is None or prec < min_prec:
                return left
            take()
            right = binary(prec + 1)
            left = _apply_cond_op(op or "", left, right, loc)

    def ternary() -> int:
        c = binary(1)
        if peek() == "?":
            take()
            a = ternary()
            if take() != ":":
                raise P4Error("missing ':' in #if expression", loc)
            b = ternary()
            return a if c else b
        return c

    value = ternary()
    if peek() is not None:
        raise P4Error(f"unexpected {peek()!r} in #if expression", loc)
    return value


def _apply_cond_op(op: str, a: int, b: int, loc: SourceLoc) -> int:
    if op in ("/", "%") and b == 0:
        raise P4Error("division by zero in #if expression", loc)
    if op in ("<<", ">>") and (b < 0 or b > 4096):
        raise P4Error("bad shift amount in #if expression", loc)
    return {
        "||": lambda: int(bool(a) or bool(b)), "&&": lambda: int(bool(a) and bool(b)),
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
        "<<": lambda: a << b, ">>": lambda: a >> b, "+": lambda: a + b, "-": lambda: a - b,
        "*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a - b * int(a / b),
    }[op]()


def preprocess_file(path: str | os.PathLike,
                    include_dirs: Sequence[str | os.PathLike] = ()) -> PreprocessedSource:
    """Preprocess the file at ``path``."""
    return Preprocessor(include_dirs).run_file(path)


def preprocess_text(text: str, filename: str = "<string>",
                    include_dirs: Sequence[str | os.PathLike] = ()) -> PreprocessedSource:
    """Preprocess source text."""
    return Preprocessor(include_dirs).run_text(text, filename)
