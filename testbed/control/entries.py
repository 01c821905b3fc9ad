"""What a switch's program is to hold, as writes by name and value, independent of P4Runtime
ids: the one representation of a plan, whoever installs it.

The fabric controller's program bindings (:mod:`.fabric.fabric_binding`,
:mod:`.fabric.ecmp_spray_binding`) and the aggregation plan
(:mod:`.aggregation.plan`) produce these; the P4Runtime installer
(:mod:`.p4runtime_installer`, through :mod:`.entity_encoder`) and the in-process
installer (:mod:`.in_process_installer`) put them on a switch. Each says in
:meth:`describe` what it is, so that an error names the entry.
"""

from __future__ import annotations

from dataclasses import dataclass

Value = int | str


class BindingError(ValueError):
    """The settings ask for something the switch's program cannot do; says what can."""


class InstallError(RuntimeError):
    """A switch refused (or cannot take) part of its plan; the message names both."""


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


def is_created(write: Write) -> bool:
    """Whether installing ``write`` creates something (a table entry, a multicast group)
    rather than setting what the switch always has (a default action, a register cell)."""
    return isinstance(write, MulticastWrite) or (isinstance(write, TableWrite)
                                                 and not write.default)
