"""The ``netweft`` command line.

Each package contributes subcommands through the ``netweft.commands`` entry
point group (declared in ``pyproject.toml``): the entry point names a
``register(subparsers)`` function that adds its parser and sets ``func``
(taking the parsed namespace, returning an exit code).

Conventions every subcommand shares: options are validated when they are parsed
(argparse types with ranges, :mod:`netweft.testbed.arg_types`); an expected
failure raises :class:`CommandError` and is printed as one line,
``netweft <command>: error: <cause and fix>``, like argparse's own errors;
Ctrl-C prints ``netweft <command>: interrupted`` and exits 130; help texts are
plain text (reStructuredText markup in docstrings is stripped). ``kill -USR1`` of a
running command prints every thread's Python stack to its stderr (a hung run can be
asked where it is).
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version


class CommandError(Exception):
    """An expected failure of a command: the message names the cause and the fix."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _load(spec: str) -> Callable[[argparse._SubParsersAction], None]:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


_ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc):`(~?)([^`]+)`")


def plain_text(text: str | None) -> str | None:
    """``text`` without reStructuredText inline markup (double backquotes, :class:`x`)."""
    if text is None:
        return None
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    return text.replace("``", "")


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _parsers(sub)


def _version() -> str:
    try:
        return version("netweft")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="netweft",
        description="netweft: emulate and measure an AI-datacenter fabric on one Linux machine.",
    )
    parser.add_argument("--version", action="version", version=f"netweft {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    specs = {ep.name: ep.value for ep in entry_points(group="netweft.commands")}
    for name in sorted(specs):
        _load(specs[name])(sub)
    for p in _parsers(parser):
        p.description = plain_text(p.description)
        p.epilog = plain_text(p.epilog)
        for action in p._actions:
            action.help = plain_text(action.help)
            for choice in getattr(action, "_choices_actions", []):
                choice.help = plain_text(choice.help)
        p.set_defaults(command_prog=p.prog)  # the innermost parser's name wins
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``netweft``; returns the process exit code."""
    try:   # not where stderr is no file (captured by a test runner)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    except (AttributeError, ValueError, OSError):   # io.UnsupportedOperation is an OSError
        pass
    try:  # loading every command's module takes a moment: Ctrl-C may come here too
        parser = build_parser()
    except KeyboardInterrupt:
        print("netweft: interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CommandError as err:
        print(f"{args.command_prog}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"{args.command_prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``netweft fabric routes ... | head``): stop quietly, and
        # keep Python's exit-time flush of stdout from raising again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    # Run the imported module's main, not this __main__ copy: commands raise the
    # CommandError of netweft.testbed.command_line, which a __main__ copy would not catch.
    from netweft.testbed.command_line import main as _main

    sys.exit(_main())
