"""Constructors of folded constant nodes (typed ``Constant``/``BoolLiteral``)."""

from __future__ import annotations

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import SourceLoc


def bits_type(width: int, signed: bool = False) -> ir.Type_Bits:
    """A canonical ``bit<width>``/``int<width>``."""
    return ir.Type_Bits(width=width, signed=signed)


def typed_constant(value: int, t: ir.Type, loc: SourceLoc, base: int = 10) -> ir.Constant:
    """An integer constant that already carries its type (``base``: the literal's radix)."""
    c = ir.Constant(value=value, base=base, loc=loc)
    c.type = t
    return c


def typed_bool(value: bool, loc: SourceLoc) -> ir.BoolLiteral:
    """A boolean constant that already carries its type."""
    b = ir.BoolLiteral(value=value, loc=loc)
    b.type = ir.Type_Boolean()
    return b
