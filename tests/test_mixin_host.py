"""The mixin-host check finds what breaks a declared host interface."""

from typing import Protocol

from tests.mixin_host import host_problems


class _Host(Protocol):
    shared: int
    stale: int

    def a(self) -> int: ...


class _PartA:
    def a(self, scale: int = 1) -> int:
        return self._b() + self.shared


class _PartB:
    def _b(self) -> int:
        return self.undeclared

    def twice(self) -> int:
        return 2 * self.a()


class _Assembled(_PartA, _PartB):
    def __init__(self) -> None:
        self.shared = 1


def test_private_calls_undeclared_and_stale_names_are_reported():
    assert host_problems(_Assembled, [_PartA, _PartB], _Host) == [
        "_PartA uses _PartB's private _b",
        "_PartB uses undeclared (?'s), which _Host does not declare",
        "_Host declares stale, which no part uses of another",
        "a: _Host says (self) -> int, _Assembled has (self, scale: int = 1) -> int",
    ]
