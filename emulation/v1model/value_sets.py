"""Parser value sets (``value_set<T>(size)``): members with optional masks.

A value set over a struct type matches several select keys at once, the way
BMv2 matches the concatenation of the keys' bits.  Members are given either
as one integer (the fields concatenated, first field most significant) or as
a tuple with one value per field (IPv4/MAC/IPv6 strings allowed, as for table
keys); a mask takes the same two forms, ``None`` in a tuple meaning all ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from netweft.emulation.v1model.key_values import parse_value


class ValueSet:
    """Up to ``size`` ``(value, mask)`` members over the concatenated select keys."""

    def __init__(self, name: str, size: int, widths: int | Sequence[int]) -> None:
        self.name = name
        self.size = size
        self.widths = (widths,) if isinstance(widths, int) else tuple(widths)
        self.width = sum(self.widths)
        self.members: list[tuple[int, int]] = []

    def add(self, value: object, mask: object = None) -> None:
        """Add a member (one integer, or a tuple of per-field values)."""
        v = self._number(value, "value")
        m = (1 << self.width) - 1 if mask is None else self._number(mask, "mask")
        if self.size and len(self.members) >= self.size:
            raise ValueError(f"value set {self.name} is full ({self.size} members)")
        self.members.append((v & m, m))

    def _number(self, value: object, what: str) -> int:
        if not isinstance(value, (tuple, list)):
            return parse_value(value, self.width, f"value set {self.name}")
        if len(value) != len(self.widths):
            raise ValueError(f"value set {self.name}: a {what} tuple needs "
                             f"{len(self.widths)} fields, got {len(value)}")
        out = 0
        for i, (part, w) in enumerate(zip(value, self.widths, strict=True)):
            n = (1 << w) - 1 if part is None else parse_value(
                part, w, f"value set {self.name} field {i}")
            out = (out << w) | n
        return out

    def match(self, keys: tuple[int]) -> bool:
        """Whether the select key (several keys concatenated, MSB first) hits a member."""
        k = keys[0]
        return any(k & m == v for v, m in self.members)
