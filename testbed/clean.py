"""``netweft clean``: remove namespaces (and their veths and processes) left by a crashed run."""

from __future__ import annotations

import argparse

from netweft.emulation.network import leftover_namespaces, remove_namespace


def _main(args: argparse.Namespace) -> int:
    names = leftover_namespaces()
    for name in names:
        remove_namespace(name)
        print(f"removed namespace {name}")
    if not names:
        print("nothing to clean")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft clean``."""
    p = sub.add_parser("clean", help="remove namespaces left behind by crashed netweft runs")
    p.set_defaults(func=_main)
