"""Argument types of ``netweft perf``: every option is checked when it is parsed,
so a bad value stops with one line naming the option's rule, never a traceback,
a ``nan`` or a run that quietly measures nonsense."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from netweft.transport.errors import InvalidArgumentError
from netweft.transport.reliability_policy import Reliability, parse_reliability

# IPv4 + UDP headers, the UET headers of the largest data packet (64 bytes) and a
# payload worth sending: below 576 bytes (the IPv4 minimum every host accepts), a
# packet carries so little that a test measures header processing, not a transport.
MTU_MIN = 576
# The engine's largest packet: 16447 bytes of UDP payload (14-bit payload length
# plus headers) + 28 bytes of IPv4 and UDP headers.
MTU_MAX = 16447 + 28
WINDOW_MIN, WINDOW_MAX = 64, 4096


def size(text: str) -> int:
    """A byte count > 0, with an optional k/m/g suffix (binary units)."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower()
    try:
        value = int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4096, 64k, 1m)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be > 0, got {text!r}")
    return value


def probability(text: str) -> float:
    """A loss probability in [0, 1)."""
    try:
        p = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a probability: {text!r}") from None
    if not 0.0 <= p < 1.0:
        raise argparse.ArgumentTypeError(f"loss must be in [0, 1), got {text}")
    return p


def setting(text: str) -> tuple[str, int]:
    """An engine setting ``KEY=VALUE`` with an integer value."""
    key, sep, value = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, int(value, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{key}: not an integer: {value!r}") from None


def int_range(what: str, low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer type accepting ``low`` <= value (<= ``high``)."""
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}: not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            rule = f">= {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"{what} must be {rule}, got {text}")
        return value
    parse.__name__ = what  # argparse names the type in its messages
    return parse


def float_above(what: str, low: float, inclusive: bool = False) -> Callable[[str], float]:
    """A float type accepting values > ``low`` (>= with ``inclusive``), never nan/inf."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}: not a number: {text!r}") from None
        ok = value >= low if inclusive else value > low
        if not ok or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(
                f"{what} must be {'>=' if inclusive else '>'} {low:g}, got {text}")
        return value
    parse.__name__ = what
    return parse


def window(text: str) -> int:
    """The netweft window in packets: a power of two in [64, 4096]."""
    value = int_range("window", WINDOW_MIN, WINDOW_MAX)(text)
    if value & (value - 1):
        raise argparse.ArgumentTypeError(f"window must be a power of two between {WINDOW_MIN} "
                                         f"and {WINDOW_MAX}, got {text}")
    return value


def json_file(text: str) -> str:
    """A file the raw numbers can be written to once the run is over: checked now, so
    that a typo does not cost the whole run."""
    path = Path(text).expanduser()
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file name")
    parent = path.resolve().parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"cannot write {text}: permission denied")
    return str(path)


IO_MODES = ("thread", "inline", "busy")
TX_MODES = ("ports", "socket", "raw", "packet")


def choice_list(what: str, choices: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """argparse type: one or more of ``choices``, comma-separated."""
    def parse(text: str) -> tuple[str, ...]:
        picked = tuple(m.strip() for m in text.split(","))
        for m in picked:
            if m not in choices:
                raise argparse.ArgumentTypeError(f"unknown {what} {m!r}; choose from "
                                                 f"{', '.join(choices)}")
        return picked
    parse.__name__ = what
    return parse


tx_modes = choice_list("transmit path", TX_MODES)
io_modes = choice_list("I/O mode", IO_MODES)


output_file = json_file  # any file written once the run is over (a plot, ...)
seconds = float_above("time", 0.0)
path_mtu = int_range("mtu", MTU_MIN, MTU_MAX)
count = int_range("count", 1)
depth = int_range("depth", 1)
rounds = int_range("rounds", 1)
port = int_range("port", 1, 65535)
listen_port = int_range("port", 0, 65535)


def reliability_arg(text: str) -> Reliability:
    """argparse type: sr, ec:K,M or adaptive, checked at parse time."""
    try:
        return parse_reliability(text)
    except InvalidArgumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
