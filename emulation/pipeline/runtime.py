"""Objects the generated pipeline code calls at run time.

Kept small and dependency-free: the packet cursor of the parser, header
stacks, and the exceptions that carry parser errors, ``exit`` and failed
assertions out of the generated code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ParserReject(Exception):
    """The parser stopped: ``code`` is the error (None for an explicit ``reject``)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(code)
        self.code = code


class ExitBlock(Exception):
    """``exit`` ran: leave the whole top-level block.

    ``outs`` carries the out/inout values of the action being left, so that
    its caller still copies them out (P4-16: exit performs copy-out).
    """

    outs: tuple = ()


class AssertionFailed(Exception):
    """A v1model ``assert``/``assume`` failed; the packet is dropped."""


class PacketCursor:
    """The packet bytes and the parser's byte offset into them."""

    __slots__ = ("data", "pos", "len")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.len = len(data)

    def take(self, nbytes: int, too_short: int) -> int:
        """The next ``nbytes`` as a big-endian int; advances, or raises PacketTooShort."""
        p = self.pos
        q = p + nbytes
        if q > self.len:
            raise ParserReject(too_short)
        self.pos = q
        return int.from_bytes(self.data[p:q], "big")

    def peek_bits(self, nbits: int, too_short: int) -> int:
        """The next ``nbits`` bits (lookahead) without advancing."""
        nbytes = (nbits + 7) // 8
        p = self.pos
        if p + nbytes > self.len:
            raise ParserReject(too_short)
        return int.from_bytes(self.data[p:p + nbytes], "big") >> (nbytes * 8 - nbits)

    def advance_bits(self, nbits: int, too_short: int) -> None:
        """Skip ``nbits`` bits (BMv2 advances in whole bytes)."""
        q = self.pos + (nbits + 7) // 8
        if q > self.len:
            raise ParserReject(too_short)
        self.pos = q


class HeaderStack:
    """``H[size]``: elements ``e`` and ``nxt`` (P4's nextIndex)."""

    __slots__ = ("e", "nxt", "size", "_new")

    def __init__(self, new: Callable[[], Any], size: int) -> None:
        self._new = new
        self.size = size
        self.e = [new() for _ in range(size)]
        self.nxt = 0

    def _copy(self) -> HeaderStack:
        other = HeaderStack.__new__(HeaderStack)
        other._new, other.size, other.nxt = self._new, self.size, self.nxt
        other.e = [h._copy() for h in self.e]
        return other

    def _assign(self, other: HeaderStack) -> None:
        for mine, theirs in zip(self.e, other.e, strict=False):
            mine._assign(theirs)
        self.nxt = other.nxt

    def _eq(self, other: HeaderStack) -> bool:
        return all(a._eq(b) for a, b in zip(self.e, other.e, strict=False))

    def next_for_extract(self, out_of_bounds: int) -> Any:
        """The element ``next`` refers to; advances nextIndex (parser ``extract``)."""
        if self.nxt >= self.size:
            raise ParserReject(out_of_bounds)
        h = self.e[self.nxt]
        self.nxt += 1
        return h

    def next_element(self, out_of_bounds: int) -> Any:
        """``stack.next`` outside extract: the element at nextIndex."""
        if self.nxt >= self.size:
            raise ParserReject(out_of_bounds)
        return self.e[self.nxt]

    def last(self, out_of_bounds: int) -> Any:
        """``stack.last``."""
        if self.nxt == 0:
            raise ParserReject(out_of_bounds)
        return self.e[self.nxt - 1]

    def at(self, index: int) -> Any:
        """Element at a run-time index; out of range gives a scratch invalid header."""
        if 0 <= index < self.size:
            return self.e[index]
        return self._new()

    def push_front(self, count: int) -> None:
        """Shift elements up by ``count``; the first ``count`` become invalid."""
        count = min(count, self.size)
        for i in range(self.size - 1, -1, -1):
            if i >= count:
                self.e[i]._assign(self.e[i - count])
            else:
                self.e[i]._v = False
        self.nxt = min(self.nxt + count, self.size)

    def pop_front(self, count: int) -> None:
        """Shift elements down by ``count``; the last ``count`` become invalid."""
        count = min(count, self.size)
        for i in range(self.size):
            if i + count < self.size:
                self.e[i]._assign(self.e[i + count])
            else:
                self.e[i]._v = False
        self.nxt = max(self.nxt - count, 0)


def union_set_valid(union: Any, member: str) -> None:
    """``u.m.setValid()``: the other members of the union become invalid."""
    for name in union.__slots__:
        getattr(union, name)._v = name == member


def union_is_valid(union: Any) -> bool:
    """``u.isValid()``: whether some member is valid."""
    return any(getattr(union, name)._v for name in union.__slots__)


def union_emit(union: Any, out: list[bytes]) -> None:
    """Emit the valid member of a header union."""
    for name in union.__slots__:
        getattr(union, name)._emit(out)
