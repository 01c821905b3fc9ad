"""One direction of an emulated link: a transmitter with a rate, then a wire with delay,
jitter, loss and corruption.

This kernel has no ``netem`` (see the project's design notes), so the switch
emulates its links itself, with the one wire model the simulator runs too
(:mod:`netweft.nic_offload.wire_model`, C in ``nic_offload/src/link/``).  The
model is sans-IO: every call takes the current time in nanoseconds and returns
when a frame arrives at the far end, so the same object runs in virtual time
(tests, simulations) and in real time (switch processes).  All randomness comes
from the model's streams seeded from ``seed``: one run with the same seed and
the same traffic loses, corrupts and delays the same frames.

Semantics, after ``netem``/``tbf`` (``docs/links.md`` has the details):

- ``rate_bps``: frames are serialized one after another at this rate (frame
  bytes as seen on the interface, no preamble or inter-frame gap); a frame that
  finds the transmitter busy waits behind it, up to ``limit`` waiting frames
  (more are dropped and counted as ``limit``).  On a switch's egress side the
  traffic manager's port scheduler is the transmitter and uses
  :meth:`LinkDirection.transmit_ns` instead.
- ``delay_ns`` and ``jitter_ns``: each frame takes ``delay`` plus a uniform
  sample in ``[-jitter, +jitter]`` (never less than zero) after its last bit
  left; frames keep their order (a frame never overtakes the one before it, as
  on a real wire).
- ``loss``: each frame is lost independently with this probability (Bernoulli);
  ``gemodel``: losses in bursts by the Gilbert-Elliott model; with both, a
  frame is lost if either loses it.
- ``corrupt``: with this probability one random bit of the frame is flipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from netweft.nic_offload.wire_model import (
    DELIVER,
    DROP_LIMIT,
    WireConfig,
    WireModel,
    WireResult,
    flip_bit,
)

NS_PER_S = 1_000_000_000

__all__ = ["GilbertElliott", "LinkConfig", "LinkDirection", "LinkStats", "NS_PER_S"]


@dataclass(frozen=True)
class GilbertElliott:
    """Burst loss: a good and a bad state (``netem loss gemodel p r 1-h 1-k``).

    ``p``: probability per frame of going from good to bad; ``r``: from bad to
    good; ``loss_bad`` and ``loss_good``: the loss probability in each state.
    The mean burst (stay in bad) lasts ``1/r`` frames.
    """

    p: float
    r: float
    loss_bad: float = 1.0
    loss_good: float = 0.0

    def __post_init__(self) -> None:
        for name in ("p", "r", "loss_bad", "loss_good"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"gemodel {name} must be a probability in 0..1, got {value}")
        if self.p + self.r == 0:
            raise ValueError("gemodel p and r cannot both be 0")

    @property
    def mean_loss(self) -> float:
        """The long-run fraction of frames lost."""
        bad = self.p / (self.p + self.r)
        return bad * self.loss_bad + (1 - bad) * self.loss_good


@dataclass(frozen=True)
class LinkConfig:
    """What one direction of a link does to frames (all defaults: an ideal wire)."""

    delay_ns: int = 0
    jitter_ns: int = 0
    loss: float = 0.0
    gemodel: GilbertElliott | None = None
    corrupt: float = 0.0
    rate_bps: float | None = None
    limit: int = 1000

    def __post_init__(self) -> None:
        if self.delay_ns < 0 or self.jitter_ns < 0:
            raise ValueError("delay and jitter cannot be negative")
        for name in ("loss", "corrupt"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a fraction in 0..1, got {value}")
        if self.rate_bps is not None and self.rate_bps <= 0:
            raise ValueError(f"rate must be positive, got {self.rate_bps}")
        if self.limit < 1:
            raise ValueError(f"limit must be at least 1 frame, got {self.limit}")

    @property
    def is_ideal(self) -> bool:
        """True if frames cross unchanged, in no time."""
        return (not self.delay_ns and not self.jitter_ns and not self.loss
                and self.gemodel is None and not self.corrupt and self.rate_bps is None)

    @property
    def has_wire_effects(self) -> bool:
        """True if anything but the rate applies (delay, jitter, loss or corruption)."""
        return bool(self.delay_ns or self.jitter_ns or self.loss or self.gemodel is not None
                    or self.corrupt)

    def wire(self) -> WireConfig:
        """These settings as the one wire model's parameters."""
        ge = self.gemodel
        return WireConfig(rate_bps=0 if self.rate_bps is None else max(1, round(self.rate_bps)),
                          limit=self.limit, delay_ns=self.delay_ns, jitter_ns=self.jitter_ns,
                          loss=self.loss, corrupt=self.corrupt,
                          gemodel=None if ge is None else (ge.p, ge.r, ge.loss_good,
                                                           ge.loss_bad))


@dataclass
class LinkStats:
    """What one link direction did, by outcome."""

    sent: int = 0
    lost: int = 0
    corrupted: int = 0
    limit: int = 0


@dataclass
class LinkDirection:
    """One direction of a link: the wire model over ``config``, seeded with ``seed``."""

    config: LinkConfig
    seed: int | str = 0
    stats: LinkStats = field(default_factory=LinkStats)

    def __post_init__(self) -> None:
        self._wire = WireModel(self.config.wire(), self.seed)

    def transmit_ns(self, length: int) -> int:
        """Nanoseconds the transmitter needs for a ``length``-byte frame (0: no rate)."""
        return self._wire.transmit_ns(length)

    def send(self, now: int, frame: bytes) -> tuple[int, bytes] | None:
        """Hand ``frame`` to the transmitter at ``now``: ``(arrival time, frame)`` or None.

        None means the frame is gone (waiting room full, or lost on the wire).
        """
        return self._outcome(self._wire.send(now, len(frame)), frame)

    def propagate(self, now: int, frame: bytes) -> tuple[int, bytes] | None:
        """The wire only: ``frame``'s last bit left at ``now``; ``(arrival, frame)`` or None."""
        return self._outcome(self._wire.propagate(now, len(frame)), frame)

    def _outcome(self, result: WireResult, frame: bytes) -> tuple[int, bytes] | None:
        verdict, _, arrival, bit = result
        if verdict != DELIVER:
            if verdict == DROP_LIMIT:
                self.stats.limit += 1
            else:
                self.stats.lost += 1
            return None
        if bit is not None:
            frame = flip_bit(frame, bit)
            self.stats.corrupted += 1
        self.stats.sent += 1
        return arrival, frame
