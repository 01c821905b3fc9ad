"""The simulator's wire: the one wire model plus the simulator's extra effects.

:class:`Impairments` says what may happen to each datagram; :class:`Link` gives an
endpoint a rate each way, a propagation delay and the queue in front of its
downlink (:class:`netweft.transport.sim.port.OutputPort`). :class:`Path` sends
one datagram at a time and returns its arrivals. It is pure: no I/O, no engine.

A path is two layers. The wire is the one wire model in C
(:mod:`netweft.nic_offload.wire_model`, the same code the emulation's links run,
``docs/links.md``): the transmitter at the link's rate, the delay (the link's
plus the impairments'), jitter (uniform in [-jitter, +jitter], order kept),
Bernoulli and Gilbert-Elliott loss and one-bit corruption, from the path's seed.
On top of it, effects only the simulator has, drawn from a ``random.Random`` of
their own: junk datagrams, duplication, explicit reordering (``reorder``: a
datagram held back by ``reorder_delay_ns``; jitter never reorders) and the
spraying fabric's path skew. So for one seed the wire decides exactly what an
emulated link with the same parameters would, and the extra effects do not
change which datagrams the wire loses or corrupts.

Corruption flips one bit. Each datagram carries the RFC 1071 checksum of its
bytes computed at transmit, as UDP does; the receiving side of the simulation
verifies it and drops a mismatch, exactly as a kernel drops a UDP datagram with
a bad checksum. Junk datagrams (random bytes, and copies of real datagrams cut
inside their first header bytes) are what the engine itself must count and
drop.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from netweft.nic_offload.wire_model import (
    DELIVER,
    DROP_BURST,
    WireConfig,
    WireModel,
    flip_bit,
    serialization_ns,
)
from netweft.nic_offload.wire_spec import (
    WIRE_KEYS,
    WireSpecError,
    parse_fraction,
    split_settings,
    wire_setting,
)
from netweft.transport.errors import InvalidArgumentError

JUNK_TRUNCATE_MAX = 8  # junk copies of real datagrams keep fewer bytes than any header


@dataclass(frozen=True)
class Impairments:
    """Per-datagram probabilities and delays; all zero means a perfect network.

    ``spray_paths``/``spray_skew_ns`` model a fabric that sprays on the entropy
    value: each value maps to one of several paths of different lengths, so
    packets of one flow arrive reordered by their entropy.

    ``burst_enter``/``burst_exit``/``burst_loss`` add Gilbert-Elliott burst loss:
    each datagram the path moves from its good to its bad state with probability
    ``burst_enter`` (from bad to good with ``burst_exit``), and in the bad state a
    datagram is lost with probability ``burst_loss``; ``loss`` applies in both
    states (a datagram is lost if either loses it). Mean burst length is
    ``1 / burst_exit`` datagrams.

    ``delay_ns`` adds to the link's propagation delay; ``jitter_ns`` moves each
    datagram's delay by a uniform amount in ``[-jitter_ns, +jitter_ns]`` (never
    below zero) and never reorders: reordering is ``reorder`` alone, which holds
    a datagram back by ``reorder_delay_ns``. Loss, burst loss, delay, jitter and
    corruption mean what they mean on an emulated link (the one wire model,
    ``docs/links.md``)."""

    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    reorder_delay_ns: int = 50_000
    corrupt: float = 0.0
    delay_ns: int = 0
    jitter_ns: int = 0
    junk: float = 0.0
    spray_paths: int = 1
    spray_skew_ns: int = 0
    burst_enter: float = 0.0
    burst_exit: float = 1.0
    burst_loss: float = 1.0

    def __post_init__(self) -> None:
        for name in ("loss", "duplicate", "reorder", "corrupt", "junk", "burst_enter",
                     "burst_exit", "burst_loss"):
            p = getattr(self, name)
            if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
                raise InvalidArgumentError(f"impairment {name} must be a probability in [0, 1], "
                                           f"got {p!r}")
        if self.loss >= 1.0:
            raise InvalidArgumentError("impairment loss must be below 1 (nothing would arrive)")
        if self.burst_enter and self.burst_exit == 0.0:
            raise InvalidArgumentError("impairment burst_exit must be > 0 when burst_enter is "
                                       "set (the path would stay in its bad state)")
        if not isinstance(self.spray_paths, int) or self.spray_paths < 1:
            raise InvalidArgumentError(f"impairment spray_paths must be an int >= 1, "
                                       f"got {self.spray_paths!r}")
        for name in ("reorder_delay_ns", "delay_ns", "jitter_ns", "spray_skew_ns"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise InvalidArgumentError(f"impairment {name} must be an int >= 0, got {v!r}")

    @classmethod
    def mix(cls, level: float = 0.02) -> Impairments:
        """Every impairment at once at probability ``level``, with jitter."""
        return cls(loss=level, duplicate=level, reorder=level, corrupt=level,
                   delay_ns=20_000, jitter_ns=10_000, junk=level)

    @classmethod
    def from_spec(cls, text: str) -> Impairments:
        """Impairments from their text form, the wire keys as every link setting writes
        them (:mod:`netweft.nic_offload.wire_spec`: ``delay``, ``jitter``, ``loss``,
        ``gemodel P R [LOSS_BAD]``, ``corrupt``) plus the simulator's own fractions
        ``duplicate``, ``reorder`` and ``junk``:
        ``Impairments.from_spec("delay 20us jitter 10us loss 1% reorder 0.5%")``. The rate
        is the :class:`Link`'s."""
        own = ("duplicate", "reorder", "junk")
        fields: dict[str, object] = {}
        try:
            for key, value in split_settings(text, (*WIRE_KEYS, *own)):
                if key in own:
                    fields[key] = parse_fraction(value, key)
                    continue
                if key in ("rate", "limit"):
                    raise WireSpecError(f"{key} is the Link's, not an impairment")
                setting = wire_setting(key, value)
                if "gemodel" in setting:
                    p, r, loss_good, loss_bad = setting.pop("gemodel")  # type: ignore[misc]
                    if loss_good:
                        raise WireSpecError("gemodel: the simulator's burst loss has no "
                                            "loss in the good state (give P/R/LOSS_BAD)")
                    setting = {"burst_enter": p, "burst_exit": r, "burst_loss": loss_bad}
                fields.update(setting)
        except WireSpecError as exc:
            raise InvalidArgumentError(f"impairments {text!r}: {exc}") from None
        return cls(**fields)  # type: ignore[arg-type]

    def wire(self, link: Link) -> WireConfig:
        """The wire model's parameters for a datagram sent on ``link`` with these
        impairments (the simulator's own effects are not among them)."""
        burst = (self.burst_enter, self.burst_exit, 0.0, self.burst_loss)
        return WireConfig(rate_bps=max(1, round(link.rate_bps)),
                          delay_ns=link.delay_ns + self.delay_ns, jitter_ns=self.jitter_ns,
                          loss=self.loss, corrupt=self.corrupt,
                          gemodel=burst if self.burst_enter else None)


@dataclass(frozen=True)
class Link:
    """An endpoint's attachment: ``rate_bps`` each way, ``delay_ns`` of propagation, and a
    tail-drop queue of ``queue_pkts`` packets in front of its downlink (where incast
    from several senders meets).

    ``ecn_threshold_pkts`` > 0 makes that queue mark ECN-capable packets CE when it holds
    at least that many packets on arrival (a step marking, as DCTCP's K). ``trim`` makes
    it trim instead of drop when full, as a UET switch does: the packet's first 64 bytes
    with the trimmed mark (:func:`netweft.nic_offload.trim`) reach the endpoint at once,
    ahead of the queued data (a header queue of its own, served first, that does not
    delay data); packets no longer than that (ACKs, CTRL) take the header queue too."""

    rate_bps: float = 25e9
    delay_ns: int = 2_000
    queue_pkts: int = 1024
    ecn_threshold_pkts: int = 0
    trim: bool = False

    def __post_init__(self) -> None:
        if not self.rate_bps > 0:
            raise InvalidArgumentError(f"link rate_bps must be > 0, got {self.rate_bps!r}")
        if not isinstance(self.delay_ns, int) or self.delay_ns < 0:
            raise InvalidArgumentError(f"link delay_ns must be an int >= 0, got {self.delay_ns!r}")
        if not isinstance(self.queue_pkts, int) or self.queue_pkts < 1:
            raise InvalidArgumentError(f"link queue_pkts must be an int >= 1, "
                                       f"got {self.queue_pkts!r}")
        if not isinstance(self.ecn_threshold_pkts, int) or self.ecn_threshold_pkts < 0:
            raise InvalidArgumentError(f"link ecn_threshold_pkts must be an int >= 0, "
                                       f"got {self.ecn_threshold_pkts!r}")

    def serialization_ns(self, nbytes: int) -> int:
        """Time to put ``nbytes`` on the wire (the wire model's rule: rounded, at least
        1 ns, so events stay ordered)."""
        return serialization_ns(max(1, round(self.rate_bps)), nbytes)


@dataclass(frozen=True)
class Arrival:
    """One datagram reaching the receiver at ``at_ns``; ``intact`` is False if corrupted."""

    at_ns: int
    data: bytes
    intact: bool = True
    junk: bool = False


class Path:
    """A sender's link plus impairments: the wire model seeded with ``seed``, and the
    simulator's extra effects drawn from a generator of their own.

    ``seed`` is a 64-bit int, or a ``random.Random`` to take one from."""

    def __init__(self, link: Link, impairments: Impairments,
                 seed: int | random.Random = 0) -> None:
        if isinstance(seed, random.Random):
            seed = seed.getrandbits(64)
        self.link = link
        self.impairments = impairments
        self.seed = seed
        self.wire = WireModel(impairments.wire(link), seed)
        self.rng = random.Random(f"{seed}/effects")
        self.counters: Counter = Counter()
        self._delay_ns = link.delay_ns + impairments.delay_ns

    @property
    def busy_until_ns(self) -> int:
        """When the sender's transmitter is free again."""
        return self.wire.busy_until_ns

    def transmit(self, now_ns: int, data: bytes, entropy: int = 0) -> tuple[int, list[Arrival]]:
        """Send ``data`` at ``now_ns``: (time the link is free again, arrivals at the receiver).

        ``entropy`` (the UDP source port) picks one of ``spray_paths`` paths, path
        ``k`` being ``k * spray_skew_ns`` longer, as a spraying fabric would."""
        imp, rng, counters = self.impairments, self.rng, self.counters
        verdict, depart, arrive, bit = self.wire.send(now_ns, len(data))
        counters["sent"] += 1
        skew = (entropy % imp.spray_paths) * imp.spray_skew_ns if imp.spray_paths > 1 else 0
        arrivals: list[Arrival] = []
        if imp.junk and rng.random() < imp.junk:
            arrivals.append(Arrival(depart + self._delay_ns + skew, self._junk(data), junk=True))
            counters["junk"] += 1
        if verdict != DELIVER:
            counters["lost"] += 1
            if verdict == DROP_BURST:
                counters["burst_lost"] += 1
            return depart, arrivals
        payload, intact = data, True
        if bit is not None:
            payload, intact = flip_bit(data, bit), False
            counters["corrupted"] += 1
        copies = 1
        if imp.duplicate and rng.random() < imp.duplicate:
            copies = 2
            counters["duplicated"] += 1
        for _ in range(copies):
            at = arrive + skew
            if imp.reorder and rng.random() < imp.reorder:
                at += imp.reorder_delay_ns
                counters["reordered"] += 1
            arrivals.append(Arrival(at, payload, intact))
        return depart, arrivals

    def _junk(self, data: bytes) -> bytes:
        if self.rng.random() < 0.5:
            return data[: self.rng.randrange(min(len(data), JUNK_TRUNCATE_MAX) + 1)]
        return self.rng.randbytes(self.rng.randrange(1, max(2, len(data))))
