"""``netweft clean``: remove namespaces (and their veths and processes) left by a crashed run.

A running network records its owner's PID in ``/run/netweft/<prefix>``; only
namespaces whose owner is gone are removed unless ``--all`` is given.
"""

from __future__ import annotations

import argparse

from netweft.emulation.network import leftover_namespaces, remove_namespace


def _main(args: argparse.Namespace) -> int:
    names = leftover_namespaces(include_live=args.all)
    for name in names:
        remove_namespace(name)
        print(f"removed namespace {name}")
    if not names:
        print("nothing to clean")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft clean``."""
    p = sub.add_parser("clean", help="remove namespaces left behind by crashed netweft runs")
    p.add_argument("--all", action="store_true",
                   help="also remove networks whose owning process is still running")
    p.set_defaults(func=_main)
