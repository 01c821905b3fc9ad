"""The ``netweft`` command line.

Each package contributes subcommands through the ``netweft.commands`` entry
point group (declared in ``pyproject.toml``): the entry point names a
``register(subparsers)`` function that adds its parser and sets ``func``
(taking the parsed namespace, returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points


def _load(spec: str) -> Callable[[argparse._SubParsersAction], None]:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="netweft",
        description="netweft: emulate and measure an AI-datacenter fabric on one Linux machine.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    specs = {ep.name: ep.value for ep in entry_points(group="netweft.commands")}
    for name in sorted(specs):
        _load(specs[name])(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``netweft``; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("netweft: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
