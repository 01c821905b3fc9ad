"""argparse types with ranges, so that ``netweft`` commands reject bad values at parse time.

``type=int_in(1, 100_000)`` makes argparse report ``netweft demo: error: argument
--count: must be an integer from 1 to 100000, got '-5'`` and exit 2, before any
work starts.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in ``[low, high]`` (no upper bound if ``high`` is None)."""
    span = f"from {low} to {high}" if high is not None else f">= {low}"

    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {text!r}")
        return value

    parse.__name__ = "integer"  # argparse names the type in its own messages
    return parse


def float_in(low: float, high: float | None = None, *, low_open: bool = False
             ) -> Callable[[str], float]:
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` if ``low_open``)."""
    span = (f"{'>' if low_open else '>='} {low}" if high is None
            else f"in {'(' if low_open else '['}{low}, {high}]")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number {span}, got {text!r}") from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be a number {span}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


def message_size(text: str) -> int:
    """An argparse type: a message size from 1 byte to 256 MiB, with a k or m suffix (64k, 1m)."""
    units = {"k": 1 << 10, "m": 1 << 20}
    t = text.strip().lower()
    try:
        value = int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64k, 1m)") from None
    if not 1 <= value <= 256 << 20:
        raise argparse.ArgumentTypeError(f"size must be 1 byte to 256m, got {text!r}")
    return value


def existing_file(text: str) -> Path:
    """An argparse type: a path to a file that exists and can be read."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"cannot read {text!r} (permission denied)")
    return path


def existing_dir(text: str) -> Path:
    """An argparse type: a path to a directory that exists (an include path, say)."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"no such directory: {text!r}")
    return path
