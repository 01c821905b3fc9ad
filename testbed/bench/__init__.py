"""``netweft bench``: the benches, one module per bench, and the command group that holds them.

Each bench registers under the entry point group ``netweft.benches`` (declared in
``pyproject.toml``) with the ``register(subparsers)`` convention of
``netweft.commands``; :func:`register` adds ``netweft bench`` and loads them all.
"""

from __future__ import annotations

import argparse
import importlib
from importlib.metadata import entry_points


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``netweft bench`` with every registered bench."""
    bench = subparsers.add_parser("bench", help="measure netweft's components")
    benches = bench.add_subparsers(dest="bench", metavar="BENCH")
    for ep in sorted(entry_points(group="netweft.benches"), key=lambda ep: ep.name):
        module, _, attr = ep.value.partition(":")
        getattr(importlib.import_module(module), attr)(benches)

    def _help(_args: argparse.Namespace) -> int:
        bench.print_help()
        return 2

    bench.set_defaults(func=_help)
