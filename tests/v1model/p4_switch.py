"""Compile-once helpers for the packet-level tests of the back end."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "programs"


@cache
def compiled(name: str):
    """The compiled program ``programs/<name>.p4`` (compiled once per test run)."""
    from netweft.p4.compiler import compile_p4

    return compile_p4(str(PROGRAMS / f"{name}.p4"))


def switch(name: str, **kwargs):
    """A fresh ``SoftSwitch`` running ``programs/<name>.p4``."""
    from netweft.emulation.switch import SoftSwitch

    return SoftSwitch(compiled(name), **kwargs)
