"""v1model ``meter`` and ``direct_meter``: BMv2's two-rate three-colour marker.

Rates are given as ``[(CIR, CBS), (PIR, PBS)]`` with the information rate in
units (bytes or packets) per microsecond and burst sizes in units, as
``simple_switch_CLI meter_set_rates``.  Token counts are computed from the
time since the meter's origin (BMv2 does the same, to avoid accumulating
rounding errors).  Colours: 0 GREEN, 1 YELLOW, 2 RED; an unconfigured meter
marks everything GREEN.  Time is an argument (microseconds): sans-IO.
"""

from __future__ import annotations

from collections.abc import Sequence

GREEN, YELLOW, RED = 0, 1, 2
METER_TYPES = ("packets", "bytes")


class _Rate:
    __slots__ = ("info_rate", "burst", "tokens", "tokens_last", "color")

    def __init__(self, info_rate: float, burst: int, color: int) -> None:
        self.info_rate = info_rate
        self.burst = burst
        self.tokens = burst
        self.tokens_last = 0
        self.color = color


class Meter:
    """One trTCM (or, with one rate, an srTCM-like single bucket)."""

    __slots__ = ("_rates", "meter_type")

    def __init__(self, meter_type: str = "bytes") -> None:
        self.meter_type = meter_type
        self._rates: list[_Rate] = []

    @property
    def configured(self) -> bool:
        """Whether rates were set."""
        return bool(self._rates)

    def set_rates(self, rates: Sequence[tuple[float, int]]) -> None:
        """Configure from ``[(CIR, CBS), (PIR, PBS)]`` (smaller rate first)."""
        for (r1, _), (r2, _) in zip(rates, rates[1:], strict=False):
            if r1 > r2:
                raise ValueError("meter rates must be given from smaller to larger")
        new = [_Rate(float(rate), int(burst), i + 1) for i, (rate, burst) in enumerate(rates)]
        new.reverse()
        self._rates = new

    def get_rates(self) -> list[tuple[float, int]]:
        """The configured ``[(CIR, CBS), (PIR, PBS)]``; empty if unconfigured."""
        return [(r.info_rate, r.burst) for r in reversed(self._rates)]

    def execute(self, now_us: int, size: int, pre_color: int = GREEN) -> int:
        """Colour a packet of ``size`` units arriving at ``now_us`` microseconds."""
        color = GREEN
        units = 1 if self.meter_type == "packets" else size
        for rate in self._rates:
            since_init = int(now_us * rate.info_rate)
            new_tokens = since_init - rate.tokens_last
            rate.tokens_last = since_init
            rate.tokens = min(rate.tokens + new_tokens, rate.burst)
            if rate.tokens < units:
                color = rate.color
                break
            rate.tokens -= units
        return max(pre_color, color)


class MeterArray:
    """``size`` independent meters sharing a type."""

    def __init__(self, name: str, size: int, meter_type: str = "bytes") -> None:
        if meter_type not in METER_TYPES:
            raise ValueError(f"meter {name}: unknown meter type {meter_type!r}")
        self.name = name
        self.size = size
        self.meter_type = meter_type
        self.meters = [Meter(meter_type) for _ in range(size)]

    def execute(self, index: int, now_us: int, size: int) -> int:
        """Colour of a packet at meter ``index``; out of range is GREEN."""
        if 0 <= index < self.size:
            return self.meters[index].execute(now_us, size)
        return GREEN

    def set_rates(self, rates: Sequence[tuple[float, int]], index: int | None = None) -> None:
        """Configure one meter, or all of them when ``index`` is None."""
        if index is None:
            for meter in self.meters:
                meter.set_rates(rates)
            return
        if not 0 <= index < self.size:
            raise IndexError(f"meter {self.name}: index {index} outside 0..{self.size - 1}")
        self.meters[index].set_rates(rates)
