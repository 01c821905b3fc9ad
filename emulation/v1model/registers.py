"""v1model ``register<T, I>``: an array of fixed-width cells."""

from __future__ import annotations


class RegisterArray:
    """``size`` cells of ``width`` bits, all zero at start (as BMv2)."""

    def __init__(self, name: str, size: int, width: int, signed: bool = False) -> None:
        self.name = name
        self.size = size
        self.width = width
        self.signed = signed
        self.mask = (1 << width) - 1
        self.cells = [0] * size

    def read(self, index: int) -> int:
        """The cell's value; an out-of-range index reads 0 (BMv2 logs and returns 0)."""
        if 0 <= index < self.size:
            return self.cells[index]
        return 0

    def write(self, index: int, value: int) -> None:
        """Store ``value`` truncated to the width; out-of-range writes are ignored."""
        if 0 <= index < self.size:
            self.cells[index] = value & self.mask

    def check_index(self, index: int) -> None:
        """Raise ``IndexError`` with a clear message for a control-plane index."""
        if not 0 <= index < self.size:
            raise IndexError(f"register {self.name}: index {index} outside 0..{self.size - 1}")

    def reset(self) -> None:
        """All cells back to zero."""
        self.cells = [0] * self.size
