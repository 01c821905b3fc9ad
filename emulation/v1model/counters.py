"""v1model ``counter`` and ``direct_counter``: packet and byte counts."""

from __future__ import annotations

# v1model CounterType enum order: packets, bytes, packets_and_bytes
COUNTER_TYPES = ("packets", "bytes", "packets_and_bytes")


class CounterArray:
    """``size`` cells of ``[packets, bytes]``; both are kept whatever the type."""

    def __init__(self, name: str, size: int, counter_type: str = "packets_and_bytes") -> None:
        if counter_type not in COUNTER_TYPES:
            raise ValueError(f"counter {name}: unknown counter type {counter_type!r}")
        self.name = name
        self.size = size
        self.counter_type = counter_type
        self.cells = [[0, 0] for _ in range(size)]

    def count(self, index: int, nbytes: int) -> None:
        """Count one packet of ``nbytes`` at ``index``; out-of-range is ignored (BMv2)."""
        if 0 <= index < self.size:
            cell = self.cells[index]
            cell[0] += 1
            cell[1] += nbytes

    def read(self, index: int) -> tuple[int, int]:
        """``(packets, bytes)`` at ``index``."""
        if not 0 <= index < self.size:
            raise IndexError(f"counter {self.name}: index {index} outside 0..{self.size - 1}")
        packets, nbytes = self.cells[index]
        return packets, nbytes

    def write(self, index: int, packets: int, nbytes: int) -> None:
        """Set a cell (control plane)."""
        self.read(index)
        self.cells[index] = [packets, nbytes]

    def reset(self) -> None:
        """All cells back to zero."""
        self.cells = [[0, 0] for _ in range(self.size)]
