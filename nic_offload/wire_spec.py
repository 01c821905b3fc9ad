"""The text form of wire parameters: one reading for every place a user writes them.

The switch's ``--link`` values and ``set_link`` command
(:mod:`netweft.emulation.links.port_options`), topology files and
``Network.add_link`` (:mod:`netweft.emulation.links.link_params`) and the
simulator's :meth:`Impairments.from_spec <netweft.transport.sim.wire.Impairments.from_spec>`
read units and wire keys here. A setting is ``KEY=VALUE`` or, as ``tc qdisc ...
netem`` writes it, ``KEY VALUE``, separated by commas or spaces::

    delay 5ms jitter 1ms loss 1% gemodel 0.01 0.3 corrupt 0.1% rate 100mbit
    delay=5ms,jitter=1ms,loss=0.01,gemodel=0.01/0.3

``delay``, ``jitter``
    a duration with its unit: ``ns``, ``us``, ``ms`` or ``s`` (``5ms``).
``loss``, ``corrupt``
    a fraction (``0.01``) or a percentage (``1%``).
``gemodel P R [LOSS_BAD [LOSS_GOOD]]``
    Gilbert-Elliott burst loss (``netem loss gemodel``); the values are separated
    by ``/`` or spaces; R defaults to 1 - P, LOSS_BAD to 1, LOSS_GOOD to 0.
``rate``
    bits per second with a ``tc`` unit: ``bit``, ``kbit``, ``mbit``, ``gbit``.
``limit``
    frames that may wait for the transmitter.

What each means is the one wire model's (``docs/links.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["WIRE_KEYS", "WireSpecError", "format_duration", "format_rate", "parse_count",
           "parse_duration", "parse_fraction", "parse_rate", "parse_wire_spec",
           "split_settings", "wire_setting"]


class WireSpecError(ValueError):
    """A setting that cannot be read; the message names it and shows the accepted form."""


_DURATION = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_RATE = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
WIRE_KEYS = ("delay", "jitter", "loss", "gemodel", "corrupt", "rate", "limit")


def parse_duration(text: str, what: str) -> int:
    """``5ms`` -> nanoseconds."""
    m = re.fullmatch(rf"\s*({_NUMBER})\s*(ns|us|ms|s)\s*", text)
    if not m:
        raise WireSpecError(f"{what}={text!r}: give a duration with a unit, e.g. 5ms "
                              "(units: ns, us, ms, s)")
    return int(round(float(m.group(1)) * _DURATION[m.group(3)]))


def parse_rate(text: str, what: str) -> float:
    """``100mbit`` -> bits per second."""
    m = re.fullmatch(rf"\s*({_NUMBER})\s*([a-zA-Z]+)\s*", text)
    unit = m.group(3).lower() if m else ""
    if not m or unit not in _RATE:
        hint = (" (tc's 'bps' means bytes/s; write mbit for megabits/s)"
                if unit.endswith("bps") else "")
        raise WireSpecError(f"{what}={text!r}: give bits/s with a unit, e.g. 100mbit "
                              f"(units: bit, kbit, mbit, gbit){hint}")
    value = float(m.group(1)) * _RATE[unit]
    if value <= 0:
        raise WireSpecError(f"{what}={text!r}: the rate must be positive")
    return value


def parse_fraction(text: str, what: str) -> float:
    """``0.01`` or ``1%`` -> 0.01."""
    t = text.strip()
    scale = 1.0
    if t.endswith("%"):
        t, scale = t[:-1], 0.01
    try:
        value = float(t) * scale
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise WireSpecError(f"{what}={text!r}: give a fraction in 0..1 (0.01) or a "
                              "percentage (1%)")
    return value


def parse_count(text: str, what: str, minimum: int = 0) -> int:
    """``64`` -> 64, refusing anything but a whole number >= ``minimum``."""
    if not text.strip().isdigit() or int(text) < minimum:
        raise WireSpecError(f"{what}={text!r}: give a whole number >= {minimum}")
    return int(text)


def format_duration(ns: int) -> str:
    """Nanoseconds in the shortest exact unit (``5000000`` -> ``5ms``)."""
    for unit in ("s", "ms", "us"):
        if ns and ns % _DURATION[unit] == 0:
            return f"{ns // _DURATION[unit]}{unit}"
    return f"{ns}ns"


def format_rate(bps: float) -> str:
    """Bits/s with a ``tc`` unit (``1e8`` -> ``100mbit``)."""
    for unit in ("gbit", "mbit", "kbit"):
        scaled = bps / _RATE[unit]
        if scaled >= 1 and scaled == int(scaled):
            return f"{int(scaled)}{unit}"
    return f"{bps:g}bit"


def wire_setting(key: str, value: str) -> dict[str, object]:
    """One wire key's value as :class:`~netweft.nic_offload.wire_model.WireConfig` fields:
    ``delay_ns``, ``jitter_ns``, ``loss``, ``corrupt``, ``rate_bps`` (a float), ``limit``
    or ``gemodel`` (``(p, r, loss_good, loss_bad)``)."""
    if key == "delay":
        return {"delay_ns": parse_duration(value, key)}
    if key == "jitter":
        return {"jitter_ns": parse_duration(value, key)}
    if key == "loss":
        return {"loss": parse_fraction(value, key)}
    if key == "corrupt":
        return {"corrupt": parse_fraction(value, key)}
    if key == "rate":
        return {"rate_bps": parse_rate(value, key)}
    if key == "limit":
        return {"limit": parse_count(value, key, 1)}
    if key != "gemodel":
        raise WireSpecError(f"unknown key {key!r} (known: {', '.join(WIRE_KEYS)})")
    parts = value.replace("/", " ").split()
    if not 1 <= len(parts) <= 4:
        raise WireSpecError(f"gemodel={value!r}: give P/R[/LOSS_BAD[/LOSS_GOOD]], "
                            "e.g. gemodel=0.01/0.3")
    probs = [parse_fraction(p, "gemodel") for p in parts]
    p = probs[0]
    r = probs[1] if len(probs) > 1 else 1.0 - p
    loss_bad = probs[2] if len(probs) > 2 else 1.0
    loss_good = probs[3] if len(probs) > 3 else 0.0
    if p + r == 0:
        raise WireSpecError(f"gemodel={value!r}: p and r cannot both be 0")
    return {"gemodel": (p, r, loss_good, loss_bad)}


_VALUE = re.compile(r"[\d.]")   # a gemodel value starts with a digit or a point


def split_settings(text: str, keys: Iterable[str]) -> list[tuple[str, str]]:
    """``KEY=VALUE`` or ``KEY VALUE`` settings separated by commas or spaces, as
    (key, value) pairs in order; ``gemodel`` takes up to four space-separated values.
    Keys not in ``keys`` are refused."""
    known = tuple(keys)
    tokens = [t for t in re.split(r"[,\s]+", text.strip()) if t]
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        key, eq, value = token.partition("=")
        key = key.strip().lower()
        if key not in known:
            raise WireSpecError(f"unknown key {key!r} (known: {', '.join(known)})")
        i += 1
        if not eq:
            if i == len(tokens):
                raise WireSpecError(f"{key} needs a value, e.g. {_EXAMPLE.get(key, key + '=1')}")
            value = tokens[i]
            i += 1
        if not value.strip():
            raise WireSpecError(f"{token!r} is not KEY=VALUE")
        if key == "gemodel":
            more = []
            while i < len(tokens) and len(more) < 3 and _VALUE.match(tokens[i]) \
                    and "/" not in value:
                more.append(tokens[i])
                i += 1
            value = " ".join([value, *more])
        out.append((key, value))
    return out


_EXAMPLE = {"delay": "delay=5ms", "jitter": "jitter=1ms", "loss": "loss=1%",
            "corrupt": "corrupt=0.1%", "rate": "rate=100mbit", "limit": "limit=1000",
            "gemodel": "gemodel=0.01/0.3"}


def parse_wire_spec(text: str) -> dict[str, object]:
    """Every wire setting of ``text`` (``"delay 5ms loss 1% gemodel 0.01 0.3"``) as
    :func:`wire_setting` fields; later settings of a key replace earlier ones."""
    fields: dict[str, object] = {}
    for key, value in split_settings(text, WIRE_KEYS):
        fields.update(wire_setting(key, value))
    return fields
