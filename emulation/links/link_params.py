"""What a link does to the packets that cross it: delay, jitter, loss, rate and queue.

A :class:`LinkParams` is written once (in a topology file, on the command line or
from Python) and parsed here, with the units people write: ``"5ms"``, ``"250us"``
or a number of milliseconds for times; ``"100mbit"``, ``"1gbit"`` or a number of
Mbit/s for rates (as Mininet's ``bw``); ``"1%"`` or a fraction for loss; a number
of packets, or ``{packets: N, bytes: B}``, for the queue. Strings are read by the
unit parsers every link setting goes through (:mod:`netweft.nic_offload.wire_spec`,
behind the switch's ``--link`` too), so both spellings agree. The switch at a link's switch end applies them as
:class:`~netweft.emulation.links.port_options.PortOptions` (this kernel has no
``netem``); a link between two hosts can only take a rate, which the kernel's
``tbf`` enforces.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from netweft.emulation.links.link_model import LinkConfig
from netweft.emulation.links.port_options import PortOptions
from netweft.nic_offload.wire_spec import (
    WireSpecError,
    parse_duration,
    parse_fraction,
)
from netweft.nic_offload.wire_spec import parse_rate as parse_tc_rate


class LinkParamsError(ValueError):
    """A link parameter could not be read; the message names it and shows the accepted form."""


def parse_time(value: Any, what: str = "delay") -> float:
    """Seconds from ``"5ms"``, ``"250us"``, ``"0.1s"`` or a number of milliseconds."""
    if isinstance(value, bool):
        raise LinkParamsError(f"{what}: {value!r} is not a time (write e.g. 5ms or 250us)")
    if isinstance(value, (int, float)):
        if value < 0:
            raise LinkParamsError(f"{what}: {value!r} is negative")
        return float(value) * 1e-3
    try:
        return parse_duration(str(value), what) * 1e-9
    except WireSpecError as exc:
        raise LinkParamsError(str(exc)) from None


def parse_rate(value: Any, what: str = "rate") -> float:
    """Bits per second from ``"100mbit"``, ``"1gbit"`` or a number of Mbit/s (Mininet's ``bw``)."""
    if isinstance(value, bool):
        raise LinkParamsError(f"{what}: {value!r} is not a rate (write e.g. 100mbit or 1gbit)")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise LinkParamsError(f"{what}: {value!r} must be positive")
        return float(value) * 1e6
    try:
        return parse_tc_rate(str(value), what)
    except WireSpecError as exc:
        raise LinkParamsError(str(exc)) from None


def parse_loss(value: Any, what: str = "loss") -> float:
    """A loss fraction from ``"1%"`` or a fraction in [0, 1]."""
    if isinstance(value, bool):
        raise LinkParamsError(f"{what}: {value!r} is not a loss (write e.g. 1% or 0.01)")
    try:
        return parse_fraction(str(value), what)
    except WireSpecError as exc:
        raise LinkParamsError(str(exc)) from None


@dataclass(frozen=True)
class LinkParams:
    """A link's emulated behaviour, in SI units; ``None`` means "not emulated"."""

    delay_s: float | None = None
    jitter_s: float | None = None
    loss: float | None = None
    rate_bps: float | None = None
    queue_packets: int | None = None
    queue_bytes: int | None = None

    @classmethod
    def parse(cls, *, delay: Any = None, jitter: Any = None, loss: Any = None,
              rate: Any = None, queue: Any = None, where: str = "link") -> LinkParams:
        """Read the user's spelling of each parameter; errors name ``where``."""
        try:
            packets = nbytes = None
            if isinstance(queue, dict):
                unknown = set(queue) - {"packets", "bytes"}
                if unknown:
                    raise LinkParamsError(f"queue: unknown key(s) {sorted(unknown)}; "
                                          "use packets and/or bytes")
                packets, nbytes = queue.get("packets"), queue.get("bytes")
            elif queue is not None:
                packets = queue
            for name, n in (("queue packets", packets), ("queue bytes", nbytes)):
                if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
                    raise LinkParamsError(f"{name}: {n!r} must be a positive whole number")
            params = cls(
                delay_s=None if delay is None else parse_time(delay, "delay"),
                jitter_s=None if jitter is None else parse_time(jitter, "jitter"),
                loss=None if loss is None else parse_loss(loss),
                rate_bps=None if rate is None else parse_rate(rate),
                queue_packets=packets, queue_bytes=nbytes)
        except LinkParamsError as exc:
            raise LinkParamsError(f"{where}: {exc}") from None
        # Zero means "nothing to emulate" (the tutorials write "0ms" on every link).
        params = cls(**{f.name: (None if not getattr(params, f.name) else getattr(params, f.name))
                        for f in fields(params)})
        if params.jitter_s and not params.delay_s:
            raise LinkParamsError(f"{where}: jitter needs a delay at least as large")
        if params.jitter_s and params.delay_s and params.jitter_s > params.delay_s:
            raise LinkParamsError(f"{where}: jitter {params.jitter_s * 1e3:g}ms exceeds "
                                  f"delay {params.delay_s * 1e3:g}ms")
        return params

    def any(self) -> bool:
        """Whether anything is emulated at all."""
        return any(getattr(self, f.name) is not None for f in fields(self))

    def needs_switch(self) -> list[str]:
        """The parameters only a switch can apply here (all but the rate)."""
        return [name for name, value in (("delay", self.delay_s), ("jitter", self.jitter_s),
                                         ("loss", self.loss),
                                         ("queue", self.queue_packets or self.queue_bytes))
                if value]

    def port_options(self, ingress_too: bool) -> PortOptions:
        """The traffic manager's settings for the switch port at one end of the link.

        The port's egress side takes the link and its queue; with ``ingress_too``
        (the far end is a host, which emulates nothing) its ingress side takes the
        link as well, so both directions see it, as with Mininet's ``TCLink``.
        """
        link = LinkConfig(delay_ns=round((self.delay_s or 0) * 1e9),
                          jitter_ns=round((self.jitter_s or 0) * 1e9),
                          loss=self.loss or 0.0, rate_bps=self.rate_bps)
        return PortOptions(ingress=link if ingress_too else LinkConfig(), egress=link,
                           queue_depth=self.queue_packets, queue_bytes=self.queue_bytes)

    def describe(self) -> str:
        """A short human-readable form, e.g. ``delay 5ms, rate 100Mbit/s``."""
        parts = []
        if self.delay_s is not None:
            parts.append(f"delay {self.delay_s * 1e3:g}ms")
        if self.jitter_s is not None:
            parts.append(f"jitter {self.jitter_s * 1e3:g}ms")
        if self.loss is not None:
            parts.append(f"loss {self.loss * 100:g}%")
        if self.rate_bps is not None:
            parts.append(f"rate {self.rate_bps / 1e6:g}Mbit/s")
        if self.queue_packets is not None:
            parts.append(f"queue {self.queue_packets} packets")
        if self.queue_bytes is not None:
            parts.append(f"queue {self.queue_bytes} bytes")
        return ", ".join(parts) or "no emulation"
