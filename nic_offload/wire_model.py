"""The one wire model (``include/wire_model.h``) seen from Python.

:class:`WireConfig` holds one direction's parameters, :class:`WireModel` runs the
C model over them. The emulation's link directions
(:mod:`netweft.emulation.links.link_model`) and the simulator's wire
(:mod:`netweft.transport.sim.wire`) both wrap this class, so a parameter means
the same thing in both and one seed gives the same outcome for the same frames.
The meaning of every parameter is documented in the C header and in
``docs/links.md``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple

from netweft.nic_offload._engine import ffi, lib

__all__ = ["WireConfig", "WireModel", "WireResult", "DELIVER", "DROP_LIMIT", "DROP_LOSS",
           "DROP_BURST", "flip_bit", "seed64", "serialization_ns"]

DELIVER = int(lib.NW_LINK_DELIVER)
DROP_LIMIT = int(lib.NW_LINK_DROP_LIMIT)
DROP_LOSS = int(lib.NW_LINK_DROP_LOSS)
DROP_BURST = int(lib.NW_LINK_DROP_BURST)
NO_BIT = int(lib.NW_LINK_NO_BIT)


def _probability(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in 0..1, got {value!r}")


@dataclass(frozen=True)
class WireConfig:
    """One direction's wire parameters; all defaults: an ideal wire.

    ``rate_bps`` 0 means no transmitter (frames leave at once), ``limit`` 0 no
    limit on the frames waiting for it. ``gemodel`` is ``(p, r, loss_good,
    loss_bad)`` or None."""

    rate_bps: int = 0
    limit: int = 0
    delay_ns: int = 0
    jitter_ns: int = 0
    loss: float = 0.0
    gemodel: tuple[float, float, float, float] | None = None
    corrupt: float = 0.0

    def __post_init__(self) -> None:
        for name in ("rate_bps", "limit", "delay_ns", "jitter_ns"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
        _probability("loss", self.loss)
        _probability("corrupt", self.corrupt)
        if self.gemodel is not None:
            if len(self.gemodel) != 4:
                raise ValueError("gemodel is (p, r, loss_good, loss_bad)")
            for name, value in zip(("p", "r", "loss_good", "loss_bad"), self.gemodel,
                                   strict=True):
                _probability(f"gemodel {name}", value)

    def _cdata(self) -> object:
        cfg = ffi.new("nw_link_config_t *")
        cfg.rate_bps = self.rate_bps
        cfg.limit = self.limit
        cfg.delay_ns = self.delay_ns
        cfg.jitter_ns = self.jitter_ns
        cfg.loss = self.loss
        cfg.corrupt = self.corrupt
        if self.gemodel is not None:
            cfg.gemodel = 1
            cfg.ge_p, cfg.ge_r, cfg.ge_loss_good, cfg.ge_loss_bad = self.gemodel
        return cfg


class WireResult(NamedTuple):
    """One frame's outcome: ``verdict`` (DELIVER or a DROP_*), when its last bit left the
    transmitter and reached the far end (``arrive_ns``, DELIVER only), and the bit to flip
    (None: intact)."""

    verdict: int
    depart_ns: int
    arrive_ns: int
    corrupt_bit: int | None


def seed64(seed: int | str) -> int:
    """A 64-bit seed: an int in 0..2**64-1 as is, anything else (a negative or larger int,
    a string such as ``"7/port3/out"``) by a fixed hash, so runs reproduce."""
    if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 1 << 64:
        return seed
    digest = hashlib.blake2b(str(seed).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def serialization_ns(rate_bps: int, length: int) -> int:
    """Nanoseconds a transmitter of ``rate_bps`` needs for ``length`` bytes:
    round(length * 8e9 / rate_bps), at least 1 (0 without a rate). The wire model's
    transmitter and the simulator's queues all serialize by this rule."""
    return lib.nw_link_serialization_ns(rate_bps, length)


def flip_bit(frame: bytes, bit: int) -> bytes:
    """``frame`` with bit ``bit`` flipped (bit 0 = the first byte's most significant)."""
    out = bytearray(frame)
    out[bit >> 3] ^= 0x80 >> (bit & 7)
    return bytes(out)


class WireModel:
    """One direction of a link running the C wire model, seeded with ``seed``."""

    __slots__ = ("config", "seed", "_link", "_out")

    def __init__(self, config: WireConfig, seed: int | str = 0) -> None:
        self.config = config
        self.seed = seed64(seed)
        link = lib.nw_link_new(config._cdata(), self.seed)
        if link == ffi.NULL:
            raise ValueError(f"the wire model refused {config!r}")
        self._link = ffi.gc(link, lib.nw_link_free)
        self._out = ffi.new("nw_link_result_t *")

    def _result(self, verdict: int) -> WireResult:
        out = self._out
        bit = out.corrupt_bit
        return WireResult(verdict, out.depart_ns, out.arrive_ns, None if bit == NO_BIT else bit)

    def send(self, now_ns: int, length: int) -> WireResult:
        """A ``length``-byte frame reaches the transmitter at ``now_ns``."""
        return self._result(lib.nw_link_send(self._link, now_ns, length, self._out))

    def propagate(self, now_ns: int, length: int) -> WireResult:
        """The wire only: the frame's last bit left at ``now_ns``."""
        return self._result(lib.nw_link_propagate(self._link, now_ns, length, self._out))

    def transmit_ns(self, length: int) -> int:
        """Nanoseconds the transmitter needs for ``length`` bytes (0 without a rate)."""
        return lib.nw_link_transmit_ns(self._link, length)

    @property
    def busy_until_ns(self) -> int:
        """When the transmitter is free again."""
        return lib.nw_link_busy_until(self._link)

    def stats(self) -> dict[str, int]:
        """Frames by outcome: delivered, dropped_limit, lost, burst_lost, corrupted."""
        st = ffi.new("nw_link_stats_t *")
        lib.nw_link_get_stats(self._link, st)
        return {name: getattr(st, name) for name in
                ("delivered", "dropped_limit", "lost", "burst_lost", "corrupted")}
