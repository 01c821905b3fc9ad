"""Per-port link and queue settings of a switch, and their command-line form.

One port's settings are a :class:`PortOptions`: the link model for frames
arriving on the port (``ingress``) and leaving it (``egress``), and the limits
of the port's egress queues.  The command-line form (the switch process's
``--link``, which topology files map onto) is::

    PORT[/in|/out]:KEY=VALUE[,KEY=VALUE...]

    --link 1:delay=5ms,jitter=1ms,loss=0.01,rate=100mbit,queue=64
    --link 2/out:gemodel=0.01/0.3,corrupt=0.001
    --link 3:queue=32,queue_bytes=48000,queue_pps=10000

Settings may also be written ``KEY VALUE`` and separated by spaces, as
``netem`` writes them (``1:delay 5ms loss 1%``); the link keys and their units
are read by :mod:`netweft.nic_offload.wire_spec`, as everywhere else.  Link
keys apply to both directions unless the port names one (``/in``: frames the
switch receives on the port, ``/out``: frames it sends):

``delay``, ``jitter``
    a duration with its unit: ``ns``, ``us``, ``ms`` or ``s`` (``5ms``).
``loss``, ``corrupt``
    a fraction (``0.01``) or a percentage (``1%``).
``gemodel=P/R[/LOSS_BAD[/LOSS_GOOD]]``
    Gilbert-Elliott burst loss (as ``netem loss gemodel``): P good->bad and R
    bad->good transition probabilities per frame, loss probability in each
    state (defaults 1 and 0).
``rate``
    bits per second with a ``tc`` unit: ``bit``, ``kbit``, ``mbit``, ``gbit``
    (``100mbit``); on the egress side this is the port's line rate.
``limit``
    frames that may wait for the transmitter on the ingress side (default 1000).

Queue keys (egress only):

``queue``
    depth of each of the port's priority queues, in packets (default 64).
``queue_bytes``
    depth in bytes as well.
``queue_pps``, ``queue_rate``
    service rate of each queue in packets/s (BMv2 ``set_queue_rate``) or in
    bits/s (``tc`` units, as ``rate``).

A link between two switches should be set at one end per direction, so each
switch sets the ``/out`` side of its ports towards other switches; a link
to a host is set both ways at the switch's end (hosts have no link model).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from netweft.emulation.links.link_model import GilbertElliott, LinkConfig
from netweft.nic_offload.wire_spec import (
    WIRE_KEYS,
    WireSpecError,
    format_duration,
    format_rate,
    parse_count,
    parse_rate,
    split_settings,
    wire_setting,
)

__all__ = ["PortOptions", "PortOptionError", "link_option_port", "parse_link_option",
           "parse_link_options",
           "format_duration", "format_rate"]


class PortOptionError(WireSpecError):
    """A ``--link`` setting that cannot be read; the message names the part and the fix."""


@dataclass(frozen=True)
class PortOptions:
    """Link model per direction and queue limits for one switch port."""

    ingress: LinkConfig = field(default_factory=LinkConfig)
    egress: LinkConfig = field(default_factory=LinkConfig)
    queue_depth: int | None = None
    queue_bytes: int | None = None
    queue_pps: float | None = None
    queue_bps: float | None = None

    @property
    def queue_changes(self) -> dict[str, object]:
        """The queue limits set here, as :meth:`TrafficManager.configure_queue` keywords."""
        out: dict[str, object] = {}
        if self.queue_depth is not None:
            out["depth_packets"] = self.queue_depth
        if self.queue_bytes is not None:
            out["depth_bytes"] = self.queue_bytes
        if self.queue_pps is not None:
            out["rate_pps"] = self.queue_pps
        if self.queue_bps is not None:
            out["rate_bps"] = self.queue_bps
        return out

    def to_option(self, port: int) -> list[str]:
        """The ``--link`` values that give back these settings (one or two of them)."""
        queue = _queue_keys(self)
        if self.ingress == self.egress:
            parts = _link_keys(self.ingress) + queue
            return [f"{port}:{','.join(parts)}"] if parts else []
        out = []
        if not self.ingress.is_ideal:
            out.append(f"{port}/in:{','.join(_link_keys(self.ingress))}")
        parts = _link_keys(self.egress) + queue
        if parts:
            out.append(f"{port}/out:{','.join(parts)}")
        return out


_LINK_KEYS = WIRE_KEYS
_QUEUE_KEYS = ("queue", "queue_bytes", "queue_pps", "queue_rate")


def _fraction_text(value: float) -> str:
    return f"{value:g}"


def _link_keys(cfg: LinkConfig) -> list[str]:
    parts = []
    if cfg.delay_ns:
        parts.append(f"delay={format_duration(cfg.delay_ns)}")
    if cfg.jitter_ns:
        parts.append(f"jitter={format_duration(cfg.jitter_ns)}")
    if cfg.loss:
        parts.append(f"loss={_fraction_text(cfg.loss)}")
    if cfg.gemodel is not None:
        ge = cfg.gemodel
        parts.append("gemodel=" + "/".join(_fraction_text(v) for v in
                                           (ge.p, ge.r, ge.loss_bad, ge.loss_good)))
    if cfg.corrupt:
        parts.append(f"corrupt={_fraction_text(cfg.corrupt)}")
    if cfg.rate_bps is not None:
        parts.append(f"rate={format_rate(cfg.rate_bps)}")
    if cfg.limit != LinkConfig.limit:
        parts.append(f"limit={cfg.limit}")
    return parts


def _queue_keys(opts: PortOptions) -> list[str]:
    parts = []
    if opts.queue_depth is not None:
        parts.append(f"queue={opts.queue_depth}")
    if opts.queue_bytes is not None:
        parts.append(f"queue_bytes={opts.queue_bytes}")
    if opts.queue_pps is not None:
        parts.append(f"queue_pps={opts.queue_pps:g}")
    if opts.queue_bps is not None:
        parts.append(f"queue_rate={format_rate(opts.queue_bps)}")
    return parts


def _link_value(key: str, value: str) -> dict[str, object]:
    fields = wire_setting(key, value)
    if "gemodel" in fields:
        p, r, loss_good, loss_bad = fields["gemodel"]  # type: ignore[misc]
        fields["gemodel"] = GilbertElliott(p, r, loss_bad, loss_good)
    return fields


def _queue_value(key: str, value: str) -> dict[str, object]:
    if key == "queue":
        return {"queue_depth": parse_count(value, key)}
    if key == "queue_bytes":
        return {"queue_bytes": parse_count(value, key)}
    if key == "queue_pps":
        try:
            pps = float(value)
        except ValueError:
            pps = 0.0
        if pps <= 0:
            raise PortOptionError(f"queue_pps={value!r}: give packets per second > 0")
        return {"queue_pps": pps}
    return {"queue_bps": parse_rate(value, key)}


def _split(text: str) -> tuple[int, str | None, str]:
    head, sep, body = text.partition(":")
    m = re.fullmatch(r"\s*(\d+)\s*(?:/\s*(in|out)\s*)?", head)
    if not sep or not m:
        raise PortOptionError(f"--link {text!r}: write PORT[/in|/out]:KEY=VALUE,..., e.g. "
                              "1:delay=5ms,loss=0.01,rate=100mbit,queue=64")
    port = int(m.group(1))
    if port >= 511:
        raise PortOptionError(f"--link {text!r}: port {port} is not in 0..510")
    return port, m.group(2), body


def link_option_port(text: str) -> int:
    """The port a ``--link`` value is about."""
    return _split(text)[0]


def parse_link_option(text: str, base: PortOptions | None = None) -> tuple[int, PortOptions]:
    """Read one ``--link`` value; settings not named keep their value in ``base``."""
    port, direction, body = _split(text)
    opts = base or PortOptions()
    link_changes: dict[str, object] = {}
    queue_changes: dict[str, object] = {}
    try:
        settings = split_settings(body, _LINK_KEYS + _QUEUE_KEYS)
    except WireSpecError as err:
        raise PortOptionError(f"--link {text!r}: {err}") from None
    for key, value in settings:
        try:
            if key in _LINK_KEYS:
                link_changes.update(_link_value(key, value))
            elif direction == "in":
                raise PortOptionError(f"{key} sets the port's egress queues; drop '/in'")
            else:
                queue_changes.update(_queue_value(key, value))
        except WireSpecError as err:
            raise PortOptionError(f"--link {text!r}: {err}") from None
    try:
        ingress = (replace(opts.ingress, **link_changes)  # type: ignore[arg-type]
                   if direction in (None, "in") else opts.ingress)
        egress = (replace(opts.egress, **link_changes)  # type: ignore[arg-type]
                  if direction in (None, "out") else opts.egress)
    except ValueError as err:
        raise PortOptionError(f"--link {text!r}: {err}") from None
    return port, replace(opts, ingress=ingress, egress=egress, **queue_changes)


def parse_link_options(texts: Iterable[str]) -> dict[int, PortOptions]:
    """Read several ``--link`` values; later ones refine earlier ones for the same port."""
    out: dict[int, PortOptions] = {}
    for text in texts:
        port = _split(text)[0]
        out[port] = parse_link_option(text, out.get(port))[1]
    return out

