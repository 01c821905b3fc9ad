"""Parser value sets (``value_set<T>(size)``): members with optional masks."""

from __future__ import annotations

from netweft.emulation.v1model.key_values import parse_value


class ValueSet:
    """Up to ``size`` ``(value, mask)`` members over the concatenated select keys."""

    def __init__(self, name: str, size: int, width: int) -> None:
        self.name = name
        self.size = size
        self.width = width
        self.members: list[tuple[int, int]] = []

    def add(self, value: object, mask: object = None) -> None:
        """Add a member; a tuple value is concatenated field by field, MSB first."""
        v = self._number(value)
        m = (1 << self.width) - 1 if mask is None else self._number(mask)
        if self.size and len(self.members) >= self.size:
            raise ValueError(f"value set {self.name} is full ({self.size} members)")
        self.members.append((v & m, m))

    def _number(self, value: object) -> int:
        if isinstance(value, tuple):
            raise ValueError(f"value set {self.name}: give the members as one integer "
                             "(fields concatenated)")
        return parse_value(value, self.width, f"value set {self.name}")

    def match(self, keys: tuple[int]) -> bool:
        """Whether the select key (several keys concatenated, MSB first) hits a member."""
        k = keys[0]
        return any(k & m == v for v, m in self.members)
