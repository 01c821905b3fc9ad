"""P4-16 arithmetic on compile-time constants (used by constant folding).

Values are Python ints; a width of ``None`` means the arbitrary-precision
``int`` type. ``bit<W>`` wraps modulo 2**W; ``int<W>`` wraps in two's
complement; ``|+|``/``|-|`` saturate at the type's bounds; shifts by at least
the width give 0 (or the sign for ``int<W>`` right shifts); slices and
concatenation work on the two's-complement bit pattern.
"""

from __future__ import annotations


class ArithError(ValueError):
    """An operation that P4 leaves undefined at compile time (e.g. x / 0)."""


MAX_INT_BITS = 1 << 16  # compile-time ``int`` values beyond this are rejected


def wrap(value: int, width: int | None, signed: bool) -> int:
    """Reduce ``value`` into the range of bit<width>/int<width>."""
    if width is None:
        if value.bit_length() > MAX_INT_BITS:
            raise ArithError(f"integer constant larger than {MAX_INT_BITS} bits")
        return value
    if width == 0:
        return 0
    value &= (1 << width) - 1
    if signed and value >> (width - 1):
        value -= 1 << width
    return value


def bounds(width: int, signed: bool) -> tuple[int, int]:
    """Smallest and largest value of bit<width>/int<width>."""
    if signed:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def to_unsigned(value: int, width: int) -> int:
    """The bit pattern of ``value`` as an unsigned width-bit number."""
    return value & ((1 << width) - 1)


def binary(op: str, a: int, b: int, width: int | None, signed: bool) -> int:
    """Fold ``a op b`` for operands of one numeric type (int if width is None).

    Comparison operators return 0/1.
    """
    if op == "+":
        return wrap(a + b, width, signed)
    if op == "-":
        return wrap(a - b, width, signed)
    if op == "*":
        return wrap(a * b, width, signed)
    if op in ("/", "%"):
        if b == 0:
            raise ArithError("division by zero")
        if a < 0 or b < 0:
            raise ArithError(f"'{op}' on negative values is not defined")
        return wrap(a // b if op == "/" else a % b, width, signed)
    if op in ("|+|", "|-|"):
        if width is None:
            raise ArithError(f"saturating '{op}' needs a fixed-width type")
        lo, hi = bounds(width, signed)
        r = a + b if op == "|+|" else a - b
        return max(lo, min(hi, r))
    if op in ("&", "|", "^"):
        r = {"&": a & b, "|": a | b, "^": a ^ b}[op]
        return wrap(r, width, signed)
    if op == "<<":
        return shift_left(a, b, width, signed)
    if op == ">>":
        return shift_right(a, b, width, signed)
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                    ">=": a >= b}[op])
    raise ArithError(f"unknown operator '{op}'")


def shift_left(a: int, amount: int, width: int | None, signed: bool) -> int:
    if amount < 0:
        raise ArithError("negative shift amount")
    if width is None:
        if amount > MAX_INT_BITS:
            raise ArithError("shift amount too large")
        return wrap(a << amount, None, True)
    if amount >= width:
        return 0
    return wrap(a << amount, width, signed)


def shift_right(a: int, amount: int, width: int | None, signed: bool) -> int:
    if amount < 0:
        raise ArithError("negative shift amount")
    if width is None or signed:
        return a >> min(amount, (width or a.bit_length()) + 1)  # arithmetic shift
    if amount >= width:
        return 0
    return a >> amount


def negate(a: int, width: int | None, signed: bool) -> int:
    return wrap(-a, width, signed)


def complement(a: int, width: int, signed: bool) -> int:
    return wrap(~a, width, signed)


def cast(value: int, width: int | None, signed: bool) -> int:
    """Convert an integer to bit<width>/int<width> (truncate or extend as P4 does).

    The caller passes the source value already in its own type's range, so sign
    extension of int<W> to a wider type is implicit in Python's ints.
    """
    return wrap(value, width, signed)


def slice_bits(value: int, src_width: int | None, hi: int, lo: int) -> int:
    """``value[hi:lo]`` as an unsigned bit<hi-lo+1> value."""
    if src_width is not None:
        value = to_unsigned(value, src_width)
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def concat(a: int, a_width: int, b: int, b_width: int, signed: bool) -> int:
    """``a ++ b`` of width a_width + b_width (signedness of the left operand)."""
    r = (to_unsigned(a, a_width) << b_width) | to_unsigned(b, b_width)
    return wrap(r, a_width + b_width, signed)
