"""The P4-16 lexer: preprocessed text to tokens with original source locations.

``>>`` is never one token: two ``>`` tokens are produced and the parser joins
them into a shift when they are adjacent (``adjacent_next``), which keeps
nested generics like ``register<bit<32>>`` simple to parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from netweft.p4.compiler.errors import P4Error, SourceLoc
from netweft.p4.compiler.preprocessor import PreprocessedSource

# ``key``, ``actions``, ``entries``, ``priority`` and ``size`` are contextual (plain identifiers).
KEYWORDS = frozenset("""
abstract action apply bit bool const control default else enum error exit extern false
header header_union if in inout int match_kind out package parser return select state
string struct switch table this transition true tuple type typedef value_set varbit void _
""".split())

# Longest first. ``>>=`` arrives as ``>`` followed by ``>=`` (see above); the parser joins them.
OPERATORS = ("|+|=", "|-|=", "...", "&&&", "|+|", "|-|", "<<=", "+=", "-=", "*=", "/=", "%=",
             "&=", "|=", "^=", "<<", "<=", ">=", "==", "!=", "&&", "||", "++", "..",
             "{", "}", "(", ")", "[", "]", "<", ">", ";", ":", ",", ".", "=", "+", "-", "*",
             "/", "%", "&", "|", "^", "~", "!", "?", "@", "#")

IDENT = "IDENT"
INTEGER = "INTEGER"
STRING = "STRING"
OP = "OP"
KEYWORD = "KEYWORD"
EOF = "EOF"


@dataclass(slots=True)
class Token:
    """One token. For INTEGER, ``value`` is (int value, width or None, signed, base)."""

    kind: str
    text: str
    loc: SourceLoc
    value: object = None
    adjacent_next: bool = False  # no whitespace before the next token

    def is_op(self, text: str) -> bool:
        return self.kind == OP and self.text == text

    def is_kw(self, text: str) -> bool:
        return self.kind == KEYWORD and self.text == text

    def describe(self) -> str:
        if self.kind == EOF:
            return "end of input"
        return f"'{self.text}'"


_INT_RE = re.compile(
    r"(?:(\d+)([ws]))?"
    r"(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|[0-9][0-9_]*)")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WS_RE = re.compile(r"[ \t\f\v\r]+")
_NUMBER_RE = re.compile(r"[0-9][A-Za-z0-9_]*")


def parse_int_literal(text: str, loc: SourceLoc) -> tuple[int, int | None, bool, int]:
    """Decode a P4 integer literal: (value, width or None, signed, base)."""
    m = _INT_RE.fullmatch(text)
    if not m:
        raise P4Error(f"malformed integer literal '{text}'", loc)
    width = int(m.group(1)) if m.group(1) else None
    signed = m.group(2) == "s"
    digits = m.group(3).replace("_", "")
    base = 10
    if digits[:2].lower() in ("0x", "0b", "0o", "0d"):
        base = {"x": 16, "b": 2, "o": 8, "d": 10}[digits[1].lower()]
        digits = digits[2:]
    if not digits:
        raise P4Error(f"malformed integer literal '{text}'", loc)
    if len(digits) > 4000:
        raise P4Error("integer literal too long (more than 4000 digits)", loc)
    try:
        value = int(digits, base)
    except ValueError:
        raise P4Error(f"malformed integer literal '{text}'", loc) from None
    if width is not None:
        if width == 0 and not signed or width > 1 << 16 or (signed and width < 1):
            raise P4Error(f"bad width {width} in integer literal '{text}'", loc)
    return value, width, signed, base


def tokenize(src: PreprocessedSource) -> list[Token]:
    """Turn preprocessed text into tokens (ending with an EOF token)."""
    tokens: list[Token] = []
    for line_no, line in enumerate(src.text.split("\n"), start=1):
        pos = 0
        n = len(line)
        while pos < n:
            m = _WS_RE.match(line, pos)
            if m:
                pos = m.end()
                if tokens:
                    tokens[-1].adjacent_next = False
                continue
            loc = src.origin(line_no, pos + 1)
            c = line[pos]
            if "0" <= c <= "9":
                m = _NUMBER_RE.match(line, pos)
                assert m is not None
                text = m.group(0)
                # "8s" followed by "-"? not a literal in P4; leave as is
                tokens.append(Token(INTEGER, text, loc, parse_int_literal(text, loc), True))
                pos = m.end()
                continue
            if c.isascii() and (c.isalpha() or c == "_"):
                m = _IDENT_RE.match(line, pos)
                assert m is not None
                text = m.group(0)
                kind = KEYWORD if text in KEYWORDS else IDENT
                tokens.append(Token(kind, text, loc, None, True))
                pos = m.end()
                continue
            if c == '"':
                j = pos + 1
                chars: list[str] = []
                while j < n and line[j] != '"':
                    if line[j] == "\\" and j + 1 < n:
                        esc = line[j + 1]
                        chars.append({"n": "\n", "t": "\t", "\\": "\\", '"': '"'}.get(esc, esc))
                        j += 2
                    else:
                        chars.append(line[j])
                        j += 1
                if j >= n:
                    raise P4Error("unterminated string literal", loc)
                tokens.append(Token(STRING, line[pos:j + 1], loc, "".join(chars), True))
                pos = j + 1
                continue
            for op in OPERATORS:
                if line.startswith(op, pos):
                    tokens.append(Token(OP, op, loc, None, True))
                    pos += len(op)
                    break
            else:
                raise P4Error(f"unexpected character {c!r}", loc)
        if tokens:
            tokens[-1].adjacent_next = False
    end_loc = src.origin(max(1, len(src.line_origins)), 1)
    tokens.append(Token(EOF, "", end_loc))
    return tokens
