"""The writes a program binding asks for, by name and value, independent of P4Runtime ids.

A binding (:mod:`.bindings`) turns a switch's plan into these; the encoder
(:mod:`.entity_encoder`) resolves them against the switch's P4Info. Each says in
:meth:`describe` what it is, so that an error names the entry.
"""

from __future__ import annotations

from dataclasses import dataclass

Value = int | str


class BindingError(ValueError):
    """The settings ask for something the switch's program cannot do; says what can."""


@dataclass(frozen=True)
class Lpm:
    """An lpm key: ``value`` / ``prefix_len``."""

    value: Value
    prefix_len: int

    def __str__(self) -> str:
        return f"{self.value}/{self.prefix_len}"


@dataclass(frozen=True)
class TableWrite:
    """One table entry (or, with ``default``, the table's default action)."""

    table: str
    match: tuple[tuple[str, Value | Lpm], ...]
    action: str
    params: tuple[tuple[str, Value], ...] = ()
    priority: int = 0
    default: bool = False

    def describe(self) -> str:
        key = "default" if self.default else " ".join(f"{f}={v}" for f, v in self.match)
        args = ", ".join(f"{p}={v}" for p, v in self.params)
        return f"table {self.table} [{key}] -> {self.action}({args})"


@dataclass(frozen=True)
class MulticastWrite:
    """A multicast group of the packet replication engine: (port, instance) replicas."""

    group_id: int
    replicas: tuple[tuple[int, int], ...]

    def describe(self) -> str:
        ports = ", ".join(str(p) for p, _ in self.replicas)
        return f"multicast group {self.group_id} -> ports {ports}"


@dataclass(frozen=True)
class RegisterWrite:
    """One register cell."""

    register: str
    index: int
    value: int

    def describe(self) -> str:
        return f"register {self.register}[{self.index}] = {self.value}"


Write = TableWrite | MulticastWrite | RegisterWrite
